"""Diagnosing a swarm run from its records and transcript (docs/diagnosis.md).

- ``diagnose(sample)``: a ``Diagnosis``: the run's coordination ``Figures`` (critical path,
  parallelism, overhead, redundancy, message density, each channel's ``Funnel``, time waiting
  on peers and on the model) and its ``Finding``s, one per failure a check found;
  ``diagnose_log(path)`` for every sample of a log or a log directory;
- ``CHECKS``: the failure checks by name, each a deterministic rule named after its MAST mode;
- ``DiagnosisColumns``: the figures as columns of Inspect's ``samples_df()``;
- ``swarm_diagnosis()``: the findings as an Inspect scorer (``inspect score LOG --scorer
  swarm/swarm_diagnosis``).
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from swarm.diagnosis._checks import CHECKS, REPEAT_AT, STOP_SLACK, WAITING_TOOLS, Finding
from swarm.diagnosis._diagnose import Diagnosis, diagnose, diagnose_log
from swarm.diagnosis._figures import COORDINATION_TOOLS, CriticalPath, Figures, Funnel
from swarm.diagnosis._scorer import swarm_diagnosis

if _TYPE_CHECKING:
    from swarm.diagnosis._columns import DiagnosisColumns

_LAZY = ("DiagnosisColumns",)

__all__ = [
    "CHECKS",
    "COORDINATION_TOOLS",
    "REPEAT_AT",
    "STOP_SLACK",
    "WAITING_TOOLS",
    "CriticalPath",
    "Diagnosis",
    "DiagnosisColumns",
    "Figures",
    "Finding",
    "Funnel",
    "diagnose",
    "diagnose_log",
    "swarm_diagnosis",
]


def __getattr__(name: str) -> _Any:
    """``DiagnosisColumns``, imported when first asked for: their module imports Inspect's
    dataframes (``inspect_ai.analysis``, a third of a second), which the ``inspect_ai`` entry
    point, loaded by every Inspect command and eval, does not need."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module("swarm.diagnosis._columns"), name)
    globals()[name] = value
    return value
