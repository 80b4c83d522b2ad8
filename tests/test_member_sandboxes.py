"""Members and templates that name the sample sandbox environment they run in
(``member(sandbox=...)``): each member's tools land in its environment and only there, a
spawned child in its template's, and every refusal (at configuration, at the run's start, at a
spawn) with its message.  The environments are the ``bwrap`` provider's, named by
``BwrapConfig`` as a Docker compose file's services would be."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.scorer import CORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState
from inspect_ai.tool import Tool, tool
from inspect_ai.util import SandboxEnvironmentSpec, sandbox
from pydantic import ValidationError

from swarm import (
    BwrapConfig,
    ConfigError,
    PluginCatalog,
    controller,
    member,
    member_sandbox,
    plugin_catalog,
    swarm,
)
from swarm._spec.topology import swarm_spec
from swarm.records import READS_KEY
from swarm.testing import Step, call, scripted_model, submit

from helpers import tool_results

TOOLS = {"tools": ["bash", "test_member_sandboxes/peek"]}


@tool(name="test_member_sandboxes/peek")
def peek() -> Tool:
    async def execute(name: str) -> str:
        """Read mine.txt in the sandbox environment called ``name``.

        Args:
            name: the environment's name ("" for the default).
        """
        try:
            return await sandbox(name or None).read_file("mine.txt")
        except ValueError as ex:
            return str(ex)

    return execute


@scorer(metrics=[accuracy()])
def where_files_are(names: list[str], members: list[str]) -> Any:
    """Which out.txt each environment holds after the run, by name and by member."""

    async def score(state: TaskState, target: Target) -> Score:
        async def out(env: Any) -> str:
            try:
                text: str = await env.read_file("out.txt")
                return text
            except FileNotFoundError:
                return "-"

        found = {name: await out(sandbox(name)) for name in names}
        by_member = {m: await out(member_sandbox(m)) for m in members}
        return Score(value=CORRECT, explanation=json.dumps({"env": found, "member": by_member}))

    return score


def bwrap(*names: str) -> SandboxEnvironmentSpec:
    return SandboxEnvironmentSpec("bwrap", BwrapConfig(environments=names))


def run(
    solver: Any,
    scripts: dict[str, list[Step]],
    files: dict[str, str],
    names: tuple[str, ...],
    log_dir: Path,
    members: list[str] | None = None,
) -> EvalSample:
    task = Task(
        dataset=[Sample(input="go", target="", files=files)],
        solver=solver,
        scorer=where_files_are(["default", *names], members or []),
        sandbox=bwrap(*names),
    )
    [log] = eval(task, model=scripted_model(scripts), display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def placed(sample: EvalSample) -> dict[str, Any]:
    [score] = (sample.scores or {}).values()
    found: dict[str, Any] = json.loads(str(score.explanation))
    return found


def entries(sample: EvalSample, who: str) -> list[tuple[str, str, str]]:
    record = sample.store[READS_KEY]
    return [(e["sandbox"], e["path"], e["op"]) for e in record["entries"] if e["member"] == who]


# -- members ---------------------------------------------------------------------------------


def test_each_member_works_in_the_environment_it_names_and_sees_no_other(log_dir: Path) -> None:
    solver = swarm(
        members=[
            member("swarm/worker", name="lead", args=TOOLS, sandbox="default"),
            member("swarm/worker", name="agent", count=2, args=TOOLS, sandbox="{member}"),
        ],
        controller=controller("leaderless", stop_on_submission=False),
    )
    scripts: dict[str, list[Step]] = {
        "lead": [call("bash", command="ls; cat base.txt"), submit("lead")],
        "agent-1": [
            call("bash", command="cat mine.txt; echo made-by-1 > out.txt; ls"),
            call("peek", name="agent-2"),
            call("peek", name=""),
            submit("one"),
        ],
        "agent-2": [
            call("bash", command="cat mine.txt; echo made-by-2 > out.txt; ls"),
            submit("two"),
        ],
    }
    files = {"base.txt": "BASE\n", "agent-1:mine.txt": "one\n", "agent-2:mine.txt": "two\n"}
    members = ["lead", "agent-1", "agent-2"]
    sample = run(solver, scripts, files, ("agent-1", "agent-2"), log_dir, members)
    bash = sorted(r for r, _ in tool_results(sample, "bash"))
    assert bash == [
        "base.txt\nBASE\n",
        "one\nmine.txt\nout.txt\n",
        "two\nmine.txt\nout.txt\n",
    ]
    # inside agent-1's task, sandbox() is agent-1 and no other environment is reachable
    assert [r for r, _ in tool_results(sample, "peek")] == [
        "SandboxEnvironment 'agent-2' is not a recognized environment name. Available "
        "environments: default.",
        "one\n",
    ]
    # each out.txt is where its member wrote it; the scorer finds it by member too
    assert placed(sample) == {
        "env": {"default": "-", "agent-1": "made-by-1\n", "agent-2": "made-by-2\n"},
        "member": {"lead": "-", "agent-1": "made-by-1\n", "agent-2": "made-by-2\n"},
    }
    # the reads record says which environment each member ran in, and what it touched there
    record = sample.store[READS_KEY]
    assert (record["version"], record["provider"], record["watched"]) == (1, "bwrap", True)
    assert record["members"] == {
        "lead": {"sandbox": "default", "files": []},
        "agent-1": {"sandbox": "agent-1", "files": []},
        "agent-2": {"sandbox": "agent-2", "files": []},
    }
    assert entries(sample, "agent-1") == [
        ("agent-1", "mine.txt", "open"),
        ("agent-1", "mine.txt", "read"),
        ("agent-1", "out.txt", "open"),
        ("agent-1", "out.txt", "write"),
        ("agent-1", "mine.txt", "open"),  # the peek tool's read_file, in its own environment
        ("agent-1", "mine.txt", "read"),
    ]
    assert entries(sample, "lead") == [
        ("default", "base.txt", "open"),
        ("default", "base.txt", "read"),
    ]


def test_members_that_name_one_environment_share_it(log_dir: Path) -> None:
    solver = swarm(
        members=[
            member("swarm/worker", name="a", args=TOOLS, sandbox="work"),
            member("swarm/worker", name="b", args=TOOLS, sandbox="work"),
        ],
        controller=controller("leaderless", stop_on_submission=False),
    )
    scripts: dict[str, list[Step]] = {
        "a": [call("bash", command="echo from-a > out.txt"), submit("a")],
        "b": [
            call(
                "bash",
                command="for i in $(seq 600); do [ -s out.txt ] && break; sleep 0.1; done; "
                "cat out.txt",
            ),
            submit("b"),
        ],
    }
    sample = run(solver, scripts, {}, ("work",), log_dir)
    assert sorted(r for r, _ in tool_results(sample, "bash")) == ["", "from-a\n"]
    assert placed(sample)["env"] == {"default": "-", "work": "from-a\n"}
    assert sample.store[READS_KEY]["members"] == {
        "a": {"sandbox": "work", "files": []},
        "b": {"sandbox": "work", "files": []},
    }


# -- spawned children ------------------------------------------------------------------------


def test_a_spawned_child_runs_in_its_templates_environment(log_dir: Path) -> None:
    solver = swarm(
        members=member(
            "swarm/worker",
            name="lead",
            args={"tools": ["bash"]},
            sandbox="default",
            can_spawn=["worker", "reviewer"],
        ),
        templates={
            "worker": {"factory": "swarm/worker", "args": TOOLS, "sandbox": "{member}"},
            "reviewer": member("swarm/worker", args=TOOLS, sandbox="w-a"),
        },
    )
    scripts: dict[str, list[Step]] = {
        "lead": [
            call("spawn_child", name="w-a", task="work", template="worker"),
            call("spawn_child", name="w-c", task="work", template="worker"),
            call("wait_for_children"),
            call("spawn_child", name="rev", task="review", template="reviewer"),
            call("wait_for_children"),
            call("bash", command="ls"),
            submit("done"),
        ],
        "w-a": [call("bash", command="cat mine.txt; echo by-w-a > out.txt"), submit("ok")],
        "rev": [call("bash", command="cat mine.txt out.txt"), submit("ok")],
    }
    files = {"base.txt": "BASE\n", "w-a:mine.txt": "A\n", "w-b:mine.txt": "B\n"}
    sample = run(solver, scripts, files, ("w-a", "w-b"), log_dir, ["w-a", "rev"])
    assert [r for r, _ in tool_results(sample, "bash")] == ["A\n", "A\nby-w-a\n", "base.txt\n"]
    [(_, refused), *_] = [r for r in tool_results(sample, "spawn_child") if r[1] is not None]
    assert refused == (
        "spawn refused: template 'worker' (for 'w-c') names the sandbox environment 'w-c', "
        "which this sample does not have (its environments: default, w-a, w-b)."
    )
    spawns = sample.store["inspect_swarm:spawns"]["entries"]
    assert [(e["op"], e["member"], e["reason"]) for e in spawns if e["op"] != "end"] == [
        ("spawn", "w-a", None),
        ("refused", None, "sandbox"),
        ("spawn", "rev", None),
    ]
    assert placed(sample)["env"] == {"default": "-", "w-a": "by-w-a\n", "w-b": "-"}
    assert sample.store[READS_KEY]["members"] == {
        "lead": {"sandbox": "default", "files": []},
        "w-a": {"sandbox": "w-a", "files": []},
        "rev": {"sandbox": "w-a", "files": []},
    }


def test_a_child_may_not_take_a_roster_members_environment_by_its_name(log_dir: Path) -> None:
    # w-b is a roster member working in environment w-b; a child asked for as w-b from a
    # {member} template would run there (renamed w-b~2, placed as w-b): refused
    solver = swarm(
        members=[
            member("swarm/worker", name="lead", args=TOOLS, sandbox="default", can_spawn=["w"]),
            member("swarm/worker", name="w-b", args=TOOLS, sandbox="w-b"),
        ],
        templates={"w": {"factory": "swarm/worker", "args": TOOLS, "sandbox": "{member}"}},
        controller=controller("leaderless", stop_on_submission=False),
    )
    scripts: dict[str, list[Step]] = {
        "lead": [call("spawn_child", name="w-b", task="read it"), submit("done")],
        "w-b": [call("bash", command="cat mine.txt"), submit("ok")],
    }
    files = {"w-b:mine.txt": "B\n"}
    sample = run(solver, scripts, files, ("w-b",), log_dir, ["w-b"])
    [(_, refused)] = tool_results(sample, "spawn_child")
    assert refused == (
        "spawn refused: 'w-b' is a roster member's name, and template 'w' would run the child "
        "in that member's environment 'w-b'; give the child a name of its own."
    )
    spawns = sample.store["inspect_swarm:spawns"]["entries"]
    assert [(e["op"], e["member"], e["reason"]) for e in spawns] == [("refused", None, "sandbox")]


# -- refusals ----------------------------------------------------------------------------------


def test_a_missing_environment_is_refused_when_the_run_starts(log_dir: Path) -> None:
    solver = swarm(members=member("swarm/worker", name="agent", count=3, sandbox="{member}"))
    task = Task(dataset=[Sample(input="go", target="")], solver=solver, sandbox=bwrap("agent-1"))
    [log] = eval(task, model=scripted_model({}), display="none", log_dir=str(log_dir))
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "sandbox: member 'agent-2' names the sandbox environment 'agent-2', which this sample "
        "does not have (its environments: default, agent-1)"
    )


def test_a_missing_template_environment_is_refused_when_the_run_starts(log_dir: Path) -> None:
    solver = swarm(
        members=member("swarm/worker", name="lead", sandbox="default", can_spawn=["w"]),
        templates={"w": member("swarm/worker", sandbox="elsewhere")},
    )
    task = Task(dataset=[Sample(input="go", target="")], solver=solver, sandbox="bwrap")
    [log] = eval(task, model=scripted_model({}), display="none", log_dir=str(log_dir))
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "sandbox: template 'w' names the sandbox environment 'elsewhere', which this sample "
        "does not have (its environments: default)"
    )


def test_a_named_environment_needs_a_sample_sandbox(log_dir: Path) -> None:
    solver = swarm(members=member("swarm/worker", name="a", sandbox="agent-1"))
    task = Task(dataset=[Sample(input="go", target="")], solver=solver)
    [log] = eval(task, model=scripted_model({}), display="none", log_dir=str(log_dir))
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "sandbox: member 'a' names the sandbox environment 'agent-1', and the sample has no "
        "sandbox; give the task one with an environment of that name"
    )


@pytest.mark.parametrize(
    ("sandbox", "message"),
    [
        (
            "",
            "member.sandbox: expected the name of one of the sample's sandbox environments "
            "(such as 'agent-1' or '{member}'), got ''",
        ),
        (
            3,
            "member.sandbox: expected the name of one of the sample's sandbox environments "
            "(such as 'agent-1' or '{member}'), got 3",
        ),
        (
            "agent-{index}",
            "member.sandbox: 'agent-{index}': the only field a sandbox name may hold is {member}",
        ),
        (
            "svc:agent",
            "member.sandbox: 'svc:agent': a sandbox environment's name has no ':' (Inspect reads "
            "'name:path' in a sample's files as a file in environment 'name')",
        ),
    ],
)
def test_a_bad_sandbox_name_is_refused(sandbox: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        member("swarm/worker", sandbox=sandbox)
    assert str(caught.value) == message


@pytest.fixture
def catalog() -> PluginCatalog:
    return plugin_catalog()


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        (
            {
                "members": [{"factory": "swarm/worker", "name": "a", "sandbox": "agent-1"}],
                "sandboxes": {"per_member": True},
            },
            "members[0].sandbox: 'agent-1' names one of the sample's environments, and "
            "sandboxes.per_member: true gives every member a new environment of its own; use "
            "one or the other",
        ),
        (
            {
                "members": [
                    {"factory": "swarm/worker", "name": "a", "sandbox": "agent-1"},
                    {"factory": "swarm/worker", "name": "b"},
                ]
            },
            "members[1].sandbox: names no sandbox environment while members[0] names "
            "'agent-1'; when one member works in a named environment, every member and "
            "template names one (one without would reach every environment, the others' too): "
            "name the sample's default environment ('default') for one that works there",
        ),
        (
            {
                "members": [
                    {"factory": "swarm/worker", "name": "a", "sandbox": "x", "can_spawn": ["w"]}
                ],
                "templates": {"w": {"factory": "swarm/worker"}},
            },
            "templates.w.sandbox: names no sandbox environment while members[0] names 'x'; "
            "when one member works in a named environment, every member and template names one "
            "(one without would reach every environment, the others' too): name the sample's "
            "default environment ('default') for one that works there",
        ),
        (
            {
                "members": [{"factory": "swarm/worker", "name": "a", "can_spawn": ["w"]}],
                "templates": {"w": {"factory": "swarm/worker", "sandbox": "{member}"}},
            },
            "members[0].sandbox: names no sandbox environment while templates.w names "
            "'{member}'; when one member works in a named environment, every member and "
            "template names one (one without would reach every environment, the others' too): "
            "name the sample's default environment ('default') for one that works there",
        ),
        (
            {"members": [{"factory": "swarm/worker", "name": "a", "sandbox": ""}]},
            "members[0].sandbox: expected the name of one of the sample's sandbox environments "
            "(such as 'agent-1' or '{member}'), got ''",
        ),
        (
            {"members": [{"factory": "swarm/worker", "name": "a", "sandbx": "x"}]},
            "members[0]: unknown key(s) 'sandbx' (did you mean 'sandbox'?); expected some of "
            "agent, args, bridged, can_spawn, count, delivery, factory, limits, model, name, "
            "role, sandbox",
        ),
    ],
)
def test_combinations_that_cannot_work_are_refused_at_configuration(
    catalog: PluginCatalog, topology: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        swarm_spec(catalog, config=topology)
    assert str(caught.value) == message


def test_a_topology_file_names_sandboxes_for_members_and_templates(
    catalog: PluginCatalog, tmp_path: Path
) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(
        "members:\n"
        "  - {factory: swarm/worker, name: lead, sandbox: default, can_spawn: [worker]}\n"
        "  - {factory: swarm/worker, name: agent, count: 2, sandbox: '{member}'}\n"
        "templates:\n"
        "  worker: {factory: swarm/worker, sandbox: '{member}'}\n"
    )
    spec = swarm_spec(catalog, config=str(path))
    lead, agents = spec.members
    assert (lead.sandbox, agents.sandbox) == ("default", "{member}")
    assert [agents.sandbox_for(f"agent-{i}") for i in (1, 2)] == ["agent-1", "agent-2"]
    # a retry renamed because its name was taken works where the name it was spawned as does
    assert spec.templates["worker"].sandbox_for("w-a~2") == "w-a"
    assert member("swarm/worker").sandbox_for("x") is None


# -- the provider's named environments ---------------------------------------------------------


def test_bwrap_config_refuses_names_it_cannot_give() -> None:
    with pytest.raises(ValidationError) as caught:
        BwrapConfig(environments=("a", "default"))
    assert "environment 'default': a name is non-empty, has no ':' and is not 'default'" in str(
        caught.value
    )
    with pytest.raises(ValidationError) as twice:
        BwrapConfig(environments=("a", "a"))
    assert "environments ['a', 'a']: a name is given twice" in str(twice.value)


def test_bwrap_refuses_a_configuration_it_does_not_read(log_dir: Path) -> None:
    solver = swarm(members=member("swarm/worker", name="a"))
    task = Task(dataset=[Sample(input="go", target="")], solver=solver, sandbox=("bwrap", "x.y"))
    with pytest.raises(ValueError) as caught:  # Inspect made the file name absolute
        eval(task, model=scripted_model({}), display="none", log_dir=str(log_dir))
    text = str(caught.value)
    assert text.startswith(
        "sandbox provider 'bwrap': its configuration is a BwrapConfig (environments=[...]), got '"
    )
    assert text.endswith("x.y'")
