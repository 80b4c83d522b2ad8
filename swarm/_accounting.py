"""A run's accounts: a meter per member, the runtime's, the final step's and the swarm's, and
the checks of caps, shares and member limits after every completed call.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

from inspect_ai.model import ModelUsage
from inspect_ai.util import SampleLimits

from swarm._budget import Budget
from swarm._caps import Caps, Share, derive_caps, sample_limit_values, shares
from swarm._limits import MemberLimitReached, ShareExhausted, SwarmCapReached, SwarmLimitError
from swarm._meter import Meter, per_model_delta, usage_sum
from swarm.records import MemberLimits

__all__ = ["Accounts"]


def _sample_model_usage() -> dict[str, ModelUsage]:
    # Inspect keeps the sample's usage per model in a context variable and has no public
    # reader inside a running sample; the ledger's sample_delta needs it.
    from inspect_ai.model._model import sample_model_usage

    return {k: copy.copy(v) for k, v in sample_model_usage().items()}


class Accounts:
    """Meters and budget checks for one run."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.members: dict[str, Meter] = {}
        self.limits: dict[str, MemberLimits] = {}
        self.runtime = Meter()
        self.final = Meter()
        self.swarm = Meter()
        self.caps = Caps()
        self.shares: dict[str, Share] = {}
        self.sample_limits: dict[str, float | int | None] = {
            k: None for k in ("token", "cost", "message", "turn", "working", "time")
        }
        self._usage_at_start: dict[str, ModelUsage] = {}
        self.in_final = False

    def add_member(self, name: str, limits: MemberLimits) -> None:
        """Open a meter for a member (roster or spawned)."""
        self.members[name] = Meter()
        self.limits[name] = limits

    def begin(self, limits: SampleLimits, roster: Iterable[str]) -> None:
        """Derive caps and shares from the sample's limits; snapshot the sample's usage."""
        self.sample_limits = sample_limit_values(limits)
        self.caps = derive_caps(self.budget, limits)
        self.shares = shares(self.budget, self.caps, list(roster))
        self._usage_at_start = _sample_model_usage()

    def sample_delta(self) -> dict[str, ModelUsage]:
        """The sample's usage per model since ``begin``."""
        return per_model_delta(self._usage_at_start, _sample_model_usage())

    def record(self, member: str | None, usage: ModelUsage) -> SwarmLimitError | None:
        """Meter one completed call; return the limit error the calling member must get.

        ``member`` is ``None`` for the runtime's own calls (the controller's, or the final
        step's).  A ``SwarmCapReached`` means the swarm must stop with ``swarm_cap``.
        """
        self.swarm.add(usage)
        if member is None or member not in self.members:
            (self.final if self.in_final else self.runtime).add(usage)
            return None
        meter = self.members[member]
        meter.add(usage)
        caps = self.caps
        if caps.tokens is not None and self.swarm.tokens >= caps.tokens:
            return SwarmCapReached("token", self.swarm.tokens, caps.tokens)
        if caps.cost is not None and self.swarm.cost >= caps.cost:
            return SwarmCapReached("cost", self.swarm.cost, caps.cost)
        share = self.shares.get(member)
        if share is not None:
            if share.tokens is not None and meter.tokens >= share.tokens:
                return ShareExhausted(member, "token", meter.tokens, share.tokens)
            if share.cost is not None and meter.cost >= share.cost:
                return ShareExhausted(member, "cost", meter.cost, share.cost)
        own = self.limits[member]
        if own.token is not None and meter.tokens >= own.token:
            return MemberLimitReached(member, "token", meter.tokens, own.token)
        if own.cost is not None and meter.cost >= own.cost:
            return MemberLimitReached(member, "cost", meter.cost, own.cost)
        return None

    def overshoot(self, wall_clock: float) -> dict[str, float]:
        """How far usage went past each cap it passed."""
        over: dict[str, float] = {}
        if self.caps.cost is not None and self.swarm.cost > self.caps.cost:
            over["cost"] = self.swarm.cost - self.caps.cost
        if self.caps.tokens is not None and self.swarm.tokens > self.caps.tokens:
            over["tokens"] = self.swarm.tokens - self.caps.tokens
        if self.caps.time is not None and wall_clock > self.caps.time:
            over["time"] = wall_clock - self.caps.time
        return over

    def member_total(self) -> ModelUsage:
        """The members' usage summed (a check on the swarm meter)."""
        return usage_sum(m.usage for m in self.members.values())

    @staticmethod
    def unpriced_models(delta: Mapping[str, ModelUsage]) -> list[str]:
        """Models with tokens but no cost."""
        return sorted(m for m, u in delta.items() if u.total_tokens > 0 and u.total_cost is None)
