"""What the fan-out rubric judges: a typed, validated reading of one sample's store.

``read_evidence(store)`` reads only the records listed in ``STORE_KEYS`` (the spawn ledger,
the message log, the result record, the ledger, the metrics record and the stored artifact);
nothing an agent wrote anywhere else reaches a rule.  Entries that fail their checks are
skipped and counted in ``Evidence.reports``; missing records read as empty, so a sample without
them still scores (every rule that needs them fails).

The **lead** is the roster member (depth 0) that spawned the depth-1 children: the only roster
member when there is one, else the roster member with the most depth-1 spawns (the earliest on
a tie), else the first roster member.  Its **children** are the depth-1 members it spawned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs

from ._parse import (
    parse_artifact,
    parse_channels,
    parse_ledger,
    parse_messages,
    parse_metrics,
    parse_result,
    parse_spawns,
)
from ._readlog import Reads, parse_reads
from ._records import (
    ARTIFACT_KEY,
    LEDGER_KEY,
    MESSAGES_KEY,
    METRICS_KEY,
    READS_KEY,
    RESULT_KEY,
    SPAWNS_KEY,
    SUBAGENTS_KEY,
    Artifact,
    MemberRun,
    MemberUsage,
    MessageEntry,
    RecordReport,
    SpawnEntry,
)
from ._subagents import credit_reads, lead_own_usage, subagent_children

__all__ = ["Child", "Evidence", "read_evidence"]


@attrs.frozen(kw_only=True)
class Child:
    """A depth-1 child of the lead, from the spawn ledger, the result record and the ledger.

    Attributes:
        member: its member name (unique in every record).
        requested: every name a ``spawn`` entry for this member asked for, in ``seq`` order;
            one, unless the records claim one run under several names.
        seq: the ``seq`` of its first ``spawn`` entry.
        spawned: when it was spawned.
        ended: when its ``end`` entry says it ended; ``None`` without one.
        status: the status of its ``end`` entry.
        deleted: when the runtime began tearing it down (its first ``delete``); ``None`` if never.
        delete_reason: why (``parent_ended``, ``cancelled``).
        started: the result record says it started.
        turns: its completed model calls in the ledger (cache replays included); 0 without an
            entry.
        task: the task text its parent gave it.
    """

    member: str
    requested: tuple[str, ...]
    seq: int
    spawned: float
    ended: float | None
    status: str | None
    deleted: float | None
    delete_reason: str | None
    started: bool
    turns: int
    task: str | None

    @property
    def ran(self) -> bool:
        """It really ran: it started, and made at least one completed model call."""
        return self.started and self.turns >= 1

    @property
    def live(self) -> bool:
        """Neither ended nor deleted when the records were written."""
        return self.ended is None and self.deleted is None


@attrs.frozen(kw_only=True)
class Evidence:
    """One sample's evidence, every entry validated.

    Attributes:
        spawns: the spawn ledger's entries, in ``seq`` order.
        messages: the message log's entries, in ``seq`` order.
        members: the result record's members.
        usage: the ledger's members.
        wall_clock: the swarm's wall clock from the metrics record (``None`` if unknown).
        artifact: the stored artifact (``None`` when none was stored).
        reports: how each record read (missing, unusable, entries skipped), in ``STORE_KEYS``
            order.
        lead: the lead's member name; ``None`` when no record names a roster member.
        lead_end: when the lead ended (result record); ``None`` if it did not, or is unknown.
        children: the lead's depth-1 children, in the order they were spawned.
        reads: the reads record (``None`` when the run recorded none).
        channels: the channels with records the run used (the metrics record's ``comm``).
    """

    spawns: tuple[SpawnEntry, ...]
    messages: tuple[MessageEntry, ...]
    members: tuple[MemberRun, ...]
    usage: tuple[MemberUsage, ...]
    wall_clock: float | None
    artifact: Artifact | None
    reports: tuple[RecordReport, ...]
    lead: str | None
    lead_end: float | None
    children: tuple[Child, ...]
    reads: Reads | None = None
    channels: tuple[str, ...] = ()

    def member(self, name: str) -> MemberRun | None:
        """The result record's entry for ``name``."""
        return next((m for m in self.members if m.name == name), None)

    def usage_of(self, name: str) -> MemberUsage | None:
        """The ledger's entry for ``name``."""
        return next((u for u in self.usage if u.name == name), None)

    def report(self, key: str) -> RecordReport:
        """How the record ``key`` read."""
        return next(r for r in self.reports if r.key == key)

    def reached_lead(self, message: MessageEntry) -> bool:
        """``message`` reached the lead's conversation: it went to the lead, it was seen, and
        not after the lead ended."""
        if message.recipient != self.lead or message.seen is None:
            return False
        return self.lead_end is None or message.seen.time <= self.lead_end

    def late(self, message: MessageEntry) -> bool:
        """``message`` to the lead did not reach it because the lead had ended: seen after the
        lead's end, or never seen and sent at or after it."""
        if message.recipient != self.lead or self.lead_end is None:
            return False
        if message.seen is not None:
            return message.seen.time > self.lead_end
        return message.time >= self.lead_end

    def is_reply(self, message: MessageEntry) -> bool:
        """``message`` is a member's message to the lead as its child (relationship exactly
        ``child``, stamped by the runtime)."""
        return (
            message.kind == "message"
            and message.recipient == self.lead
            and message.relationship == "child"
        )

    def replies(self, child: str) -> tuple[MessageEntry, ...]:
        """Messages ``child`` sent the lead as its child."""
        return tuple(m for m in self.messages if m.sender == child and self.is_reply(m))

    def receipts(self, child: str) -> tuple[MessageEntry, ...]:
        """The runtime's receipts to the lead about ``child``."""
        return tuple(
            m
            for m in self.messages
            if m.kind == "receipt" and m.about == child and m.recipient == self.lead
        )


def _lead(members: tuple[MemberRun, ...], spawns: tuple[SpawnEntry, ...]) -> str | None:
    roster = [m.name for m in members if m.depth == 0]
    if len(roster) == 1:
        return roster[0]
    parents = [s.parent for s in spawns if s.op == "spawn" and s.depth == 1]
    if roster:
        parents = [p for p in parents if p in roster]
    if parents:
        counts = Counter(parents)
        best = max(counts.values())
        return next(p for p in parents if counts[p] == best)
    return roster[0] if roster else None


def _children(
    lead: str | None,
    spawns: tuple[SpawnEntry, ...],
    members: tuple[MemberRun, ...],
    usage: tuple[MemberUsage, ...],
) -> tuple[Child, ...]:
    runs = {m.name: m for m in members}
    turns = {u.name: u.turns for u in usage}
    first: dict[str, SpawnEntry] = {}
    requested: dict[str, list[str]] = {}
    ends: dict[str, SpawnEntry] = {}
    deletes: dict[str, SpawnEntry] = {}
    for entry in spawns:
        if entry.member is None or entry.depth != 1 or entry.parent != lead:
            continue
        name = entry.member
        if entry.op == "spawn":
            first.setdefault(name, entry)
            names = requested.setdefault(name, [])
            if entry.requested not in names:
                names.append(entry.requested)
        elif entry.op == "end":
            ends.setdefault(name, entry)
        elif entry.op == "delete":
            deletes.setdefault(name, entry)
    children = []
    for name, spawn in first.items():
        end, delete, run = ends.get(name), deletes.get(name), runs.get(name)
        children.append(
            Child(
                member=name,
                requested=tuple(requested[name]),
                seq=spawn.seq,
                spawned=spawn.time,
                ended=None if end is None else end.time,
                status=None if end is None else end.status,
                deleted=None if delete is None else delete.time,
                delete_reason=None if delete is None else delete.reason,
                started=run is not None and run.started is not None,
                turns=turns.get(name, 0),
                task=spawn.task,
            )
        )
    return tuple(children)


def read_evidence(store: Mapping[str, Any], aliases: Mapping[str, str] | None = None) -> Evidence:
    """Read a sample's store (a mapping from store key to value) as ``Evidence``.

    ``aliases`` maps a deepagent subagent type, or a shard's path, to the worker name it is
    the child of (``child_aliases(fixture)``: ``worker_events_01`` and
    ``shards/events-01.jsonl`` are ``worker-events-01``'s), for the subagents record's
    dispatches.  A read in a CLI member's container is credited to the sub-agent whose own
    command named the file (``credit_reads``).

    Never raises for what the records hold: anything unusable is skipped and reported.
    """
    spawns, spawns_report = parse_spawns(store.get(SPAWNS_KEY))
    messages, messages_report = parse_messages(store.get(MESSAGES_KEY))
    members, result_report = parse_result(store.get(RESULT_KEY))
    usage, ledger_report = parse_ledger(store.get(LEDGER_KEY))
    wall_clock, metrics_report = parse_metrics(store.get(METRICS_KEY))
    artifact, artifact_report = parse_artifact(store.get(ARTIFACT_KEY))
    reads, reads_report = parse_reads(store.get(READS_KEY))
    subagents = subagent_children(
        store.get(SUBAGENTS_KEY),
        max((s.seq for s in spawns), default=0),
        max((m.seq for m in messages), default=0),
        aliases or {},
    )
    reads = credit_reads(reads, subagents.ran)
    spawns = (*spawns, *subagents.spawns)
    messages = (*messages, *subagents.messages)
    known = {m.name for m in members}
    members = (*members, *(m for m in subagents.members if m.name not in known))
    lead = _lead(members, spawns)
    own = [u for u, m in zip(subagents.usage, subagents.members, strict=True) if m.depth == 1]
    usage = (*lead_own_usage(usage, own, lead), *subagents.usage)
    lead_run = None if lead is None else next((m for m in members if m.name == lead), None)
    return Evidence(
        spawns=spawns,
        messages=messages,
        members=members,
        usage=usage,
        wall_clock=wall_clock,
        artifact=artifact,
        reports=(
            spawns_report,
            messages_report,
            result_report,
            ledger_report,
            metrics_report,
            artifact_report,
            reads_report,
            # only when present: a run of the spawn tools reads as it always did
            *((subagents.report,) if subagents.report.present else ()),
        ),
        lead=lead,
        lead_end=None if lead_run is None else lead_run.ended,
        children=_children(lead, spawns, members, usage),
        reads=reads,
        channels=parse_channels(store.get(METRICS_KEY)),
    )
