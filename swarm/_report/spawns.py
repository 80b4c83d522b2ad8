"""The ``inspect_swarm:spawns`` record: the spawn ledger, written by the runtime (never an agent).

Ordered entries: ``spawn`` (a child admitted, before it runs), ``refused`` (a request refused,
with the reason), ``end`` (a spawned child ended, with its status) and ``delete`` (the runtime
began tearing a live child down: its parent ended, or cancelled it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs

__all__ = ["SpawnEntry", "SpawnOp", "build_spawns", "spawn_figures"]

SpawnOp = Literal["spawn", "refused", "end", "delete"]


@attrs.frozen(kw_only=True)
class SpawnEntry:
    """One entry of the spawn ledger."""

    seq: int
    time: float
    op: SpawnOp
    member: str | None
    requested: str
    parent: str
    depth: int
    template: str
    task: str | None = None
    status: str | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """As the spawn ledger writes it."""
        return attrs.asdict(self)


def build_spawns(entries: Sequence[SpawnEntry]) -> dict[str, Any]:
    """The spawn ledger record (version 1)."""
    return {"version": 1, "entries": [e.as_dict() for e in entries]}


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
