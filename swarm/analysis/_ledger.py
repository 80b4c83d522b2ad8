"""Reading the ``inspect_swarm:ledger`` record back from a log's sample, as a ``SwarmLedger``:
the same pydantic classes the ledger is written through (``swarm._schemas``)."""

from __future__ import annotations

from typing import Any

from inspect_ai.log import EvalSample

from swarm._schemas import (
    Calls,
    LedgerBudget,
    LedgerCaps,
    MemberLedger,
    Meter,
    SampleLimits,
    SwarmLedger,
    Usage,
)
from swarm.records import LEDGER_KEY

__all__ = [
    "LedgerBudget",
    "Calls",
    "LedgerCaps",
    "MemberLedger",
    "Meter",
    "SampleLimits",
    "SwarmLedger",
    "Usage",
    "swarm_ledger",
]


def swarm_ledger(sample: EvalSample) -> SwarmLedger | None:
    """The sample's ledger, or ``None`` when it has none.

    Raises:
        ValueError: the ledger has a version this release cannot read.
    """
    data: Any = (sample.store or {}).get(LEDGER_KEY)
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("version") != 1:
        version = data.get("version") if isinstance(data, dict) else None
        raise ValueError(
            f"sample {sample.id} (epoch {sample.epoch}) has an inspect_swarm:ledger of version "
            f"{version!r}; this release reads version 1"
        )
    return SwarmLedger.model_validate(data)
