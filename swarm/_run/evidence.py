"""The run's evidence of channel activity: one entry per write (delivered or refused), view,
notice line and wait, with ids, sizes and counts, never the text members wrote.

Entries are kept in memory as the run goes and written once, when it finishes, as one info
event (source ``inspect_swarm``, data ``{"version": 1, "type": "evidence", "entries": [...]}``)
next to the records.  One transcript event per write cost as much as the write itself in a large
swarm (Inspect stores, buffers and condenses every event); one event per run costs nothing per
write.  Each entry carries ``time``, the run's clock, so the order and timing are kept.
``swarm.analysis.swarm_evidence`` reads the entries back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.log import transcript

from swarm.records import EVIDENCE_TYPE, INFO_SOURCE

__all__ = ["EvidenceLog"]


class EvidenceLog:
    """The entries of one run, in the order they happened."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.entries: list[dict[str, Any]] = []
        self.written = False

    def add(self, kind: str, member: str, **fields: Any) -> None:
        """Add one entry: what happened (``kind``), to whom, now, and its ``fields``."""
        self.entries.append({"kind": kind, "time": self._clock(), "member": member, **fields})

    def write(self) -> None:
        """Write the entries to the transcript as one info event (once; later calls do nothing)."""
        if self.written:
            return
        self.written = True
        data: dict[str, Any] = {"version": 1, "type": EVIDENCE_TYPE, "entries": self.entries}
        transcript().info(data, source=INFO_SOURCE)
