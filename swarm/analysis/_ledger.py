"""Typed models of the ``inspect_swarm:ledger`` record (pydantic: the Inspect boundary)."""

from __future__ import annotations

from typing import Any, Literal

from inspect_ai.log import EvalSample
from pydantic import BaseModel, ConfigDict, Field

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


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Usage(_Record):
    """Token usage and cost, as Inspect's ``ModelUsage`` reports it."""

    input_tokens: int = Field(description="Input tokens (excluding cached).")
    output_tokens: int = Field(description="Output tokens.")
    total_tokens: int = Field(description="All tokens.")
    input_tokens_cache_write: int | None = Field(description="Tokens written to a cache.")
    input_tokens_cache_read: int | None = Field(description="Tokens read from a cache.")
    reasoning_tokens: int | None = Field(description="Reasoning tokens.")
    total_cost: float | None = Field(description="Dollars, when priced; null when unpriced.")


class Meter(_Record):
    """The usage and cost of what a member (or the runtime, final step, swarm) did."""

    usage: Usage = Field(description="Usage of the calls metered.")
    cost: float = Field(description="Dollars of the priced calls.")
    suspended_cost: float = Field(
        description="Part of the cost spent while token counting was suspended."
    )


class Calls(_Record):
    """Model calls by outcome."""

    calls: int = Field(description="Completed calls other than cache replays.")
    cache_replays: int = Field(description="Calls replayed from cache, at no charge.")
    errored: int = Field(description="Attempts that errored or were cancelled (retries too).")
    no_usage: int = Field(description="Completed calls that reported no usage.")
    unpriced: int = Field(description="Completed calls with usage but no cost.")


class MemberLedger(_Record):
    """One member's accounting."""

    name: str = Field(description="The member's name.")
    status: str | None = Field(description="How it ended; null if never started.")
    bridged: bool = Field(description="Whether it is a bridged agent.")
    meter: Meter = Field(description="Its usage, subagents' and background work's included.")
    calls: Calls = Field(description="Its model calls by outcome.")
    cancelled: bool = Field(description="The swarm or the sample cancelled it.")
    background_started: int = Field(description="Background tasks it started.")
    background_cancelled: int = Field(description="Background tasks cancelled unfinished.")


class LedgerBudget(_Record):
    """The budget as given."""

    cost: float | None
    tokens: int | None
    time: float | None
    reserve: float
    split: Literal["pool", "equal"] | list[float]
    grace: float


class LedgerCaps(_Record):
    """The caps the swarm applied (null: no cap)."""

    cost: float | None = Field(description="Dollars.")
    tokens: int | None = Field(description="Tokens.")
    time: float | None = Field(description="Seconds.")


class SampleLimits(_Record):
    """The sample's limits when the swarm started."""

    token: float | None
    cost: float | None
    message: float | None
    turn: float | None
    working: float | None
    time: float | None


class SwarmLedger(_Record):
    """The ``inspect_swarm:ledger`` record (version 1): the swarm's accounting."""

    version: Literal[1] = Field(description="Record version.")
    budget: LedgerBudget = Field(description="The budget as given.")
    caps: LedgerCaps = Field(description="Caps applied.")
    sample_limits: SampleLimits = Field(description="Sample limits at the swarm's start.")
    members: list[MemberLedger] = Field(description="One entry per member, roster order.")
    runtime: Meter = Field(description="The controller's own calls.")
    final: Meter = Field(description="The final step's calls.")
    swarm: Meter = Field(description="Everything in the swarm.")
    calls: Calls = Field(description="Every call in the swarm.")
    unpriced_calls_recorded: int = Field(description="Unpriced calls the swarm meter saw.")
    sample_delta: Usage = Field(description="The sample's usage while the swarm ran.")
    unattributed: Usage = Field(description="sample_delta minus swarm.")
    unpriced_models: list[str] = Field(description="Models with tokens but no cost.")
    native_compaction_classes: list[str] = Field(
        description="Loaded model classes that can compact natively (usage may be missing)."
    )
    overshoot: dict[str, float] = Field(description="How far usage went past each cap.")
    stop_reason: str | None = Field(description="Why the swarm stopped itself.")
    ended_by: str | None = Field(description="What ended it from outside.")
    interrupted: bool = Field(description="An error or cancellation ended it early.")
    final_cancelled: bool = Field(description="The final step was cancelled.")
    resumed: bool = Field(description="The sample resumed from a checkpoint.")
    total_complete: bool = Field(description="No call is known to be missing from totals.")
    attribution_complete: bool = Field(description="total_complete and unattributed is zero.")


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
