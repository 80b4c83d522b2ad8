"""Errors and the command line (issue 13, points 2 and 8).

Point 2: a configuration mistake reaches ``inspect eval`` and ``swarm`` as one message with no
traceback; every topology file error names the file; ``swarm demo`` says why it failed; an
unknown ``swarm/...`` model is an error.  Point 8: ``swarm --version``, whole help texts with an
example per command, and ``swarm topology check``.  The ``inspect eval`` checks run the real
command in a subprocess (what they test is the process's exception hook); the ``swarm`` checks
run its entry point, ``main()``, in this process: its error handling and exit status are the
same, without paying Inspect's import again for each command.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from inspect_ai.agent import react

from swarm import ConfigError, PluginError, UsageError, member, plugin_catalog, swarm
from swarm._spec.describe import topology_digest
from swarm.cli import cli

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TASK = (
    "from inspect_ai import Task, task\nfrom inspect_ai.dataset import Sample\n\n"
    "@task\ndef t():\n    return Task(dataset=[Sample(input='6*7?', target='42')])\n"
)
BAD_YAML = "members:\n  - factory: react\n    count: [\n"
YAML_PROBLEM = (
    "not valid YAML: line 4, column 1: expected the node content, but found '<stream end>' "
    "(while parsing a flow node)"
)


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    full.pop("INSPECT_DISPLAY", None)
    full.update(env)
    return subprocess.run(
        list(args), cwd=cwd, env=full, capture_output=True, text=True, timeout=300, check=False
    )


def swarm_main(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """``swarm ARGS`` as its console script runs it (``main()``), in this process, with no
    API key in the environment: (exit status, stdout, stderr)."""
    import contextlib
    import io

    from swarm.cli import main

    for name in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["swarm", *args])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with pytest.raises(SystemExit) as ended:
            main()
    code = ended.value.code
    return (code if isinstance(code, int) else 1 if code else 0), out.getvalue(), err.getvalue()


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr


# -- point 2: inspect eval -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "display", "message"),
    [
        (
            ["-S", "members={factory: react, count: -1}"],
            "full",
            "ConfigError: members[0].count: expected a whole number in [1, 10000], got -1",
        ),
        (["-S", "config=bad.yaml"], "none", f"ConfigError: bad.yaml: {YAML_PROBLEM}"),
        (
            ["-S", "members={factory: react}", "--model", "swarm/scripted2"],
            "plain",
            "ConfigError: unknown model 'swarm/scripted2': swarm-eval provides 'swarm/scripted' "
            "and 'swarm/noisy' (did you mean 'swarm/scripted'?)",
        ),
        (
            # issue 21: was a TypeError's 200-line traceback
            ["-S", "member=react"],
            "plain",
            "ConfigError: swarm: unknown parameter(s) 'member' (did you mean 'members'?); "
            "expected some of budget, channels, config, controller, members, on_member_error, "
            "plugins, sandboxes, spawning, templates",
        ),
    ],
    ids=["bad-value", "yaml-syntax", "model-typo", "parameter-typo"],
)
def test_inspect_eval_prints_one_message_and_no_traceback(
    tmp_path: Path, args: list[str], display: str, message: str
) -> None:
    (tmp_path / "task.py").write_text(TASK)
    (tmp_path / "bad.yaml").write_text(BAD_YAML)
    if "--model" not in args:
        args = [*args, "--model", "swarm/scripted"]
    done = run(
        str(BIN / "inspect"),
        "eval",
        "task.py",
        "--solver",
        "swarm/swarm",
        *args,
        "--display",
        display,
        "--log-dir",
        "logs",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert f"\n{message}\n" in done.stderr, done.stderr
    no_traceback(done)


# -- point 2: topology files name the file ---------------------------------------------------


def refused(build: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        build()
    return str(caught.value)


def test_a_yaml_syntax_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(BAD_YAML)
    assert refused(lambda: swarm(config=path)) == f"{path}: {YAML_PROBLEM}"


def test_a_toml_syntax_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "topology.toml"
    path.write_text('[[members]]\nfactory = "react"\ncount = \n')
    assert refused(lambda: swarm(config=path)) == (
        f"{path}: not valid TOML: Invalid value (at line 3, column 9)"
    )


def test_every_file_level_error_starts_with_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    assert refused(lambda: swarm(config=missing)) == (
        f"{missing}: cannot read the topology file: No such file or directory"
    )
    json_file = tmp_path / "topology.json"
    assert refused(lambda: swarm(config=json_file)) == (
        f"{json_file}: a topology file's name ends in .yaml, .yml or .toml"
    )
    listing = tmp_path / "list.yaml"
    listing.write_text("- react\n")
    assert refused(lambda: swarm(config=listing)) == (
        f"{listing}: a topology file holds a mapping with keys members, controller..."
    )
    typo = tmp_path / "typo.yaml"
    typo.write_text("members: {factory: react}\ncontroler: leaderless\n")
    assert refused(lambda: swarm(config=typo)) == (
        f"{typo}: unknown key(s) 'controler' (did you mean 'controller'?); expected some of "
        "budget, channels, controller, members, on_member_error, sandboxes, spawning, templates"
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("members: {factory: react, count: 0}\n", "members[0].count: expected a whole number"),
        ("members: {factory: react}\ncontroller: boss\n", "controller: unknown controller 'boss'"),
        (
            "members: {factory: react}\nchannels: [{name: shared_memory, max_files: 0}]\n",
            "channels[0]: shared_memory max_files must be an integer",
        ),
        ("members: {factory: react}\nbudget: {grace: -1}\n", "budget.grace: "),
        ("members: {factory: react}\non_member_error: stop\n", "on_member_error: expected"),
        ("members: {factory: react}\ntemplates: {kid: {factory: nope}}\n", "templates.kid.agent"),
        ("members: {factory: react}\nspawning: {max_depth: 0}\n", "spawning.max_depth"),
        (
            "members: {factory: react, can_spawn: [kid]}\n",
            "members[0].can_spawn[0]: no template 'kid'",
        ),
    ],
)
def test_a_bad_value_in_a_file_names_the_file_then_the_field(
    tmp_path: Path, text: str, error: str
) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(text)
    message = refused(lambda: swarm(config=path))
    assert message.startswith(f"{path}: {error}"), message


def test_only_what_came_from_the_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "budget.yaml"
    path.write_text("budget: {grace: -1}\n")
    assert refused(lambda: swarm(members={"factory": "react", "count": 0}, config=path)) == (
        "members[0].count: expected a whole number in [1, 10000], got 0"
    )
    assert refused(lambda: swarm(members=member(react), config=path)).startswith(
        f"{path}: budget.grace: "
    )
    assert refused(lambda: swarm(budget={"grace": 1}, config=path)) == (
        f"{path}: budget: given both in config and as a parameter; give it once"
    )


# -- point 2: the error types follow Inspect's convention ------------------------------------


def test_user_facing_errors_keep_their_python_contract() -> None:
    error = ConfigError("members[0].count: expected a whole number, got [null, null]")
    assert isinstance(error, ValueError)  # `except ValueError` callers still catch it
    assert str(error) == "members[0].count: expected a whole number, got [null, null]"
    assert error.args == (str(error),)
    # Inspect prints `message` as rich markup: a "[name]" must not be eaten as a tag
    assert error.message == "members[0].count: expected a whole number, got \\[null, null]"
    plugin = PluginError("p", "swarm_start", "raised KeyError('x')")
    assert str(plugin) == plugin.message == "Plugin 'p', hook 'swarm_start': raised KeyError('x')"
    assert str(UsageError("--x")) == "--x"


# -- point 2: swarm demo -------------------------------------------------------------------------


def test_swarm_demo_says_why_an_unknown_swarm_model_failed(tmp_path: Path) -> None:
    # in a subprocess: the message lists the swarm/ models registered in the process, and
    # tests of this suite register models of their own
    done = run(str(BIN / "swarm"), "demo", "--model", "swarm/scripted2", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "error: unknown model 'swarm/scripted2': swarm-eval provides 'swarm/scripted' and "
        "'swarm/noisy' (did you mean 'swarm/scripted'?)\n"
    )
    no_traceback(done)


@pytest.mark.parametrize("members", ["0", "10001"])
def test_swarm_demo_names_its_members_option(tmp_path: Path, members: str) -> None:
    """Before: ``--members 0`` ran, and failed naming the spec's ``member.count``."""
    done = CliRunner().invoke(cli, ["demo", "--members", members, "--log-dir", str(tmp_path)])
    assert done.exit_code == 2
    assert done.output.splitlines()[-1] == (
        f"Error: Invalid value for '--members': {members} is not in the range 1<=x<=10000."
    )
    assert not list(tmp_path.iterdir())  # nothing ran


def test_swarm_demo_says_why_a_provider_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key reaches the subprocess: with the openai package missing Inspect asks for it, with
    it installed for OPENAI_API_KEY; either way the reason is printed (it used to be nothing).
    (In a subprocess: in process it would load Inspect's OpenAI provider into this worker,
    which the ledger then lists among the loaded classes that compact natively.)"""
    done = run(str(BIN / "swarm"), "demo", "--model", "openai/gpt-4o", cwd=tmp_path)
    assert done.returncode == 1
    assert re.search(r"pip install openai|OPENAI_API_KEY", done.stderr), done.stderr
    no_traceback(done)
    code, _, err = swarm_main(
        "demo", "--model", "nosuch/model", cwd=tmp_path, monkeypatch=monkeypatch
    )
    assert (code, err) == (
        1,
        "error: the demo could not run: ValueError: Model API nosuch of model 'nosuch/model' "
        "not recognized.\n",
    )


# -- point 8: version, help, topology check --------------------------------------------------


def test_version_is_the_distributions() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"swarm-eval, version {version('swarm-eval')}\n"
    assert version("swarm-eval") == "0.1.0"


def commands() -> dict[str, click.Command]:
    """Every command the ``swarm`` command has, plugins' included, by its full name."""
    plugin_catalog(strict=False, warn=False).register_commands(cli)
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, prefix: str) -> None:
        for name, command in group.commands.items():
            found[f"{prefix}{name}"] = command
            if isinstance(command, click.Group):
                walk(command, f"{prefix}{name} ")

    walk(cli, "")
    return found


def test_the_command_list_shows_whole_descriptions() -> None:
    top = {n: c for n, c in commands().items() if " " not in n}
    result = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    listed = result.output.split("Commands:\n", 1)[1]
    assert set(top) == {
        "agent-image",
        "arms",
        "compare",
        "demo",
        "fanout",
        "plugins",
        "scripted-server",
        "timeline",
        "topology",
    }
    for name, command in top.items():
        assert command.short_help and not command.short_help.endswith("...")
        assert re.search(rf"^  {name} +{re.escape(command.short_help)}$", listed, re.M), listed
    assert "..." not in listed


def test_every_command_has_a_full_help_with_examples() -> None:
    found = commands()
    assert "topology check" in found
    for name in found:
        result = CliRunner().invoke(cli, [*name.split(), "--help"])
        assert result.exit_code == 0, result.output
        text = result.output
        assert re.search(r"^  Examples?:$", text, re.M), f"swarm {name}: no example\n{text}"
        assert re.search(rf"^    swarm {name}\b", text, re.M), f"swarm {name}: {text}"


def check(*args: str) -> Any:
    result = CliRunner().invoke(cli, ["topology", "check", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_topology_check_prints_the_resolved_topology() -> None:
    example = str(ROOT / "docs" / "examples" / "topology.yaml")
    described = json.loads(check(example, "--json"))
    # the digest of what defines the experiment, as the log records it; the plugins involved
    assert described.pop("topology_sha256") == topology_digest(described)
    assert described.pop("plugins") == {
        "leaderless": {"distribution": "swarm-eval", "version": "0.1.0"},
    }
    no_limits = {"token": None, "cost": None, "turn": None, "message": None, "time": None}
    assert described == {
        "members": [
            {
                "agent": "react",
                "args": {},
                "name": None,
                "role": None,
                "count": 2,
                "model": None,
                "delivery": None,
                "limits": {**no_limits, "turn": 8},
                "can_spawn": [],
                "sandbox": None,
                "bridged": None,
                "names": ["react-1", "react-2"],
            },
            {
                "agent": "react",
                "args": {"description": "Reviews answers"},
                "name": "reviewer",
                "role": "reviews the workers' answers",
                "count": 1,
                "model": None,
                "delivery": "poll",
                "limits": no_limits,
                "can_spawn": [],
                "sandbox": None,
                "bridged": None,
                "names": ["reviewer"],
            },
        ],
        "controller": {
            "name": "leaderless",
            "plugin": "leaderless",
            "distribution": "swarm-eval",
            "version": "0.1.0",
            "params": {
                "stop_on_submission": False,
                "final": "last",
                "verifier": None,
                "normalize": None,
                "synthesize_model": None,
                "synthesize_prompt": None,
            },
        },
        "channels": [],
        "budget": {
            "cost": None,
            "tokens": None,
            "time": None,
            "reserve": 0.05,
            "split": "pool",
            "grace": 10.0,
        },
        "on_member_error": "continue",
        "templates": {},
        "spawning": {
            "max_depth": 2,
            "max_children": 16,
            "max_live": 64,
            "max_spawns": 64,
            "retries": 1,
        },
    }
    text = check(example)
    header, body = text.split("\n", 1)
    assert header == f"# {example}: valid; 3 member(s): react-1, react-2, reviewer"
    shown = yaml.safe_load(body)
    assert {k: v for k, v in shown.items() if k not in ("plugins", "topology_sha256")} == described


def test_topology_check_resolves_plugins_templates_and_spawning(tmp_path: Path) -> None:
    path = tmp_path / "spawning.toml"
    path.write_text(
        '[[members]]\nfactory = "react"\nname = "lead"\ncan_spawn = ["helper"]\n\n'
        '[controller]\nname = "quorum"\nsize = 2\n\n'
        '[[channels]]\nname = "bulletin"\n\n'
        '[templates.helper]\nfactory = "react"\nrole = "helps"\nlimits = {turn = 3}\n\n'
        '[spawning]\nmax_children = 4\n\n[budget]\ntokens = 5000\nsplit = "equal"\n'
    )
    described = json.loads(check(str(path), "--json"))
    assert described["controller"] == {
        "name": "swarm-fixture-plugin/quorum",
        "plugin": "fixture",
        "distribution": "swarm-fixture-plugin",
        "version": "0.1.0",
        "params": {"size": 2},
    }
    # the channel's default parameter, and the messages channel a spawning swarm gets
    assert described["channels"] == [
        {
            "name": "swarm-fixture-plugin/bulletin",
            "plugin": "fixture",
            "distribution": "swarm-fixture-plugin",
            "version": "0.1.0",
            "params": {"path": "/shared/bulletin.md"},
        },
        {
            "name": "messages",
            "plugin": "messages",
            "distribution": "swarm-eval",
            "version": "0.1.0",
            "params": {"routes": "family", "max_bytes": 16000, "rate": None, "max_wait": 600},
        },
    ]
    assert described["templates"]["helper"]["role"] == "helps"
    assert described["templates"]["helper"]["limits"]["turn"] == 3
    assert described["members"][0]["can_spawn"] == ["helper"]
    assert described["members"][0]["names"] == ["lead"]
    assert described["spawning"]["max_children"] == 4
    assert (described["budget"]["tokens"], described["budget"]["split"]) == (5000, "equal")


def test_topology_check_refuses_a_bad_file_with_the_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(BAD_YAML)
    found = swarm_main("topology", "check", str(path), cwd=tmp_path, monkeypatch=monkeypatch)
    assert found == (1, "", f"error: {path}: {YAML_PROBLEM}\n")
