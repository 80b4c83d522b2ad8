"""Reading swarm records back from Inspect logs.

- ``SwarmColumns``: eleven columns for Inspect's ``samples_df()`` (needs the optional
  ``swarm-eval[analysis]`` extra: pandas and pyarrow);
- ``swarm_ledger(sample)``: a sample's whole ``inspect_swarm:ledger`` as a ``SwarmLedger``,
  whose ``members`` are ``MemberLedger``s with a ``Meter`` and ``Calls`` each;
  ``SwarmLedger.model_json_schema()`` describes every field;
- ``swarm_spawns(sample)`` and ``swarm_messages(sample)``: the spawn ledger and the message log
  as a ``SpawnLedger`` and a ``MessageLog``; ``swarm_subagents(sample)``: what members
  dispatched through deepagent, as a ``SubagentsRecord``;
- the models are the ones the records are written through (one schema per record), so they
  have exactly the stored fields;
- ``swarm_result(sample)``: the result record (each member's answer and verdict, the answer,
  the submissions) as a ``ResultRecord``;
- ``member_scores(scorer)``: an Inspect scorer (``swarm/member_scores``) that scores the swarm's
  answer and every member's: team, best, mean and any member, as metrics over samples;
- ``read_sample(log, id=None, epoch=1, records_only=False)``: one sample of a log, read as
  these readers read it (off the main thread; with ``records_only``, only the store and the
  sample's own fields: what the record readers need);
- ``notice_text(message)``: the swarm notice a model input's message is or carries (a notice
  rides at the end of its turn's last tool result, or is a user message after a turn without
  a tool call), or ``None``;
- ``swarm_evidence(sample, kind=None)``: the run's evidence of channel activity (every write,
  view, notice line and wait: ids and sizes, never text), in order;
- ``arm_table(log_dir)``: an experiment's arms (``swarm arms``), one ``ArmRow`` each
  (realized tokens and cost; the chosen answer's accuracy and its interval, the oracle's
  pick, the mean agent; pass@k, pass^k, cost per success, within budget) and the scaling fits
  on realized tokens (``ScalingFit``); arms of two experiments are refused
  (``MixedExperiments``); ``comparison_figures`` draws them.
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from swarm.analysis._arms import (
    ArmRow,
    ArmTable,
    MixedExperiments,
    ScalingFit,
    arm_table,
    pass_at_k,
    pass_hat_k,
    sample_cost,
)
from swarm.analysis._evidence import swarm_evidence
from swarm.analysis._experiment_id import ExperimentId, experiment_id, identity_of_log
from swarm.analysis._ledger import (
    Calls,
    LedgerBudget,
    LedgerCaps,
    MemberLedger,
    Meter,
    SampleLimits,
    SwarmLedger,
    Usage,
    swarm_ledger,
)
from swarm.analysis._member_scores import MEMBER_SCORE_KEYS, member_scores
from swarm.analysis._notices import notice_text
from swarm.analysis._plots import Comparison, comparison_figures, frontier, write_comparison
from swarm.analysis._read import RECORDS_ONLY, read_sample
from swarm.analysis._result import (
    ResultFinal,
    ResultMember,
    ResultRecord,
    ResultSubmission,
    swarm_result,
)
from swarm.analysis._spawns import (
    MessageLog,
    MessageLogEntry,
    SpawnLedger,
    SpawnLedgerEntry,
    SubagentDispatch,
    SubagentEnd,
    SubagentRan,
    SubagentReceived,
    SubagentSeen,
    SubagentsRecord,
    SubagentUsage,
    swarm_messages,
    swarm_spawns,
    swarm_subagents,
)

if _TYPE_CHECKING:
    from swarm.analysis._columns import SwarmColumns, require_dataframes

_LAZY = ("SwarmColumns", "require_dataframes")

__all__ = [
    "experiment_id",
    "identity_of_log",
    "ArmRow",
    "ArmTable",
    "ExperimentId",
    "MixedExperiments",
    "ScalingFit",
    "Comparison",
    "arm_table",
    "comparison_figures",
    "frontier",
    "write_comparison",
    "pass_at_k",
    "pass_hat_k",
    "sample_cost",
    "MEMBER_SCORE_KEYS",
    "RECORDS_ONLY",
    "LedgerBudget",
    "Calls",
    "LedgerCaps",
    "MemberLedger",
    "MessageLog",
    "MessageLogEntry",
    "Meter",
    "ResultFinal",
    "ResultMember",
    "ResultRecord",
    "ResultSubmission",
    "SampleLimits",
    "SpawnLedger",
    "SpawnLedgerEntry",
    "SubagentDispatch",
    "SubagentEnd",
    "SubagentRan",
    "SubagentReceived",
    "SubagentSeen",
    "SubagentUsage",
    "SubagentsRecord",
    "SwarmColumns",
    "SwarmLedger",
    "Usage",
    "member_scores",
    "notice_text",
    "read_sample",
    "require_dataframes",
    "swarm_evidence",
    "swarm_ledger",
    "swarm_messages",
    "swarm_result",
    "swarm_spawns",
    "swarm_subagents",
]


def __getattr__(name: str) -> _Any:
    """``SwarmColumns`` and ``require_dataframes``, imported when first asked for: their
    module imports Inspect's dataframes (``inspect_ai.analysis``, a third of a second), which
    the ``inspect_ai`` entry point, loaded by every Inspect command and eval, does not need."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module("swarm.analysis._columns"), name)
    globals()[name] = value
    return value
