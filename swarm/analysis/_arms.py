"""An experiment's arms read back from a log directory: one row per arm, and the scaling fit.

Every figure comes from what the logs recorded: a sample's tokens and cost are its ledger's
``swarm`` meter (Inspect's ``model_usage`` for a sample without a ledger), never a cap; the
accuracy is the task's own score.  An arm's per-sample figures add up its epochs, so ``k``
attempts at ``B / k`` each are compared with the single agent and the swarm at ``B``.

A log that cannot be read (truncated, not a log) or whose figures are not figures (a score or a
meter that is not a finite number, an arm without a whole ``k``) is left out of the table and
named, with why, in ``ArmTable.skipped``; the arm's next newest log stands in for it.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import attrs
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log
from inspect_ai.scorer import SampleScore, Score, ci, ci_wilson, value_to_float

from swarm.analysis._read import RECORDS_ONLY, off_main_thread
from swarm.errors import ConfigError

__all__ = [
    "ArmRow",
    "ArmTable",
    "ScalingFit",
    "UnknownScorer",
    "arm_table",
    "pass_at_k",
    "pass_hat_k",
    "sample_cost",
]

MEMBER_SCORES = ("member_scores", "swarm/member_scores")
"""The names of the score (``swarm.analysis.member_scores``: the bare name from an editable
install, the qualified one otherwise) that, when a log has it, gives a swarm's best member and
mean member."""

_to_float = value_to_float()


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of a sample with ``c`` correct of ``n`` epochs: the chance that at
    least one of ``k`` epochs drawn without replacement is correct."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of a sample with ``c`` correct of ``n`` epochs: the chance that all of ``k``
    epochs drawn without replacement are correct."""
    return math.comb(c, k) / math.comb(n, k)


def _figure(value: object, where: str) -> float:
    """``value`` as a finite number >= 0, else a ``ValueError`` naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: expected a finite number >= 0, got {value!r}")
    return float(value)


def sample_cost(sample: EvalSample) -> tuple[int, float, bool]:
    """One sample's realized tokens and cost, and whether they come from its ledger (the
    swarm's meter) rather than Inspect's ``model_usage`` (a sample the swarm left no ledger
    in).

    Raises:
        ValueError: the ledger has no ``swarm`` meter, or its tokens or cost are not finite
            numbers >= 0 (a damaged log); the message names the field.
    """
    ledger = (sample.store or {}).get("inspect_swarm:ledger")
    if isinstance(ledger, Mapping):
        key = "inspect_swarm:ledger"
        swarm = ledger.get("swarm")
        usage = swarm.get("usage") if isinstance(swarm, Mapping) else None
        if not isinstance(swarm, Mapping) or not isinstance(usage, Mapping):
            raise ValueError(f"{key}: no swarm meter with its usage")
        tokens = _figure(usage.get("total_tokens"), f"{key}: swarm.usage.total_tokens")
        cost = _figure(swarm.get("cost"), f"{key}: swarm.cost")
        if not tokens.is_integer():
            problem = f"expected a whole number, got {tokens}"
            raise ValueError(f"{key}: swarm.usage.total_tokens: {problem}")
        return int(tokens), cost, True
    usage_values = sample.model_usage.values()
    total = sum(u.total_tokens for u in usage_values)
    spent = sum(u.total_cost or 0.0 for u in usage_values)
    return total, _figure(spent, "model_usage: total_cost"), False


@attrs.frozen(kw_only=True)
class ArmRow:
    """One arm's figures (per sample means over the samples; ``None`` where not defined).

    - ``accuracy``: the mean score (for attempts: over every epoch, the single agent at
      ``B / k``); ``ci_lower``, ``ci_upper``: its Wilson interval (Inspect's ``ci_wilson``,
      clustered by sample for attempts), or Inspect's t interval (``ci``) for scores not in
      [0, 1];
    - ``team``: what the arm achieves per sample: the accuracy of the single agent and the
      swarm, pass@k of the attempts; ``pass_at_k``, ``pass_hat_k``, ``best_at_k``: over the
      epochs of the attempts (best@k: the mean of each sample's best score); for a swarm,
      ``best_at_k`` and ``mean_member`` come from a ``member_scores`` score when the log has
      one;
    - ``tokens``, ``cost``: realized per sample (epochs added up); ``max_tokens``: the most
      any sample used; ``tokens_per_success``, ``cost_per_success``: the arm's whole spend
      over the samples it solved (``team`` summed);
    - ``within_budget``: no sample used more tokens than the budget (``over_budget``: how
      many did); ``metered``: every sample had a ledger.
    """

    arm: str
    kind: str
    k: int
    budget: int
    samples: int
    epochs: int
    accuracy: float
    ci_lower: float
    ci_upper: float
    team: float
    pass_at_k: float | None
    pass_hat_k: float | None
    best_at_k: float | None
    mean_member: float | None
    tokens: float
    cost: float
    max_tokens: int
    tokens_per_success: float | None
    cost_per_success: float | None
    within_budget: bool
    over_budget: int
    metered: bool
    log: str

    def as_dict(self) -> dict[str, Any]:
        """The row as a plain mapping (for pandas, JSON)."""
        return attrs.asdict(self)


@attrs.frozen(kw_only=True)
class ScalingFit:
    """k agents behave like one agent with ``k ** lam`` of the budget of each.

    For each swarm of ``k`` whose team accuracy falls inside the single agent's curve
    (the single agent at ``B`` and the attempts' single agents at ``B / k``), ``per_k[k]`` is
    ``log(b / (B / k)) / log(k)``, where ``b`` is the budget at which the single agent's
    curve (made non-decreasing, linear in log budget) reaches the swarm's accuracy.  ``lam``
    is their mean, and ``lower``, ``upper`` Inspect's t interval (``ci``) of it (``None``
    with fewer than two).  1 means the swarm is worth all its budget in one agent, 0 what one
    member's share would buy.
    """

    lam: float | None
    lower: float | None
    upper: float | None
    per_k: Mapping[int, float]
    topology: str


@attrs.frozen(kw_only=True)
class ArmTable:
    """Every arm of a log directory (``rows``, in the order single, then by ``k``) and the
    scaling fits (one per topology)."""

    rows: tuple[ArmRow, ...]
    fits: tuple[ScalingFit, ...]
    skipped: Mapping[str, str] = attrs.field(factory=dict)
    """The logs left out (by path): each one's problem, such as ``not a readable Inspect log
    (ValueError: EOCD not found)`` or ``sample 1, epoch 1: score 'includes' is nan``."""

    def row(self, arm: str) -> ArmRow:
        """The row of the arm named ``arm``."""
        for r in self.rows:
            if r.arm == arm:
                return r
        raise KeyError(f"no arm {arm!r}; the arms are {[r.arm for r in self.rows]}")

    def to_dataframe(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas: ``swarm-eval[analysis]``)."""
        from importlib import import_module

        return import_module("pandas").DataFrame([r.as_dict() for r in self.rows])

    def to_text(self) -> str:
        """The table as fixed-width text, then the fits."""
        head = (
            f"{'arm':<18}{'k':>3}{'budget':>8}{'n':>5}{'acc':>7}{'95% CI':>15}{'team':>7}"
            f"{'pass^k':>8}{'best@k':>8}{'tokens':>9}{'cost':>11}{'tok/succ':>10}  within"
        )
        lines = [head]
        for r in self.rows:
            lines.append(
                f"{r.arm:<18}{r.k:>3}{r.budget:>8}{r.samples:>5}{r.accuracy:>7.3f}"
                f"{f'[{r.ci_lower:.2f}, {r.ci_upper:.2f}]':>15}{r.team:>7.3f}"
                f"{_num(r.pass_hat_k, '.3f'):>8}{_num(r.best_at_k, '.3f'):>8}"
                f"{r.tokens:>9.1f}{r.cost:>11.6f}{_num(r.tokens_per_success, '.1f'):>10}  "
                f"{'yes' if r.within_budget else f'NO ({r.over_budget} over)'}"
            )
        for fit in self.fits:
            if fit.lam is None:
                lines.append(f"lambda ({fit.topology}): no fit (no swarm inside the curve)")
                continue
            interval = "" if fit.lower is None else f" [{fit.lower:.2f}, {fit.upper:.2f}]"
            ks = ", ".join(f"k={k}: {v:.2f}" for k, v in sorted(fit.per_k.items()))
            lines.append(f"lambda ({fit.topology}): {fit.lam:.2f}{interval} ({ks})")
        return "\n".join(lines)


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


class UnknownScorer(ConfigError):
    """``arm_table(scorer=...)`` names a score that no arm log holds."""

    def __init__(self, scorer: str, found: Sequence[str]) -> None:
        self.scorer = scorer
        self.found = tuple(found)
        they = ", ".join(repr(n) for n in found) if found else "none"
        #: the problem, without the field it is about
        self.problem = f"no score named {scorer!r} in the arm logs; their scores: {they}"
        super().__init__(f"scorer: {self.problem}")


def _finite(value: float, where: str) -> float:
    if not math.isfinite(value):
        raise ValueError(f"{where} is {value}")
    return value


def _score_value(sample: EvalSample, scorer: str | None) -> float:
    scores = sample.scores or {}
    if scorer is None:
        names = [n for n in scores if n not in MEMBER_SCORES]
        if not names:
            return 0.0
        scorer = names[0]
    if scorer not in scores:
        return 0.0
    return _finite(_to_float(scores[scorer].value), f"score {scorer!r}")


def _member_figure(sample: EvalSample, key: str) -> float | None:
    scores = sample.scores or {}
    name = next((n for n in MEMBER_SCORES if n in scores), None)
    if name is None:
        return None
    value: Any = scores[name].value
    if not isinstance(value, Mapping) or key not in value:
        return None
    return _finite(_to_float(value[key]), f"score {name!r}: {key}")


def _whole(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: expected a whole number >= 1, got {value!r}")
    return value


def _interval(values: Sequence[float], clusters: Sequence[object]) -> tuple[float, float]:
    scores = [
        SampleScore(score=Score(value=v), sample_id=str(c), sample_metadata={"sample": str(c)})
        for v, c in zip(values, clusters, strict=True)
    ]
    clustered = len(set(clusters)) < len(clusters) and len(set(clusters)) > 1
    cluster = "sample" if clustered else None
    metric: Any = ci_wilson(cluster=cluster) if all(0 <= v <= 1 for v in values) else None
    metric = metric or ci(cluster=cluster)
    found: Any = metric(scores)
    return float(found["lower"]), float(found["upper"])


def _shown(location: str, log_dir: str | Path) -> str:
    """A log's location as a person gave its directory: ``logs/arms/x.eval`` for a local file
    (Inspect lists them as ``file://`` URIs), else the location itself."""
    if location.startswith("file://"):
        return str(Path(log_dir) / location.rsplit("/", 1)[-1])
    return location


def _read_arms(log_dir: str | Path) -> tuple[dict[str, EvalLog], dict[str, str]]:
    """The newest log of each arm in ``log_dir`` that reads and whose figures are figures (a
    complete one when there is one), and the logs left out, with their problems."""
    skipped: dict[str, str] = {}
    candidates: dict[str, list[EvalLog]] = defaultdict(list)
    for info in list_eval_logs(str(log_dir), recursive=False):
        try:
            header = read_eval_log(info, header_only=True)
        except Exception as ex:  # whatever a truncated or damaged file makes the reader raise
            skipped[_shown(info.name, log_dir)] = f"not a readable Inspect log ({_why(ex)})"
            continue
        args = header.eval.task_args or {}
        if "arm" not in args or "budget" not in args:
            continue
        candidates[header.eval.task].append(header)
    chosen: dict[str, EvalLog] = {}
    for name, headers in candidates.items():
        headers.sort(key=lambda h: (h.status == "success", h.eval.created), reverse=True)
        for header in headers:
            # a row reads each sample's scores, store and usage, never its events or messages
            read = partial(read_eval_log, header.location, exclude_fields=set(RECORDS_ONLY))
            try:
                log = off_main_thread(read)
            except Exception as ex:  # the header read, a sample did not
                skipped[_shown(header.location, log_dir)] = (
                    f"not a readable Inspect log ({_why(ex)})"
                )
                continue
            try:
                _check_figures(log)
            except ValueError as ex:
                skipped[_shown(header.location, log_dir)] = str(ex)
                continue
            chosen[name] = log
            break
    return chosen, skipped


def _check_figures(log: EvalLog) -> None:
    """Raise a ``ValueError`` naming the field (and the sample and epoch) when a figure a row
    reads is not one: ``k`` or ``budget`` not a whole number >= 1, a meter or a numeric score
    that is not a finite number."""
    args = log.eval.task_args
    _whole(args.get("k"), "task_args.k")
    _whole(args.get("budget"), "task_args.budget")
    for s in log.samples or []:
        try:
            sample_cost(s)
            for name, score in (s.scores or {}).items():
                value = score.value
                parts = value.items() if isinstance(value, Mapping) else [(None, value)]
                for key, part in parts:
                    if isinstance(part, float) and not math.isfinite(part):
                        where = f"score {name!r}" + ("" if key is None else f": {key}")
                        raise ValueError(f"{where} is {part}")
        except ValueError as ex:
            raise ValueError(f"sample {s.id!r}, epoch {s.epoch}: {ex}") from None


def _why(ex: BaseException) -> str:
    return f"{type(ex).__name__}: {ex}" if str(ex) else type(ex).__name__


def _row(log: EvalLog, scorer: str | None) -> ArmRow:
    """The row of one arm's log (whose figures ``_check_figures`` has checked).

    Raises:
        ValueError: a score, read as a number, is not a finite one.
    """
    args = log.eval.task_args
    kind = str(args["arm"])
    k = _whole(args.get("k"), "task_args.k")
    budget = _whole(args.get("budget"), "task_args.budget")
    samples = log.samples or []
    by_sample: dict[object, list[EvalSample]] = defaultdict(list)
    for s in samples:
        by_sample[s.id].append(s)
    values = [_score_value(s, scorer) for s in samples]
    accuracy = sum(values) / len(values) if values else 0.0
    lower, upper = _interval(values, [s.id for s in samples]) if values else (0.0, 0.0)
    spent: list[tuple[int, float]] = []
    metered = True
    for epochs in by_sample.values():
        tokens = cost = 0.0
        for s in epochs:
            t, c, from_ledger = sample_cost(s)
            tokens, cost, metered = tokens + t, cost + c, metered and from_ledger
        spent.append((int(tokens), cost))
    n = len(by_sample)
    epochs_per = max((len(e) for e in by_sample.values()), default=0)
    pass_k = pass_hat = best = mean_member = None
    if kind == "attempts" and n:
        counts = [
            (len(e), sum(1 for s in e if _score_value(s, scorer) >= 1.0))
            for e in by_sample.values()
        ]
        pass_k = sum(pass_at_k(m, c, min(k, m)) for m, c in counts) / n
        pass_hat = sum(pass_hat_k(m, c, min(k, m)) for m, c in counts) / n
        best = sum(max(_score_value(s, scorer) for s in e) for e in by_sample.values()) / n
        team = pass_k
    else:
        team = accuracy
        if kind == "swarm" and samples:
            bests = [_member_figure(s, "best") for s in samples]
            means = [_member_figure(s, "mean") for s in samples]
            if all(b is not None for b in bests):
                best = sum(b for b in bests if b is not None) / len(bests)
            if all(m is not None for m in means):
                mean_member = sum(m for m in means if m is not None) / len(means)
    total_tokens = sum(t for t, _ in spent)
    total_cost = sum(c for _, c in spent)
    successes = team * n
    over = sum(1 for t, _ in spent if t > budget)
    return ArmRow(
        arm=log.eval.task,
        kind=kind,
        k=k,
        budget=budget,
        samples=n,
        epochs=epochs_per,
        accuracy=accuracy,
        ci_lower=lower,
        ci_upper=upper,
        team=team,
        pass_at_k=pass_k,
        pass_hat_k=pass_hat,
        best_at_k=best,
        mean_member=mean_member,
        tokens=total_tokens / n if n else 0.0,
        cost=total_cost / n if n else 0.0,
        max_tokens=max((t for t, _ in spent), default=0),
        tokens_per_success=total_tokens / successes if successes else None,
        cost_per_success=total_cost / successes if successes else None,
        within_budget=over == 0,
        over_budget=over,
        metered=metered,
        log=log.location,
    )


def _curve_budget(curve: Sequence[tuple[float, float]], accuracy: float) -> float | None:
    """The budget at which the single agent's curve (points of budget and accuracy) reaches
    ``accuracy``: linear in log budget between points, ``None`` outside the curve."""
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


def _fits(rows: Sequence[ArmRow], logs: Mapping[str, EvalLog]) -> list[ScalingFit]:
    curve = [(float(r.budget), r.accuracy) for r in rows if r.kind == "single"]
    curve += [(r.budget / r.k, r.accuracy) for r in rows if r.kind == "attempts"]
    by_topology: dict[str, list[ArmRow]] = defaultdict(list)
    for r in rows:
        if r.kind == "swarm":
            topology = logs[r.arm].eval.task_args.get("topology")
            by_topology["default" if topology is None else Path(str(topology)).stem].append(r)
    fits = []
    for topology, swarms in by_topology.items():
        per_k: dict[int, float] = {}
        for r in swarms:
            found = _curve_budget(curve, r.team) if r.k > 1 else None
            if found is not None:
                per_k[r.k] = math.log(found / (r.budget / r.k)) / math.log(r.k)
        if not per_k:
            fits.append(ScalingFit(lam=None, lower=None, upper=None, per_k={}, topology=topology))
            continue
        values = list(per_k.values())
        lam = sum(values) / len(values)
        lower = upper = None
        if len(values) > 1:
            interval: Any = ci()
            found_ci: Any = interval(
                [SampleScore(score=Score(value=v), sample_id=i) for i, v in enumerate(values)]
            )
            lower, upper = float(found_ci["lower"]), float(found_ci["upper"])
        fits.append(ScalingFit(lam=lam, lower=lower, upper=upper, per_k=per_k, topology=topology))
    return fits


def arm_table(log_dir: str | Path, scorer: str | None = None) -> ArmTable:
    """Every arm in ``log_dir`` (the logs ``swarm arms`` or a Flow spec of its arms wrote):
    the newest log of each, read into an ``ArmRow``, and the scaling fits.  ``scorer``: the
    score to read (default: each sample's first score other than ``member_scores``).

    A log that cannot be read, or whose figures are not finite numbers, is left out (the arm's
    next newest log, if any, stands in) and named in the table's ``skipped``.

    Raises:
        UnknownScorer: (a ``ConfigError``) no arm log holds a score named ``scorer``; the
            message lists the scores they hold.
    """
    chosen, skipped = _read_arms(log_dir)
    if scorer is not None and chosen:
        scores = {
            name
            for log in chosen.values()
            for sample in log.samples or []
            for name in sample.scores or {}
            if name not in MEMBER_SCORES
        }
        if scorer not in scores:
            raise UnknownScorer(scorer, sorted(scores))
    rows: list[ArmRow] = []
    for name, log in list(chosen.items()):
        try:
            rows.append(_row(log, scorer))
        except ValueError as ex:
            skipped[_shown(log.location, log_dir)] = str(ex)
            del chosen[name]
    order = {"single": 0, "attempts": 1, "swarm": 2, "subagents": 3}
    rows.sort(key=lambda r: (r.k, order.get(r.kind, 3), r.arm))
    return ArmTable(rows=tuple(rows), fits=tuple(_fits(rows, chosen)), skipped=skipped)
