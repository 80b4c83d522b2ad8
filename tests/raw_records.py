"""Raw entries of the swarm's records, every field given, for the fan-out parsers' and evidence
reader's value tests (``test_values_fanout_parse.py``, ``test_values_fanout_evidence.py``)."""

from __future__ import annotations

from typing import Any

from fanout_records import LEAD

__all__ = ["member", "message", "spawn", "usage"]


def spawn(**fields: Any) -> dict[str, Any]:
    """A raw ``spawn`` entry of the spawn ledger, every field given."""
    entry: dict[str, Any] = {
        "seq": 1,
        "time": 2,
        "op": "spawn",
        "member": "worker-a~2",
        "requested": "worker-a",
        "parent": LEAD,
        "depth": 1,
        "template": "worker",
        "task": "Answer the question.",
        "status": None,
        "reason": None,
    }
    entry.update(fields)
    return entry


def message(**fields: Any) -> dict[str, Any]:
    """A raw ``message`` entry of the message log, every field given."""
    entry: dict[str, Any] = {
        "seq": 1,
        "time": 3,
        "kind": "message",
        "sender": "worker-a",
        "recipient": LEAD,
        "relationship": "child",
        "size": 2,
        "text": "16",
        "about": None,
        "status": None,
        "seen": {"time": 4, "via": "wait"},
    }
    entry.update(fields)
    return entry


def member(**fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": "worker-a",
        "state": "ended",
        "status": "submitted",
        "started": 1,
        "time": 5,
        "parent": LEAD,
        "depth": 1,
    }
    entry.update(fields)
    return entry


def usage(**fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": "worker-a",
        "meter": {"usage": {"total_tokens": 120}, "cost": 0.25},
        "calls": {"calls": 2, "cache_replays": 1, "errored": 3},
    }
    entry.update(fields)
    return entry
