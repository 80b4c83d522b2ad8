"""Plugins end to end.

A real third-party distribution (``tests/fixture_plugin``, installed with
``pip install -e tests/fixture_plugin``) is found through its ``swarm`` entry point, listed by the
catalog and the CLI, named from a topology file, and hidden by the block switches.  In-test
plugin objects check the contract's failure modes: name collisions, decision hooks that break
the contract (the run fails naming plugin and hook), observers that raise (logged, run goes on).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from inspect_ai.agent import react
from inspect_ai.event import LoggerEvent, ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments

import swarm
from swarm import (
    RESULT_KEY,
    ConfigError,
    PluginCatalog,
    PluginError,
    PluginSource,
    controller,
    get_plugin_manager,
    hookimpl,
    member,
    plugin_catalog,
    reset_plugin_catalog,
)
from swarm.cli import cli
from swarm.testing import pause, run_eval, scripted_model, submit

FIXTURE_DIST = "swarm-fixture-plugin"
FIXTURE_PLUGIN = "fixture"  # the entry point's name, which is also the plugin's name
QUORUM = f"{FIXTURE_DIST}/quorum"
BULLETIN = f"{FIXTURE_DIST}/bulletin"
ENV_SWITCHES = ("SWARM_BLOCK_PLUGINS", "SWARM_DISABLE_PLUGIN_AUTOLOAD", "SWARM_LOAD_PLUGINS")


@pytest.fixture(autouse=True)
def clean_plugin_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The fixture distribution is installed; no env switch is set; the catalog is rebuilt."""
    try:
        distribution(FIXTURE_DIST)
    except PackageNotFoundError:
        pytest.fail(
            f"{FIXTURE_DIST} is not installed: run `pip install -e tests/fixture_plugin`",
            pytrace=False,
        )
    for name in ENV_SWITCHES:
        monkeypatch.delenv(name, raising=False)
    reset_plugin_catalog()
    yield
    reset_plugin_catalog()


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def only_sample(log: EvalLog) -> EvalSample:
    assert log.samples is not None and len(log.samples) == 1
    return log.samples[0]


def succeeded(log: EvalLog) -> EvalSample:
    assert log.status == "success", log.error
    sample = only_sample(log)
    assert sample.error is None, sample.error
    return sample


def statuses(sample: EvalSample) -> dict[str, str | None]:
    return {m["name"]: m["status"] for m in sample.store[RESULT_KEY]["members"]}


def member_model_events(sample: EvalSample, name: str) -> list[ModelEvent]:
    """The model calls made inside member ``name``'s agent span (attachments resolved)."""
    sample = resolve_sample_attachments(sample, "full")
    spans = {e.id: e for e in sample.events if isinstance(e, SpanBeginEvent)}

    def inside(span_id: str | None) -> bool:
        while span_id is not None and span_id in spans:
            span = spans[span_id]
            if span.type == "agent" and span.name == name:
                return True
            span_id = span.parent_id
        return False

    return [e for e in sample.events if isinstance(e, ModelEvent) and inside(e.span_id)]


def in_test_catalog(**plugins: object) -> PluginCatalog:
    """A catalog with swarm-eval's own plugins plus ``plugins`` (name -> object)."""
    pm, sources = get_plugin_manager(load_entrypoints=False)
    for name, plugin in plugins.items():
        pm.register(plugin, name=name)
    return PluginCatalog(pm, sources)


def registering(kind: str, name: str) -> object:
    """An in-test plugin that registers a ``kind`` (controller or channel) called ``name``."""

    def factory() -> object:
        return object()

    class Plugin:
        if kind == "controller":

            @hookimpl
            def swarm_register_controllers(self, register: Callable[..., None]) -> None:
                register(name, factory)
        else:

            @hookimpl
            def swarm_register_channels(self, register: Callable[..., None]) -> None:
                register(name, factory)

    return Plugin()


def listing(message: str, kind: str) -> list[str]:
    """The names after ``registered <kind>s:`` in an unknown-name ``ConfigError``."""
    marker = f"registered {kind}s: "
    assert marker in message, message
    return [n.strip() for n in message.split(marker, 1)[1].split(",")]


def swarm_command() -> list[str]:
    """The installed ``swarm`` console script (or the same entry point through Python)."""
    script = Path(sys.executable).with_name("swarm")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from swarm.cli import main; main()"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the ``swarm`` command with none of the plugin env switches set."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_SWITCHES}
    return subprocess.run(
        [*swarm_command(), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# ---------------------------------------------------------------------------------------------
# discovery
# ---------------------------------------------------------------------------------------------


def test_fixture_plugin_is_discovered_through_its_entry_point() -> None:
    catalog = PluginCatalog.load()
    source = catalog.sources[FIXTURE_PLUGIN]
    assert source == PluginSource(
        name=FIXTURE_PLUGIN,
        distribution=FIXTURE_DIST,
        version="0.1.0",
        entry_point="swarm_fixture_plugin.plugin",
        builtin=False,
    )
    assert catalog.sources["leaderless"].distribution == "swarm-eval"
    assert catalog.sources["leaderless"].builtin

    assert QUORUM in catalog.names("controller")
    assert "leaderless" in catalog.names("controller")
    assert BULLETIN in catalog.names("channel")
    for kind, full, bare in (("controller", QUORUM, "quorum"), ("channel", BULLETIN, "bulletin")):
        reg = catalog.lookup(kind, bare)  # type: ignore[arg-type]
        assert reg.name == full
        assert reg.plugin == FIXTURE_PLUGIN
        assert reg.distribution == FIXTURE_DIST
        assert catalog.lookup(kind, full) is reg  # type: ignore[arg-type]

    assert catalog.hooks_of(FIXTURE_PLUGIN) == [
        "swarm_register_channels",
        "swarm_register_controllers",
        "swarm_register_normalizers",
    ]
    # Only registration hooks at module level: the plugin is not added to every run.
    assert FIXTURE_PLUGIN not in dict(catalog.runtime_plugins())
    # The process-wide catalog (what swarm() uses by default) has it too.
    assert plugin_catalog().lookup("controller", "quorum").name == QUORUM


@pytest.mark.parametrize(
    ("kind", "name", "params", "field"),
    [
        ("controller", "quorum", {"size": 0}, "quorum.size"),
        ("controller", "quorum", {"size": -2}, "quorum.size"),
        ("controller", "quorum", {"size": True}, "quorum.size"),
        ("controller", "quorum", {"size": "2"}, "quorum.size"),
        ("controller", "quorum", {"size": 1.5}, "quorum.size"),
        ("channel", "bulletin", {"path": ""}, "bulletin.path"),
        ("channel", "bulletin", {"path": 3}, "bulletin.path"),
    ],
)
def test_fixture_factories_name_the_bad_field(
    kind: str, name: str, params: dict[str, Any], field: str
) -> None:
    factory = PluginCatalog.load().lookup(kind, name).factory  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=rf"^{field}: "):
        factory(**params)


def test_fixture_factories_build_plugins() -> None:
    catalog = PluginCatalog.load()
    assert catalog.lookup("controller", "quorum").factory(size=3).size == 3
    board = catalog.lookup("channel", "bulletin").factory(path="/srv/board")
    assert board.name == "bulletin"
    assert board.path == "/srv/board"


def test_unknown_parameter_is_refused_when_the_swarm_is_built() -> None:
    with pytest.raises(ConfigError, match=r"^controller: .*quorum.*sise"):
        swarm.swarm(members=member(react), controller={"name": "quorum", "sise": 2})


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"controller": controller("quorum", size=0)},
            "controller: quorum.size: expected a whole number >= 1, got 0",
        ),
        (
            {"channels": [{"name": BULLETIN, "path": ""}]},
            "channels[0]: bulletin.path: expected a non-empty path, got ''",
        ),
    ],
)
def test_bad_parameter_value_is_refused_when_the_swarm_is_built(
    given: dict[str, Any], message: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as caught:
        swarm.swarm(members=member(react), **given)
    assert str(caught.value) == message

    # The same from a topology file, where a plugin is a mapping with its name and parameters.
    data: dict[str, Any] = {"members": [{"factory": "react"}]}
    for key, value in given.items():
        data[key] = value if key == "channels" else {"name": value.name, **value.params}
    topology = tmp_path / "bad.yaml"
    topology.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as caught:
        swarm.swarm(config=topology)
    assert str(caught.value) == f"{topology}: {message}"


# ---------------------------------------------------------------------------------------------
# running the fixture plugin from a topology file
# ---------------------------------------------------------------------------------------------


def test_topology_file_runs_quorum_controller_and_bulletin_channel(tmp_path: Path) -> None:
    topology = tmp_path / "quorum.yaml"
    topology.write_text(
        yaml.safe_dump(
            {
                "members": [{"factory": "react", "name": "worker", "count": 3}],
                "controller": {"name": QUORUM, "size": 2},
                "channels": [{"name": "bulletin", "path": "/shared/board.md"}],
                "budget": {"grace": 0.05},
            }
        )
    )
    # worker-2 submits first, worker-1 second (the quorum); worker-3 is still thinking.
    model = scripted_model(
        {
            "worker-1": [pause(1.0, submit("41"))],
            "worker-2": [submit("42")],
            "worker-3": [pause(60, submit("43"))],
        }
    )
    log = run_eval(swarm.swarm(config=topology), model=model, log_dir=tmp_path / "logs")
    sample = succeeded(log)

    record = sample.store[RESULT_KEY]
    assert record["stop_reason"] == "controller:quorum"
    assert record["final"] == {
        "mode": "controller",
        "member": "worker-2",
        "reason": "quorum",
        "provisional": False,
        "answer": "42",
        "answer_chars": 2,
    }
    assert statuses(sample) == {
        "worker-1": "submitted",
        "worker-2": "submitted",
        "worker-3": "cancelled",
    }
    assert sample.output.completion.endswith("42")
    assert sample.scores is not None and sample.scores["includes"].value == "C"

    # The channel's paragraph is in every member's first model call, after the kernel's own.
    for name in ("worker-1", "worker-2", "worker-3"):
        first = member_model_events(sample, name)[0]
        preamble = first.input[-1].text
        assert preamble.startswith(f"You are {name}, one of 3 agents"), preamble
        assert preamble.endswith(
            "\n\nPost what you learn on the bulletin board at /shared/board.md. "
            f"Sign each post as {name}."
        ), preamble


def test_quorum_not_reached_defers_to_the_kernel(tmp_path: Path) -> None:
    model = scripted_model({"react-1": [submit("42")], "react-2": [pause(0.3, submit("7"))]})
    solver = swarm.swarm(
        members=member(react, count=2),
        controller=controller("quorum", size=3),
        channels=["bulletin"],
    )
    sample = succeeded(run_eval(solver, model=model, log_dir=tmp_path))
    record = sample.store[RESULT_KEY]
    assert record["stop_reason"] == "all_done"
    assert record["final"]["mode"] == "first"
    assert record["final"]["member"] == "react-1"
    assert statuses(sample) == {"react-1": "submitted", "react-2": "submitted"}
    first = member_model_events(sample, "react-2")[0]
    assert "bulletin board at /shared/bulletin.md" in first.input[-1].text


# ---------------------------------------------------------------------------------------------
# blocking and selecting plugins
# ---------------------------------------------------------------------------------------------


def assert_fixture_hidden(catalog: PluginCatalog) -> None:
    assert FIXTURE_PLUGIN not in catalog.sources
    assert "leaderless" in catalog.sources
    for name in ("quorum", QUORUM):
        with pytest.raises(ConfigError, match=rf"unknown controller '{name}'") as caught:
            catalog.lookup("controller", name)
        registered = listing(str(caught.value), "controller")
        assert "leaderless" in registered
        assert QUORUM not in registered
    with pytest.raises(ConfigError, match="unknown channel 'bulletin'") as caught:
        catalog.lookup("channel", "bulletin")
    assert BULLETIN not in listing(str(caught.value), "channel")


def test_blocked_plugin_is_hidden() -> None:
    catalog = PluginCatalog.load(blocked=[FIXTURE_PLUGIN])
    assert_fixture_hidden(catalog)
    with pytest.raises(ConfigError, match=r"^controller: unknown controller 'quorum'"):
        swarm.swarm(members=member(react), controller="quorum", plugins=catalog)


def test_env_switch_blocks_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    assert FIXTURE_PLUGIN in plugin_catalog().sources

    monkeypatch.setenv("SWARM_BLOCK_PLUGINS", f"other, {FIXTURE_PLUGIN}")
    reset_plugin_catalog()
    assert_fixture_hidden(plugin_catalog())
    with pytest.raises(ConfigError, match=r"^controller: unknown controller 'quorum'") as caught:
        swarm.swarm(members=member(react), controller="quorum")
    assert "leaderless" in listing(str(caught.value), "controller")

    monkeypatch.delenv("SWARM_BLOCK_PLUGINS")
    reset_plugin_catalog()
    assert plugin_catalog().lookup("controller", "quorum").name == QUORUM


@pytest.mark.parametrize(
    ("switch", "value", "loaded"),
    [
        ("SWARM_DISABLE_PLUGIN_AUTOLOAD", "1", False),
        ("SWARM_DISABLE_PLUGIN_AUTOLOAD", "0", True),
        ("SWARM_LOAD_PLUGINS", "", False),
        ("SWARM_LOAD_PLUGINS", "some-other-dist", False),
        ("SWARM_LOAD_PLUGINS", "some-other-dist,swarm_fixture_plugin", True),
        ("SWARM_BLOCK_PLUGINS", "leaderless-not,fixtures", True),
    ],
)
def test_env_switches_select_third_party_plugins(
    monkeypatch: pytest.MonkeyPatch, switch: str, value: str, loaded: bool
) -> None:
    monkeypatch.setenv(switch, value)
    reset_plugin_catalog()
    catalog = plugin_catalog()
    assert (FIXTURE_PLUGIN in catalog.sources) is loaded
    assert "leaderless" in catalog.sources  # swarm-eval's own plugins always load
    if not loaded:
        assert_fixture_hidden(catalog)


# ---------------------------------------------------------------------------------------------
# the CLI
# ---------------------------------------------------------------------------------------------


def check_plugin_rows(rows: list[dict[str, Any]], *, fixture: bool = True) -> None:
    by_name = {row["name"]: row for row in rows}
    leaderless = by_name["leaderless"]
    assert leaderless["distribution"] == "swarm-eval"
    assert leaderless["builtin"] is True
    assert leaderless["entry_point"] == "swarm.plugins.controllers.leaderless"
    assert "leaderless" in leaderless["controllers"]
    assert "swarm_register_controllers" in leaderless["hooks"]
    if not fixture:
        assert FIXTURE_PLUGIN not in by_name
        return
    assert by_name[FIXTURE_PLUGIN] == {
        "name": FIXTURE_PLUGIN,
        "distribution": FIXTURE_DIST,
        "version": "0.1.0",
        "builtin": False,
        "entry_point": "swarm_fixture_plugin.plugin",
        "hooks": [
            "swarm_register_channels",
            "swarm_register_controllers",
            "swarm_register_normalizers",
        ],
        "controllers": [QUORUM],
        "channels": [BULLETIN],
        "rubrics": [],
        "normalizers": [f"{FIXTURE_DIST}/last_word"],
        "error": None,
    }


def test_cli_plugins_json() -> None:
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    check_plugin_rows(json.loads(result.stdout))

    result = CliRunner().invoke(cli, ["plugins", "--json", "--third-party"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [row["name"] for row in rows if row["builtin"]] == []
    assert FIXTURE_PLUGIN in {row["name"] for row in rows}


def test_cli_plugins_json_honours_the_block_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_BLOCK_PLUGINS", FIXTURE_PLUGIN)
    reset_plugin_catalog()
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    check_plugin_rows(json.loads(result.stdout), fixture=False)


def test_cli_plugins_text() -> None:
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 0, result.output
    assert f"{FIXTURE_PLUGIN}  ({FIXTURE_DIST} 0.1.0, third-party)" in result.stdout
    assert f"controllers: {QUORUM}" in result.stdout
    assert f"channels: {BULLETIN}" in result.stdout
    assert f"normalizers: {FIXTURE_DIST}/last_word" in result.stdout


def test_installed_swarm_command_lists_plugins() -> None:
    done = run_cli("plugins", "--json")
    assert done.returncode == 0, done.stderr
    check_plugin_rows(json.loads(done.stdout))


# ---------------------------------------------------------------------------------------------
# registration errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "hook"),
    [("controller", "swarm_register_controllers"), ("channel", "swarm_register_channels")],
)
def test_name_collision_names_both_plugins(kind: str, hook: str) -> None:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    assert FIXTURE_PLUGIN not in sources
    pm.register(registering(kind, "dup"), name="first_plugin")
    pm.register(registering(kind, "dup"), name="second_plugin")
    # pluggy calls the later registered first: it keeps the name, the other one is broken
    catalog = PluginCatalog(pm, sources)
    assert [(s.name, s.error) for s in catalog.broken] == [
        (
            "first_plugin",
            f"hook {hook!r}: {kind} 'dup' is registered twice: by plugin 'second_plugin' and by "
            "plugin 'first_plugin'",
        )
    ]
    assert catalog.lookup(kind, "dup").plugin == "second_plugin"  # type: ignore[arg-type]

    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(registering(kind, "dup"), name="first_plugin")
    pm.register(registering(kind, "dup"), name="second_plugin")
    with pytest.raises(PluginError) as caught:
        PluginCatalog(pm, sources, strict=True)
    message = str(caught.value)
    assert f"{kind} 'dup' is registered twice" in message
    assert "'first_plugin'" in message and "'second_plugin'" in message
    assert caught.value.hook == hook
    assert caught.value.plugin == "first_plugin"


def test_collision_with_a_builtin_name() -> None:
    # the built-ins register first, whatever the order: the impostor is the broken one
    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(registering("controller", "leaderless"), name="impostor")
    catalog = PluginCatalog(pm, sources)
    assert catalog.lookup("controller", "leaderless").plugin == "leaderless"
    [broken] = catalog.broken
    assert broken.name == "impostor"
    assert broken.error == (
        "hook 'swarm_register_controllers': controller 'leaderless' is registered twice: by "
        "plugin 'leaderless' and by plugin 'impostor'"
    )
    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(registering("controller", "leaderless"), name="impostor")
    with pytest.raises(PluginError, match="registered twice") as caught:
        PluginCatalog(pm, sources, strict=True)
    assert caught.value.plugin == "impostor"


def test_same_name_from_two_distributions_is_namespaced() -> None:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    for plugin, dist in (("a", "dist-a"), ("b", "dist-b")):
        pm.register(registering("controller", "vote"), name=plugin)
        sources[plugin] = PluginSource(
            name=plugin, distribution=dist, version="1.0", entry_point=None, builtin=False
        )
    catalog = PluginCatalog(pm, sources)
    assert {"dist-a/vote", "dist-b/vote"} <= set(catalog.names("controller"))
    assert catalog.lookup("controller", "dist-b/vote").plugin == "b"
    with pytest.raises(ConfigError, match="ambiguous: it could be dist-a/vote, dist-b/vote"):
        catalog.lookup("controller", "vote")


# ---------------------------------------------------------------------------------------------
# run-time contract: decision hooks fail the run, observers do not
# ---------------------------------------------------------------------------------------------


class WrongType:
    @hookimpl
    def swarm_on_submission(self, view: object, event: object) -> object:
        return "stop please"


class Raises:
    @hookimpl
    def swarm_on_submission(self, view: object, event: object) -> object:
        raise ValueError("no decision today")


class RaisingObserver:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def swarm_member_ended(self, view: object, event: object) -> None:
        self.calls += 1
        raise RuntimeError("observer boom")


BAD_DECISIONS = [
    pytest.param(WrongType, "returned str 'stop please'; expected Decision or None", id="type"),
    pytest.param(Raises, "raised ValueError('no decision today')", id="raises"),
]


def run_with_bad_plugin(plugin_class: type, tmp_path: Path) -> EvalLog:
    catalog = in_test_catalog(bad_plugin=plugin_class())
    assert "bad_plugin" in dict(catalog.runtime_plugins())
    solver = swarm.swarm(members=member(react), plugins=catalog)
    return run_eval(solver, log_dir=tmp_path)


@pytest.mark.parametrize(("plugin_class", "detail"), BAD_DECISIONS)
def test_bad_decision_hook_fails_the_run(plugin_class: type, detail: str, tmp_path: Path) -> None:
    log = run_with_bad_plugin(plugin_class, tmp_path)
    assert log.status == "error"
    sample = only_sample(log)
    assert sample.error is not None
    assert detail in sample.error.message
    full = f"PluginError: Plugin 'bad_plugin', hook 'swarm_on_submission': {detail}"
    assert full in sample.error.traceback
    assert log.error is not None and full in log.error.traceback
    assert sample.store[RESULT_KEY]["stop_reason"] is None


@pytest.mark.parametrize(("plugin_class", "detail"), BAD_DECISIONS)
def test_bad_decision_error_message_names_plugin_and_hook(
    plugin_class: type, detail: str, tmp_path: Path
) -> None:
    log = run_with_bad_plugin(plugin_class, tmp_path)
    error = only_sample(log).error
    assert error is not None
    assert "'bad_plugin'" in error.message
    assert "swarm_on_submission" in error.message


def test_raising_observer_is_logged_and_the_run_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    observer = RaisingObserver()
    catalog = in_test_catalog(noisy=observer)
    solver = swarm.swarm(members=member(react), plugins=catalog)
    model = scripted_model({"react": [submit("42")]})
    sample = succeeded(run_eval(solver, model=model, log_dir=tmp_path))

    assert observer.calls == 1
    assert sample.store[RESULT_KEY]["stop_reason"] == "submitted"
    assert statuses(sample) == {"react": "submitted"}
    assert sample.scores is not None and sample.scores["includes"].value == "C"

    expected = "observer plugin 'noisy' failed in hook 'swarm_member_ended' (the run goes on)"
    logged = [e.message for e in sample.events if isinstance(e, LoggerEvent)]
    noisy = [m for m in logged if "noisy" in m.message]
    assert len(noisy) == 1
    assert noisy[0].level == "error"
    assert expected in noisy[0].message
    records = [r for r in caplog.records if r.name == "swarm" and "noisy" in r.getMessage()]
    assert len(records) == 1
    assert expected in records[0].getMessage()  # Inspect prefixes the sample's id
    assert records[0].exc_info is not None
    assert isinstance(records[0].exc_info[1], RuntimeError)


def test_a_registered_rubric_is_built_by_name() -> None:
    from swarm import ConfigError, hookimpl, rubric

    class Rubrics:
        @hookimpl
        def swarm_register_rubrics(self, register: Any) -> None:
            register("strict", lambda threshold=1.0: ("scorer", threshold))

    catalog = in_test_catalog(rubrics=Rubrics())
    assert rubric("strict", plugins=catalog, threshold=0.5) == ("scorer", 0.5)
    with pytest.raises(
        ConfigError, match="unknown rubric 'loose'; registered rubrics: fanout, strict"
    ):
        rubric("loose", plugins=catalog)
    with pytest.raises(ConfigError) as info:
        rubric("strict", plugins=catalog, bogus=1)
    assert str(info.value) == (
        "rubric 'strict': unknown parameter(s) 'bogus'; expected some of threshold"
    )
