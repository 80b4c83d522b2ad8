"""What the transcript says about a run: each event attributed to the member whose span holds it.

Read once when the swarm ends.  A member's subagents, tools and background work open spans
inside the member's own agent span, so walking span parents attributes their events to it;
events in the swarm's span tree outside every member belong to the runtime.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import attrs
from inspect_ai.event import Event, ModelEvent, ScoreEvent, SpanBeginEvent, ToolEvent

from swarm._report.counters import CommCounts

__all__ = ["RUNTIME", "CallCounts", "RunEvents", "index_events", "with_malformed_calls"]

RUNTIME = "<runtime>"
"""The owner of events in the swarm's span tree outside every member."""


@attrs.define
class CallCounts:
    """Model calls by outcome, as the ledger's ``calls`` writes them."""

    calls: int = 0
    cache_replays: int = 0
    errored: int = 0
    no_usage: int = 0
    unpriced: int = 0

    def add(self, other: CallCounts) -> None:
        """Add ``other`` into this count."""
        self.calls += other.calls
        self.cache_replays += other.cache_replays
        self.errored += other.errored
        self.no_usage += other.no_usage
        self.unpriced += other.unpriced

    def as_dict(self) -> dict[str, int]:
        """As the ledger writes it."""
        return attrs.asdict(self)

    @property
    def steps(self) -> int:
        """Completed calls including cache replays (what the metrics call steps)."""
        return self.calls + self.cache_replays


@attrs.define
class RunEvents:
    """The run's model and tool events, by owner (a member's name or ``RUNTIME``)."""

    calls: dict[str, CallCounts] = attrs.field(factory=dict)
    own_calls: Counter[str] = attrs.field(factory=Counter)
    tools: dict[str, list[ToolEvent]] = attrs.field(factory=dict)
    gate_scores: dict[str, list[ScoreEvent]] = attrs.field(factory=dict)

    def calls_of(self, owner: str) -> CallCounts:
        """The call counts of ``owner`` (zeros when it made none)."""
        return self.calls.get(owner) or CallCounts()


def _count(event: ModelEvent, into: CallCounts) -> None:
    if event.cache == "read":
        into.cache_replays += 1
        return
    # provider-client retries inside one call are failed attempts too
    into.errored += event.retries or 0
    if event.error is not None or event.pending:
        into.errored += 1
        return
    into.calls += 1
    usage = event.output.usage
    if usage is None:
        into.no_usage += 1
    elif usage.total_cost is None:
        into.unpriced += 1


def index_events(
    events: Iterable[Event], root_span: str | None, member_spans: Mapping[str, str]
) -> RunEvents:
    """Attribute the events under ``root_span`` to members (by their agent span ids).

    Args:
        events: the sample's transcript, in order.
        root_span: the swarm's own span; ``None`` attributes only events inside member spans.
        member_spans: span id -> member name for every member's own agent span.
    """
    # keyed by span id, never None: an event in no span has no owner
    owner: dict[str | None, str] = {}
    if root_span is not None:
        owner[root_span] = RUNTIME
    loop_spans: set[str | None] = set()  # the spans of members' own loops (not subagents')
    found = RunEvents()
    for event in events:
        if isinstance(event, SpanBeginEvent):
            name = member_spans.get(event.id)
            if name is not None:
                owner[event.id] = name
                loop_spans.add(event.id)
            elif event.parent_id in owner:
                owner[event.id] = owner[event.parent_id]
                # a nested agent span starts a subagent's loop; other spans stay in the loop
                # (the runtime's own checks run in a "gate" span: they are not the loop's)
                if event.parent_id in loop_spans and event.type not in ("agent", "gate"):
                    loop_spans.add(event.id)
            continue
        span_id = event.span_id
        who = owner.get(span_id)
        if who is None:
            continue
        if isinstance(event, ModelEvent):
            _count(event, found.calls.setdefault(who, CallCounts()))
            if span_id in loop_spans and event.cache != "read" and not event.error:
                found.own_calls[who] += 1
        elif isinstance(event, ToolEvent):
            found.tools.setdefault(who, []).append(event)
        elif isinstance(event, ScoreEvent) and event.intermediate and span_id in loop_spans:
            found.gate_scores.setdefault(who, []).append(event)
    return found


def with_malformed_calls(
    comm: Mapping[tuple[str, str], CommCounts],
    events: RunEvents,
    tool_channels: Mapping[str, str],
) -> dict[tuple[str, str], CommCounts]:
    """``comm`` with each channel tool call Inspect refused before it ran (arguments that do
    not fit the tool's schema: an unknown command, a wrong type, an extra argument) counted as a
    rejection by the control ``invalid``: the call never reached the channel, but the model
    made it."""
    found = dict(comm)
    for member, tools in events.tools.items():
        for event in tools:
            channel = tool_channels.get(event.function)
            if channel is None or event.error is None or event.error.type != "parsing":
                continue
            counts = found.get((member, channel)) or CommCounts()
            rejections = {**counts.rejections}
            rejections["invalid"] = rejections.get("invalid", 0) + 1
            found[(member, channel)] = attrs.evolve(counts, rejections=rejections)
    return found
