"""What the fan-out scorer trusts: the kernel's seal during an eval, the first score's digests
when ``inspect score`` re-judges a log.

- **During an eval**, the records the rubric reads must be the ones the kernel wrote and sealed
  (``swarm.kernel_seal``): each has the digest the seal holds, and a record the kernel did not
  write is absent.  Otherwise the sample is **unscorable** (a solver of one's own wrote them, or
  someone changed them after the swarm ended).
- **Re-scoring a log** (no sample running), the reference is the digests the last fan-out score
  of the sample recorded (``digests`` in its metadata, found in the sample's score events): the
  records must have the same digest (else the re-score is **refused**: ``RescoreRefused``), and
  so must the fixture's manifest, unless the scorer was told ``rescore_fixture=true`` (judging
  against a corrected fixture on purpose).  A sample with no such score is unscorable.

Digests are SHA-256 over canonical JSON (``swarm.record_digest``): of the manifest (its
``name``, ``artifact`` and ``shards`` as loaded) and of the records judged (every key of
``STORE_KEYS``, absent ones as ``null``).  They are not a signature: whoever can rewrite the
whole log can rewrite the score's digests too; keeping members away from the log is the
sandbox's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.event import ScoreEvent
from inspect_ai.log import transcript

from swarm import ConfigError, record_digest

from ._fixture import Fixture
from ._records import ARTIFACT_KEY, OPTIONAL_KEYS, STORE_KEYS

__all__ = [
    "RescoreRefused",
    "earlier_digests",
    "manifest_digest",
    "records_digests",
    "seal_problem",
]


class RescoreRefused(ConfigError):
    """``inspect score`` was asked to re-judge a sample whose records or fixture are not the
    ones it was first scored with."""


def manifest_digest(fixture: Fixture) -> str:
    """The SHA-256 of the fixture's manifest, canonical JSON (as loaded and checked)."""
    manifest = {
        "name": fixture.name,
        "artifact": fixture.artifact,
        "shards": [
            {"file": s.file, "worker": s.worker, "question": s.question, "expected": s.expected}
            for s in fixture.shards
        ],
    }
    return record_digest(manifest)


def records_digests(store: Mapping[str, Any]) -> dict[str, Any]:
    """The digests of the records the rubric judges: ``{"records": <all>, "by_key": {...}}``."""
    # the subagents record only when present, so a spawn-tools run's digests are what they were
    records = {key: store.get(key) for key in STORE_KEYS}
    records |= {key: store[key] for key in OPTIONAL_KEYS if store.get(key) is not None}
    return {
        "records": record_digest(records),
        "by_key": {key: record_digest(value) for key, value in records.items()},
    }


def seal_problem(store: Mapping[str, Any], seal: Mapping[str, str] | None) -> str | None:
    """Why the store's records are not the kernel's (``None`` when they are)."""
    if seal is None:
        return (
            "no swarm wrote this sample's records in this eval (the kernel sealed none): a "
            "solver that is not a swarm, or records written by something else"
        )
    for key in (*STORE_KEYS, *OPTIONAL_KEYS):
        if key == ARTIFACT_KEY:
            continue  # the scorer's own record, read from the sandbox when it scores
        sealed = seal.get(key)
        if sealed is None:
            if store.get(key) is not None:
                return f"the record {key} was not written by the swarm's kernel"
        elif key not in store or record_digest(store.get(key)) != sealed:
            return f"the record {key} was changed after the swarm's kernel wrote it"
    return None


def earlier_digests() -> dict[str, Any] | None:
    """The ``digests`` of the last fan-out score this sample was given, from the sample's
    transcript (``inspect score`` replays the sample's events, score events included); ``None``
    when no score recorded them."""
    found = None
    for event in transcript().events:
        if not isinstance(event, ScoreEvent) or event.intermediate:
            continue
        digests = (event.score.metadata or {}).get("digests")
        if isinstance(digests, dict) and isinstance(digests.get("records"), str):
            found = digests
    return found
