"""The fan-out eval: its fixtures and its rubric.

- ``load_fixture("json-events")`` (or ``"csv-metrics"``, or the path of any directory of the
  same shape) returns a checked ``Fixture``; ``fixture_names()`` lists the shipped ones.
- ``fanout_rubric(fixture=...)`` is the rubric as an Inspect scorer (registered with swarm-eval
  as the ``fanout`` rubric and with Inspect as ``swarm/fanout_rubric``).
- ``fanout(fixture=...)`` is the Inspect task (``swarm/fanout``; ``demo=True``: the keyless
  demonstration, on its own scripted model), ``fanout_topology(fixture)`` its default solver;
  ``run_fanout(fixture, model, timeout, log_dir)`` runs it and returns the outcome ``swarm
  fanout`` prints; ``honest_scripts(fixture)`` are the keyless demonstration's;
- ``read_evidence(store)`` reads a sample's store as ``Evidence``; ``judge(fixture, evidence)``
  and ``judge_store(fixture, store)`` give the ``Verdict``; the rules are ``coverage``,
  ``delegation``, ``dedup``, ``receipts``, ``provenance`` and the informational ``efficiency``.
- ``manifest_digest(fixture)`` and ``records_digests(store)`` are the digests a score records;
  ``RescoreRefused`` is the error of a re-score whose records or fixture changed.
"""

from __future__ import annotations

from ._answers import artifact_bullets, coverage, provenance
from ._demo import (
    codex_children_scripts,
    honest_codex_scripts,
    honest_deepagent_scripts,
    honest_scripts,
)
from ._digests import RescoreRefused, manifest_digest, records_digests
from ._efficiency import efficiency
from ._evidence import Child, Evidence, read_evidence
from ._fixture import Fixture, Shard, fixture_names, load_fixture
from ._orchestration import dedup, delegation, receipts
from ._records import (
    ARTIFACT_KEY,
    MESSAGES_KEY,
    SPAWNS_KEY,
    STORE_KEYS,
    Artifact,
    MemberRun,
    MemberUsage,
    MessageEntry,
    RecordReport,
    Seen,
    SpawnEntry,
)
from ._rubric import REQUIRED_RULES, RUBRIC, JudgedRule, Verdict, judge, judge_store, plugin_rules
from ._runner import run_fanout
from ._scorer import SCORER_NAME, fanout_rubric, unscorable_score, verdict_score
from ._subagents import child_aliases, credit_reads, subagent_aliases, subagent_type
from ._task import (
    fanout,
    fanout_codex_topology,
    fanout_deepagent_topology,
    fanout_sample,
    fanout_topology,
)

__all__ = [
    "fanout",
    "fanout_sample",
    "fanout_codex_topology",
    "fanout_deepagent_topology",
    "fanout_topology",
    "codex_children_scripts",
    "honest_codex_scripts",
    "honest_deepagent_scripts",
    "honest_scripts",
    "run_fanout",
    "child_aliases",
    "credit_reads",
    "subagent_aliases",
    "subagent_type",
    "ARTIFACT_KEY",
    "MESSAGES_KEY",
    "REQUIRED_RULES",
    "RUBRIC",
    "SCORER_NAME",
    "SPAWNS_KEY",
    "STORE_KEYS",
    "Artifact",
    "Child",
    "Evidence",
    "Fixture",
    "JudgedRule",
    "MemberRun",
    "MemberUsage",
    "MessageEntry",
    "RecordReport",
    "RescoreRefused",
    "Seen",
    "Shard",
    "SpawnEntry",
    "Verdict",
    "artifact_bullets",
    "coverage",
    "dedup",
    "delegation",
    "efficiency",
    "fanout_rubric",
    "fixture_names",
    "judge",
    "judge_store",
    "load_fixture",
    "manifest_digest",
    "plugin_rules",
    "provenance",
    "read_evidence",
    "receipts",
    "records_digests",
    "unscorable_score",
    "verdict_score",
]
