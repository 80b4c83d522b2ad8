"""The rules about how the lead orchestrated its children: delegation, dedup and receipts.

All three read the spawn ledger and the message log (with the result record and the ledger for
whether a child ran); only depth-1 children count, so a grandchild never stands in for a
shard's worker and never makes a spawn look like a duplicate.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from swarm import RuleFailure, RuleResult

from ._evidence import Child, Evidence
from ._fixture import Fixture

__all__ = ["delegation", "dedup", "receipts"]


def _claims(child: Child, workers: set[str]) -> set[str]:
    """The shard workers ``child`` is claimed by: a name it was spawned under, or its member
    name."""
    return {name for name in (*child.requested, child.member) if name in workers}


def _kept(evidence: Evidence, child: Child) -> bool:
    """Live at the end, or ended or deleted only after a reply of its reached the lead.

    A deleted child counts only with a reply sent before the deletion began; a child torn down
    before it replied is a silent drop, whatever came later.
    """
    if child.live:
        return True
    reached = [m for m in evidence.replies(child.member) if evidence.reached_lead(m)]
    if child.deleted is not None:
        return any(m.time <= child.deleted for m in reached)
    return bool(reached)


def _why_not(child: Child, claims: set[str]) -> str:
    if len(claims) > 1:
        return f"{child.member} is claimed by {len(claims)} shards ({', '.join(sorted(claims))})"
    if not child.started:
        return f"{child.member} never started"
    if not child.ran:
        return f"{child.member} made no model call"
    if child.deleted is not None:
        return f"{child.member} was deleted ({child.delete_reason}) before a reply reached the lead"
    return f"{child.member} ended ({child.status}) without a reply reaching the lead"


def delegation(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """Every shard has a depth-1 child of the lead, spawned under the shard's worker name (or
    whose member name is the worker name), claimed by no other shard, that really ran (it
    started and made a completed model call) and was live at the end or ended or was deleted
    only after its reply reached the lead."""
    workers = {s.worker for s in fixture.shards}
    verified: dict[str, str] = {}
    reasons: dict[str, list[str]] = {}
    helpers: list[str] = []
    shared: list[str] = []
    for child in evidence.children:
        claims = _claims(child, workers)
        if not claims:
            helpers.append(child.member)
            continue
        if len(claims) == 1 and child.ran and _kept(evidence, child):
            verified.setdefault(next(iter(claims)), child.member)
            continue
        if len(claims) > 1:
            shared.append(child.member)
        for worker in claims:
            reasons.setdefault(worker, []).append(_why_not(child, claims))
    failures = []
    for shard in fixture.shards:
        if shard.worker in verified:
            continue
        if evidence.lead is None:
            why = "no lead: the records name no roster member"
        elif shard.worker in reasons:
            why = "; ".join(reasons[shard.worker])
        else:
            why = f"the lead ({evidence.lead}) spawned no child named {shard.worker}"
        failures.append(RuleFailure(reason=why, shard=shard.file))
    details = {
        "lead": evidence.lead,
        "children": len(evidence.children),
        "verified_workers": verified,
        "unverified_workers": [s.worker for s in fixture.shards if s.worker not in verified],
        "helper_children": helpers,
        "shared_claims": shared,
    }
    return RuleResult(passed=not failures, failures=tuple(failures), details=details)


def dedup(fixture: Fixture, evidence: Evidence, spawn_factor: int = 2) -> RuleResult:
    """No depth-1 spawn under a shard's worker name while another depth-1 child spawned under
    that name is live (spawned and not yet ended), and at most ``spawn_factor`` x the shard
    count depth-1 spawns in all (helpers included)."""
    shards = {s.worker: s.file for s in fixture.shards}
    workers = set(shards)
    live: dict[str, str] = {}  # member -> the name it was spawned under
    duplicates: list[dict[str, Any]] = []
    refused: Counter[str] = Counter()
    total = max_live = 0
    failures: list[RuleFailure] = []
    for entry in evidence.spawns:
        if entry.depth != 1:
            continue
        if entry.op == "refused":
            refused[entry.reason or ""] += 1
        elif entry.op == "end" and entry.member is not None:
            live.pop(entry.member, None)
        elif entry.op == "spawn" and entry.member is not None:
            total += 1
            name = entry.requested
            others = [m for m, n in live.items() if n == name and m != entry.member]
            if name in workers and others:
                duplicates.append(
                    {"requested": name, "member": entry.member, "seq": entry.seq, "live": others}
                )
                failures.append(
                    RuleFailure(
                        reason=f"spawned as {name} (seq {entry.seq}) while "
                        f"{', '.join(others)}, spawned under that name, was live",
                        shard=shards[name],
                        member=entry.member,
                    )
                )
            live.setdefault(entry.member, name)
            max_live = max(max_live, len(live))
    budget = spawn_factor * len(fixture.shards)
    if total > budget:
        failures.append(
            RuleFailure(
                reason=f"{total} depth-1 spawns, more than the budget of {budget} "
                f"({spawn_factor} x {len(fixture.shards)} shards)"
            )
        )
    details = {
        "duplicate_spawns": duplicates,
        "total_spawns": total,
        "spawn_budget": budget,
        "max_concurrent_children": max_live,
        "refused": dict(sorted(refused.items())),
    }
    return RuleResult(passed=not failures, failures=tuple(failures), details=details)


def receipts(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """Every depth-1 child of the lead (ended, deleted or live at the end) has a reply to the
    lead as its child, or a receipt about it to the lead, that reached the lead's conversation.

    One sent after the lead ended never reached it: it is reported as late, and counts as
    missing.
    """
    received: dict[str, str] = {}
    missing: list[str] = []
    late: list[str] = []
    not_as_child: list[str] = []
    failures = []
    for child in evidence.children:
        entries = evidence.replies(child.member) + evidence.receipts(child.member)
        reached = [m for m in entries if evidence.reached_lead(m)]
        if reached:
            received[child.member] = reached[0].kind
            continue
        if any(
            m.sender == child.member
            and m.recipient == evidence.lead
            and m.kind == "message"
            and m.relationship != "child"
            for m in evidence.messages
        ):
            not_as_child.append(child.member)
        if any(evidence.late(m) for m in entries):
            late.append(child.member)
            why = "its reply or receipt was sent after the lead ended and never reached it"
        elif entries:
            why = "its reply or receipt never reached the lead's conversation"
        else:
            why = "no reply or receipt to the lead"
        missing.append(child.member)
        failures.append(RuleFailure(reason=why, member=child.member))
    details = {
        "children": len(evidence.children),
        "received": received,
        "missing": missing,
        "late": late,
        "not_as_child": not_as_child,
    }
    return RuleResult(passed=not failures, failures=tuple(failures), details=details)
