"""The fan-out rubric as an Inspect scorer.

``fanout_rubric(fixture=...)`` judges only the records in ``JUDGED_KEYS``: during an eval, the
ones the swarm's kernel wrote and sealed, and the artifact it reads from the sandbox itself
(never one already in the store); when ``inspect score`` re-scores a log, the stored ones, once
their digests match the ones the sample's last score recorded (``_digests``).  Its ``Score``
holds every rule's verdict, ``resolved`` and ``unverified`` in ``value`` (a run that was not
isolated is never resolved: ``unverified`` when every rule passed), the artifact in ``answer``,
a summary in ``explanation``, and each rule's failures and details, the efficiency figures, the
isolation, how each record read and the digests in ``metadata``.  Its metric is the mean of
each of those values.

A sample whose records the kernel did not write (or that changed since) is **unscorable**:
every value false, ``reason`` ``"scoring_failed"``, ``metadata["unscorable"]`` saying why; it
counts as unresolved in the mean (a NaN value would drop it from the mean instead).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from swarm import ConfigError, in_running_sample, kernel_seal, member_sandbox

from ._digests import (
    RescoreRefused,
    earlier_digests,
    manifest_digest,
    records_digests,
    seal_problem,
)
from ._evidence import read_evidence
from ._fixture import Fixture, load_fixture
from ._records import ARTIFACT_KEY, JUDGED_KEYS
from ._rubric import REQUIRED_RULES, Verdict, judge, plugin_rules
from ._subagents import child_aliases

__all__ = [
    "SCORER_METRICS",
    "SCORER_NAME",
    "fanout_rubric",
    "fanout_rubric_scorer",
    "unscorable_score",
    "verdict_score",
]

SCORER_NAME = "fanout_rubric"
"""The scorer's name in Inspect's registry (``swarm/fanout_rubric`` with the package)."""
SCORER_METRICS = {"*": [mean()]}
"""The mean of every value of the score: each rule, and ``resolved``."""


def verdict_score(verdict: Verdict, digests: dict[str, Any] | None = None) -> Score:
    """The Inspect ``Score`` of a verdict (``digests`` in its metadata when given)."""
    artifact = verdict.evidence.artifact
    answer = artifact.text if artifact is not None and artifact.text is not None else ""
    metadata = verdict.metadata()
    if digests is not None:
        metadata["digests"] = digests
    return Score(
        value=dict(verdict.value()),
        answer=answer,
        explanation=verdict.explanation(),
        metadata=metadata,
    )


def unscorable_score(
    fixture: Fixture, rules: list[str], why: str, digests: dict[str, Any]
) -> Score:
    """The score of a sample the rubric will not judge: every rule (``rules``), ``resolved``
    and ``unverified`` false, ``reason`` ``scoring_failed``, and why in the metadata."""
    return Score(
        value={**dict.fromkeys(rules, False), "resolved": False, "unverified": False},
        answer="",
        explanation=f"unscorable: {why}",
        reason="scoring_failed",
        metadata={
            "fixture": fixture.name,
            "resolved": False,
            "unverified": False,
            "unscorable": why,
            "digests": digests,
        },
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


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(f"{SCORER_NAME}.{name}: expected true or false, got {value!r}")


def fanout_rubric_scorer(
    fixture: str, spawn_factor: int = 2, rescore_fixture: bool = False
) -> Scorer:
    """Score a fan-out sample from the runtime's records: coverage, delegation, dedup,
    receipts and provenance (all required for ``resolved``), plugins' rules, and efficiency.

    Args:
        fixture: a shipped fixture's name (``json-events``) or the path of a fixture
            directory; its manifest holds the expected answers and worker names (read once,
            here).
        spawn_factor: depth-1 spawns allowed per shard (dedup's budget; 2 = one retry each).
        rescore_fixture: when re-scoring a log, judge it against this fixture even though its
            manifest is not the one the sample was last scored with (correcting an expected
            answer on purpose).  The records must still be the ones that were scored.

    Raises:
        ConfigError: an unknown or malformed fixture, or a bad argument.
        PluginError: a plugin's ``swarm_rubric_rules`` failed.
        RescoreRefused: (when scoring) a re-score of records or against a fixture that are not
            the ones the sample was last scored with.
    """
    loaded = load_fixture(fixture)
    fixture_digest = manifest_digest(loaded)
    factor = _spawn_factor(spawn_factor)
    on_purpose = _flag(rescore_fixture, "rescore_fixture")
    extra = plugin_rules()
    rules = [*REQUIRED_RULES, *sorted(rule.name for _, rule in extra)]

    async def score(state: TaskState, target: Target) -> Score:
        digests: dict[str, Any] = {"fixture": fixture_digest}
        if in_running_sample():
            problem = seal_problem(dict(state.store.items()), kernel_seal(state.store))
            if problem is not None:
                return unscorable_score(loaded, rules, problem, digests)
            # the artifact is always read where the lead left it, never taken from the store
            lead = read_evidence({key: state.store.get(key) for key in JUDGED_KEYS}).lead
            artifact = await collect_artifact(loaded.artifact, lead)
            state.store.set(ARTIFACT_KEY, artifact or {"path": loaded.artifact, "text": None})
            store = {key: state.store.get(key) for key in JUDGED_KEYS}
            digests |= records_digests(store) | {"judged": "sealed by the kernel"}
        else:
            store = {key: state.store.get(key) for key in JUDGED_KEYS}
            earlier = earlier_digests()
            if earlier is None:
                why = "no earlier fan-out score of this sample recorded the digests of its records"
                return unscorable_score(loaded, rules, why, digests)
            digests |= _rescore_digests(state, loaded, store, earlier, fixture_digest, on_purpose)
        evidence = read_evidence(store, aliases=child_aliases(loaded))
        verdict = judge(loaded, evidence, spawn_factor=factor, extra=extra)
        return verdict_score(verdict, digests)

    return score


def _rescore_digests(
    state: TaskState,
    fixture: Fixture,
    store: dict[str, Any],
    earlier: dict[str, Any],
    fixture_digest: str,
    on_purpose: bool,
) -> dict[str, Any]:
    """The digests of a re-score, after checking them against the sample's last score."""
    sample = f"{SCORER_NAME}: refusing to re-score sample {state.sample_id!r}"
    now = records_digests(store)
    if now["records"] != earlier["records"]:
        by_key = earlier.get("by_key")
        before: dict[str, Any] = by_key if isinstance(by_key, dict) else {}
        changed = [k for k, d in now["by_key"].items() if before.get(k) != d]
        raise RescoreRefused(
            f"{sample}: its records are not the ones it was scored with (changed since: "
            f"{', '.join(changed) or 'unknown'}; sha256 {now['records']} now, "
            f"{earlier['records']} when scored)"
        )
    scored_with = earlier.get("fixture")
    if scored_with != fixture_digest and not on_purpose:
        raise RescoreRefused(
            f"{sample}: the fixture's manifest {fixture.directory / 'fixture.json'} is not the "
            f"one it was scored with (sha256 {fixture_digest} now, {scored_with} when scored); "
            "to judge it against this fixture on purpose, pass -S rescore_fixture=true"
        )
    judged = "the last score's records" + (
        "" if scored_with == fixture_digest else f", against a new fixture (was {scored_with})"
    )
    return now | {"judged": judged}


fanout_rubric = scorer(metrics=SCORER_METRICS, name=SCORER_NAME)(fanout_rubric_scorer)
"""``fanout_rubric_scorer`` registered with Inspect as ``fanout_rubric``."""
