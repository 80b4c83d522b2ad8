"""The reads record (``inspect_swarm:reads``) as the rubric reads it: which member's sandbox
tools read which file, as the runtime saw it (docs/records.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._records import READS_KEY, RecordReport

__all__ = ["READ_OPS", "FileRead", "Reads", "parse_reads"]

READ_OPS = ("open", "read")
"""The events that count as reading a file: an ``open`` too, since a file mapped into memory
(``mmap``) and read there gives the kernel's open and no read event."""


@attrs.frozen(kw_only=True)
class FileRead:
    """One entry of the reads record."""

    seq: int
    time: float
    member: str
    sandbox: str
    path: str
    op: str
    call: int | None = None  # the member's model call whose tools made it (None: not stamped)


@attrs.frozen(kw_only=True)
class Reads:
    """The reads record: the provider, whether file events were watched, each member's
    sandbox and files, and the entries in ``seq`` order."""

    provider: str | None
    watched: bool
    members: Mapping[str, Mapping[str, Any]]
    entries: tuple[FileRead, ...]

    def first_read(self, member: str, path: str) -> FileRead | None:
        """``member``'s first read of ``path`` in its own sandbox (an ``open`` or a ``read``:
        ``READ_OPS``)."""
        own = self.members.get(member, {}).get("sandbox")
        return next(
            (
                e
                for e in self.entries
                if e.member == member and e.path == path and e.op in READ_OPS and e.sandbox == own
            ),
            None,
        )

    def readers(self, path: str) -> tuple[str, ...]:
        """Every member an ``open`` or ``read`` of ``path`` (in any environment) is credited
        to, in the order of their first; events credited to no member (the runtime's own) are
        left out."""
        found: dict[str, None] = {}
        for e in self.entries:
            if e.path == path and e.op in READ_OPS and e.member:
                found.setdefault(e.member, None)
        return tuple(found)

    def last_write(self, member: str, path: str) -> FileRead | None:
        """``member``'s last ``write`` of ``path`` in its own sandbox."""
        own = self.members.get(member, {}).get("sandbox")
        found = [
            e
            for e in self.entries
            if e.member == member and e.path == path and e.op == "write" and e.sandbox == own
        ]
        return found[-1] if found else None

    @property
    def overflow(self) -> bool:
        """The kernel dropped file events: the record is incomplete."""
        return any(e.op == "overflow" for e in self.entries)


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "seq": int,
    "time": (int, float),
    "member": str,
    "sandbox": str,
    "path": str,
    "op": str,
}


def parse_reads(raw: object) -> tuple[Reads | None, RecordReport]:
    """The reads record, validated (entries that fail a check are skipped and counted)."""
    if raw is None:
        return None, RecordReport(key=READS_KEY, present=False)
    if not isinstance(raw, Mapping) or type(raw.get("version")) is not int or raw["version"] != 1:
        problem = "not a version 1 reads record"
        return None, RecordReport(key=READS_KEY, present=True, problem=problem)
    members = raw.get("members")
    entries = raw.get("entries")
    if not isinstance(members, Mapping) or not isinstance(entries, list):
        problem = "members or entries missing"
        return None, RecordReport(key=READS_KEY, present=True, problem=problem)
    found: list[FileRead] = []
    problems: list[str] = []
    for i, entry in enumerate(entries):
        ok = isinstance(entry, Mapping) and all(
            isinstance(entry.get(k), t) and not isinstance(entry.get(k), bool)
            for k, t in _FIELDS.items()
        )
        call = entry.get("call") if isinstance(entry, Mapping) else None
        if ok and call is not None and (type(call) is not int or call < 0):
            ok = False
        if not ok:
            problems.append(f"entries[{i}]: a field is missing or of the wrong type")
            continue
        found.append(FileRead(**{k: entry[k] for k in _FIELDS}, call=call))
    found.sort(key=lambda e: e.seq)
    reads = Reads(
        provider=raw.get("provider") if isinstance(raw.get("provider"), str) else None,
        watched=raw.get("watched") is True,
        members={str(k): v for k, v in members.items() if isinstance(v, Mapping)},
        entries=tuple(found),
    )
    report = RecordReport(
        key=READS_KEY, present=True, malformed=len(problems), problems=tuple(problems)
    )
    return reads, report
