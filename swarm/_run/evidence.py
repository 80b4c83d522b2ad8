"""The run's evidence of channel activity: one entry per write (delivered or refused), view,
notice line and wait, with ids, sizes and counts, never the text members wrote.

Entries are kept in memory as the run goes and written once, when it finishes, as one info
event (source ``inspect_swarm``) next to the records.  One transcript event per write cost as
much as the write itself in a large swarm (Inspect stores, buffers and condenses every event);
one event per run costs nothing per write.  The event is a table, not a list of objects: each
kind of entry (with its fields) is a *schema*, named once, and each entry is a row of values
(``{"version": 2, "type": "evidence", "schemas": [{"kind", "fields"}], "rows": [[schema,
value, ...]]}``); a third of the size of one object per entry, and a fraction of the objects
to hold until the log is written.  Each entry carries ``time``, the run's clock, so the order
and timing are kept.  ``swarm.records.evidence_entries`` turns the event back into entries;
``swarm.analysis.swarm_evidence`` reads them from a sample.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.log import transcript

from swarm.records import EVIDENCE_TYPE, INFO_SOURCE

__all__ = ["EvidenceLog"]


class EvidenceLog:
    """The entries of one run, in the order they happened, as rows of their schemas."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._schemas: dict[tuple[str, tuple[str, ...]], int] = {}
        self._rows: list[list[Any]] = []
        self.written = False

    def add(self, kind: str, member: str, *, at: float | None = None, **fields: Any) -> None:
        """Add one entry: what happened (``kind``), to whom, now (or ``at``), and its
        ``fields``."""
        key = (kind, tuple(fields))
        schema = self._schemas.get(key)
        if schema is None:
            schema = self._schemas[key] = len(self._schemas)
        self._rows.append([schema, self._clock() if at is None else at, member, *fields.values()])

    def data(self) -> dict[str, Any]:
        """The info event's data."""
        schemas = [
            {"kind": kind, "fields": ["time", "member", *names]} for kind, names in self._schemas
        ]
        return {"version": 2, "type": EVIDENCE_TYPE, "schemas": schemas, "rows": self._rows}

    def write(self) -> None:
        """Write the entries to the transcript as one info event (once; later calls do nothing)."""
        if self.written:
            return
        self.written = True
        transcript().info(self.data(), source=INFO_SOURCE)
