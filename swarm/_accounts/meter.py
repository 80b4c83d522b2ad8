"""Meters: usage and cost accumulated per member, for the runtime, the final step and the swarm.

A meter adds up the ``ModelUsage`` of every completed call attributed to it.  ``cost`` counts
priced calls only; a call whose usage has no ``total_cost`` is counted in ``unpriced`` and adds
no cost, so a cost with unpriced calls is a lower bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.model import ModelUsage

__all__ = ["USAGE_FIELDS", "UsageMeter", "usage_dict", "usage_minus", "usage_sum"]

USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_cache_write",
    "input_tokens_cache_read",
    "reasoning_tokens",
    "total_cost",
)


def usage_dict(usage: ModelUsage) -> dict[str, Any]:
    """The usage as the records write it: every field, ``None`` where Inspect has none."""
    return {f: getattr(usage, f) for f in USAGE_FIELDS}


def usage_sum(usages: Iterable[ModelUsage]) -> ModelUsage:
    """The sum of ``usages`` (``None`` fields stay ``None`` unless some usage has them)."""
    total = ModelUsage()
    for u in usages:
        total = total + u
    return total


def usage_minus(a: ModelUsage, b: ModelUsage) -> ModelUsage:
    """``a - b`` field by field; an optional field is ``None`` when both sides are ``None``."""
    values: dict[str, Any] = {}
    for f in USAGE_FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        if x is None and y is None:
            values[f] = None
        else:
            values[f] = (x or 0) - (y or 0)
    for f in ("input_tokens", "output_tokens", "total_tokens"):
        values[f] = values[f] or 0
    return ModelUsage(**values)


class UsageMeter:
    """A running total: usage, priced cost, and how many calls had usage but no price.

    ``usage`` holds the calls made with token metering on; ``suspended_cost`` the cost of calls
    made while Inspect's token metering was suspended (approval calls), whose tokens no meter
    holds.  ``cost`` is both together.
    """

    __slots__ = ("suspended_cost", "unpriced", "usage")

    def __init__(self) -> None:
        self.usage = ModelUsage()
        self.suspended_cost = 0.0
        self.unpriced = 0

    @property
    def cost(self) -> float:
        """Priced cost in dollars: the metered usage's and the suspended calls'."""
        return (self.usage.total_cost or 0.0) + self.suspended_cost

    def add(self, usage: ModelUsage) -> None:
        """Add one completed call's usage."""
        self.usage = self.usage + usage
        if usage.total_cost is None:
            self.unpriced += 1

    def add_suspended(self, usage: ModelUsage) -> None:
        """Add a call made while token metering was suspended: its cost only."""
        if usage.total_cost is None:
            self.unpriced += 1
        else:
            self.suspended_cost += usage.total_cost

    def merge(self, others: Iterable[UsageMeter]) -> None:
        """Add other meters into this one."""
        for other in others:
            self.usage = self.usage + other.usage
            self.suspended_cost += other.suspended_cost
            self.unpriced += other.unpriced

    @property
    def tokens(self) -> int:
        """Total tokens so far."""
        return self.usage.total_tokens

    def as_dict(self) -> dict[str, Any]:
        """The meter as the ledger writes it: ``{"usage", "cost", "suspended_cost"}``."""
        return {
            "usage": usage_dict(self.usage),
            "cost": self.cost,
            "suspended_cost": self.suspended_cost,
        }


def per_model_delta(
    before: Mapping[str, ModelUsage], after: Mapping[str, ModelUsage]
) -> dict[str, ModelUsage]:
    """Usage per model between two snapshots of a sample's ``model_usage``."""
    delta: dict[str, ModelUsage] = {}
    for model, usage in after.items():
        prior = before.get(model)
        delta[model] = usage if prior is None else usage_minus(usage, prior)
    return delta
