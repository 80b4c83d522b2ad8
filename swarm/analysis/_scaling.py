"""The scaling exponent lambda of an experiment's swarms, on the tokens they really spent.

The single agent's curve is its accuracy against its *realized* tokens per sample: the single
agent's arm, and each attempts arm's mean attempt at the tokens one attempt spent (the arm's
tokens per sample over ``k``).  A swarm of ``k`` that spent ``T`` tokens per sample and chose
an answer right with accuracy ``a`` is worth ``b`` tokens in one agent, the realized budget at
which the curve (made non-decreasing, linear in log tokens) reaches ``a``; its exponent is
``log(b / (T / k)) / log(k)``: 1 when the swarm is worth all it spent in one agent, 0 when it
is worth one member's share.  Arms that spent more than their budget in some sample are kept
out of the curve and the fit by default (named in ``ScalingFit.left_out``).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs
from inspect_ai.scorer import SampleScore, Score, ci

__all__ = ["ScalingFit", "curve_budget", "scaling_fits"]


class ArmRow(Protocol):
    """What the fit reads of an arm's row (``swarm.analysis.ArmRow`` has it)."""

    @property
    def arm(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def k(self) -> int: ...
    @property
    def tokens(self) -> float: ...
    @property
    def chosen(self) -> float: ...
    @property
    def mean_agent(self) -> float | None: ...
    @property
    def within_budget(self) -> bool: ...


@attrs.frozen(kw_only=True)
class ScalingFit:
    """k agents behave like one agent with ``k ** lam`` of the tokens each spent.

    ``per_k[k]``: the exponent of the swarm of ``k`` (for each swarm whose chosen accuracy falls
    inside the single agent's curve); ``lam``: their mean, ``lower``, ``upper``: Inspect's t
    interval (``ci``) of it (``None`` with fewer than two); ``left_out``: the arms kept out of
    the curve and the fit because some sample spent more than the budget.
    """

    lam: float | None
    lower: float | None
    upper: float | None
    per_k: Mapping[int, float]
    topology: str
    left_out: tuple[str, ...] = ()


def curve_budget(curve: Sequence[tuple[float, float]], accuracy: float) -> float | None:
    """The tokens at which the single agent's curve (points of tokens and accuracy) reaches
    ``accuracy``: linear in log tokens between points, ``None`` outside the curve."""
    points = sorted(curve)
    best = -math.inf
    rising: list[tuple[float, float]] = []
    for budget, acc in points:
        best = max(best, acc)
        rising.append((budget, best))
    if not rising or accuracy < rising[0][1] or accuracy > rising[-1][1]:
        return None
    for (b0, a0), (b1, a1) in itertools.pairwise(rising):
        if a0 <= accuracy <= a1:
            if a1 == a0:
                return b0
            share = (accuracy - a0) / (a1 - a0)
            return math.exp(math.log(b0) + share * (math.log(b1) - math.log(b0)))
    return rising[0][0]


def scaling_fits(
    rows: Sequence[ArmRow], topologies: Mapping[str, str], over_budget: bool = False
) -> list[ScalingFit]:
    """One fit per swarm topology (``topologies``: each swarm arm's topology name); arms over
    their budget join the curve and the fit only with ``over_budget``."""
    kept = [r for r in rows if over_budget or r.within_budget]
    left_out = tuple(r.arm for r in rows if not (over_budget or r.within_budget))
    fitted = {r.arm for r in kept}
    curve = [(r.tokens, r.chosen) for r in kept if r.kind == "single" and r.tokens > 0]
    curve += [
        (r.tokens / r.k, r.mean_agent)
        for r in kept
        if r.kind == "attempts" and r.tokens > 0 and r.mean_agent is not None
    ]
    by_topology: dict[str, list[ArmRow]] = defaultdict(list)
    for r in rows:
        if r.kind == "swarm":
            by_topology[topologies[r.arm]].append(r)
    fits = []
    for topology, swarms in by_topology.items():
        per_k: dict[int, float] = {}
        for r in swarms:
            if r.arm not in fitted or r.k < 2 or r.tokens <= 0:
                continue
            found = curve_budget(curve, r.chosen)
            if found is not None:
                per_k[r.k] = math.log(found / (r.tokens / r.k)) / math.log(r.k)
        if not per_k:
            fits.append(
                ScalingFit(
                    lam=None, lower=None, upper=None, per_k={}, topology=topology, left_out=left_out
                )
            )
            continue
        values = list(per_k.values())
        lower = upper = None
        if len(values) > 1:
            interval: Any = ci()
            found_ci: Any = interval(
                [SampleScore(score=Score(value=v), sample_id=i) for i, v in enumerate(values)]
            )
            lower, upper = float(found_ci["lower"]), float(found_ci["upper"])
        fits.append(
            ScalingFit(
                lam=sum(values) / len(values),
                lower=lower,
                upper=upper,
                per_k=per_k,
                topology=topology,
                left_out=left_out,
            )
        )
    return fits
