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

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import attrs
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log
from inspect_ai.scorer import SampleScore, Score, ci, ci_wilson, value_to_float

from swarm.analysis._experiment_id import MixedExperiments, group_by_experiment
from swarm.analysis._read import RECORDS_ONLY, off_main_thread
from swarm.analysis._scaling import ScalingFit, scaling_fits
from swarm.errors import ConfigError

__all__ = [
    "ArmRow",
    "ArmTable",
    "MixedExperiments",
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

    - ``chosen``: the answer the arm gives, scored: the single agent's and the swarm's score;
      for attempts, the score of the majority answer of each sample's ``k`` attempts (a tie
      goes to the answer given in the earliest epoch); ``ci_lower``, ``ci_upper``: its Wilson
      interval (Inspect's ``ci_wilson``), or Inspect's t interval (``ci``) for scores not in
      [0, 1];
    - ``oracle``: an oracle's pick, which no one running the arm could make: pass@k of the
      attempts (some attempt is right; with ``k`` epochs of ``k`` attempts, exactly "any
      right"), the best member of a swarm (from a ``member_scores`` score); ``None`` for the
      single agent and where the log has no member scores;
    - ``mean_agent``: the mean attempt (every epoch's score), the mean member of a swarm (from
      ``member_scores``), the single agent's score;
    - ``pass_at_k``, ``pass_hat_k``, ``best_at_k``: the attempts' unbiased estimators over
      their epochs (best@k: the mean of each sample's best score); with ``n = k`` epochs
      pass@k is "any attempt right" and pass^k "every attempt right";
    - ``tokens``, ``cost``: realized per sample (epochs added up); ``max_tokens``: the most
      any sample used; ``tokens_per_success``, ``cost_per_success``: the arm's whole spend
      over the samples its chosen answer solved;
    - ``within_budget``: no sample used more tokens than the budget (``over_budget``: how
      many did; such an arm is tabled and drawn apart and kept out of the fit); ``metered``:
      every sample had a ledger.
    """

    arm: str
    kind: str
    k: int
    budget: int
    samples: int
    epochs: int
    chosen: float
    ci_lower: float
    ci_upper: float
    oracle: float | None
    mean_agent: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    best_at_k: float | None
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
        """The table as fixed-width text (arms over their budget in a block of their own),
        then the fits."""
        head = (
            f"{'arm':<18}{'k':>3}{'budget':>8}{'n':>5}{'chosen':>8}{'95% CI':>15}{'oracle':>8}"
            f"{'mean':>7}{'pass^k':>8}{'tokens':>9}{'cost':>11}{'tok/succ':>10}"
        )
        lines = [head]
        within = [r for r in self.rows if r.within_budget]
        over = [r for r in self.rows if not r.within_budget]
        lines += [_line(r) for r in within]
        if over:
            lines.append("over budget (some sample spent more than B; kept out of the fit):")
            lines += [f"{_line(r)}  {r.over_budget} over, most {r.max_tokens}" for r in over]
        lines.append(
            "chosen: the answer the arm gives (attempts: the majority answer); oracle: some "
            "attempt or member right (pass@k, best member); mean: the mean attempt or member"
        )
        for fit in self.fits:
            if fit.lam is None:
                lines.append(f"lambda ({fit.topology}): no fit (no swarm inside the curve)")
                continue
            interval = "" if fit.lower is None else f" [{fit.lower:.2f}, {fit.upper:.2f}]"
            ks = ", ".join(f"k={k}: {v:.2f}" for k, v in sorted(fit.per_k.items()))
            lines.append(
                f"lambda ({fit.topology}, on realized tokens): {fit.lam:.2f}{interval} ({ks})"
            )
        return "\n".join(lines)


def _line(r: ArmRow) -> str:
    return (
        f"{r.arm:<18}{r.k:>3}{r.budget:>8}{r.samples:>5}{r.chosen:>8.3f}"
        f"{f'[{r.ci_lower:.2f}, {r.ci_upper:.2f}]':>15}{_num(r.oracle, '.3f'):>8}"
        f"{_num(r.mean_agent, '.3f'):>7}{_num(r.pass_hat_k, '.3f'):>8}"
        f"{r.tokens:>9.1f}{r.cost:>11.6f}{_num(r.tokens_per_success, '.1f'):>10}"
    )


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


def _answer(sample: EvalSample, scorer: str | None) -> str:
    """What an epoch answered: its score's ``answer`` when the scorer gives one, else its
    output's completion; whitespace at the ends left out."""
    scores = sample.scores or {}
    name = scorer or next((n for n in scores if n not in MEMBER_SCORES), None)
    given = scores[name].answer if name in scores else None
    return (given if given is not None else sample.output.completion).strip()


def _majority(epochs: Sequence[EvalSample], scorer: str | None) -> float:
    """The score of the majority answer of one sample's epochs: the answer given most often
    (an epoch that gave none, such as one stopped by its limit, does not vote), a tie going
    to the one given in the earliest epoch; scored as that epoch was (the first epoch's score
    when no epoch answered)."""
    ordered = sorted(epochs, key=lambda s: s.epoch)
    answers = [_answer(s, scorer) for s in ordered]
    counts = Counter(a for a in answers if a)
    if not counts:
        return _score_value(ordered[0], scorer)
    most = max(counts.values())
    first = next(i for i, a in enumerate(answers) if a and counts[a] == most)
    return _score_value(ordered[first], scorer)


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
    mean_agent: float | None = sum(values) / len(values) if values else 0.0
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
    pass_k = pass_hat = best = oracle = None
    per_sample = values
    if kind == "attempts" and n:
        counts = [
            (len(e), sum(1 for s in e if _score_value(s, scorer) >= 1.0))
            for e in by_sample.values()
        ]
        pass_k = sum(pass_at_k(m, c, min(k, m)) for m, c in counts) / n
        pass_hat = sum(pass_hat_k(m, c, min(k, m)) for m, c in counts) / n
        best = sum(max(_score_value(s, scorer) for s in e) for e in by_sample.values()) / n
        oracle = pass_k
        per_sample = [_majority(e, scorer) for e in by_sample.values()]
    elif kind in ("swarm", "subagents") and samples:
        bests = [_member_figure(s, "best") for s in samples]
        means = [_member_figure(s, "mean") for s in samples]
        oracle = None if None in bests else sum(b for b in bests if b is not None) / len(bests)
        mean_agent = None if None in means else sum(m for m in means if m is not None) / len(means)
    chosen = sum(per_sample) / len(per_sample) if per_sample else 0.0
    clusters = list(by_sample) if kind == "attempts" else [s.id for s in samples]
    lower, upper = _interval(per_sample, clusters) if per_sample else (0.0, 0.0)
    total_tokens = sum(t for t, _ in spent)
    total_cost = sum(c for _, c in spent)
    successes = chosen * n
    over = sum(1 for t, _ in spent if t > budget)
    return ArmRow(
        arm=log.eval.task,
        kind=kind,
        k=k,
        budget=budget,
        samples=n,
        epochs=epochs_per,
        chosen=chosen,
        ci_lower=lower,
        ci_upper=upper,
        oracle=oracle,
        mean_agent=mean_agent,
        pass_at_k=pass_k,
        pass_hat_k=pass_hat,
        best_at_k=best,
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


def arm_table(
    log_dir: str | Path, scorer: str | None = None, over_budget: bool = False
) -> ArmTable:
    """Every arm in ``log_dir`` (the logs ``swarm arms`` or a Flow spec of its arms wrote):
    the newest log of each, read into an ``ArmRow``, and the scaling fits.  ``scorer``: the
    score to read (default: each sample's first score other than ``member_scores``);
    ``over_budget``: let arms that spent more than their budget into the fit.

    A log that cannot be read, or whose figures are not finite numbers, is left out (the arm's
    next newest log, if any, stands in) and named in the table's ``skipped``.

    Raises:
        MixedExperiments: (a ``ConfigError``) the arms are of more than one experiment (another
            budget, task, model or model arg, seed, agent or topology content); the message
            names the difference and each experiment's arms and logs.
        UnknownScorer: (a ``ConfigError``) no arm log holds a score named ``scorer``; the
            message lists the scores they hold.
    """
    logs, skipped = _read_arms(log_dir)
    files = {name: Path(_shown(log.location, log_dir)).name for name, log in logs.items()}
    groups = group_by_experiment(logs, files)
    if len(groups) > 1:
        raise MixedExperiments(str(log_dir), groups)
    if scorer is not None and logs:
        scores = {
            name
            for log in logs.values()
            for sample in log.samples or []
            for name in sample.scores or {}
            if name not in MEMBER_SCORES
        }
        if scorer not in scores:
            raise UnknownScorer(scorer, sorted(scores))
    rows: list[ArmRow] = []
    for name, log in list(logs.items()):
        try:
            rows.append(_row(log, scorer))
        except ValueError as ex:
            skipped[_shown(log.location, log_dir)] = str(ex)
            del logs[name]
    order = {"single": 0, "attempts": 1, "swarm": 2, "subagents": 3}
    rows.sort(key=lambda r: (r.k, order.get(r.kind, 3), r.arm))
    topologies = {r.arm: _topology(logs[r.arm]) for r in rows if r.kind == "swarm"}
    fits = scaling_fits(rows, topologies, over_budget=over_budget)
    return ArmTable(rows=tuple(rows), fits=tuple(fits), skipped=skipped)


def _topology(log: EvalLog) -> str:
    topology = log.eval.task_args.get("topology")
    return "default" if topology is None else Path(str(topology)).stem
