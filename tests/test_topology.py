"""Rosters and topologies: naming rules, config files, and errors that name the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.agent import react
from inspect_ai.log import list_eval_logs, read_eval_log

from swarm import Budget, ConfigError, member, plugin_catalog, swarm
from swarm._spec.roster import expand_roster
from swarm._spec.topology import swarm_spec

from helpers import result, worker


def names(*specs: object) -> list[str]:
    return [e.info.name for e in expand_roster(list(specs))]  # type: ignore[arg-type]


def test_counted_records_are_numbered() -> None:
    assert names(member(worker, count=3)) == ["worker-1", "worker-2", "worker-3"]
    assert names(member(worker, name="w", count=2)) == ["w-1", "w-2"]
    assert names(member(worker)) == ["worker"]


def test_repeated_default_names_are_numbered_across_records() -> None:
    assert names(member(react, count=6), member(react)) == [f"react-{i}" for i in range(1, 8)]
    assert names(member(react), member(worker), member(react)) == ["react-1", "worker", "react-2"]


def test_explicit_names_are_never_renumbered() -> None:
    assert names(member(react, name="lead"), member(react, count=2)) == [
        "lead",
        "react-1",
        "react-2",
    ]


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"members\[1\]\.name: member name 'a' is used twice"):
        names(member(react, name="a"), member(worker, name="a"))
    with pytest.raises(ConfigError, match="used twice"):
        names(member(react, name="react-1"), member(react, count=2))


@pytest.mark.parametrize("bad", ["init", "solvers", "scorers", "a/b", "a#b", "a b", ""])
def test_reserved_and_malformed_names_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="member.name"):
        member(react, name=bad)


def test_copies_need_a_factory() -> None:
    with pytest.raises(ConfigError, match="member.count: several copies need an @agent factory"):
        member(react(), count=2)
    with pytest.raises(ConfigError, match="member.count"):
        member(react, count=0)


def test_unknown_agent_name_is_refused() -> None:
    with pytest.raises(ConfigError, match="no @agent called 'nope/missing'"):
        member("nope/missing")


def spec_from(config: object) -> object:
    return swarm_spec(plugin_catalog(), config=config)  # type: ignore[arg-type]


def test_bad_field_in_topology_file_names_its_path(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text("members:\n  - factory: react\n  - factory: react\n    count: two\n")
    with pytest.raises(ConfigError, match=r"members\[1\]\.count: expected a whole number"):
        spec_from(path)


def test_unknown_keys_are_refused_with_their_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"members\[0\]: unknown key\(s\) 'cuont'"):
        spec_from({"members": [{"factory": "react", "cuont": 2}]})
    path = tmp_path / "t.yaml"
    path.write_text("members: {factory: react}\ncontroler: leaderless\n")
    with pytest.raises(ConfigError, match="unknown key.*'controler'"):
        spec_from(path)
    with pytest.raises(ConfigError, match=r"budget: unknown key\(s\) 'cots'"):
        spec_from({"members": {"factory": "react"}, "budget": {"cots": 1}})


def test_bad_values_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"members\[0\]\.limits"):
        spec_from({"members": [{"factory": "react", "limits": {"token": "many"}}]})
    with pytest.raises(ConfigError, match="budget.reserve"):
        spec_from({"members": {"factory": "react"}, "budget": {"reserve": 1.5}})
    with pytest.raises(ConfigError, match="budget.split"):
        Budget(split="halves")  # type: ignore[arg-type]


def test_unknown_controller_lists_the_registered_ones() -> None:
    with pytest.raises(
        ConfigError,
        match=r"controller: unknown controller 'boss'; registered controllers: .*leaderless",
    ):
        spec_from({"members": {"factory": "react"}, "controller": "boss"})


def test_controller_parameters_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        spec_from(
            {"members": {"factory": "react"}, "controller": {"name": "leaderless", "stop": True}}
        )
    assert str(info.value) == (
        "controller: controller 'leaderless': unknown parameter(s) 'stop'; expected some of "
        "final, normalize, stop_on_submission, synthesize_model, synthesize_prompt, verifier"
    )
    with pytest.raises(ConfigError, match="controller: leaderless.final: 'last' needs stop_on"):
        swarm(
            members=member(react),
            controller={"name": "leaderless", "final": "last", "stop_on_submission": True},
        )


def test_toml_topology(tmp_path: Path) -> None:
    path = tmp_path / "topology.toml"
    path.write_text(
        '[[members]]\nfactory = "react"\ncount = 2\n\n[controller]\nname = "leaderless"\nstop_on_submission = false\n'
    )
    spec = spec_from(path)
    assert [m.count for m in spec.members] == [2]  # type: ignore[attr-defined]
    assert spec.controller.params == {"stop_on_submission": False}  # type: ignore[attr-defined]


def test_config_and_parameter_together_is_an_error() -> None:
    with pytest.raises(ConfigError, match="members: given both in config and as a parameter"):
        swarm(members=member(react), config={"members": {"factory": "react"}})


TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes

@task
def arithmetic():
    return Task(dataset=[Sample(input="What is 6 * 7?", target="42")], scorer=includes())
"""


def inspect_eval(tmp_path: Path, *args: str) -> dict[str, object]:
    (tmp_path / "task.py").write_text(TASK)
    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run(
        [
            str(inspect),
            "eval",
            "task.py",
            "--solver",
            "swarm/swarm",
            *args,
            "--model",
            "swarm/scripted",
            "-M",
            "answer=42",
            "--log-dir",
            "logs",
            "--display",
            "none",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info.name)
    assert log.status == "success" and log.samples
    return {"log": log, "result": result(log.samples[0])}


def test_cli_solver_with_members_argument(tmp_path: Path) -> None:
    out = inspect_eval(tmp_path, "-S", "members={factory: react, count: 4}")
    record = out["result"]
    assert [m["name"] for m in record["members"]] == [f"react-{i}" for i in range(1, 5)]  # type: ignore[index]
    assert record["stop_reason"] == "submitted"  # type: ignore[index]
    log = out["log"]
    assert log.samples[0].scores["includes"].value == "C"  # type: ignore[attr-defined]


def test_cli_solver_with_topology_file(tmp_path: Path) -> None:
    (tmp_path / "topology.yaml").write_text(
        "members:\n  - factory: react\n    count: 2\n  - factory: swarm/calculator_worker\n    name: calc\n"
        "controller:\n  name: leaderless\n  stop_on_submission: false\n  final: last\n"
    )
    record = inspect_eval(tmp_path, "-S", "config=topology.yaml")["result"]
    assert [m["name"] for m in record["members"]] == ["react-1", "react-2", "calc"]  # type: ignore[index]
    assert record["stop_reason"] == "all_done"  # type: ignore[index]
    assert record["final"]["mode"] == "last"  # type: ignore[index]


def test_cli_worker_members_use_the_board(tmp_path: Path) -> None:
    (tmp_path / "scripts.yaml").write_text(
        "worker-1:\n"
        "  - {tool: shared_memory, args: {command: create, path: /shared_memory/a.md, "
        'file_text: "42"}}\n'
        '  - {submit: "42"}\n'
        "worker-2:\n"
        "  - {tool: swarm_wait, args: {path: /shared_memory/a.md}}\n"
        "  - {tool: shared_memory, args: {command: view, path: f-1}}\n"
        '  - {submit: "42"}\n'
    )
    out = inspect_eval(
        tmp_path,
        "-S",
        "members={factory: swarm/worker, count: 2}",
        "-S",
        "channels=[shared_memory]",
        "-S",
        "controller={name: leaderless, stop_on_submission: false}",
        "-M",
        "scripts=scripts.yaml",
    )
    sample = out["log"].samples[0]  # type: ignore[attr-defined]
    metrics = sample.store["inspect_swarm:metrics"]
    assert metrics["tools_unwired"] == [] and metrics["notify_unwired"] == []
    rows = {m["name"]: m for m in metrics["members"]}
    assert rows["worker-1"]["comm"]["shared_memory"]["records"] == 1
    assert rows["worker-2"]["waits_by_outcome"] == {"news": 1}


def test_the_example_topology_ships_with_the_package_and_is_the_docs_one() -> None:
    """`swarm topology example` prints the shipped copy of docs/examples/topology.yaml (the
    README's second command writes it in an empty directory), and it is valid."""
    from click.testing import CliRunner

    from swarm.cli import cli

    shown = CliRunner().invoke(cli, ["topology", "example"])
    assert shown.exit_code == 0
    docs = Path(__file__).resolve().parent.parent / "docs" / "examples" / "topology.yaml"
    assert shown.output == docs.read_text()
    spec = swarm_spec(plugin_catalog(), config=str(docs))
    assert [m.info.name for m in expand_roster(spec.members)] == ["react-1", "react-2", "reviewer"]
