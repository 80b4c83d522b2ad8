"""The intermediate model of a timeline: one sample's swarm as lanes of timed marks.

Frozen values only, built by ``_extract`` from a log sample and drawn by ``_svg``/``_html``.
Every time is in seconds since the swarm started (the clock of the swarm's own records).
A point in time (a write, a notice) has ``start == end``.
"""

from __future__ import annotations

import attrs

__all__ = [
    "ChannelWrite",
    "FindingMark",
    "Lane",
    "Mark",
    "Message",
    "ModelCall",
    "Notice",
    "RunTimeline",
    "SpawnMark",
    "Stop",
    "ToolCall",
    "Wait",
]


@attrs.frozen(kw_only=True)
class ModelCall:
    """One model call a member (or one of its subagents: ``nested``) made.

    Inspect records no end for a call that failed or was cancelled (``end_recorded`` false):
    it is taken to last until its loop's next event, or its member's end.  ``working`` is
    Inspect's working time of the call (``ModelEvent.working_time``): the model's own time,
    without waiting for a connection slot, a retry's backoff or the run's first call's one-time
    setup, which come before it (``model_start``).
    """

    start: float
    end: float
    nested: bool = False
    model: str = ""
    tokens: int | None = None
    cached: bool = False
    error: str | None = None
    end_recorded: bool = True
    working: float | None = None

    @property
    def model_start(self) -> float:
        """When the model's own time began, as drawn: the recorded end less the working time
        (never before the start); the start when either is unknown."""
        if self.working is None or not self.end_recorded:
            return self.start
        return min(self.end, max(self.start, self.end - self.working))


@attrs.frozen(kw_only=True)
class ToolCall:
    """One tool call: ``function`` is the tool's name."""

    start: float
    end: float
    function: str
    nested: bool = False
    error: str | None = None


@attrs.frozen(kw_only=True)
class ChannelWrite:
    """A write to a channel: delivered (``rejected is None``) or refused by a control."""

    start: float
    end: float
    channel: str
    record: str
    kind: str = ""
    size: int = 0
    path: str | None = None
    seq: int | None = None
    nested: bool = False
    rejected: str | None = None
    reason: str | None = None


@attrs.frozen(kw_only=True)
class Wait:
    """A ``swarm_wait``: from when it began to when it ended, and what ended it."""

    start: float
    end: float
    wait: str
    outcome: str
    path: str | None = None
    nested: bool = False


@attrs.frozen(kw_only=True)
class Notice:
    """A notice the member got at a turn boundary, with the channels that had news."""

    start: float
    end: float
    notice: str
    channels: tuple[str, ...] = ()
    ids: int = 0


@attrs.frozen(kw_only=True)
class SpawnMark:
    """A spawn request made by this lane's member: admitted (``child`` set) or refused."""

    start: float
    end: float
    requested: str
    child: str | None = None
    refused: str | None = None


Mark = ModelCall | ToolCall | ChannelWrite | Wait | Notice | SpawnMark
"""Anything drawn along a lane."""


@attrs.frozen(kw_only=True)
class Lane:
    """One member: its life, its status and everything it did, in time order per kind."""

    name: str
    role: str | None
    state: str
    status: str | None
    started: float | None
    ended: float | None
    parent: str | None = None
    depth: int = 0
    error: str | None = None
    answer: bool = False
    model_calls: tuple[ModelCall, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    writes: tuple[ChannelWrite, ...] = ()
    waits: tuple[Wait, ...] = ()
    notices: tuple[Notice, ...] = ()
    spawns: tuple[SpawnMark, ...] = ()
    task: str | None = None
    """For a spawned member, the task its parent gave it (the spawn ledger's ``task``)."""

    @property
    def label(self) -> str:
        """What the lane says of how the member ended: its status, or its state."""
        return self.status or self.state


@attrs.frozen(kw_only=True)
class Message:
    """A message between two members, from the swarm's message log (when it has one)."""

    time: float
    sender: str
    recipient: str
    kind: str = "message"
    seq: int | None = None


@attrs.frozen(kw_only=True)
class Stop:
    """Why the swarm stopped and when.

    The records give the reason but not the moment; ``basis`` says what ``time`` was read
    from (``first submission``, ``a wait the stop released``...).
    """

    reason: str
    time: float
    basis: str


@attrs.frozen(kw_only=True)
class FindingMark:
    """A failure the diagnosis found (``swarm.diagnosis``), marked on its member's lane:
    ``check``, its MAST ``mode``, ``why``; ``time`` is ``None`` when no record times it."""

    member: str
    time: float | None
    check: str
    mode: str
    why: str


@attrs.frozen(kw_only=True)
class RunTimeline:
    """One sample's swarm: its lanes in display order (children under their parent)."""

    sample_id: str
    epoch: int
    duration: float
    lanes: tuple[Lane, ...]
    stop: Stop | None = None
    answer: str | None = None
    answer_mode: str | None = None
    messages: tuple[Message, ...] = ()
    task: str | None = None
    error: str | None = None
    critical: tuple[tuple[str, int], ...] = ()
    """The diagnosis's critical path: (member, n), the member's n-th model call (from 1) in the
    order its lane lists them; empty when the diagnosis could not read the sample."""
    findings: tuple[FindingMark, ...] = ()

    def lane(self, name: str) -> Lane:
        """The lane of member ``name`` (``KeyError`` if there is none)."""
        for lane in self.lanes:
            if lane.name == name:
                return lane
        raise KeyError(name)
