"""A run's evidence of channel activity, read back from a log's sample."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from inspect_ai.event import Event, InfoEvent
from inspect_ai.log import EvalSample

from swarm.records import EVIDENCE_TYPE, INFO_SOURCE, evidence_entries

__all__ = ["evidence_of", "swarm_evidence"]


def swarm_evidence(sample: EvalSample, kind: str | None = None) -> list[dict[str, Any]]:
    """Every evidence entry of the swarm run in ``sample`` (of one ``kind``), in order.

    Kinds: ``delivered`` and ``sent`` (a write committed or refused), ``read`` (a view or
    listing), ``notified`` (one line of a notice), ``waited`` (a ``swarm_wait`` that ended).
    Each entry has ``kind``, ``time`` (seconds since the swarm started), ``member`` and the
    fields of its kind; ids, sizes and counts only, never the text members wrote.  Logs written
    before the evidence was one event (one ``comm`` event per entry, timed by the event) are
    read too, without ``time``.  A sample with no swarm gives ``[]``.
    """
    return [e for e in evidence_of(sample.events) if kind is None or e.get("kind") == kind]


def evidence_of(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Every evidence entry in ``events`` (a sample's), in order (``swarm_evidence``)."""
    found: list[dict[str, Any]] = []
    for event in events:
        if not isinstance(event, InfoEvent) or event.source != INFO_SOURCE:
            continue
        data = event.data
        if not isinstance(data, dict):
            continue
        if data.get("type") == EVIDENCE_TYPE:
            found.extend(evidence_entries(data))
        elif data.get("type") == "comm":  # the earlier form: one event per entry
            found.append({k: v for k, v in data.items() if k not in ("version", "type")})
    return found
