"""The ``inspect_swarm:result`` record: each member's state and status, and the answer."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from inspect_ai.scorer import value_to_float

from swarm._report.events import RunEvents
from swarm._report.outcome import MemberEnd, RunOutcome
from swarm.records import ANSWER_MAX_CHARS, FinalRecord, MemberResult, Submission, SwarmResult

__all__ = ["Gates", "build_result", "member_gates"]

Gates = tuple[int, int, float | None]
"""A member's gate checks, passes, and the time of its first pass."""


def member_gates(m: MemberEnd, events: RunEvents, started_at: datetime) -> Gates:
    """The kernel's own checks of ``m`` plus its in-loop checks (intermediate scores of the
    first scorer it used)."""
    scores = events.gate_scores.get(m.name, [])
    first = scores[0].scorer if scores else None
    checks = [s for s in scores if s.scorer == first]
    to_float = value_to_float()
    passes = [s for s in checks if to_float(s.score.value) == 1.0]
    times = [(s.timestamp - started_at).total_seconds() for s in passes]
    if m.first_pass_time is not None:
        times.append(m.first_pass_time)
    return (
        len(checks) + m.gate_checks,
        len(passes) + m.gate_passes,
        min(times) if times else None,
    )


def build_result(outcome: RunOutcome, gates: Mapping[str, Gates]) -> SwarmResult:
    """The result record of a finished run; provisional when the run was interrupted.

    ``submissions`` lists every submission (spawned members' too) in the order they came, each
    with its answer and the verifier's verdict.
    """
    text = outcome.answer_text
    submitted = [m for m in outcome.members if m.status == "submitted" and m.ended is not None]
    return SwarmResult(
        members=tuple(
            MemberResult(
                name=m.name,
                role=m.info.role,
                state=m.state,
                status=m.status,
                submitted=m.status == "submitted",
                started=m.started,
                time=m.ended,
                parent=m.info.parent,
                depth=m.info.depth,
                error=m.error,
                gate_checks=gates[m.name][0],
                gate_passes=gates[m.name][1],
                first_pass_time=gates[m.name][2],
                answer=m.answer,
                answer_chars=m.answer_chars,
                verified=m.verified,
            )
            for m in outcome.members
        ),
        final=FinalRecord(
            mode=outcome.answer.mode,
            member=outcome.answer.member,
            reason=outcome.answer.reason,
            provisional=outcome.interrupted,
            answer=None if text is None else text[:ANSWER_MAX_CHARS],
            answer_chars=None if text is None else len(text),
        ),
        stop_reason=outcome.stop_reason,
        submissions=tuple(
            Submission(member=m.name, time=m.ended or 0.0, answer=m.answer, verified=m.verified)
            for m in sorted(submitted, key=lambda m: (m.ended or 0.0, m.info.index))
        ),
    )
