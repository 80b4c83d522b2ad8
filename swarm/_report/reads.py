"""The ``inspect_swarm:reads`` record: which member's sandbox tools touched which files, as the
runtime itself saw it (the host kernel's file events on each member's sandbox directory, never
an agent's word).

``entries`` are in the order the runtime saw them: ``seq``, ``time`` (seconds since the swarm
started, the clock of every other record: when the runtime collected the event, at the latest
when the member's command ended), ``member``, ``sandbox`` (the environment the file is in: a
member's own name or its ``share`` group's first name), ``path`` (relative to that
environment's working directory), ``op`` (``open``, ``read``, ``write``; ``overflow``: the
kernel dropped events, so the record is incomplete) and ``call``: how many of the member's model
calls had been sent when the event was collected, so the number of the call whose tools made it
(``None`` for an event of no member's).  ``members`` says for each member which
environment it worked in and which sample files it received; ``provider`` is the sandbox
provider; ``watched`` whether file events could be observed at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = ["ReadEntry", "ReadsTaken", "build_reads"]


@attrs.frozen(kw_only=True)
class ReadEntry:
    """One file event of one member."""

    seq: int
    time: float
    member: str
    sandbox: str
    path: str
    op: str
    call: int | None = None


@attrs.frozen(kw_only=True)
class ReadsTaken:
    """What the member sandboxes saw in one run."""

    provider: str | None
    watched: bool
    members: Mapping[str, Mapping[str, Any]]
    entries: Sequence[ReadEntry]


def build_reads(taken: ReadsTaken) -> dict[str, Any]:
    """The reads record (version 1)."""
    return {
        "version": 1,
        "provider": taken.provider,
        "watched": taken.watched,
        "members": {name: dict(info) for name, info in taken.members.items()},
        "entries": [attrs.asdict(e) for e in taken.entries],
    }
