"""Broken third-party plugins (issue 13, point 5): each is left out and named by distribution
with the reason, ``swarm plugins`` lists the working ones and marks the broken ones, and only a
run that names what a broken plugin provides fails, unless loading is strict.

The broken distributions are written into a temp dir put on ``sys.path`` (``fake_dists``):
``importlib.metadata`` finds them as it finds installed ones.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from inspect_ai.agent import react
from inspect_ai.log import read_eval_log

import swarm
from swarm import (
    ConfigError,
    PluginCatalog,
    PluginError,
    get_plugin_manager,
    hookimpl,
    member,
    reset_plugin_catalog,
)
from swarm.testing import run_eval, scripted_model, submit

from fake_dists import BROKEN, forget_modules, write_distributions

BIN = Path(sys.executable).parent
SWITCHES = (
    "SWARM_BLOCK_PLUGINS",
    "SWARM_DISABLE_PLUGIN_AUTOLOAD",
    "SWARM_LOAD_PLUGINS",
    "SWARM_STRICT_PLUGINS",
)
STRICT_TAIL = (
    ". Strict plugin loading (SWARM_STRICT_PLUGINS=1 or strict=True) makes a broken plugin an "
    "error; fix or uninstall the distribution, or block the plugin with SWARM_BLOCK_PLUGINS"
)


@pytest.fixture
def dists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The four broken distributions, found by ``importlib.metadata``; a fresh catalog."""
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    root = write_distributions(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    reset_plugin_catalog()
    yield root
    reset_plugin_catalog()
    forget_modules()


def describe(name: str) -> str:
    dist, version, _ = BROKEN[name]
    return f"'{name}' ({dist} {version})"


# -- in-process ----------------------------------------------------------------------------------


def test_each_broken_plugin_is_left_out_with_its_distribution_and_reason(dists: Path) -> None:
    catalog = PluginCatalog.load()
    assert {s.name: (s.distribution, s.version, s.error) for s in catalog.broken} == BROKEN
    for name in BROKEN:
        assert catalog.sources[name].builtin is False
        assert catalog.pm.get_plugin(name) is None  # takes part in no run
        assert name not in dict(catalog.runtime_plugins())
    # what 'raising' registered before it raised is gone with it
    assert [n for n in catalog.names("controller") if "vote" in n] == []
    # the working plugins are all there: the fixture's and swarm-eval's own
    assert catalog.lookup("controller", "quorum").name == "swarm-fixture-plugin/quorum"
    assert catalog.sources["fixture"].error is None
    assert {"leaderless", "verified", "quiescence"} <= set(catalog.names("controller"))
    # 'cmd' breaks only when the swarm command asks for its commands
    assert catalog.lookup("channel", "cmdchan").name == "cmd-dist/cmdchan"


def test_a_swarm_that_does_not_need_them_runs(
    dists: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="swarm"):
        solver = swarm.swarm(members=member(react, count=2), controller="quorum")
    model = scripted_model({"react-*": [submit("42")]})
    log = run_eval(solver, model=model, log_dir=tmp_path / "logs")
    assert log.status == "success", log.error
    assert log.samples and log.samples[0].store["inspect_swarm:result"]["stop_reason"] == (
        "controller:quorum"
    )
    warned = sorted(r.getMessage() for r in caplog.records if r.name == "swarm")
    assert warned == [
        f"swarm-eval plugin {describe(name)} is broken and not used: {BROKEN[name][2]} "
        "(SWARM_STRICT_PLUGINS=1 makes this an error)"
        for name in sorted(BROKEN)
    ]


@pytest.mark.parametrize(
    ("controller", "message"),
    [
        (
            "vote",
            "controller: controller 'vote' is not available: it comes from plugin "
            f"{describe('raising')}, which is broken: {BROKEN['raising'][2]}",
        ),
        (
            "raising-dist/vote",
            "controller: controller 'raising-dist/vote' is not available: it comes from plugin "
            f"{describe('raising')}, which is broken: {BROKEN['raising'][2]}",
        ),
        (
            "noimport-dist/majority",
            "controller: controller 'noimport-dist/majority' is not available: it comes from "
            f"plugin {describe('noimport')}, which is broken: {BROKEN['noimport'][2]}",
        ),
    ],
)
def test_naming_what_a_broken_plugin_provides_fails_with_the_reason(
    dists: Path, controller: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        swarm.swarm(members=member(react), controller=controller)
    assert str(caught.value) == message


def test_an_unknown_name_lists_the_broken_plugins_that_may_provide_it(dists: Path) -> None:
    # typo-dist's hook was never called (its name is misspelled), so nothing says what it
    # would have registered: every broken plugin is a suspect
    with pytest.raises(ConfigError) as caught:
        swarm.swarm(members=member(react), controller="typo_ctrl")
    text = str(caught.value)
    assert text.startswith("controller: unknown controller 'typo_ctrl'; registered controllers: ")
    suspects = text.split("; broken plugins that may provide it: ", 1)[1]
    assert suspects == "; ".join(f"{describe(n)}: {BROKEN[n][2]}" for n in sorted(BROKEN))


def test_strict_loading_makes_any_broken_plugin_an_error(
    dists: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    everything = "; ".join(f"plugin {describe(n)}: {BROKEN[n][2]}" for n in sorted(BROKEN))
    monkeypatch.setenv("SWARM_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError) as caught:
        swarm.swarm(members=member(react))
    assert str(caught.value) == f"Plugin 'noimport', hook '<load>': {everything}{STRICT_TAIL}"
    assert (caught.value.plugin, caught.value.hook) == ("noimport", "<load>")
    # the switch is read on each use: off again, the same process builds swarms
    monkeypatch.setenv("SWARM_STRICT_PLUGINS", "0")
    swarm.swarm(members=member(react))
    # in code: the manager refuses what it loads, the catalog what registration finds
    with pytest.raises(PluginError, match="^Plugin 'noimport', hook '<load>': ") as caught:
        get_plugin_manager(strict=True)
    assert "'typo' (typo-dist 1.0)" in str(caught.value)
    assert "'raising'" not in str(caught.value)  # its hook has not run yet
    pm, sources = get_plugin_manager(blocked=["noimport", "typo"])
    with pytest.raises(PluginError) as caught:
        PluginCatalog(pm, sources, strict=True)
    assert str(caught.value) == "Plugin 'raising', hook 'swarm_register_controllers': " + (
        "raised RuntimeError('registration exploded')"
    )


class Misspelled:
    @hookimpl
    def swarm_on_submision(self, view: object, event: object) -> None:
        return None

    @hookimpl
    def swarm_member_ended(self, view: object, event: object) -> None:
        return None


class NoSuchHook:
    @hookimpl
    def swarm_frobnicate(self) -> None:
        return None


def test_an_in_process_plugin_with_a_misspelled_hook_is_broken_with_a_suggestion() -> None:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(Misspelled(), name="misspelled")
    pm.register(NoSuchHook(), name="nosuch")
    catalog = PluginCatalog(pm, sources)
    errors = {s.name: (s.distribution, s.error) for s in catalog.broken}
    assert errors == {
        "misspelled": (
            None,
            "implements hooks that swarm-eval does not have: 'swarm_on_submision' (did you "
            "mean 'swarm_on_submission'?)",
        ),
        "nosuch": (None, "implements hooks that swarm-eval does not have: 'swarm_frobnicate'"),
    }
    # left out whole: its correctly spelled observer takes no part in runs either
    assert "misspelled" not in dict(catalog.runtime_plugins())
    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(Misspelled(), name="misspelled")
    with pytest.raises(PluginError, match="'swarm_on_submision' \\(did you mean"):
        PluginCatalog(pm, sources, strict=True)


def test_plugin_error_survives_pickling() -> None:
    import pickle

    error = PluginError("p", "swarm_start", "raised ValueError('[x]')")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.plugin, copy.hook, copy.detail, str(copy)) == (
        "p",
        "swarm_start",
        "raised ValueError('[x]')",
        str(error),
    )


# -- the real commands -----------------------------------------------------------------------


def run(
    root: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    full.update(PYTHONPATH=str(root), INSPECT_DISPLAY="none", **env)
    return subprocess.run(
        list(args), env=full, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def test_swarm_plugins_lists_the_working_ones_and_marks_the_broken_ones(dists: Path) -> None:
    done = run(dists, str(BIN / "swarm"), "plugins")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "fixture  (swarm-fixture-plugin 0.1.0, third-party)\n" in out
    assert "  controllers: swarm-fixture-plugin/quorum\n" in out
    assert "leaderless  (swarm-eval 0.1.0, built-in)\n" in out
    broken = {
        **BROKEN,
        "cmd": (
            "cmd-dist",
            "0.4",
            "hook 'swarm_register_commands': raised RuntimeError('no commands today')",
        ),
    }
    for name, (dist, version, error) in broken.items():
        module = f"swarm_test_{name}"
        assert (
            f"{name}  ({dist} {version}, third-party)  BROKEN\n  entry point: {module}\n"
            f"  error: {error}\n"
        ) in out, out
    assert "Traceback" not in done.stderr

    done = run(dists, str(BIN / "swarm"), "plugins", "--json", "--strict")
    assert done.returncode == 1
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert {n: r["error"] for n, r in rows.items() if r["error"]} == {
        n: e for n, (_, _, e) in broken.items()
    }
    assert rows["cmd"]["channels"] == []  # left out whole
    assert rows["fixture"]["error"] is None
    assert done.stderr == (
        "error: 4 broken plugin(s): 'cmd' (cmd-dist 0.4), 'noimport' (noimport-dist 0.2.0), "
        "'raising' (raising-dist 0.3), 'typo' (typo-dist 1.0)\n"
    )
    done = run(dists, str(BIN / "swarm"), "plugins", SWARM_STRICT_PLUGINS="1")
    assert done.returncode == 1 and "BROKEN" in done.stdout
    assert done.stderr.startswith("error: 4 broken plugin(s): ")


def test_a_broken_command_hook_leaves_the_other_commands(dists: Path) -> None:
    catalog = PluginCatalog.load()

    @click.group()
    def group() -> None:
        """A command line of one's own."""

    @group.command()
    def mine() -> None:
        """Mine."""

    catalog.register_commands(group)
    assert sorted(group.commands) == ["fanout", "mine"]  # the built-in plugin's command too
    assert catalog.sources["cmd"].error == (
        "hook 'swarm_register_commands': raised RuntimeError('no commands today')"
    )
    assert "cmd-dist/cmdchan" not in catalog.names("channel")  # left out whole
    pm, sources = get_plugin_manager(blocked=["noimport", "typo", "raising"])
    strict = PluginCatalog(pm, sources, strict=True)
    with pytest.raises(PluginError, match="no commands today"):
        strict.register_commands(click.Group())


TASK = (
    "from inspect_ai import Task, task\nfrom inspect_ai.dataset import Sample\n\n"
    "@task\ndef t():\n    return Task(dataset=[Sample(input='6*7?', target='42')])\n"
)


def inspect_eval(root: Path, cwd: Path, *solver_args: str) -> subprocess.CompletedProcess[str]:
    (cwd / "task.py").write_text(TASK)
    args = [str(BIN / "inspect"), "eval", "task.py", "--solver", "swarm/swarm"]
    args += [*solver_args, "--model", "swarm/scripted", "-M", "answer=42", "--log-dir", "logs"]
    return run(root, *args, cwd=cwd)


def test_inspect_eval_fails_only_when_it_needs_the_broken_plugin(
    dists: Path, tmp_path: Path
) -> None:
    fine = inspect_eval(dists, tmp_path, "-S", "members={factory: react, count: 2}")
    assert fine.returncode == 0, fine.stderr[-3000:]
    [log] = (tmp_path / "logs").glob("*.eval")
    assert read_eval_log(str(log)).status == "success"

    needs = inspect_eval(dists, tmp_path, "-S", "members={factory: react}", "-S", "controller=vote")
    assert needs.returncode == 1
    assert (
        "ConfigError: controller: controller 'vote' is not available: it comes from plugin "
        f"{describe('raising')}, which is broken: {BROKEN['raising'][2]}\n"
    ) in needs.stderr
    assert "Traceback" not in needs.stderr + needs.stdout


def test_inspect_eval_under_strict_loading_prints_the_plugin_error(
    dists: Path, tmp_path: Path
) -> None:
    (tmp_path / "task.py").write_text(TASK)
    done = run(
        dists,
        str(BIN / "inspect"),
        "eval",
        "task.py",
        "--solver",
        "swarm/swarm",
        "-S",
        "members={factory: react}",
        "--model",
        "swarm/scripted",
        cwd=tmp_path,
        SWARM_STRICT_PLUGINS="1",
    )
    assert done.returncode == 1
    everything = "; ".join(f"plugin {describe(n)}: {BROKEN[n][2]}" for n in sorted(BROKEN))
    assert (
        f"\nPluginError: Plugin 'noimport', hook '<load>': {everything}{STRICT_TAIL}\n"
    ) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
