"""From a ``Budget`` and the sample's limits to the caps, shares and grace a run applies."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import attrs
from inspect_ai.util import SampleLimits, sample_limits

from swarm._spec.budget import Budget
from swarm.errors import ConfigError

__all__ = [
    "SAMPLE_LIMIT_KINDS",
    "Share",
    "SwarmCaps",
    "derive_caps",
    "effective_grace",
    "sample_limit_values",
    "sample_time_left",
    "shares",
]

logger = logging.getLogger("swarm")


@attrs.frozen(kw_only=True)
class SwarmCaps:
    """The caps the swarm applies: dollars, tokens, seconds; ``None`` for no cap."""

    cost: float | None = None
    tokens: int | None = None
    time: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """As the ledger writes it."""
        return {"cost": self.cost, "tokens": self.tokens, "time": self.time}


@attrs.frozen(kw_only=True)
class Share:
    """One member's share of a split budget, its own cap (``None``: that kind is not capped)."""

    cost: float | None = None
    tokens: int | None = None


# the sample limits the ledger's ``sample_limits`` writes, named as ``SampleLimits`` names them
SAMPLE_LIMIT_KINDS = ("token", "cost", "message", "turn", "working", "time")


def sample_limit_values(limits: SampleLimits) -> dict[str, float | int | None]:
    """The sample's limits (not their usage), as the ledger's ``sample_limits`` writes them."""
    values: dict[str, float | int | None] = {
        kind: getattr(limits, kind).limit for kind in SAMPLE_LIMIT_KINDS
    }
    return values


def sample_time_left() -> float | None:
    """The seconds the running sample has left before its time or working limit, whichever is
    sooner; ``None`` with neither (or outside a sample).  What a plugin's hook call is bounded
    by."""
    try:
        limits = sample_limits()
    except RuntimeError:  # no running sample
        return None
    left = [r for r in (limits.time.remaining, limits.working.remaining) if r is not None]
    return min(left) if left else None


def _derive(
    kind: str, explicit: float | None, limit: float | None, usage: float, reserve: float
) -> float | None:
    if explicit is not None:
        if limit is not None and explicit > limit - usage:
            logger.warning(
                "budget.%s %s is above what the sample has left (%s of %s): the sample's limit "
                "will end the swarm first, without its final step",
                kind,
                explicit,
                limit - usage,
                limit,
            )
        return explicit
    if limit is None:
        return None
    cap = limit * (1 - reserve) - usage
    if cap <= 0:
        raise ConfigError(
            f"budget.{kind}: the sample's {kind} limit {limit} less the reserve ({reserve:.0%}) "
            f"leaves nothing after the {usage} already used; raise the limit or lower the reserve"
        )
    return cap


def derive_caps(budget: Budget, limits: SampleLimits) -> SwarmCaps:
    """SwarmCaps from the budget, or ``limit * (1 - reserve) - usage`` of the sample's limits."""
    tokens = _derive(
        "tokens", budget.tokens, limits.token.limit, limits.token.usage, budget.reserve
    )
    return SwarmCaps(
        cost=_derive("cost", budget.cost, limits.cost.limit, limits.cost.usage, budget.reserve),
        tokens=None if tokens is None else math.floor(tokens),
        time=_derive("time", budget.time, limits.time.limit, limits.time.usage, budget.reserve),
    )


def effective_grace(budget: Budget, limits: SampleLimits) -> float:
    """``budget.grace``, clipped to half the sample's remaining time when it has a time limit."""
    remaining = limits.time.remaining
    if remaining is None:
        return budget.grace
    return min(budget.grace, max(0.0, remaining / 2))


def _weights(budget: Budget, names: Sequence[str]) -> list[float]:
    if budget.split == "equal":
        return [1.0] * len(names)
    assert isinstance(budget.split, tuple)
    if len(budget.split) != len(names):
        raise ConfigError(
            f"budget.split: {len(budget.split)} weights for {len(names)} members "
            f"({', '.join(names)}); give one weight per member"
        )
    return [float(w) for w in budget.split]


def shares(budget: Budget, caps: SwarmCaps, names: Sequence[str]) -> dict[str, Share]:
    """Each member's share when the budget is split; empty for ``split="pool"``.

    Cost shares are exact fractions of the cap; token shares are whole numbers summing exactly
    to the cap (floors, then the largest remainders, ties by roster order).
    """
    if budget.split == "pool":
        return {}
    if caps.cost is None and caps.tokens is None:
        raise ConfigError(
            "budget.split: splitting needs a cost or token cap (give budget.cost or "
            "budget.tokens, or a sample limit), or use split='pool'"
        )
    weights = _weights(budget, names)
    total = sum(weights)
    token_shares: list[int | None] = [None] * len(names)
    if caps.tokens is not None:
        # exact fractions: floats would overflow (10**30 * 1e308) or round huge caps
        exact_total = sum(map(Fraction, weights))
        exact = [caps.tokens * Fraction(w) / exact_total for w in weights]
        floors = [math.floor(x) for x in exact]
        left = caps.tokens - sum(floors)
        order = sorted(range(len(names)), key=lambda i: (-(exact[i] - floors[i]), i))
        for i in order[:left]:
            floors[i] += 1
        for i, share in enumerate(floors):
            if share == 0:
                raise ConfigError(
                    f"budget.split: member {names[i]!r} would get a token share of 0 "
                    f"(cap {caps.tokens}); raise the cap or use split='pool'"
                )
        token_shares = list(floors)
    result: dict[str, Share] = {}
    for i, name in enumerate(names):
        cost = None if caps.cost is None else caps.cost * (weights[i] / total)
        result[name] = Share(cost=cost, tokens=token_shares[i])
    return result


def split_sentence(
    budget: Budget, caps: SwarmCaps, weight_share: float | None, *, spawned_by: str | None
) -> str | None:
    """The preamble sentence about the budget split (``None`` when there is no cap).

    ``weight_share`` is a roster member's fraction of a weighted split; a member spawned at run
    time (``spawned_by`` its parent) has no share of its own and is told whose it spends from.
    """
    kinds = [k for k, v in (("cost", caps.cost), ("token", caps.tokens)) if v is not None]
    if not kinds:
        return None
    if budget.split == "pool":
        return "The budget is shared by all members."
    what = " and ".join(kinds)
    if spawned_by is not None:
        return (
            f"The swarm's {what} budget is split between the members; you spend from the same "
            f"share as {spawned_by}, who spawned you, and you stop when it is used up."
        )
    if budget.split == "equal":
        return (
            f"The swarm's {what} budget is split equally between the members; you stop when "
            "your share is used up."
        )
    assert weight_share is not None  # every roster member of a weighted split has a weight
    return (
        f"The swarm's {what} budget is split between the members in fixed shares; yours is "
        f"{weight_share:.0%} of it, and you stop when it is used up."
    )
