"""A bridged CLI's own sub-agents in the subagents record, from the events Inspect logs for them
(``swarm._report.cli_subagents``): the spans inspect_swe opens per ``spawn_agent`` call and the
model calls under them, built here as a Codex member's run writes them.  The run with Codex
itself is ``tests/test_agent_clis.py::test_a_codex_members_own_sub_agents_are_recorded``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from inspect_ai.event import Event, ModelEvent, SpanBeginEvent, SpanEndEvent
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall

from swarm._report.subagents import build_subagents
from swarm._schemas import SubagentsRecord

START = datetime(2026, 12, 7, tzinfo=UTC)
LEAD = "span-lead"


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def model(
    span: str,
    seconds: float,
    tokens: int,
    calls: list[ToolCall] | None = None,
    text: str = "",
    heard: list[ChatMessage] | None = None,
) -> ModelEvent:
    """A model call in ``span`` that used ``tokens`` and answered ``text`` or ``calls``."""
    output = ModelOutput.from_content("swarm/scripted", text)
    output.choices[0].message = ChatMessageAssistant(content=text, tool_calls=calls)
    output.usage = ModelUsage(input_tokens=tokens - 1, output_tokens=1, total_tokens=tokens)
    return ModelEvent(
        model="swarm/scripted",
        input=[ChatMessageUser(content="task"), *(heard or [])],
        tools=[],
        tool_choice="auto",
        config=GenerateConfig(),
        output=output,
        timestamp=at(seconds),
        completed=at(seconds + 0.5),
        span_id=span,
    )


def spawn(call_id: str, message: str) -> ToolCall:
    return ToolCall(id=call_id, function="spawn_agent", arguments={"message": message})


def spawned(call_id: str, agent: str) -> ChatMessageTool:
    result = json.dumps({"agent_id": agent, "nickname": "Ohm"})
    return ChatMessageTool(content=result, tool_call_id=call_id, function="spawn_agent")


def notified(agent: str, status: Any) -> ChatMessageUser:
    note = json.dumps({"agent_path": agent, "status": status})
    return ChatMessageUser(content=f"<subagent_notification>\n{note}\n</subagent_notification>")


def begin(span: str, parent: str, seconds: float) -> SpanBeginEvent:
    return SpanBeginEvent(
        id=span,
        parent_id=parent,
        type="agent",
        name="agent",
        metadata={"agent_type": "default"},
        timestamp=at(seconds),
    )


def end(span: str, seconds: float) -> SpanEndEvent:
    return SpanEndEvent(id=span, timestamp=at(seconds))


def record(events: list[Event], wall_clock: float = 100.0) -> list[dict[str, Any]]:
    built = build_subagents(events, {LEAD: "lead"}, {}, START, wall_clock)
    assert built is not None
    SubagentsRecord.model_validate(built)
    return [
        {k: v for k, v in e.items() if k not in ("seq", "member", "span")} for e in built["entries"]
    ]


def lead_span() -> SpanBeginEvent:
    return SpanBeginEvent(id=LEAD, parent_id=None, type="agent", name="lead", timestamp=at(0))


def test_a_wait_agent_result_an_error_and_a_nested_sub_agent() -> None:
    """A sub-agent told to its parent through ``wait_agent``, one that errored (notified), and a
    sub-agent of a sub-agent: depth 2, its calls counted for its parent too."""
    wait = ToolCall(id="w1", function="wait_agent", arguments={"targets": ["A", "B"]})
    waited = ChatMessageTool(
        content=json.dumps({"status": {"A": {"completed": "9"}}, "timed_out": False}),
        tool_call_id="w1",
        function="wait_agent",
    )
    events: list[Event] = [
        lead_span(),
        model(LEAD, 1, 10, [spawn("c1", "first task"), spawn("c2", "second task")]),
        begin("agent-c1", LEAD, 1.2),
        begin("agent-c2", LEAD, 1.3),
        model(
            "agent-c1", 2, 20, [ToolCall(id="x", function="exec_command", arguments={"cmd": "ls"})]
        ),
        model("agent-c2", 2, 30, [spawn("c3", "third task")], heard=[]),
        begin("agent-c3", "agent-c2", 2.4),
        model(LEAD, 3, 11, [wait], heard=[spawned("c1", "A"), spawned("c2", "B")]),
        model("agent-c3", 3, 40, text="deep"),
        model("agent-c1", 4, 21, text="9"),
        end("agent-c3", 4.5),
        model(
            "agent-c2",
            5,
            31,
            text="",
            heard=[spawned("c3", "C"), notified("C", {"errored": "boom"})],
        ),
        model(LEAD, 6, 12, text="", heard=[waited]),
        end("agent-c1", 6.2),
        end("agent-c2", 7),
    ]
    rows = record(events)
    assert rows == [
        {
            "time": 1.2,
            "op": "dispatch",
            "name": "lead/A",
            "agent": "A",
            "subagent": "default",
            "background": True,
            "parent": "lead",
            "depth": 1,
            "prompt": "first task",
            "task_description": None,
        },
        {
            "time": 1.3,
            "op": "dispatch",
            "name": "lead/B",
            "agent": "B",
            "subagent": "default",
            "background": True,
            "parent": "lead",
            "depth": 1,
            "prompt": "second task",
            "task_description": None,
        },
        {
            "time": 2.4,
            "op": "dispatch",
            "name": "lead/C",
            "agent": "C",
            "subagent": "default",
            "background": True,
            "parent": "lead/B",
            "depth": 2,
            "prompt": "third task",
            "task_description": None,
        },
        {
            "time": 2.5,
            "op": "ran",
            "name": "lead/A",
            "agent": "A",
            "tool": "exec_command",
            "arguments": {"cmd": "ls"},
        },
        {
            "time": 2.5,
            "op": "ran",
            "name": "lead/B",
            "agent": "B",
            "tool": "spawn_agent",
            "arguments": {"message": "third task"},
        },
        {
            "time": 4.5,
            "op": "end",
            "name": "lead/C",
            "agent": "C",
            "status": "errored",
            "started": 2.4,
            "result": None,
            "error": "boom",
            "usage": {"total_tokens": 40, "calls": 1, "cache_replays": 0, "errored": 0},
        },
        {
            "time": 5.0,
            "op": "received",
            "name": "lead/C",
            "agent": "C",
            "via": "notification",
            "kind": "status",
            "text": "boom",
            "seen": {"time": 5.0, "via": "model_call"},
        },
        {
            "time": 6.0,
            "op": "received",
            "name": "lead/A",
            "agent": "A",
            "via": "wait_agent",
            "kind": "result",
            "text": "9",
            "seen": {"time": 6.0, "via": "model_call"},
        },
        {
            "time": 6.2,
            "op": "end",
            "name": "lead/A",
            "agent": "A",
            "status": "completed",
            "started": 1.2,
            "result": "9",
            "error": None,
            "usage": {"total_tokens": 41, "calls": 2, "cache_replays": 0, "errored": 0},
        },
        # B was never reported to the lead: its status is unknown; its usage holds C's
        {
            "time": 7.0,
            "op": "end",
            "name": "lead/B",
            "agent": "B",
            "status": None,
            "started": 1.3,
            "result": None,
            "error": None,
            "usage": {"total_tokens": 30 + 31 + 40, "calls": 3, "cache_replays": 0, "errored": 0},
        },
    ]


def test_a_sub_agent_that_outlived_the_run_and_one_never_bound() -> None:
    """A span that never closed is ``running`` at the run's end; a spawn whose result never
    reached an input has no agent id, so its name is its span's."""
    events: list[Event] = [
        lead_span(),
        model(LEAD, 1, 10, [spawn("c1", "first task"), spawn("c2", "second task")]),
        begin("agent-c1", LEAD, 1.1),
        begin("agent-c2", LEAD, 1.1),
        model("agent-c1", 2, 20, text="still going"),
    ]
    rows = record(events, wall_clock=9.5)
    ends = {
        r["name"]: (r["time"], r["status"], r["usage"]["calls"]) for r in rows if r["op"] == "end"
    }
    assert ends == {"lead/agent-c1": (9.5, "running", 1), "lead/agent-c2": (9.5, "running", 0)}
    assert [r["agent"] for r in rows if r["op"] == "dispatch"] == [None, None]


def test_a_spawn_without_a_span_and_a_run_without_spawns_are_not_sub_agents() -> None:
    """Only a spawn inspect_swe opened a span for is a sub-agent; a run with none has no
    record (a tool the model named spawn_agent in a member of our own is not one)."""
    events: list[Event] = [lead_span(), model(LEAD, 1, 10, [spawn("c1", "a task")])]
    assert build_subagents(events, {LEAD: "lead"}, {}, START, 5.0) is None
    events += [begin("agent-other", LEAD, 1.1)]
    assert build_subagents(events, {LEAD: "lead"}, {}, START, 5.0) is None
