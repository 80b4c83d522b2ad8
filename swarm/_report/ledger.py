"""The ``inspect_swarm:ledger`` record: the swarm's accounting, field for field as in the spec,
built through its schema (``swarm._schemas.SwarmLedger``, which ``swarm.analysis`` reads it
back with)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from inspect_ai.model import ModelAPI

from swarm._accounts.accounts import Accounts
from swarm._accounts.meter import UsageMeter, usage_dict, usage_minus, usage_sum
from swarm._report.events import CallCounts, RunEvents
from swarm._report.outcome import MemberEnd, RunOutcome
from swarm._schemas import (
    Calls,
    LedgerBudget,
    LedgerCaps,
    LedgerShare,
    MemberLedger,
    Meter,
    SampleLimits,
    SwarmLedger,
    Usage,
)

__all__ = ["build_ledger", "ledger_from", "native_compaction_classes"]


def _subclasses(classes: list[type[ModelAPI]]) -> Iterator[type[ModelAPI]]:
    for c in classes:
        yield c
        yield from _subclasses(c.__subclasses__())


def native_compaction_classes() -> list[str]:
    """Loaded model API classes that compact conversations natively (which logs no model event;
    their usage is metered from Inspect's own record all the same)."""
    base = ModelAPI.compact
    names = {
        f"{c.__module__}.{c.__qualname__}"
        for c in _subclasses(ModelAPI.__subclasses__())
        if c.compact is not base
    }
    return sorted(names)


def _budget_record(accounts: Accounts) -> LedgerBudget:
    b = accounts.budget
    return LedgerBudget(
        cost=b.cost,
        tokens=b.tokens,
        time=b.time,
        reserve=b.reserve,
        split=list(b.split) if isinstance(b.split, tuple) else b.split,
        grace=b.grace,
    )


def _meter(meter: UsageMeter) -> Meter:
    return Meter.model_validate(meter.as_dict())


def _share(accounts: Accounts, member: str) -> LedgerShare | None:
    found = accounts.share_of(member)
    if found is None:
        return None
    owner, share = found
    return LedgerShare(owner=owner, cost=share.cost, tokens=share.tokens)


def _calls(counts: CallCounts) -> Calls:
    return Calls.model_validate(counts.as_dict())


def _near_zero(value: float | int | None, scale: float) -> bool:
    return value is None or abs(value) <= 1e-9 * max(1.0, scale)


def build_ledger(
    *,
    accounts: Accounts,
    events: RunEvents,
    members: Sequence[MemberEnd],
    stop_reason: str | None,
    ended_by: str | None,
    interrupted: bool,
    final_cancelled: bool,
    wall_clock: float,
) -> dict[str, Any]:
    """The ledger as a JSON-ready dict (version 1): a ``SwarmLedger``'s ``model_dump()``."""
    total_calls = CallCounts()
    for counts in events.calls.values():
        total_calls.add(counts)
    delta_by_model = accounts.sample_delta()
    delta = usage_sum(delta_by_model.values())
    swarm = accounts.swarm
    unattributed = usage_minus(delta, swarm.usage).model_copy()
    cost_gap = (delta.total_cost or 0.0) - swarm.cost
    unattributed.total_cost = 0.0 if math.isclose(cost_gap, 0.0, abs_tol=1e-12) else cost_gap
    # the sample's delta covers every model the swarm's calls used (the runtime's included)
    unpriced_models = Accounts.unpriced_models(delta_by_model)
    compaction = native_compaction_classes()
    total_complete = (
        not any(m.cancelled or m.background_cancelled for m in members)
        and not interrupted
        and not final_cancelled
        and total_calls.errored == 0
        and total_calls.no_usage == 0
        and total_calls.unpriced == 0
        and swarm.unpriced == 0
        and not unpriced_models
    )
    scale = float(delta.total_tokens)
    attribution_complete = (
        total_complete
        and all(
            _near_zero(getattr(unattributed, f), scale)
            for f in ("input_tokens", "output_tokens", "total_tokens")
        )
        and _near_zero(unattributed.total_cost, delta.total_cost or 0.0)
    )
    ledger = SwarmLedger(
        version=1,
        budget=_budget_record(accounts),
        caps=LedgerCaps.model_validate(accounts.caps.as_dict()),
        sample_limits=SampleLimits.model_validate(accounts.sample_limits),
        members=[
            MemberLedger(
                name=m.name,
                status=m.status,
                bridged=m.bridged,
                meter=_meter(accounts.members[m.name]),
                calls=_calls(events.calls_of(m.name)),
                cancelled=m.cancelled,
                background_started=m.background_started,
                background_cancelled=m.background_cancelled,
                share=_share(accounts, m.name),
            )
            for m in members
        ],
        runtime=_meter(accounts.runtime),
        final=_meter(accounts.final),
        swarm=_meter(swarm),
        calls=_calls(total_calls),
        unpriced_calls_recorded=swarm.unpriced,
        sample_delta=Usage.model_validate(usage_dict(delta)),
        unattributed=Usage.model_validate(usage_dict(unattributed)),
        unpriced_models=unpriced_models,
        native_compaction_classes=compaction,
        overshoot=accounts.overshoot(wall_clock),
        stop_reason=stop_reason,
        ended_by=ended_by,
        interrupted=interrupted,
        final_cancelled=final_cancelled,
        resumed=False,
        total_complete=total_complete,
        attribution_complete=attribution_complete,
    )
    return ledger.model_dump()


def ledger_from(outcome: RunOutcome, events: RunEvents) -> dict[str, Any]:
    """The ledger of a finished run."""
    return build_ledger(
        accounts=outcome.accounts,
        events=events,
        members=outcome.members,
        stop_reason=outcome.stop_reason,
        ended_by=outcome.ended_by,
        interrupted=outcome.interrupted,
        final_cancelled=outcome.final_cancelled,
        wall_clock=outcome.wall_clock,
    )
