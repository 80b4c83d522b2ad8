"""Reading the ``inspect_swarm:result`` record back from a log's sample, as a ``ResultRecord``:
the same pydantic classes the record is written through (``swarm._schemas``)."""

from __future__ import annotations

from inspect_ai.log import EvalSample

from swarm._schemas import ResultFinal, ResultMember, ResultRecord, ResultSubmission
from swarm.analysis._spawns import read_record
from swarm.records import RESULT_KEY

__all__ = ["ResultFinal", "ResultMember", "ResultRecord", "ResultSubmission", "swarm_result"]


def swarm_result(sample: EvalSample) -> ResultRecord | None:
    """The sample's result record (each member's answer, the answer, the submissions with their
    verdicts), or ``None`` when it has none.

    Raises:
        ValueError: the record has a version this release cannot read.
    """
    return read_record(sample, RESULT_KEY, ResultRecord)
