"""The ``inspect_swarm:spawns`` record: the spawn ledger, written by the runtime (never an agent).

Ordered entries: ``spawn`` (a child admitted, before it runs), ``refused`` (a request refused,
with the reason), ``end`` (a spawned child ended, with its status) and ``delete`` (the runtime
began tearing a live child down: its parent ended, or cancelled it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from swarm._schemas import SpawnLedger, SpawnLedgerEntry, SpawnOp

__all__ = ["SpawnEntry", "SpawnOp", "build_spawns", "spawn_figures"]

SpawnEntry = SpawnLedgerEntry
"""One entry of the spawn ledger: the runtime writes the record's own class (``swarm._schemas``,
which ``swarm.analysis`` reads it back with), so an entry has every field the record has."""


def build_spawns(entries: Sequence[SpawnEntry]) -> dict[str, Any]:
    """The spawn ledger record (version 1), through its schema."""
    return SpawnLedger(version=1, entries=list(entries)).model_dump()


def _count(values: Sequence[str | None]) -> dict[str, int]:
    found: dict[str, int] = {}
    for v in values:
        if v is not None:
            found[v] = found.get(v, 0) + 1
    return dict(sorted(found.items()))


def spawn_figures(entries: Sequence[SpawnEntry]) -> dict[str, Any]:
    """The spawning figures of the metrics: spawns, refusals, ends and deletions by cause, and
    the most children running at once."""
    live = peak = 0
    for e in entries:
        if e.op == "spawn":
            live += 1
            peak = max(peak, live)
        elif e.op == "end":
            live -= 1
    return {
        "spawns": sum(1 for e in entries if e.op == "spawn"),
        "refused": _count([e.reason for e in entries if e.op == "refused"]),
        "ended": _count([e.status for e in entries if e.op == "end"]),
        "deleted": _count([e.reason for e in entries if e.op == "delete"]),
        "max_live_children": peak,
    }
