"""Parsers of the store records the fan-out rubric reads, one per record.

Every parser takes the raw store value (``None`` when the key is missing) and returns the
entries that passed every check plus a ``RecordReport``.  A missing record gives no entries;
a record that is not an object of version 1 gives no entries and a ``problem``; an entry with a
missing or wrongly typed field is skipped and counted as malformed; an entry whose envelope
(``seq``, ``time`` and ``op``/``kind``) is valid but whose ``op``/``kind`` this rubric does
not know is skipped and counted as unknown.  Two entries with one ``seq`` (or two members with
one name) keep the first and count the other as malformed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from ._fields import Malformed, mapping, number, optional_number, optional_text, text, whole
from ._records import (
    ARTIFACT_KEY,
    LEDGER_KEY,
    MESSAGES_KEY,
    METRICS_KEY,
    RESULT_KEY,
    SPAWNS_KEY,
    Artifact,
    MemberRun,
    MemberUsage,
    MessageEntry,
    MessageKind,
    RecordReport,
    Seen,
    SpawnEntry,
    SpawnOp,
)

__all__ = [
    "parse_artifact",
    "parse_ledger",
    "parse_messages",
    "parse_channels",
    "parse_metrics",
    "parse_result",
    "parse_spawns",
]

PROBLEMS_KEPT = 20
"""How many entry problems a report spells out (the counts are always complete)."""

T = TypeVar("T")


class _Unknown(Exception):
    """A valid envelope with an ``op``/``kind`` this rubric does not know."""


class _Reader:
    """Collects the problems of one record while its entries are parsed."""

    def __init__(self, key: str, value: Any) -> None:
        self.key = key
        self.value = value
        self.problem: str | None = None
        self.malformed = 0
        self.unknown = 0
        self.problems: list[str] = []

    def _note(self, where: str, why: str) -> None:
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(f"{where}: {why}")

    def items(self, field: str) -> list[Any]:
        """The record's list ``field``; ``[]`` (with a problem) when the record is unusable."""
        if self.value is None:
            return []
        try:
            record = mapping(self.value, "the record")
            version = whole(record, "version")
            if version != 1:
                raise Malformed(f"version: expected 1, got {version}")
            items = record.get(field)
            if not isinstance(items, list):
                raise Malformed(f"{field}: expected a list, got {items!r:.80}")
        except Malformed as ex:
            self.problem = str(ex)
            return []
        return items

    def each(self, field: str, parse: Callable[[Mapping[str, Any]], T]) -> list[T]:
        """Every entry of ``field`` that ``parse`` accepts; the others counted."""
        found: list[T] = []
        for index, raw in enumerate(self.items(field)):
            where = f"{field}[{index}]"
            try:
                found.append(parse(mapping(raw, "the entry")))
            except _Unknown as ex:
                self.unknown += 1
                self._note(where, f"skipped: {ex}")
            except Malformed as ex:
                self.malformed += 1
                self._note(where, str(ex))
        return found

    def unique(self, found: list[T], key: Callable[[T], object], what: str) -> list[T]:
        """``found`` without the later entries that repeat an earlier one's ``key``."""
        kept: list[T] = []
        keys: set[object] = set()
        for item in found:
            value = key(item)
            if value in keys:
                self.malformed += 1
                self._note(what, f"{value!r} appears twice; the later entry is skipped")
                continue
            keys.add(value)
            kept.append(item)
        return kept

    def report(self) -> RecordReport:
        return RecordReport(
            key=self.key,
            present=self.value is not None,
            problem=self.problem,
            malformed=self.malformed,
            unknown=self.unknown,
            problems=tuple(self.problems),
        )


# -- the spawn ledger -------------------------------------------------------------------------

_SPAWN_OPS = ("spawn", "refused", "end", "delete")


def _spawn_entry(entry: Mapping[str, Any]) -> SpawnEntry:
    seq = whole(entry, "seq", low=1)
    time = number(entry, "time")
    op = text(entry, "op")
    if op not in _SPAWN_OPS:
        raise _Unknown(f"unknown op {op!r}")
    member = optional_text(entry, "member") if op == "refused" else text(entry, "member")
    status = text(entry, "status") if op == "end" else optional_text(entry, "status")
    needs_reason = op in ("refused", "delete")
    reason = text(entry, "reason") if needs_reason else optional_text(entry, "reason")
    return SpawnEntry(
        seq=seq,
        time=time,
        op=cast(SpawnOp, op),
        member=member,
        requested=text(entry, "requested"),
        parent=text(entry, "parent"),
        depth=whole(entry, "depth", low=1),
        template=optional_text(entry, "template"),
        task=optional_text(entry, "task"),
        status=status,
        reason=reason,
    )


def parse_spawns(value: Any) -> tuple[tuple[SpawnEntry, ...], RecordReport]:
    """The spawn ledger's valid entries, in ``seq`` order."""
    reader = _Reader(SPAWNS_KEY, value)
    found = reader.unique(reader.each("entries", _spawn_entry), lambda e: e.seq, "seq")
    return tuple(sorted(found, key=lambda e: e.seq)), reader.report()


# -- the message log --------------------------------------------------------------------------

_MESSAGE_KINDS = ("message", "receipt")


def _call(entry: Mapping[str, Any]) -> int | None:
    """A model call's number, ``None`` when absent or null (a log written before they were
    counted)."""
    return None if entry.get("call") is None else whole(entry, "call", low=0)


def _seen(entry: Mapping[str, Any]) -> Seen | None:
    raw = entry.get("seen", ...)
    if raw is ...:
        raise Malformed("seen: missing")
    if raw is None:
        return None
    seen = mapping(raw, "seen")
    try:
        return Seen(time=number(seen, "time"), via=text(seen, "via"), call=_call(seen))
    except Malformed as ex:
        raise Malformed(f"seen.{ex}") from None


def _message_entry(entry: Mapping[str, Any]) -> MessageEntry:
    seq = whole(entry, "seq", low=1)
    time = number(entry, "time")
    kind = text(entry, "kind")
    if kind not in _MESSAGE_KINDS:
        raise _Unknown(f"unknown kind {kind!r}")
    whole(entry, "size", low=0)
    about = text(entry, "about") if kind == "receipt" else optional_text(entry, "about")
    return MessageEntry(
        seq=seq,
        time=time,
        kind=cast(MessageKind, kind),
        sender=text(entry, "sender"),
        recipient=text(entry, "recipient"),
        relationship=text(entry, "relationship"),
        text=text(entry, "text"),
        about=about,
        status=optional_text(entry, "status"),
        seen=_seen(entry),
        call=_call(entry),
    )


def parse_messages(value: Any) -> tuple[tuple[MessageEntry, ...], RecordReport]:
    """The message log's valid entries, in ``seq`` order."""
    reader = _Reader(MESSAGES_KEY, value)
    found = reader.unique(reader.each("messages", _message_entry), lambda e: e.seq, "seq")
    return tuple(sorted(found, key=lambda e: e.seq)), reader.report()


# -- the result record and the ledger ---------------------------------------------------------


def _member_run(entry: Mapping[str, Any]) -> MemberRun:
    return MemberRun(
        name=text(entry, "name"),
        state=text(entry, "state"),
        status=optional_text(entry, "status"),
        started=optional_number(entry, "started"),
        ended=optional_number(entry, "time"),
        parent=optional_text(entry, "parent"),
        depth=whole(entry, "depth", low=0),
    )


def parse_result(value: Any) -> tuple[tuple[MemberRun, ...], RecordReport]:
    """The result record's valid member entries, in the record's order."""
    reader = _Reader(RESULT_KEY, value)
    found = reader.unique(reader.each("members", _member_run), lambda m: m.name, "name")
    return tuple(found), reader.report()


def _nested(entry: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    raw = entry.get(key)
    if raw is None:
        raise Malformed(f"{key}: missing")
    return mapping(raw, key)


def _meter(entry: Mapping[str, Any]) -> tuple[int, float]:
    meter = _nested(entry, "meter")
    try:
        tokens = whole(_nested(meter, "usage"), "total_tokens", low=0)
        return tokens, number(meter, "cost")
    except Malformed as ex:
        raise Malformed(f"meter.{ex}") from None


def _member_usage(entry: Mapping[str, Any]) -> MemberUsage:
    name = text(entry, "name")
    tokens, cost = _meter(entry)
    calls = _nested(entry, "calls")
    try:
        counts = {k: whole(calls, k, low=0) for k in ("calls", "cache_replays", "errored")}
    except Malformed as ex:
        raise Malformed(f"calls.{ex}") from None
    return MemberUsage(name=name, tokens=tokens, cost=cost, **counts)


def parse_ledger(value: Any) -> tuple[tuple[MemberUsage, ...], RecordReport]:
    """The ledger's valid member entries, in the record's order."""
    reader = _Reader(LEDGER_KEY, value)
    found = reader.unique(reader.each("members", _member_usage), lambda m: m.name, "name")
    return tuple(found), reader.report()


# -- the metrics record and the artifact ------------------------------------------------------


def parse_metrics(value: Any) -> tuple[float | None, RecordReport]:
    """The swarm's wall clock from the metrics record (``None`` when unknown)."""
    if value is None:
        return None, RecordReport(key=METRICS_KEY, present=False)
    try:
        record = mapping(value, "the record")
        version = whole(record, "version")
        if version != 1:
            raise Malformed(f"version: expected 1, got {version}")
        return number(record, "wall_clock"), RecordReport(key=METRICS_KEY, present=True)
    except Malformed as ex:
        return None, RecordReport(key=METRICS_KEY, present=True, problem=str(ex))


def parse_channels(value: Any) -> tuple[str, ...]:
    """The channels with records the run used, sorted: the keys of the members' ``comm`` in the
    metrics record (every member has an entry for every such channel, zeros included).  ``()``
    for a record without them, or one that is malformed (``parse_metrics`` reports that)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("members"), list):
        return ()
    found: set[str] = set()
    for member in value["members"]:
        comm = member.get("comm") if isinstance(member, Mapping) else None
        if isinstance(comm, Mapping):
            found.update(key for key in comm if isinstance(key, str))
    return tuple(sorted(found))


def parse_artifact(value: Any) -> tuple[Artifact | None, RecordReport]:
    """The stored artifact (``None`` when the task stored none, or it is unreadable)."""
    if value is None:
        return None, RecordReport(key=ARTIFACT_KEY, present=False)
    try:
        record = mapping(value, "the record")
        artifact = Artifact(path=text(record, "path"), text=optional_text(record, "text"))
    except Malformed as ex:
        return None, RecordReport(key=ARTIFACT_KEY, present=True, problem=str(ex))
    return artifact, RecordReport(key=ARTIFACT_KEY, present=True)
