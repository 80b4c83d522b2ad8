"""From a log sample to a ``RunTimeline``: pure, reads nothing but the sample.

What is read, and from where:

- the members (name, role, state, status, start, end, parent, depth, error), the answer and
  the stop reason: the ``inspect_swarm:result`` record (store, else its info event);
- each member's model and tool calls: the ``ModelEvent``s and ``ToolEvent``s inside the
  member's own agent span (a span of type ``agent`` named after it, opened by the runtime in
  the swarm's span); those inside a nested agent span are its subagents' (``nested``);
- waiting for children: each ``wait_for_children`` tool call, drawn as a wait too;
- channel writes, waits and notices: the entries of the run's ``evidence`` info event (source
  ``inspect_swarm``), which name their member and carry the run's clock (logs of the earlier
  form, one ``comm`` event per entry, are read too);
- the run's length: the metrics' ``wall_clock``; spawns and messages: ``_links``;
- the critical path and the findings: ``swarm.diagnosis.diagnose`` of the same sample (left
  out when it cannot read the sample).

Event times are wall-clock timestamps; the records count seconds from the swarm's start.  The
start is placed at the earliest ``span begin - started`` of any member, which puts every
member's events inside its own start and end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import attrs
from inspect_ai.event import Event, InfoEvent, ModelEvent, SpanBeginEvent, ToolEvent
from inspect_ai.log import EvalSample

from swarm.diagnosis import diagnose
from swarm.records import (
    EVIDENCE_TYPE,
    INFO_SOURCE,
    LEDGER_KEY,
    METRICS_KEY,
    RESULT_KEY,
    evidence_entries,
)
from swarm.timeline import _links
from swarm.timeline._fields import (
    MalformedRecord,
    MemberRecord,
    mapping,
    member_records,
    seconds,
    text,
    whole,
)
from swarm.timeline._model import (
    ChannelWrite,
    FindingMark,
    Lane,
    ModelCall,
    Notice,
    RunTimeline,
    Stop,
    ToolCall,
    Wait,
)
from swarm.timeline._stop import infer_stop

__all__ = ["METRICS_KEY", "MalformedRecord", "NoSwarmRecords", "extract"]


class NoSwarmRecords(LookupError):
    """The sample has no ``inspect_swarm:result`` record: no swarm ran in it."""


def _info(event: Event, kind: str) -> dict[str, Any] | None:
    if isinstance(event, InfoEvent) and event.source == INFO_SOURCE:
        data = event.data
        if isinstance(data, dict) and data.get("type") == kind:
            return data
    return None


def _recorded_stop(sample: EvalSample) -> Stop | None:
    """The stop as the swarm recorded it when it began (an ``inspect_swarm`` info event)."""
    for event in sample.events:
        data = _info(event, "stop")
        if data is not None:
            time = seconds(data.get("time"), "stop.time")
            if time is not None:
                return Stop(reason=str(data.get("reason")), time=time, basis="recorded")
    return None


def _result(sample: EvalSample) -> tuple[Mapping[str, Any], str | None]:
    """The result record, and the span it was written in (the swarm's own span)."""
    root = None
    from_event = None
    for event in sample.events:
        data = _info(event, "result")
        if data is not None:
            root = event.span_id
            from_event = {k: v for k, v in data.items() if k != "type"}
    record = sample.store.get(RESULT_KEY, from_event)
    if record is None:
        raise NoSwarmRecords(f"sample {sample.id} has no {RESULT_KEY} record")
    return mapping(record, RESULT_KEY, optional=False), root


class _Spans:
    """The sample's spans, and which member each belongs to."""

    def __init__(self, events: Sequence[Event], root: str | None, names: Sequence[str]) -> None:
        begins = [e for e in events if isinstance(e, SpanBeginEvent)]
        self.begin: dict[str, datetime] = {e.id: e.timestamp for e in begins}
        self.member_span: dict[str, str] = {}
        claimed: set[str] = set()
        wanted = set(names)
        # a member's own span is opened in the swarm's span; a spawned member's may be deeper,
        # so members not found there take the first agent span with their name
        for direct in (True, False):
            for e in begins:
                if (
                    e.type == "agent"
                    and e.name in wanted
                    and e.name not in self.member_span
                    and e.id not in claimed
                    and (not direct or root is None or e.parent_id == root)
                ):
                    self.member_span[e.name] = e.id
                    claimed.add(e.id)
        by_id = {span: name for name, span in self.member_span.items()}
        self.owner: dict[str, str] = {}
        self.nested: dict[str, bool] = {}
        for e in begins:
            name = by_id.get(e.id)
            if name is not None:
                self.owner[e.id], self.nested[e.id] = name, False
            elif e.parent_id is not None and e.parent_id in self.owner:
                self.owner[e.id] = self.owner[e.parent_id]
                # a nested agent span is a subagent's loop; the runtime's checks run in "gate"
                self.nested[e.id] = self.nested[e.parent_id] or e.type in ("agent", "gate")

    def of(self, event: Event) -> tuple[str, bool] | None:
        """The member an event belongs to, and whether a nested loop made it."""
        span = event.span_id
        if span is None or span not in self.owner:
            return None
        return self.owner[span], self.nested[span]


def _origin(
    members: Sequence[MemberRecord], spans: _Spans, events: Sequence[Event], wall: float
) -> datetime:
    """The swarm's start as a wall-clock time (see the module docstring)."""
    starts = [
        spans.begin[spans.member_span[m.name]] - timedelta(seconds=m.started)
        for m in members
        if m.started is not None and m.name in spans.member_span
    ]
    if starts:
        return min(starts)
    for event in events:
        if _info(event, "result") is not None:
            return event.timestamp - timedelta(seconds=wall)
    return events[0].timestamp if events else datetime.now().astimezone()


class _Collected:
    """Marks gathered per member while walking the events."""

    def __init__(self) -> None:
        self.model: dict[str, list[ModelCall]] = {}
        self.tool: dict[str, list[ToolCall]] = {}
        self.writes: dict[str, list[ChannelWrite]] = {}
        self.waits: dict[str, list[Wait]] = {}
        self.notices: dict[str, dict[str, Notice]] = {}
        self.last: float = 0.0
        # model calls with no recorded end, by the span they were made in: (member, index)
        self.open: dict[str, list[tuple[str, int]]] = {}

    def close(self, span: str | None, at: float) -> None:
        """End the open model calls of ``span`` at ``at`` (the loop did something after them)."""
        for name, i in self.open.pop(span or "", []):
            call = self.model[name][i]
            self.model[name][i] = attrs.evolve(call, end=max(call.start, at))

    def close_all(self, ends: Mapping[str, float]) -> None:
        """End the calls still open at their member's end, and let no call with no recorded
        end last past its member's end (a cancelled member's span can close after the end the
        run recorded for it)."""
        for span in list(self.open):
            for name, i in self.open.pop(span):
                call = self.model[name][i]
                self.model[name][i] = attrs.evolve(call, end=max(call.start, ends[name]))
        for name, calls in self.model.items():
            if name in ends:
                self.model[name] = [
                    c
                    if c.end_recorded or c.end <= ends[name]
                    else attrs.evolve(c, end=max(c.start, ends[name]))
                    for c in calls
                ]


def _end(event: ModelEvent | ToolEvent, start: float, since: Callable[[datetime], float]) -> float:
    if event.completed is not None:
        return max(start, since(event.completed))
    return start + (event.working_time or 0.0)


def _collect(
    events: Iterable[Event], spans: _Spans, origin: datetime, names: set[str]
) -> _Collected:
    def since(moment: datetime) -> float:
        return (moment - origin).total_seconds()

    found = _Collected()
    comms = 0
    for event in events:
        if found.open:
            span = event.parent_id if isinstance(event, SpanBeginEvent) else event.span_id
            found.close(span, since(event.timestamp))
        if isinstance(event, ModelEvent | ToolEvent):
            owner = spans.of(event)
            if owner is None:
                continue
            name, nested = owner
            start = since(event.timestamp)
            end = _end(event, start, since)
            found.last = max(found.last, end)
            if isinstance(event, ModelEvent):
                usage = event.output.usage if event.output is not None else None
                calls = found.model.setdefault(name, [])
                if event.completed is None and event.span_id is not None:
                    # Inspect records no end for a failed or cancelled call
                    found.open.setdefault(event.span_id, []).append((name, len(calls)))
                calls.append(
                    ModelCall(
                        start=start,
                        end=end,
                        nested=nested,
                        model=event.model,
                        tokens=usage.total_tokens if usage is not None else None,
                        cached=event.cache == "read",
                        error=event.error,
                        end_recorded=event.completed is not None,
                        working=event.working_time,
                    )
                )
            else:
                if event.function == "wait_for_children":  # waiting, drawn as a wait too
                    found.waits.setdefault(name, []).append(
                        Wait(
                            start=start,
                            end=end,
                            wait="wait_for_children",
                            outcome="error" if event.error is not None else "children",
                            nested=nested,
                        )
                    )
                found.tool.setdefault(name, []).append(
                    ToolCall(
                        start=start,
                        end=end,
                        function=event.function,
                        nested=nested,
                        error=event.error.message if event.error is not None else None,
                    )
                )
            continue
        evidence = _info(event, EVIDENCE_TYPE)
        if evidence is not None:  # the run's one evidence event, each entry timed by the run
            for index, entry in enumerate(evidence_entries(evidence)):
                if _of_member(entry, names):
                    field = f"{EVIDENCE_TYPE}.entries[{index}]"
                    _comm(found, entry, seconds(entry.get("time"), f"{field}.time") or 0.0, field)
            continue
        data = _info(event, "comm")  # the earlier form: one event per entry
        if data is None:
            continue
        comms += 1
        if _of_member(data, names):
            _comm(found, data, since(event.timestamp), f"comm[{comms - 1}]")
    return found


def _of_member(entry: Mapping[str, Any], names: set[str]) -> bool:
    member = entry.get("member")
    return isinstance(member, str) and member in names


def _mapping(value: object) -> Mapping[str, Any] | None:
    return value if isinstance(value, dict) else None


def _comm(found: _Collected, data: Mapping[str, Any], time: float, field: str) -> None:
    member, kind = str(data["member"]), data.get("kind")
    nested = bool(data.get("nested"))
    found.last = max(found.last, time)
    if kind in ("delivered", "sent"):
        op: Mapping[str, Any] = _mapping(data.get("op")) or {}
        rejected = _mapping(data.get("rejected"))
        found.writes.setdefault(member, []).append(
            ChannelWrite(
                start=time,
                end=time,
                channel=str(data.get("channel", "")),
                record=str(data.get("record", "")),
                kind=str(data.get("record_kind", "")),
                size=whole(data.get("size"), f"{field}.size") or 0,
                path=op.get("path") if isinstance(op.get("path"), str) else None,
                seq=data.get("seq") if isinstance(data.get("seq"), int) else None,
                nested=nested,
                rejected=str(rejected.get("control")) if rejected else None,
                reason=str(rejected.get("reason")) if rejected else None,
            )
        )
    elif kind == "waited":
        duration = seconds(data.get("duration"), f"{field}.duration") or 0.0
        path = data.get("path")
        found.waits.setdefault(member, []).append(
            Wait(
                start=max(0.0, time - duration),
                end=time,
                wait=str(data.get("wait", "")),
                outcome=str(data.get("outcome", "")),
                path=path if isinstance(path, str) else None,
                nested=nested,
            )
        )
    elif kind == "notified":
        # one event per channel line of a notice: one mark per notice
        notices = found.notices.setdefault(member, {})
        key = str(data.get("notice", ""))
        ids = len(_ids(data.get("ids"), f"{field}.ids"))
        channel = str(data.get("channel", ""))
        seen = notices.get(key)
        if seen is None:
            notices[key] = Notice(start=time, end=time, notice=key, channels=(channel,), ids=ids)
        else:
            notices[key] = Notice(
                start=seen.start,
                end=seen.end,
                notice=key,
                channels=(*seen.channels, channel),
                ids=seen.ids + ids,
            )


def _ids(value: object, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedRecord(field, f"expected a list or null, got {value!r}")
    return value


def _ordered(members: Sequence[MemberRecord]) -> list[MemberRecord]:
    """Roster order, each member followed by its children (depth first, in roster order)."""
    names = {m.name for m in members}
    children: dict[str | None, list[MemberRecord]] = {}
    for m in members:
        children.setdefault(m.parent if m.parent in names else None, []).append(m)
    ordered: list[MemberRecord] = []
    placed: set[str] = set()
    # a cycle of parents still gives one lane each; a stack, not recursion: a chain of
    # parents may be as long as the roster
    for top in [*children.get(None, []), *members]:
        stack = [top]
        while stack:
            m = stack.pop()
            if m.name in placed:
                continue
            placed.add(m.name)
            ordered.append(m)
            stack.extend(reversed(children.get(m.name, [])))
    return ordered


def _diagnosis(
    sample: EvalSample,
) -> tuple[tuple[tuple[str, int], ...], tuple[FindingMark, ...]]:
    """The critical path and the findings, or none when the diagnosis cannot read ``sample``
    (the picture is still drawn from what the timeline itself reads)."""
    try:
        found = diagnose(sample)
    except (LookupError, TypeError, ValueError, AttributeError):
        return (), ()
    marks = tuple(
        FindingMark(member=f.member, time=f.time, check=f.check, mode=f.mode, why=f.why)
        for f in found.findings
    )
    return found.figures.critical_path.calls, marks


def extract(sample: EvalSample, *, task: str | None = None) -> RunTimeline:
    """The timeline of the swarm that ran in ``sample``.

    Raises:
        NoSwarmRecords: the sample has no ``inspect_swarm:result`` record.
        MalformedRecord: a record holds what cannot be read (the message names the field).
    """
    record, root = _result(sample)
    members = member_records(record.get("members"), f"{RESULT_KEY}.members")
    names = [m.name for m in members]
    metrics = mapping(sample.store.get(METRICS_KEY), METRICS_KEY)
    wall = seconds(metrics.get("wall_clock"), f"{METRICS_KEY}.wall_clock") or 0.0
    final = mapping(record.get("final"), f"{RESULT_KEY}.final")
    answer = text(final.get("member"), f"{RESULT_KEY}.final.member")
    mode = text(final.get("mode"), f"{RESULT_KEY}.final.mode")
    reason = text(record.get("stop_reason"), f"{RESULT_KEY}.stop_reason")
    ledger = mapping(sample.store.get(LEDGER_KEY), LEDGER_KEY)
    caps = mapping(ledger.get("caps"), f"{LEDGER_KEY}.caps")
    time_cap = seconds(caps.get("time"), f"{LEDGER_KEY}.caps.time")
    events = list(sample.events)
    spans = _Spans(events, root, names)
    origin = _origin(members, spans, events, wall)
    found = _collect(events, spans, origin, set(names))
    spawns = _links.spawn_marks(sample.store)
    tasks = _links.spawn_tasks(sample.store)

    ended = [m.time for m in members if m.time is not None]
    duration = max([wall, found.last, *ended, 0.0])
    found.close_all({m.name: m.time if m.time is not None else duration for m in members})
    lanes = []
    for m in _ordered(members):
        name = m.name
        lanes.append(
            Lane(
                name=name,
                role=m.role,
                state=m.state,
                status=m.status,
                started=m.started,
                ended=m.time,
                parent=m.parent,
                depth=m.depth,
                error=m.error,
                answer=name == answer,
                model_calls=tuple(sorted(found.model.get(name, []), key=lambda c: c.start)),
                tool_calls=tuple(sorted(found.tool.get(name, []), key=lambda c: c.start)),
                writes=tuple(found.writes.get(name, [])),
                waits=tuple(sorted(found.waits.get(name, []), key=lambda w: w.start)),
                notices=tuple(found.notices.get(name, {}).values()),
                spawns=tuple(spawns.get(name, [])),
                task=tasks.get(name),
            )
        )
    first_passes = [m.first_pass_time for m in members if m.first_pass_time is not None]
    critical, findings = _diagnosis(sample)
    return RunTimeline(
        critical=critical,
        findings=findings,
        sample_id=str(sample.id),
        epoch=sample.epoch,
        duration=duration,
        lanes=tuple(lanes),
        stop=_recorded_stop(sample) or infer_stop(reason, lanes, first_passes, time_cap, duration),
        answer=answer,
        answer_mode=mode,
        messages=_links.messages(sample.store, set(names)),
        task=task,
        error=sample.error.message if sample.error is not None else None,
    )
