"""The fan-out rubric as an Inspect scorer.

``fanout_rubric(fixture=...)`` reads only ``state.store`` (the records in ``STORE_KEYS``), so it
scores the same during an eval and when ``inspect score`` re-scores a log.  Its ``Score`` holds
every rule's verdict and ``resolved`` in ``value``, the artifact in ``answer``, a summary in
``explanation``, and each rule's failures and details, the efficiency figures and how each
record read in ``metadata``.  Its metric is the mean of each of those values.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from swarm import ConfigError, member_sandbox

from ._evidence import read_evidence
from ._fixture import load_fixture
from ._proof import isolation
from ._records import ARTIFACT_KEY, STORE_KEYS
from ._rubric import Verdict, judge, plugin_rules

__all__ = [
    "SCORER_METRICS",
    "SCORER_NAME",
    "fanout_rubric",
    "fanout_rubric_scorer",
    "verdict_score",
]

SCORER_NAME = "fanout_rubric"
"""The scorer's name in Inspect's registry (``swarm/fanout_rubric`` with the package)."""
SCORER_METRICS = {"*": [mean()]}
"""The mean of every value of the score: each rule, and ``resolved``."""


def verdict_score(verdict: Verdict) -> Score:
    """The Inspect ``Score`` of a verdict."""
    artifact = verdict.evidence.artifact
    answer = artifact.text if artifact is not None and artifact.text is not None else ""
    return Score(
        value=dict(verdict.value()),
        answer=answer,
        explanation=verdict.explanation(),
        metadata=verdict.metadata(),
    )


async def collect_artifact(path: str, lead: str | None = None) -> dict[str, Any] | None:
    """The artifact as the lead left it in its own sandbox (``swarm.member_sandbox``; the
    sample's when members share it), for the store (so the log keeps it and ``inspect score``
    can judge it again): ``{"path", "text"}``, ``text`` null when the file is missing or not
    text; ``None`` when the sample has no sandbox (re-scoring a log: the stored one stands)."""
    try:
        environment = member_sandbox(lead or "lead")
    except ProcessLookupError:
        return None
    try:
        text: str | None = await environment.read_file(path)
    except Exception:  # no such file, not text: there is no artifact to judge
        text = None
    return {"path": path, "text": text}


def _spawn_factor(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"{SCORER_NAME}.spawn_factor: expected a whole number >= 1, got {value!r}"
        )
    return value


def fanout_rubric_scorer(fixture: str, spawn_factor: int = 2) -> Scorer:
    """Score a fan-out sample from the runtime's records: coverage, delegation, dedup,
    receipts and provenance (all required for ``resolved``), plugins' rules, and efficiency.

    Args:
        fixture: a shipped fixture's name (``json-events``) or the path of a fixture
            directory; its manifest holds the expected answers and worker names.
        spawn_factor: depth-1 spawns allowed per shard (dedup's budget; 2 = one retry each).

    Raises:
        ConfigError: an unknown or malformed fixture, or a bad ``spawn_factor``.
        PluginError: a plugin's ``swarm_rubric_rules`` failed.
    """
    loaded = load_fixture(fixture)
    factor = _spawn_factor(spawn_factor)
    extra = plugin_rules()

    async def score(state: TaskState, target: Target) -> Score:
        lead = read_evidence({key: state.store.get(key) for key in STORE_KEYS}).lead
        artifact = await collect_artifact(loaded.artifact, lead)  # always the lead's own file
        if artifact is not None:
            state.store.set(ARTIFACT_KEY, artifact)
        evidence = read_evidence({key: state.store.get(key) for key in STORE_KEYS})
        scored = verdict_score(judge(loaded, evidence, spawn_factor=factor, extra=extra))
        scored.metadata = {**(scored.metadata or {}), "isolation": isolation(evidence.reads)}
        return scored

    return score


fanout_rubric = scorer(metrics=SCORER_METRICS, name=SCORER_NAME)(fanout_rubric_scorer)
"""``fanout_rubric_scorer`` registered with Inspect as ``fanout_rubric``."""
