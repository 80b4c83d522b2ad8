"""The fan-out eval: its fixtures and its rubric.

- ``load_fixture("json-events")`` (or ``"csv-metrics"``, or the path of any directory of the
  same shape) returns a checked ``Fixture``; ``fixture_names()`` lists the shipped ones.
- ``fanout_rubric(fixture=...)`` is the rubric as an Inspect scorer (registered with swarm-eval
  as the ``fanout`` rubric and with Inspect as ``swarm/fanout_rubric``).
- ``read_evidence(store)`` reads a sample's store as ``Evidence``; ``judge(fixture, evidence)``
  and ``judge_store(fixture, store)`` give the ``Verdict``; the rules are ``coverage``,
  ``delegation``, ``dedup``, ``receipts``, ``provenance`` and the informational ``efficiency``.
"""

from __future__ import annotations

from ._answers import artifact_bullets, coverage, provenance
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
from ._scorer import SCORER_NAME, fanout_rubric, verdict_score

__all__ = [
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
    "plugin_rules",
    "provenance",
    "read_evidence",
    "receipts",
    "verdict_score",
]
