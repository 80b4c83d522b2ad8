"""``member_scores(scorer)``: every member's answer scored, next to the swarm's own score.

A scorer that wraps another: for each sample it scores the swarm's output (``team``) and each
roster member's answer from the result record (``swarm_result``), and reduces the members'
scores with Inspect's own reducers: ``best`` (``max_score()``), ``mean`` (``mean_score()``) and
``any`` (``at_least(1)``: some member scored 1.0).  Its value is a dict of those four, and each
key gets Inspect's ``mean()`` and ``stderr()`` over the samples: team, best@k, mean member and
any@k (pass@k) for a swarm of k members.  Registered as ``swarm/member_scores``, so
``inspect score --scorer swarm/member_scores -S scorer=match LOG`` scores a saved log.
"""

from __future__ import annotations

from copy import copy
from typing import Any

from inspect_ai.model import ModelOutput
from inspect_ai.scorer import (
    Score,
    Scorer,
    Target,
    at_least,
    max_score,
    mean,
    mean_score,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import TaskState

from swarm._schemas import ResultRecord
from swarm._spec.verifier import named_scorer
from swarm.errors import ConfigError
from swarm.records import RESULT_KEY

__all__ = ["MEMBER_SCORE_KEYS", "member_scores"]

MEMBER_SCORE_KEYS = ("team", "best", "mean", "any")
"""The keys of ``member_scores``' value, in order."""


def _scorer_of(value: Scorer | str) -> Scorer:
    if isinstance(value, str):
        return named_scorer(value, "member_scores.scorer")
    if not callable(value):
        raise ConfigError(f"member_scores.scorer: expected a scorer, got {value!r}")
    return value


async def _score(inner: Scorer, state: TaskState, target: Target) -> Score:
    found = await inner(state, target)
    if found is None:
        return Score(value=0.0)
    return found


def _as_of(state: TaskState, answer: str) -> TaskState:
    """``state`` as if ``answer`` were the sample's output."""
    member = copy(state)
    member.output = ModelOutput.from_content(model=str(state.model), content=answer)
    return member


@scorer(metrics={key: [mean(), stderr()] for key in MEMBER_SCORE_KEYS})
def member_scores(scorer: Scorer | str = "match") -> Scorer:
    """Score the swarm's answer and every roster member's with ``scorer``.

    Args:
        scorer: the scorer (a ``Scorer``, or an Inspect registry name such as ``"match"``);
            default ``match``.

    The value is ``{"team", "best", "mean", "any"}``: the swarm's answer's score, the best
    member's, the members' mean, and 1 if some member scored 1.0 (else 0), each a float under
    ``value_to_float()``.  A member is scored on the answer its result record kept (cut at
    10,000 characters); a roster member that did not submit scores 0.  Spawned members
    (their answers are to their parents' tasks) are not scored.  A sample with no result
    record (no swarm ran) has only ``team``'s figure, and 0 for the others.
    """
    inner = _scorer_of(scorer)
    to_float = value_to_float()

    async def score(state: TaskState, target: Target) -> Score:
        team = await _score(inner, state, target)
        data: Any = state.store.get(RESULT_KEY)
        record = ResultRecord.model_validate(data) if isinstance(data, dict) else None
        roster = [m for m in (record.members if record else []) if m.depth == 0]
        each: dict[str, float] = {}
        scores: list[Score] = []
        for m in roster:
            if m.submitted and m.answer is not None:
                found = await _score(inner, _as_of(state, m.answer), target)
            else:
                found = Score(value=0.0)
            found = Score(value=to_float(found.value))
            each[m.name] = float(found.value)  # type: ignore[arg-type]
            scores.append(found)
        reduced = {
            "best": max_score()(scores).value if scores else 0.0,
            "mean": mean_score()(scores).value if scores else 0.0,
            "any": at_least(1)(scores).value if scores else 0.0,
        }
        value = {"team": to_float(team.value), **{k: to_float(v) for k, v in reduced.items()}}
        return Score(
            value=value,
            answer=team.answer,
            explanation=f"team {value['team']:g}; members {each}",
            metadata={"members": each},
        )

    return score
