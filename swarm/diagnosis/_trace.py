"""A swarm run as linked model calls: read from one sample's records and transcript, pure.

What is read, and how it is linked (by ids and order, never by comparing times across the
transcript's clock and the records' clock):

- each member's model calls: the ``ModelEvent``s inside the member's own agent span (a span of
  type ``agent`` named after it) or in a span under it (its subagents, its gate checks), in the
  order the transcript holds them;
- its tool calls: the ``ToolEvent``s there; a model call *issued* a tool call when the call's
  output holds that tool call's id, and a later call *holds* a tool result when its input has a
  tool message with that id;
- which tool call made each evidence entry (``swarm.analysis.swarm_evidence``): entries name
  their loop (the agent span they were made in), and within one loop the k-th committed write of
  a channel is the k-th successful call of that channel's writing tool, the k-th read the k-th
  successful call of its reading tool (``shared_memory`` with ``command`` ``view``, and
  ``read_messages``; ``shared_memory`` with any other command, and ``send_message``).  A loop
  whose counts disagree is left unlinked (``Trace.unlinked``) rather than guessed;
- messages (``swarm_messages``): a delivery is linked to its sender's ``send_message`` call
  (the sender's calls in order, the same text) and, when it was read, to the recipient's
  ``read_messages`` call whose read entry lists its ``seq``; a receipt also to the notice
  (``notified`` entry, by its id in the model input's notice metadata) that carried it (a
  notice holds a receipt's text, and only announces a message);
- spawns (``swarm_spawns``): each admitted child is linked to its parent's ``spawn_child`` call
  (the parent's calls in order, the same requested name).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import attrs
from inspect_ai.event import Event, InfoEvent, ModelEvent, SpanBeginEvent, ToolEvent
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant

from swarm.analysis import (
    MessageLogEntry,
    SpawnLedgerEntry,
    swarm_messages,
    swarm_spawns,
)
from swarm.analysis._evidence import evidence_of
from swarm.diagnosis._attachments import Resolve, resolved, resolver
from swarm.records import INFO_SOURCE, METRICS_KEY, RESULT_KEY

__all__ = ["Call", "Link", "Tool", "Trace", "read_trace", "words"]

READS = {("shared_memory", True): "shared_memory", ("messages", True): "read_messages"}
WRITES = {("shared_memory", False): "shared_memory", ("messages", False): "send_message"}
_CHANNEL_TOOLS = frozenset({*READS.values(), *WRITES.values()})
PAYLOAD_ARGS = ("file_text", "append_text", "new_str", "insert_text", "text")
"""The arguments of a writing tool that hold the text written."""


@attrs.frozen
class Call:
    """One model call of a member."""

    index: int  # position in the sample's events
    uuid: str | None
    member: str
    step: int  # 1 for the member's first call
    span: str
    completed: bool  # it returned an output without error
    tokens: int
    time: float  # seconds: Inspect's working time of the call, else its recorded duration
    duration: float  # seconds from its start to its recorded end (0 with no end)
    issued: tuple[str, ...]  # the tool call ids in its output
    holds: frozenset[str]  # the tool call ids of the tool results in its input
    notices: frozenset[str]  # the notice ids in its input
    said: tuple[str, ...]  # its output text and the string values of its tool calls' arguments
    start: datetime
    end: datetime | None


@attrs.frozen
class Tool:
    """One tool call of a member."""

    index: int
    uuid: str | None
    id: str
    member: str
    span: str
    function: str
    arguments: Mapping[str, Any]
    error: str | None
    duration: float
    start: datetime

    @property
    def key(self) -> str:
        """The function and its arguments, canonical (what makes two calls the same)."""
        return self.function + json.dumps(self.arguments, sort_keys=True, default=str)


@attrs.frozen
class Link:
    """One member's call depending on what another produced: ``source`` (the call that
    wrote, sent or spawned; for a receipt the child's last call) to ``target`` (the first
    call whose input held it, or a child's first call); ``via`` is ``write``, ``message``,
    ``receipt`` or ``spawn``, ``ref`` the record's id (``w-3``, ``message:2``, ``spawn:1``)."""

    source: int
    target: int
    via: str
    ref: str


@attrs.frozen
class Trace:
    """What the diagnosis reads: records, calls, tools and the links between them."""

    result: Mapping[str, Any]
    metrics: Mapping[str, Any]
    stop: float | None  # the recorded stop's time, seconds since the swarm started
    stopped_at: datetime | None  # the stop on the transcript's clock (its info event's time)
    members: tuple[Mapping[str, Any], ...]
    calls: tuple[Call, ...]  # every member's model calls, transcript order
    tools: tuple[Tool, ...]
    evidence: tuple[Mapping[str, Any], ...]
    messages: tuple[MessageLogEntry, ...]
    spawns: tuple[SpawnLedgerEntry, ...]
    entry_tool: Mapping[int, Tool]  # evidence entry (its index) -> the tool call that made it
    message_send: Mapping[int, Tool]  # message seq -> the sender's send_message call
    message_read: Mapping[int, int]  # message seq -> the read entry (index) that listed it
    spawn_call: Mapping[int, Tool]  # spawn ledger seq -> the parent's spawn_child call
    links: tuple[Link, ...]
    unlinked: tuple[str, ...]  # loops/channels whose evidence could not be paired
    offsets: Mapping[str, datetime]  # per member: the wall-clock moment of the run's start

    @property
    def answer(self) -> str | None:
        final = self.result.get("final") or {}
        member = final.get("member")
        return member if isinstance(member, str) else None

    def calls_of(self, member: str) -> list[Call]:
        """``member``'s calls, in order."""
        if "by_member" not in self.cache:
            by_member: dict[str, list[Call]] = {}
            for c in self.calls:
                by_member.setdefault(c.member, []).append(c)
            self.cache["by_member"] = by_member
        return list(self.cache["by_member"].get(member, []))

    def done(self) -> list[Call]:
        """The completed calls (the nodes of the graph)."""
        return [c for c in self.calls if c.completed]

    cache: dict[str, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    """What is computed once per trace (the indexes below, the deliveries)."""

    def _index(self) -> tuple[dict[tuple[str, str], Call], dict[tuple[str, str], Call]]:
        if "index" not in self.cache:
            issued: dict[tuple[str, str], Call] = {}
            held: dict[tuple[str, str], Call] = {}
            for call in self.calls:
                for tool_id in call.issued:
                    issued.setdefault((call.member, tool_id), call)
                if call.completed:
                    for tool_id in call.holds:
                        held.setdefault((call.member, tool_id), call)
            self.cache["index"] = (issued, held)
        found: tuple[dict[tuple[str, str], Call], dict[tuple[str, str], Call]]
        found = self.cache["index"]
        return found

    def issuer(self, tool: Tool) -> Call | None:
        """The model call whose output asked for ``tool``."""
        return self._index()[0].get((tool.member, tool.id))

    def holder(self, tool: Tool) -> Call | None:
        """The first completed call of ``tool``'s member whose input held its result."""
        return self._index()[1].get((tool.member, tool.id))

    def run_time(self, member: str, moment: datetime) -> float | None:
        """``moment`` on the records' clock, through the member's own start (a few ms off)."""
        origin = self.offsets.get(member)
        return None if origin is None else (moment - origin).total_seconds()


_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """The words of ``text``: maximal runs of letters and digits, two or more long, lowercased."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 2}


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _owners(events: Sequence[Event], names: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Span id -> its member, and each member's own span (the first agent span by its name)."""
    own: dict[str, str] = {}
    owner: dict[str, str] = {}
    for e in events:
        if not isinstance(e, SpanBeginEvent):
            continue
        if e.type == "agent" and e.name in names and e.name not in own:
            own[e.name] = e.id
            owner[e.id] = e.name
        elif e.parent_id is not None and e.parent_id in owner:
            owner[e.id] = owner[e.parent_id]
    return owner, own


def _seconds(start: datetime, end: datetime | None) -> float:
    return 0.0 if end is None else max(0.0, (end - start).total_seconds())


def _text(message: ChatMessageAssistant, resolve: Resolve) -> str:
    """``message.text`` with its attachments resolved."""
    if isinstance(message.content, str):
        return resolve(message.content)
    return "\n".join(resolve(c.text) for c in message.content if c.type == "text")


def _model_call(e: ModelEvent, index: int, member: str, step: int, resolve: Resolve) -> Call:
    output = e.output
    message = output.message if output is not None and output.choices else None
    usage = output.usage if output is not None else None
    issued = tuple(c.id for c in (message.tool_calls or [])) if message is not None else ()
    text = _text(message, resolve) if message is not None else ""
    said = [text] if text else []
    for c in (message.tool_calls or []) if message is not None else []:
        said.extend(_strings(resolved(c.arguments, resolve)))
    holds = frozenset(m.tool_call_id for m in e.input if m.role == "tool" and m.tool_call_id)
    notices = set()
    for m in e.input:
        # a notice is a user message or rides on a tool result
        meta = (m.metadata or {}).get(INFO_SOURCE) if m.role in ("user", "tool") else None
        if isinstance(meta, dict) and meta.get("type") == "notice":
            notices.add(str(meta.get("id")))
    duration = _seconds(e.timestamp, e.completed)
    return Call(
        index=index,
        uuid=e.uuid,
        member=member,
        step=step,
        span=e.span_id or "",
        completed=e.error is None and message is not None and e.completed is not None,
        tokens=usage.total_tokens if usage is not None else 0,
        time=e.working_time if e.working_time is not None else duration,
        duration=duration,
        issued=issued,
        holds=holds,
        notices=frozenset(notices),
        said=tuple(said),
        start=e.timestamp,
        end=e.completed,
    )


def _tool_call(e: ToolEvent, index: int, member: str, resolve: Resolve) -> Tool:
    return Tool(
        index=index,
        uuid=e.uuid,
        id=e.id,
        member=member,
        span=e.span_id or "",
        function=e.function,
        arguments=resolved(dict(e.arguments), resolve),
        error=e.error.message if e.error is not None else None,
        duration=_seconds(e.timestamp, e.completed),
        start=e.timestamp,
    )


def _pair_evidence(
    evidence: Sequence[Mapping[str, Any]], tools: Sequence[Tool]
) -> tuple[dict[int, Tool], list[str]]:
    """Each read or committed write to the tool call that made it (module docstring)."""
    entries: dict[tuple[str, str, bool], list[int]] = {}
    for i, entry in enumerate(evidence):
        kind = entry.get("kind")
        if kind not in ("delivered", "read") or (kind == "read" and entry.get("listing")):
            continue
        entries.setdefault(
            (str(entry.get("loop")), str(entry.get("channel")), kind == "read"), []
        ).append(i)
    # each loop's successful calls of each channel tool, in order: (span, function, view)
    calls: dict[tuple[str, str, bool], list[Tool]] = {}
    for t in tools:
        if t.error is None and t.function in _CHANNEL_TOOLS:
            view = t.function == "shared_memory" and t.arguments.get("command") == "view"
            calls.setdefault((t.span, t.function, view), []).append(t)
    paired: dict[int, Tool] = {}
    unlinked: list[str] = []
    for (loop, channel, read), found in entries.items():
        function = (READS if read else WRITES).get((channel, read))
        if function is None:
            unlinked.append(f"{loop}:{channel}")
            continue
        # shared_memory: reads are its views, writes its other commands; other tools: any call
        candidates = calls.get((loop, function, read and function == "shared_memory"), [])
        if len(candidates) != len(found):
            unlinked.append(f"{loop}:{channel}")
            continue
        paired.update(zip(found, candidates, strict=True))
    return paired, unlinked


def _pair_messages(
    messages: Sequence[MessageLogEntry],
    evidence: Sequence[Mapping[str, Any]],
    tools: Sequence[Tool],
) -> tuple[dict[int, Tool], dict[int, int]]:
    sent: dict[str, list[MessageLogEntry]] = {}
    for m in messages:
        if m.kind == "message":
            sent.setdefault(m.sender, []).append(m)
    sends: dict[str, list[Tool]] = {}
    for t in tools:
        if t.function == "send_message" and t.error is None and t.member in sent:
            sends.setdefault(t.member, []).append(t)
    send: dict[int, Tool] = {}
    for sender, mine in sent.items():
        calls = sends.get(sender, [])
        at, given = 0, set[str]()
        for m in mine:
            while at < len(calls) and (
                calls[at].arguments.get("text") != m.text or m.recipient in given
            ):
                at, given = at + 1, set()
            if at == len(calls):
                break
            send[m.seq] = calls[at]
            given.add(m.recipient)
    read: dict[int, int] = {}
    for i, entry in enumerate(evidence):
        if entry.get("kind") == "read" and entry.get("channel") == "messages":
            for f in entry.get("files") or []:
                if isinstance(f, Mapping) and isinstance(f.get("message"), int):
                    read.setdefault(f["message"], i)
    return send, read


def _pair_spawns(spawns: Sequence[SpawnLedgerEntry], tools: Sequence[Tool]) -> dict[int, Tool]:
    # each parent's spawn_child calls by the name asked for, in order
    asked: dict[tuple[str, str], list[Tool]] = {}
    for t in tools:
        name = t.arguments.get("name")
        if t.function == "spawn_child" and isinstance(name, str):
            asked.setdefault((t.member, name), []).append(t)
    found: dict[int, Tool] = {}
    used: set[str] = set()
    at: dict[tuple[str, str], int] = {}
    for entry in spawns:
        if entry.op not in ("spawn", "refused"):
            continue
        key = (entry.parent, entry.requested)
        calls, i = asked.get(key, []), at.get(key, 0)
        while i < len(calls) and calls[i].id in used:  # an id another entry took
            i += 1
        at[key] = i
        if i < len(calls):
            used.add(calls[i].id)
            at[key] = i + 1
            if entry.op == "spawn":
                found[entry.seq] = calls[i]
    return found


def _resolved_info(event: Event, resolve: Resolve) -> Event:
    """A swarm info event with its data's attachments resolved; any other event as it is."""
    if isinstance(event, InfoEvent) and event.source == INFO_SOURCE:
        return event.model_copy(update={"data": resolved(event.data, resolve)})
    return event


def _info_event(events: Sequence[Event], kind: str) -> InfoEvent | None:
    for e in events:
        if isinstance(e, InfoEvent) and e.source == INFO_SOURCE and isinstance(e.data, dict):
            if e.data.get("type") == kind:
                return e
    return None


def _info(events: Sequence[Event], kind: str) -> Mapping[str, Any] | None:
    found = _info_event(events, kind)
    return found.data if found is not None and isinstance(found.data, dict) else None


def read_trace(sample: EvalSample) -> Trace:
    """The trace of the swarm run in ``sample``: its attachments resolved in what is read
    (the records' info events, the calls' outputs and the tool calls' arguments), as
    ``resolve_sample_attachments`` would resolve them.

    Raises:
        LookupError: the sample has no ``inspect_swarm:result`` record (no swarm ran in it).
    """
    resolve = resolver(sample.attachments or {})
    events = [_resolved_info(e, resolve) for e in sample.events]
    store = sample.store or {}
    result = store.get(RESULT_KEY) or _info(events, "result")
    if not isinstance(result, Mapping):
        raise LookupError(f"sample {sample.id} has no {RESULT_KEY} record: no swarm ran in it")
    metrics = store.get(METRICS_KEY) or _info(events, "metrics") or {}
    members = tuple(m for m in result.get("members") or [] if isinstance(m, Mapping))
    names = {str(m.get("name")) for m in members}
    owner, own = _owners(events, names)
    own_spans = set(own.values())
    calls: list[Call] = []
    tools: list[Tool] = []
    steps: dict[str, int] = {}
    begins: dict[str, datetime] = {}
    for i, e in enumerate(events):
        if isinstance(e, SpanBeginEvent) and e.id in own_spans:
            begins[owner[e.id]] = e.timestamp
        member = owner.get(e.span_id or "") if isinstance(e, ModelEvent | ToolEvent) else None
        if member is None:
            continue
        if isinstance(e, ModelEvent):
            steps[member] = steps.get(member, 0) + 1
            calls.append(_model_call(e, i, member, steps[member], resolve))
        elif isinstance(e, ToolEvent):
            tools.append(_tool_call(e, i, member, resolve))
    offsets = {}
    for m in members:
        name, started = str(m.get("name")), m.get("started")
        if name in begins and isinstance(started, int | float):
            offsets[name] = begins[name] - timedelta(seconds=float(started))
    stop_event = _info_event(events, "stop")
    stop = _info(events, "stop")
    evidence = tuple(evidence_of(events))
    message_log = swarm_messages(sample)
    spawn_ledger = swarm_spawns(sample)
    messages = tuple(message_log.messages) if message_log is not None else ()
    spawns = tuple(spawn_ledger.entries) if spawn_ledger is not None else ()
    entry_tool, unlinked = _pair_evidence(evidence, tools)
    message_send, message_read = _pair_messages(messages, evidence, tools)
    spawn_call = _pair_spawns(spawns, tools)
    trace = Trace(
        result=result,
        metrics=metrics if isinstance(metrics, Mapping) else {},
        stop=float(stop["time"]) if stop and isinstance(stop.get("time"), int | float) else None,
        stopped_at=stop_event.timestamp if stop_event is not None else None,
        members=members,
        calls=tuple(calls),
        tools=tuple(tools),
        evidence=evidence,
        messages=messages,
        spawns=spawns,
        entry_tool=entry_tool,
        message_send=message_send,
        message_read=message_read,
        spawn_call=spawn_call,
        links=(),
        unlinked=tuple(sorted(unlinked)),
        offsets=offsets,
    )
    return attrs.evolve(trace, links=tuple(_links(trace)))


def _links(trace: Trace) -> Iterable[Link]:
    """Every cross-member dependency the records and the transcript show (module docstring)."""
    # a write on the board, read by another member
    writes: dict[str, Tool] = {}
    for i, entry in enumerate(trace.evidence):
        if entry.get("kind") == "delivered" and i in trace.entry_tool:
            writes[str(entry.get("record"))] = trace.entry_tool[i]
    for i, entry in enumerate(trace.evidence):
        read = trace.entry_tool.get(i)
        if entry.get("kind") != "read" or read is None or entry.get("channel") == "messages":
            continue
        for f in entry.get("files") or []:
            wrote = writes.get(str(f.get("record"))) if isinstance(f, Mapping) else None
            if wrote is None or wrote.member == read.member:
                continue
            source, target = trace.issuer(wrote), trace.holder(read)
            if source is not None and target is not None:
                yield Link(source.index, target.index, "write", str(f.get("record")))
    # a message or a receipt, read or noticed by its recipient
    notices: dict[int, str] = {}
    for entry in trace.evidence:
        if entry.get("kind") == "notified" and entry.get("channel") == "messages":
            for ref in entry.get("ids") or []:
                if isinstance(ref, Mapping) and isinstance(ref.get("message"), int):
                    notices.setdefault(ref["message"], str(entry.get("notice")))
    for m in trace.messages:
        target = _received(trace, m, notices)
        if target is None:
            continue
        if m.kind == "message":
            sent = trace.message_send.get(m.seq)
            source = trace.issuer(sent) if sent is not None else None
        else:  # a receipt: the child's end, after its last call
            done = [c for c in trace.calls_of(m.sender) if c.completed]
            source = done[-1] if done else None
        if source is not None and source.index < target.index:
            yield Link(source.index, target.index, m.kind, f"message:{m.seq}")
    # a child spawned by its parent's call
    for spawn in trace.spawns:
        spawned = trace.spawn_call.get(spawn.seq)
        source = trace.issuer(spawned) if spawned is not None else None
        first = [c for c in trace.calls_of(spawn.member or "") if c.completed]
        if source is not None and first and source.index < first[0].index:
            yield Link(source.index, first[0].index, "spawn", f"spawn:{spawn.seq}")


def _received(trace: Trace, m: MessageLogEntry, notices: Mapping[int, str]) -> Call | None:
    """The recipient's first completed call whose input held message ``m``."""
    read = trace.message_read.get(m.seq)
    tool = trace.entry_tool.get(read) if read is not None else None
    held = trace.holder(tool) if tool is not None else None
    notice = notices.get(m.seq) if m.kind == "receipt" else None  # a notice holds a receipt
    if notice is not None:  # whole, and only announces a message
        first = _noticed(trace).get((m.recipient, notice))
        if first is not None and (held is None or first.index < held.index):
            return first
    return held


def _noticed(trace: Trace) -> dict[tuple[str, str], Call]:
    """(member, notice id) -> the member's first completed call whose input held the notice."""
    if "noticed" not in trace.cache:
        found: dict[tuple[str, str], Call] = {}
        for c in trace.calls:
            if c.completed:
                for notice in c.notices:
                    found.setdefault((c.member, notice), c)
        trace.cache["noticed"] = found
    noticed: dict[tuple[str, str], Call] = trace.cache["noticed"]
    return noticed
