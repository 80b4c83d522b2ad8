"""The ``inspect_swarm:subagents`` record: the subagents a member dispatched through Inspect's
``deepagent`` ``agent`` tool, as the runtime saw them (never an agent's word).

Built when the run ends from the transcript (the ``agent`` tool's events, each naming the agent
span it opened; the subagent's span and the model calls inside it; the member's lifecycle-tool
events; the member's model calls that carried their results) and from the deepagent's own
background registry (each ``AGENT-N``'s status, result and error, as Inspect keeps them).

Ordered entries, three ops:

- ``dispatch``: the ``agent`` call began: ``member`` (whose subagent it is), ``name`` (the
  runtime's name for this run of a subagent: ``<member>/AGENT-N`` for a background dispatch,
  ``<member>/<span id>`` for a foreground one), ``agent`` (``AGENT-N``, or ``None``), ``span``,
  ``subagent`` (its type), ``background``, ``parent`` (the dispatching loop: the member, or the
  ``name`` of the subagent that dispatched it), ``depth`` (1 from the member's own loop),
  ``prompt`` and ``task_description`` (the call's arguments);
- ``end``: its span closed (``time``; the run's end when it never closed): ``status``
  (``completed``, ``errored``, ``cancelled``, ``running`` when it outlived the run, ``None``
  when the registry was not reachable), ``started`` (its span opened), ``result``, ``error``, and
  ``usage`` (its calls' ``total_tokens`` and call counts, its own subagents' included);
- ``received``: a tool result of the member's (``via``: ``agent`` for a foreground result,
  ``agent_wait``, ``agent_status`` or ``agent_cancel``) held the subagent's terminal block:
  ``kind`` (``result`` for a completed one, with ``text`` its result; ``status`` for an errored
  or cancelled one), and ``seen`` (``{time, via}`` of the first model call of the dispatching
  loop whose input held that tool result, or ``None``).

A bridged CLI's own sub-agents (a Codex member's ``spawn_agent``) are entries of the same
record, with a fourth op, ``ran`` (what each asked its CLI to run): see ``cli_subagents``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs
from inspect_ai.event import Event, ModelEvent, SpanBeginEvent, SpanEndEvent, ToolEvent
from inspect_ai.model import ChatMessageTool

from swarm._report.cli_subagents import cli_subagent_rows
from swarm._schemas import SubagentsRecord

__all__ = ["BackgroundFuture", "build_subagents", "snapshot_registry"]

OPS = ("dispatch", "ran", "end", "received")
"""The record's ops, in the order entries of one time take."""
AGENT_TOOL = "agent"
LIFECYCLE = ("agent_wait", "agent_status", "agent_cancel")
BLOCK_SEPARATOR = "\n\n---\n\n"
_DISPATCHED = re.compile(r"Dispatched (AGENT-\d+)\.")


@attrs.frozen(kw_only=True)
class BackgroundFuture:
    """One background subagent as the deepagent's registry held it when the run ended."""

    agent: str
    span: str
    subagent: str
    status: str
    result: str | None
    error: str | None


def snapshot_registry(registry: Any) -> tuple[BackgroundFuture, ...]:
    """Freeze a deepagent background registry's futures (``()`` for ``None``)."""
    if registry is None:
        return ()
    return tuple(
        BackgroundFuture(
            agent=str(f.agent_id),
            span=str(f.span_id),
            subagent=str(f.subagent_name),
            status=str(f.status),
            result=f.result,
            error=f.error,
        )
        for f in list(registry.futures.values())
    )


def block_of(future: BackgroundFuture) -> str | None:
    """The terminal block the lifecycle tools show for ``future`` (Inspect's own format)."""
    header = f"**{future.agent}** ({future.subagent}) \u2014 {future.status}"
    if future.status == "completed":
        return f"{header}\n\n{future.result or '(no output)'}"
    if future.status == "errored":
        return f"{header}\n\n{future.error or '(no error detail)'}"
    if future.status == "cancelled":
        return header
    return None


def holds_block(output: str, block: str) -> bool:
    """Whether a lifecycle tool's output holds ``block`` as one whole block of its own."""
    start = 0
    while (at := output.find(block, start)) >= 0:
        end = at + len(block)
        before = at == 0 or output[:at].endswith(BLOCK_SEPARATOR)
        after = end == len(output) or output[end:].startswith(BLOCK_SEPARATOR)
        if before and after:
            return True
        start = at + 1
    return False


@attrs.define
class _Span:
    id: str
    name: str
    parent: str | None
    owner: str
    began: datetime
    ended: datetime | None = None
    tokens: int = 0
    calls: int = 0
    cache_replays: int = 0
    errored: int = 0


def _seconds(when: datetime, started_at: datetime) -> float:
    return round((when - started_at).total_seconds(), 6)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def build_subagents(
    events: Iterable[Event],
    member_spans: Mapping[str, str],
    registries: Mapping[str, Sequence[BackgroundFuture]],
    started_at: datetime,
    wall_clock: float,
) -> dict[str, Any] | None:
    """The subagents record (version 1), or ``None`` when no member dispatched a subagent."""
    spans: dict[str, _Span] = {}
    loop_of: dict[str, str] = {}  # span id -> the agent span whose loop it is in
    dispatches: list[ToolEvent] = []
    lifecycle: list[ToolEvent] = []
    model_events: list[ModelEvent] = []
    events = list(events)
    for event in events:
        if isinstance(event, SpanBeginEvent):
            owner = member_spans.get(event.id)
            parent = spans.get(event.parent_id or "") if owner is None else None
            if owner is not None:
                spans[event.id] = _Span(event.id, owner, None, owner, event.timestamp)
                loop_of[event.id] = event.id
            elif parent is not None:
                spans[event.id] = _Span(
                    event.id, event.name, parent.id, parent.owner, event.timestamp
                )
                loop_of[event.id] = (
                    event.id if event.type == "agent" else loop_of.get(parent.id, parent.id)
                )
            continue
        if isinstance(event, SpanEndEvent):
            if event.id in spans:
                spans[event.id].ended = event.timestamp
            continue
        if event.span_id not in spans:
            continue
        if isinstance(event, ToolEvent) and event.function == AGENT_TOOL and event.agent_span_id:
            dispatches.append(event)
        elif isinstance(event, ToolEvent) and event.function in LIFECYCLE:
            lifecycle.append(event)
        elif isinstance(event, ModelEvent):
            model_events.append(event)
            _meter(event, spans, loop_of)
    cli = cli_subagent_rows(events, member_spans, started_at, wall_clock)
    if not dispatches and not cli:
        return None
    futures = {f.span: f for fs in registries.values() for f in fs}
    names: dict[str, str] = {}  # subagent span -> its runtime name
    entries: list[dict[str, Any]] = []
    ends: list[dict[str, Any]] = []
    received: list[dict[str, Any]] = []
    for call in dispatches:
        span_id = str(call.agent_span_id)
        if span_id in names:
            # one span, one dispatch (Inspect reads the id off the tool after a call that
            # returned; a failed call carries none)
            continue
        loop = loop_of.get(str(call.span_id), "")
        owner = spans[str(call.span_id)].owner
        background = bool(call.arguments.get("background"))
        future = futures.get(span_id)
        found = _DISPATCHED.fullmatch(_text(call.result)) if background else None
        agent = future.agent if future is not None else found.group(1) if found else None
        name = f"{owner}/{agent or span_id}"
        names[span_id] = name
        dispatcher = owner if loop in member_spans else names.get(loop, owner)
        depth = 1 if dispatcher == owner else _depth(entries, dispatcher) + 1
        sub = spans.get(span_id)
        entries.append(
            {
                "time": _seconds(call.timestamp, started_at),
                "op": "dispatch",
                "member": owner,
                "name": name,
                "agent": agent,
                "span": span_id,
                "subagent": sub.name
                if sub is not None
                else _text(call.arguments.get("subagent_type")),
                "background": background,
                "parent": dispatcher,
                "depth": depth,
                "prompt": _text(call.arguments.get("prompt")),
                "task_description": None
                if call.arguments.get("task_description") is None
                else _text(call.arguments.get("task_description")),
            }
        )
        status: str | None
        result: str | None
        error: str | None
        if future is not None:
            status, result, error = future.status, future.result, future.error
        elif not background:
            status = "errored" if call.error is not None else "completed"
            result = None if call.error is not None else _text(call.result)
            error = None if call.error is None else call.error.message
        else:
            status = result = error = None
        ends.append(
            {
                "time": wall_clock
                if sub is None or sub.ended is None
                else _seconds(sub.ended, started_at),
                "op": "end",
                "member": owner,
                "name": name,
                "agent": agent,
                "span": span_id,
                "status": status,
                "started": None if sub is None else _seconds(sub.began, started_at),
                "result": result,
                "error": error,
                "usage": {
                    "total_tokens": 0 if sub is None else sub.tokens,
                    "calls": 0 if sub is None else sub.calls,
                    "cache_replays": 0 if sub is None else sub.cache_replays,
                    "errored": 0 if sub is None else sub.errored,
                },
            }
        )
        if not background and status == "completed":
            received.append(_received(name, call, "agent", result or "", "result", loop))
    for call in lifecycle:
        loop = loop_of.get(str(call.span_id), "")
        output = _text(call.result)
        for future in futures.values():
            block = block_of(future)
            if future.span in names and block is not None and holds_block(output, block):
                kind = "result" if future.status == "completed" else "status"
                text = (future.result or "") if kind == "result" else block
                name = names[future.span]
                received.append(_received(name, call, call.function, text, kind, loop))
    return _assemble([*entries, *cli], ends, received, loop_of, model_events, started_at)


def _depth(entries: Sequence[Mapping[str, Any]], name: str) -> int:
    return next((int(e["depth"]) for e in entries if e["name"] == name), 0)


def _meter(event: ModelEvent, spans: Mapping[str, _Span], loop_of: Mapping[str, str]) -> None:
    """Count a model call into every subagent span above it."""
    at = spans.get(loop_of.get(str(event.span_id), ""))
    while at is not None and at.parent is not None:
        if event.cache == "read":
            at.cache_replays += 1
        elif event.error is not None or event.pending:
            at.errored += 1
        else:
            at.calls += 1
            usage = event.output.usage
            at.tokens += 0 if usage is None else usage.total_tokens
        at = spans.get(loop_of.get(at.parent, ""))


def _received(
    name: str, call: ToolEvent, via: str, text: str, kind: str, loop: str
) -> dict[str, Any]:
    return {"name": name, "via": via, "text": text, "kind": kind, "loop": loop, "at": call}


def _assemble(
    entries: list[dict[str, Any]],
    ends: list[dict[str, Any]],
    received: list[dict[str, Any]],
    loop_of: Mapping[str, str],
    model_events: Sequence[ModelEvent],
    started_at: datetime,
) -> dict[str, Any]:
    by_name = {e["name"]: e for e in entries}
    rows: list[dict[str, Any]] = [*entries, *ends]
    for r in received:
        call: ToolEvent = r["at"]
        seen = next(
            (
                m
                for m in model_events
                if loop_of.get(str(m.span_id)) == r["loop"]
                and any(
                    isinstance(msg, ChatMessageTool) and msg.tool_call_id == call.id
                    for msg in m.input
                )
            ),
            None,
        )
        dispatch = by_name[r["name"]]
        rows.append(
            {
                "time": _seconds(call.completed or call.timestamp, started_at),
                "op": "received",
                "member": dispatch["member"],
                "name": r["name"],
                "agent": dispatch["agent"],
                "span": dispatch["span"],
                "via": r["via"],
                "kind": r["kind"],
                "text": r["text"],
                "seen": None
                if seen is None
                else {"time": _seconds(seen.timestamp, started_at), "via": "model_call"},
            }
        )
    rows.sort(key=lambda e: (e["time"], OPS.index(e["op"])))
    entries = [{"seq": i, **e} for i, e in enumerate(rows)]
    return SubagentsRecord(version=1, entries=entries).model_dump()  # type: ignore[arg-type]
