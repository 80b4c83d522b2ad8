"""``swarm_diagnosis``: the failure checks as an Inspect scorer.

Its ``Score`` value holds, for each check of ``CHECKS``, how many findings it made (the
metric is their mean over samples); the explanation lists the findings, one a line, and the
metadata holds the whole diagnosis (``Diagnosis.as_dict()``: figures, findings, unlinked).  It
reads the sample's transcript (Inspect's ``transcript()``: the sample's events, in an eval and
in ``inspect score`` alike) and its store.  A sample with no swarm scores every check ``0``
with ``metadata["no_swarm"]``.
"""

from __future__ import annotations

from inspect_ai.log import EvalSample, transcript
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from swarm.diagnosis._checks import CHECKS
from swarm.diagnosis._diagnose import diagnose

__all__ = ["SCORER_NAME", "swarm_diagnosis", "swarm_diagnosis_scorer"]

SCORER_NAME = "swarm_diagnosis"


def swarm_diagnosis_scorer() -> Scorer:
    """Score a swarm sample by its failure checks: each check's number of findings."""

    async def score(state: TaskState, target: Target) -> Score:
        sample = EvalSample(
            id=state.sample_id,
            epoch=state.epoch,
            input=state.input,
            target=target.target,
            events=list(transcript().events),
            store=dict(state.store.items()),
        )
        try:
            found = diagnose(sample)
        except LookupError as ex:
            return Score(
                value={name: 0 for name in CHECKS},
                explanation=str(ex),
                metadata={"no_swarm": True},
            )
        lines = [f"{f.check} ({f.mode}): {f.why}" for f in found.findings]
        return Score(
            value={name: sum(1 for f in found.findings if f.check == name) for name in CHECKS},
            explanation="\n".join(lines) or "no findings",
            metadata=found.as_dict(),
        )

    return score


swarm_diagnosis = scorer(metrics={"*": [mean()]}, name=SCORER_NAME)(swarm_diagnosis_scorer)
"""``swarm_diagnosis_scorer`` registered with Inspect as ``swarm_diagnosis``."""
