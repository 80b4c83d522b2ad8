"""``DiagnosisColumns``: a swarm run's coordination figures and failures as columns of
Inspect's ``samples_df()`` (pandas and pyarrow: the optional ``swarm-eval[analysis]`` extra)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from inspect_ai.analysis import Column, SampleColumn
from inspect_ai.log import EvalSample, EvalSampleSummary

from swarm.diagnosis._diagnose import Diagnosis, diagnose

__all__ = ["DiagnosisColumns"]

_last: list[tuple[object, Diagnosis | None]] = []


def _diagnosis(sample: EvalSample | EvalSampleSummary) -> Diagnosis | None:
    """The sample's diagnosis, computed once for all its columns (``samples_df`` reads the
    columns of one sample one after another); ``None`` for a sample with no swarm."""
    if _last and _last[0][0] is sample:
        return _last[0][1]
    found: Diagnosis | None = None
    if isinstance(sample, EvalSample):
        try:
            found = diagnose(sample)
        except LookupError:
            found = None
    _last[:] = [(sample, found)]  # holding the sample keeps its id from being reused
    return found


def _figure(name: str, get: Callable[[Diagnosis], Any], doc: str) -> SampleColumn:
    def value(sample: EvalSample | EvalSampleSummary) -> Any:
        found = _diagnosis(sample)
        return None if found is None else get(found)

    value.__doc__ = doc
    return SampleColumn(name, path=value, full=True)


def _funnels(d: Diagnosis) -> str:
    return json.dumps(
        {
            f.channel: {"sent": f.sent, "reached": f.reached, "read": f.read, "acted": f.acted}
            for f in d.figures.funnels
        }
    )


DiagnosisColumns: list[Column] = [
    _figure(
        "swarm_critical_path_steps",
        lambda d: d.figures.critical_path.steps,
        "Model calls on the critical path.",
    ),
    _figure(
        "swarm_critical_path_tokens",
        lambda d: d.figures.critical_path.tokens,
        "Tokens of the critical path's calls.",
    ),
    _figure(
        "swarm_critical_path_time",
        lambda d: d.figures.critical_path.time,
        "Model-call time of the critical path's calls, seconds.",
    ),
    _figure(
        "swarm_parallelism",
        lambda d: d.figures.parallelism,
        "Total model-call time over the critical path's.",
    ),
    _figure(
        "swarm_overhead_tokens",
        lambda d: d.figures.overhead_tokens,
        "Tokens outside the answer's chain of calls.",
    ),
    _figure(
        "swarm_overhead", lambda d: d.figures.overhead, "The overhead tokens' share of all tokens."
    ),
    _figure(
        "swarm_duplicate_tool_calls",
        lambda d: d.figures.duplicate_tool_calls,
        "Tool calls repeating one another member made.",
    ),
    _figure(
        "swarm_redundancy",
        lambda d: d.figures.redundancy,
        "Duplicate tool calls' share of the tool work.",
    ),
    _figure(
        "swarm_message_density",
        lambda d: d.figures.message_density,
        "Writes and messages per model call.",
    ),
    _figure(
        "swarm_peer_wait_time",
        lambda d: d.figures.peer_wait_time,
        "Seconds waiting on peers (swarm_wait, wait_for_children).",
    ),
    _figure(
        "swarm_model_wait_time",
        lambda d: d.figures.model_wait_time,
        "Seconds waiting on model calls.",
    ),
    _figure("swarm_funnels", _funnels, "Each channel's funnel, as JSON."),
    _figure(
        "swarm_failures",
        lambda d: json.dumps(d.checks_found()),
        "The checks with findings, as a JSON list.",
    ),
    _figure("swarm_findings", lambda d: len(d.findings), "How many findings."),
]
"""The diagnosis columns, for ``samples_df(path, columns=SampleSummary + DiagnosisColumns)``."""
