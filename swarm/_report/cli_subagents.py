"""A bridged agent CLI's own sub-agents (a Codex member's ``spawn_agent``), as entries of the
``inspect_swarm:subagents`` record.

Codex runs its sub-agents inside its own process, in the member's container: the runtime never
sees their tools run, only their model calls, which reach Inspect through the member's bridge.
inspect_swe's event consumer opens an agent span ``agent-<tool call id>`` for each
``spawn_agent`` call the model makes (under the span of the loop that made it) and files each
sub-agent's model calls under it, by its task text.  This module reads those spans and calls
back into the record's entries, as the runtime saw them (the model calls and their inputs, never
an agent's word about itself):

- ``dispatch``: the model call whose output held the ``spawn_agent`` call returned (its span
  opened): ``agent`` is
  Codex's agent id (from the call's result in a later input; ``None`` if no input held it),
  ``name`` ``<member>/<agent id>`` (``<member>/<span id>`` without one), ``subagent`` Codex's
  agent type (from the span), ``background`` true (Codex sub-agents run beside their parent),
  ``prompt`` the call's ``message`` (or its ``items``' texts);
- ``ran``: each tool call of the sub-agent's own model calls (``tool``, ``arguments``), at the
  end of the call that made it: what it asked its CLI to run;
- ``end``: its span closed (the run's end if it never did); ``status`` from what its parent
  was told (a ``<subagent_notification>`` or a ``wait_agent`` result): ``completed``,
  ``errored``, ``cancelled`` (shut down or interrupted), ``running`` if its span never closed,
  ``None`` if its parent was never told; ``usage`` its calls' (its own sub-agents' included);
- ``received``: the first model call of the parent's loop whose input held the sub-agent's
  terminal status, ``via`` ``notification`` or ``wait_agent`` (``time`` and ``seen`` are that
  call's start: when the parent's model first had it).

A sub-agent whose calls inspect_swe could not tell apart (two sub-agents given the same task)
has its calls filed under its parent's span: its ``usage`` is then 0 calls, and its parent's
calls hold them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs
from inspect_ai.event import Event, ModelEvent, SpanBeginEvent, SpanEndEvent
from inspect_ai.model import ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

__all__ = ["cli_subagent_rows"]

SPAWN_TOOL = "spawn_agent"
WAIT_TOOL = "wait_agent"
_NOTIFICATION = re.compile(r"<subagent_notification>\s*(\{.*?\})\s*</subagent_notification>", re.S)
_TERMINAL = {"completed": "completed", "errored": "errored", "shutdown": "cancelled"}
_TERMINAL_WORDS = {"shutdown": "cancelled", "interrupted": "cancelled", "not_found": "errored"}


@attrs.define
class _Span:
    id: str
    parent: str | None
    owner: str
    began: datetime
    agent_type: str
    ended: datetime | None = None


@attrs.define
class _Thread:
    span: _Span
    call: ToolCall
    loop: str  # the span of the loop that spawned it
    at: datetime
    name: str = ""
    agent: str | None = None
    status: str | None = None
    result: str | None = None
    error: str | None = None
    calls: list[ModelEvent] = attrs.Factory(list)


def cli_subagent_rows(
    events: Iterable[Event],
    member_spans: Mapping[str, str],
    started_at: datetime,
    wall_clock: float,
) -> list[dict[str, Any]]:
    """The record's entries (without ``seq``) for every CLI sub-agent under a member's span."""
    spans: dict[str, _Span] = {}
    calls: list[ModelEvent] = []
    for event in events:
        if isinstance(event, SpanBeginEvent):
            owner = member_spans.get(event.id)
            parent = spans.get(event.parent_id or "")
            if owner is not None or parent is not None:
                spans[event.id] = _Span(
                    id=event.id,
                    parent=None if owner is not None else parent.id if parent else None,
                    owner=owner or (parent.owner if parent else ""),
                    began=event.timestamp,
                    agent_type=_text((event.metadata or {}).get("agent_type")) or event.name,
                )
        elif isinstance(event, SpanEndEvent) and event.id in spans:
            spans[event.id].ended = event.timestamp
        elif isinstance(event, ModelEvent) and str(event.span_id) in spans:
            calls.append(event)
    threads = _threads(spans, calls, member_spans)
    if not threads:
        return []
    loop_of = {id(c): _loop(spans, threads, str(c.span_id)) for c in calls}
    for call in calls:
        thread = threads.get(loop_of[id(call)])
        while thread is not None:  # a nested sub-agent's calls count for its parents too
            thread.calls.append(call)
            thread = threads.get(thread.loop)
    _bind_agents(threads.values(), calls)
    for thread in threads.values():
        owner = thread.span.owner
        thread.name = f"{owner}/{thread.agent or thread.span.id}"
    rows: list[dict[str, Any]] = []
    for thread in threads.values():
        rows.append(_dispatch(thread, threads, started_at))
        rows += _ran(thread, loop_of, started_at)
        rows += _received(thread, calls, loop_of, started_at)
    for thread in threads.values():  # statuses are known once every received row is found
        rows.append(_end(thread, started_at, wall_clock))
    return rows


def _threads(
    spans: Mapping[str, _Span], calls: Sequence[ModelEvent], member_spans: Mapping[str, str]
) -> dict[str, _Thread]:
    """Each ``spawn_agent`` call whose span inspect_swe opened, by that span's id."""
    threads: dict[str, _Thread] = {}
    for call in calls:
        for tool_call in _tool_calls(call):
            span = spans.get(f"agent-{tool_call.id}")
            if tool_call.function != SPAWN_TOOL or span is None or span.id in threads:
                continue
            loop = str(call.span_id)
            while loop not in member_spans and loop not in threads and spans[loop].parent:
                loop = str(spans[loop].parent)
            # the span opens as the call's output arrives, a moment before the call completes
            at = min(span.began, call.completed or call.timestamp)
            threads[span.id] = _Thread(span=span, call=tool_call, loop=loop, at=at)
    return threads


def _loop(spans: Mapping[str, _Span], threads: Mapping[str, _Thread], span_id: str) -> str:
    """The loop a model call in ``span_id`` belongs to: the nearest sub-agent or member span."""
    at = spans.get(span_id)
    while at is not None and at.parent is not None and at.id not in threads:
        at = spans.get(at.parent)
    return at.id if at is not None else span_id


def _bind_agents(threads: Iterable[_Thread], calls: Sequence[ModelEvent]) -> None:
    """Codex's agent id for each spawn, from the call's result in a later input."""
    by_call = {t.call.id: t for t in threads}
    for call in calls:
        for message in call.input:
            if not isinstance(message, ChatMessageTool) or message.tool_call_id not in by_call:
                continue
            thread = by_call[message.tool_call_id]
            if thread.agent is None:
                found = _json(message.text)
                agent = found.get("agent_id") if isinstance(found, dict) else None
                thread.agent = agent if isinstance(agent, str) and agent else None


def _statuses(call: ModelEvent, waits: set[str]) -> list[tuple[str, str, Any]]:
    """``(via, agent id, status)`` for each sub-agent status in a call's input."""
    found: list[tuple[str, str, Any]] = []
    for message in call.input:
        if isinstance(message, ChatMessageUser):
            for raw in _NOTIFICATION.findall(message.text):
                note = _json(raw)
                if isinstance(note, dict) and isinstance(note.get("agent_path"), str):
                    found.append(("notification", note["agent_path"], note.get("status")))
        elif isinstance(message, ChatMessageTool) and message.tool_call_id in waits:
            result = _json(message.text)
            statuses = result.get("status") if isinstance(result, dict) else None
            if isinstance(statuses, dict):
                found += [("wait_agent", str(k), v) for k, v in statuses.items()]
    return found


def _terminal(status: Any) -> tuple[str, str] | None:
    """``(status, text)`` of a terminal Codex status, ``None`` for a running one."""
    if isinstance(status, dict) and len(status) == 1:
        [(word, detail)] = status.items()
        if word in _TERMINAL:
            return _TERMINAL[word], detail if isinstance(detail, str) else json.dumps(detail)
    if isinstance(status, str) and status in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[status], status
    return None


def _received(
    thread: _Thread,
    calls: Sequence[ModelEvent],
    loop_of: Mapping[int, str],
    started_at: datetime,
) -> list[dict[str, Any]]:
    if thread.agent is None:
        return []
    rows: list[dict[str, Any]] = []
    waits: set[str] = set()
    seen: set[str] = set()
    for call in calls:
        if loop_of[id(call)] != thread.loop:
            continue
        for via, agent, status in _statuses(call, waits):
            terminal = _terminal(status)
            if agent != thread.agent or terminal is None or via in seen:
                continue
            seen.add(via)
            thread.status, text = terminal
            if thread.status == "completed":
                thread.result = text
            else:
                thread.error = text
            at = _seconds(call.timestamp, started_at)
            rows.append(
                {
                    **_identity(thread, at, "received"),
                    "via": via,
                    "kind": "result" if thread.status == "completed" else "status",
                    "text": text,
                    "seen": {"time": at, "via": "model_call"},
                }
            )
        waits |= {c.id for c in _tool_calls(call) if c.function == WAIT_TOOL}
    return rows


def _identity(thread: _Thread, time: float, op: str) -> dict[str, Any]:
    return {
        "time": time,
        "op": op,
        "member": thread.span.owner,
        "name": thread.name,
        "agent": thread.agent,
        "span": thread.span.id,
    }


def _dispatch(
    thread: _Thread, threads: Mapping[str, _Thread], started_at: datetime
) -> dict[str, Any]:
    parent = threads.get(thread.loop)
    depth = 1
    at = parent
    while at is not None:
        depth += 1
        at = threads.get(at.loop)
    return {
        **_identity(thread, _seconds(thread.at, started_at), "dispatch"),
        "subagent": thread.span.agent_type,
        "background": True,
        "parent": thread.span.owner if parent is None else parent.name,
        "depth": depth,
        "prompt": _prompt(thread.call.arguments),
        "task_description": None,
    }


def _ran(thread: _Thread, loop_of: Mapping[int, str], started_at: datetime) -> list[dict[str, Any]]:
    return [
        {
            **_identity(thread, _seconds(call.completed or call.timestamp, started_at), "ran"),
            "tool": tool_call.function,
            "arguments": dict(tool_call.arguments),
        }
        for call in thread.calls
        if loop_of[id(call)] == thread.span.id
        for tool_call in _tool_calls(call)
    ]


def _end(thread: _Thread, started_at: datetime, wall_clock: float) -> dict[str, Any]:
    ended = thread.span.ended
    status = thread.status or ("running" if ended is None else None)
    own = thread.calls
    done = [c for c in own if c.cache != "read" and c.error is None and not c.pending]
    replays = sum(1 for c in own if c.cache == "read")
    return {
        **_identity(thread, wall_clock if ended is None else _seconds(ended, started_at), "end"),
        "status": status,
        "started": _seconds(thread.span.began, started_at),
        "result": thread.result,
        "error": thread.error,
        "usage": {
            "total_tokens": sum(c.output.usage.total_tokens for c in done if c.output.usage),
            "calls": len(done),
            "cache_replays": replays,
            "errored": len(own) - len(done) - replays,
        },
    }


def _tool_calls(call: ModelEvent) -> list[ToolCall]:
    return list(call.output.message.tool_calls or []) if call.output.choices else []


def _prompt(arguments: Mapping[str, Any]) -> str:
    message = arguments.get("message")
    if isinstance(message, str):
        return message
    items = arguments.get("items")
    if isinstance(items, list):
        return "\n".join(
            i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)
        )
    return ""


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _seconds(when: datetime, started_at: datetime) -> float:
    return round((when - started_at).total_seconds(), 6)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
