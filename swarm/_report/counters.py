"""Counters the runtime keeps while a swarm runs and the metrics report: each member's activity
on each channel, and its waits."""

from __future__ import annotations

import attrs

__all__ = ["CommCounts", "WaitCounts"]


@attrs.define
class CommCounts:
    """One member's activity on one channel."""

    records: int = 0
    record_bytes: int = 0
    rejections: dict[str, int] = attrs.field(factory=dict)
    reads: int = 0
    listings: int = 0
    notices: int = 0


@attrs.define
class WaitCounts:
    """One member's waits, its subagents' included."""

    waits: int = 0
    by_outcome: dict[str, int] = attrs.field(factory=dict)
    wait_time: float = 0.0
    idle_time: float = 0.0
