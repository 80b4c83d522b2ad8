"""A run's accounts: a meter per member, the runtime's, the final step's and the swarm's, and
the checks of caps, shares and member limits after every completed call.

With ``split="pool"`` a member's call is checked against the swarm's caps.  With a split budget
the caps are divided into shares that add up to them, and a share is its members' own cap: a
member's call is checked against the share it spends from, never against the swarm's total, so
what one member spends past its share (the call that reaches it is metered whole) comes out of
no other member's share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.model import ModelUsage
from inspect_ai.util import SampleLimits

from swarm._accounts.caps import (
    SAMPLE_LIMIT_KINDS,
    Share,
    SwarmCaps,
    derive_caps,
    sample_limit_values,
    shares,
)
from swarm._accounts.limit_errors import (
    MemberLimitReached,
    ShareExhausted,
    SwarmCapReached,
    SwarmLimitError,
)
from swarm._accounts.meter import UsageMeter, per_model_delta, usage_minus
from swarm._inspect.private import sample_model_usage
from swarm._spec.budget import Budget
from swarm.records import MemberLimits

__all__ = ["Accounts"]


class Accounts:
    """Meters and budget checks for one run."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.members: dict[str, UsageMeter] = {}
        self.limits: dict[str, MemberLimits] = {}
        self.runtime = UsageMeter()
        # the final step's meter (the ``synthesize`` answer rule's one call; zero otherwise):
        # a call made outside every member while ``final_step`` is set is the final step's
        self.final = UsageMeter()
        self.final_step = False
        # running totals of the swarm for the caps (the swarm meter itself is the sum of the
        # parts, computed when asked)
        self._live_tokens = 0
        self._live_cost = 0.0
        self._cap_reached = False
        self.caps = SwarmCaps()
        self.shares: dict[str, Share] = {}
        # set by ``begin``
        self.sample_limits: dict[str, float | int | None] = dict.fromkeys(SAMPLE_LIMIT_KINDS)
        self._usage_at_start: dict[str, ModelUsage] = {}
        # whose share each member spends from, and each share owner's tokens and cost so far
        self.share_owner: dict[str, str] = {}
        self._spent: dict[str, list[Any]] = {}

    def add_member(self, name: str, limits: MemberLimits, *, share_of: str | None = None) -> None:
        """Open a meter for a member: a roster member, or one that joins the running swarm.

        With a split budget, shares are fixed for the roster when the run begins; a member that
        joins later (``share_of`` its parent) spends from the share its parent spends from, so
        the roster's shares still sum to the cap and nothing is redistributed.
        """
        self.members[name] = UsageMeter()
        self.limits[name] = limits
        owner = name if share_of is None else self.share_owner[share_of]
        self.share_owner[name] = owner
        self._spent.setdefault(owner, [0, 0.0])

    def begin(self, limits: SampleLimits, roster: Iterable[str]) -> None:
        """Snapshot the sample's usage and limits; derive caps and shares from the limits.

        The snapshot comes first: when the budget cannot be derived (``ConfigError``), the
        records of the failed run still count only what was used from the swarm's start.
        """
        self._usage_at_start = sample_model_usage()
        self.sample_limits = sample_limit_values(limits)
        self.caps = derive_caps(self.budget, limits)
        self.shares = shares(self.budget, self.caps, list(roster))

    def sample_delta(self) -> dict[str, ModelUsage]:
        """The sample's usage per model since ``begin``."""
        return per_model_delta(self._usage_at_start, sample_model_usage())

    def charge(
        self,
        member: str | None,
        usage: ModelUsage,
        *,
        metered: ModelUsage | None = None,
        suspended: bool = False,
    ) -> SwarmLimitError | None:
        """UsageMeter one completed call; return the limit error the calling member must get.

        ``member`` is ``None`` (or not a member of this run) for a call made in the swarm outside
        every member's task: it is the runtime's, or the final step's while ``final_step`` is
        set.  For a member, ``metered`` is Inspect's own
        running record of everything the member spent (its ``UsageTap``): the meter is brought
        up to it, so usage the hook never saw (a native compaction) counts before the caps are
        checked.  ``suspended`` marks a call
        made while token metering was suspended: only its cost is metered.  A ``SwarmCapReached``
        means the swarm must stop with ``swarm_cap``.
        """
        if member is None or member not in self.members:
            meter = self.final if self.final_step else self.runtime
            if suspended:
                meter.add_suspended(usage)
                self._live_cost += usage.total_cost or 0.0
            else:
                meter.add(usage)
                self._live(usage)
            return None
        meter = self.members[member]
        if suspended:
            meter.add_suspended(usage)
            self._live_cost += usage.total_cost or 0.0
            self._spent[self.share_owner[member]][1] += usage.total_cost or 0.0
        else:
            if metered is None:
                metered = meter.usage + usage
            self.sync(member, metered)
            if usage.total_cost is None:
                meter.unpriced += 1
        return self._check(member, meter)

    def sync(self, member: str, metered: ModelUsage) -> None:
        """Bring ``member``'s meter up to ``metered``, Inspect's record of what it spent.

        Called after each call it makes and when it ends, so a call that tripped a sample limit
        (Inspect records its usage, then raises before any hook runs) is metered too.
        """
        meter = self.members[member]
        if metered.total_tokens == meter.usage.total_tokens and (
            metered.total_cost == meter.usage.total_cost
        ):
            return
        delta = usage_minus(metered, meter.usage)
        self._live(delta)
        spent = self._spent[self.share_owner[member]]
        spent[0] += delta.total_tokens
        spent[1] += delta.total_cost or 0.0
        meter.usage = metered

    def _live(self, delta: ModelUsage) -> None:
        self._live_tokens += delta.total_tokens
        self._live_cost += delta.total_cost or 0.0

    def _check(self, member: str, meter: UsageMeter) -> SwarmLimitError | None:
        # a split budget is applied through its shares only (see the module's docstring)
        share = self.share_used_up(member)
        if share is not None:
            return share
        if not self.shares and not self._cap_reached:
            # a swarm cap is reported once, to the call that reaches it: calls in flight that
            # complete after it (the swarm is stopping) finish and their members end "stopped"
            caps = self.caps
            if caps.tokens is not None and self._live_tokens >= caps.tokens:
                self._cap_reached = True
                return SwarmCapReached("token", self._live_tokens, caps.tokens)
            if caps.cost is not None and self._live_cost >= caps.cost:
                self._cap_reached = True
                return SwarmCapReached("cost", self._live_cost, caps.cost)
        own = self.limits[member]
        if own.token is not None and meter.tokens >= own.token:
            return MemberLimitReached(member, "token", meter.tokens, own.token)
        if own.cost is not None and meter.cost >= own.cost:
            return MemberLimitReached(member, "cost", meter.cost, own.cost)
        return None

    def share_used_up(self, member: str) -> ShareExhausted | None:
        """The error for ``member`` when the share it spends from is used up (its tokens, then
        its cost, at or past the share), else ``None`` (no split, or some of it is left).

        Checked after each of the member's calls and before each new one: once a share is used
        up, every member spending from it is refused its next call.
        """
        found = self.share_of(member)
        if found is None:
            return None
        owner, share = found
        tokens, cost = self._spent[owner]
        if share.tokens is not None and tokens >= share.tokens:
            return ShareExhausted(member, "token", tokens, share.tokens)
        if share.cost is not None and cost >= share.cost:
            return ShareExhausted(member, "cost", cost, share.cost)
        return None

    def share_of(self, member: str) -> tuple[str, Share] | None:
        """The share ``member`` spends from, with its owner (the roster member whose share it
        is); ``None`` with ``split="pool"``."""
        owner = self.share_owner[member]
        share = self.shares.get(owner)
        return None if share is None else (owner, share)

    @property
    def swarm(self) -> UsageMeter:
        """Everything in the swarm: the members', the runtime's and the final step's meters."""
        total = UsageMeter()
        total.merge([*self.members.values(), self.runtime, self.final])
        return total

    def overshoot(self, wall_clock: float) -> dict[str, float]:
        """How far usage went past each cap it passed."""
        over: dict[str, float] = {}
        swarm = self.swarm
        if self.caps.cost is not None and swarm.cost > self.caps.cost:
            over["cost"] = swarm.cost - self.caps.cost
        if self.caps.tokens is not None and swarm.tokens > self.caps.tokens:
            over["tokens"] = swarm.tokens - self.caps.tokens
        if self.caps.time is not None and wall_clock > self.caps.time:
            over["time"] = wall_clock - self.caps.time
        return over

    @staticmethod
    def unpriced_models(delta: Mapping[str, ModelUsage]) -> list[str]:
        """Models with tokens but no cost."""
        return sorted(m for m, u in delta.items() if u.total_tokens > 0 and u.total_cost is None)
