"""Efficiency: what the fan-out cost, lead and children apart.  Informational: it never fails.

Figures come from the ledger (tokens, cost, model calls); the children are every spawned
member (the spawn ledger's ``spawn`` entries and the result record's members with depth >= 1,
grandchildren included); the wall time is the metrics record's ``wall_clock``, else the latest
member end in the result record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from swarm import RuleResult

from ._evidence import Evidence
from ._fixture import Fixture
from ._records import MemberUsage

__all__ = ["efficiency"]


def _figures(usage: Iterable[MemberUsage]) -> dict[str, Any]:
    members = list(usage)
    return {
        "members": len(members),
        "tokens": sum(u.tokens for u in members),
        "cost": round(float(sum(u.cost for u in members)), 10),
        "model_calls": sum(u.calls for u in members),
        "turns": sum(u.turns for u in members),
        "errored_calls": sum(u.errored for u in members),
    }


def _wall_time(evidence: Evidence) -> tuple[float | None, str | None]:
    if evidence.wall_clock is not None:
        return evidence.wall_clock, "metrics"
    ends = [m.ended for m in evidence.members if m.ended is not None]
    return (max(ends), "result") if ends else (None, None)


def efficiency(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """Tokens, cost, model calls and turns (completed calls, cache replays included) of the
    lead, of the children and in total; how many children; the swarm's wall time."""
    spawned = {s.member for s in evidence.spawns if s.op == "spawn" and s.member is not None}
    spawned |= {m.name for m in evidence.members if m.depth >= 1}
    lead = [u for u in evidence.usage if u.name == evidence.lead]
    children = [u for u in evidence.usage if u.name in spawned and u.name != evidence.lead]
    others = [u for u in evidence.usage if u not in lead and u not in children]
    wall_time, source = _wall_time(evidence)
    details = {
        "lead": _figures(lead),
        "children": {
            **_figures(children),
            "spawned": len(spawned),
            "lead_children": len(evidence.children),
        },
        "others": _figures(others),
        "total": _figures(evidence.usage),
        "wall_time": wall_time,
        "wall_time_source": source,
    }
    return RuleResult(passed=True, details=details)
