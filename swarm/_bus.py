"""The bus: every write a member makes to a channel, stamped, admitted or rejected, counted.

A channel's tool hands the bus a ``Draft`` and a function that applies it.  The bus stamps the
record from the runtime's own context (sender, member span, acting loop: never from what a model
wrote), asks the admission hook (rate limits, policies), applies it, and commits: a sequence
number, counters, an evidence event with ids only, and wakes the waits the change concerns.
Everything between admission and commit is synchronous, so no other member can interleave.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from inspect_ai.log import transcript
from inspect_ai.tool import ToolError
from inspect_ai.util._span import current_agent_span_id

from swarm._context import _MEMBER, _RUN
from swarm.hookspecs import hookimpl
from swarm.records import INFO_SOURCE, MemberView, SwarmView

if TYPE_CHECKING:
    from swarm._run import SwarmRun

__all__ = [
    "Bus",
    "CommCounts",
    "Draft",
    "Loop",
    "NoticeLine",
    "RateControl",
    "Record",
    "RecordRejected",
    "Rejection",
    "WaitNews",
    "current_bus",
]

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class Loop:
    """An agent loop acting for a member: its own loop, or a subagent's (``nested``)."""

    member: str
    span: str
    nested: bool


@attrs.frozen(kw_only=True)
class Draft:
    """What a channel's tool asks the bus to deliver."""

    channel: str
    kind: str
    payload: str = ""
    op: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Record:
    """A write as the runtime stamped it.  ``seq`` is 0 until committed."""

    id: str
    channel: str
    kind: str
    sender: str
    loop: str
    nested: bool
    size: int
    op: dict[str, Any]
    time: float
    seq: int = 0


@attrs.frozen(kw_only=True)
class Rejection:
    """Why a write was refused: the control that refused it, and a reason the model reads."""

    control: str
    reason: str


class RecordRejected(Exception):
    """Raised by a channel while applying a record it refuses (a bound, a stale view...)."""

    def __init__(self, control: str, reason: str) -> None:
        super().__init__(reason)
        self.control = control
        self.reason = reason


@attrs.frozen(kw_only=True)
class NoticeLine:
    """One channel's line in a member's notice, with the ids it names (for evidence)."""

    channel: str
    text: str
    ids: tuple[dict[str, Any], ...] = ()


@attrs.frozen(kw_only=True)
class WaitNews:
    """What a channel reports to a waiting loop: lines to show, and the ids they name."""

    channel: str
    text: str
    ids: tuple[dict[str, Any], ...] = ()


@attrs.define
class CommCounts:
    """One member's activity on one channel."""

    records: int = 0
    record_bytes: int = 0
    rejections: dict[str, int] = attrs.field(factory=dict)
    reads: int = 0
    listings: int = 0
    notices: int = 0


class RateControl:
    """The kernel's rate control: at most ``count`` committed records per sender per channel in
    any sliding window of ``seconds``.  Configured by a channel's ``rate`` attribute."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus
        self._windows: dict[tuple[str, str], collections.deque[float]] = {}

    @hookimpl
    def swarm_admit_record(self, view: SwarmView, record: Record) -> Rejection | None:
        rate = self._bus.rates.get(record.channel)
        if rate is None:
            return None
        count, seconds = rate
        window = self._windows.setdefault((record.channel, record.sender), collections.deque())
        now = self._bus.now()
        while window and window[0] <= now - seconds:
            window.popleft()
        if len(window) >= count:
            retry = max(1, int(window[0] + seconds - now + 0.999))
            return Rejection(control="rate", reason=f"rate limit: retry in {retry} s")
        return None

    def committed(self, record: Record) -> None:
        """Count a committed record in its sender's window."""
        if record.channel in self._bus.rates:
            window = self._windows.setdefault((record.channel, record.sender), collections.deque())
            window.append(self._bus.now())


class Bus:
    """One run's bus.  Reached from a channel's tool with ``current_bus()``."""

    def __init__(self, run: SwarmRun, channels: Iterable[tuple[str, object]]) -> None:
        self._run = run
        self.channels = dict(channels)
        self.rates: dict[str, tuple[int, float]] = {}
        self.max_wait: float | None = None
        for name, channel in self.channels.items():
            rate = getattr(channel, "rate", None)
            if rate is not None:
                self.rates[name] = (int(rate[0]), float(rate[1]))
            wait = getattr(channel, "max_wait", None)
            if wait is not None:
                self.max_wait = max(self.max_wait or 0.0, float(wait))
        self.rate_control = RateControl(self)
        self.closed = False
        self.seq = 0
        self._ids: dict[str, int] = {}
        self.counts: dict[tuple[str, str], CommCounts] = {}
        self.commits: list[tuple[float, str]] = []
        self._notices = 0
        self._changed: list[Callable[[Record], None]] = []

    @property
    def recording_channels(self) -> list[str]:
        """Channels whose writes go through the bus (they have a ``prefix``)."""
        return [n for n, c in self.channels.items() if getattr(c, "prefix", None)]

    def resolve(self, channel: str) -> str:
        """The run's name for ``channel``: as given, or a third-party channel by its short
        name (a channel does not need to know the distribution prefix it is registered under).
        """
        if channel in self.channels:
            return channel
        matches = [n for n in self.channels if n.rsplit("/", 1)[-1] == channel]
        if len(matches) == 1:
            return matches[0]
        raise ToolError(f"there is no channel {channel!r} in this swarm")

    def counts_for(self, member: str, channel: str) -> CommCounts:
        """The activity counters of ``member`` on ``channel``."""
        key = (member, self.resolve(channel))
        found = self.counts.get(key)
        if found is None:
            found = self.counts[key] = CommCounts()
        return found

    def now(self) -> float:
        """The run's clock (seconds since the swarm started)."""
        return self._run.now()

    def on_commit(self, listener: Callable[[Record], None]) -> None:
        """Call ``listener`` after every committed record (the waits use this)."""
        self._changed.append(listener)

    def acting_loop(self) -> Loop:
        """The member and loop the calling task acts for; ``ToolError`` outside a member."""
        member = _MEMBER.get()
        if member is None or _RUN.get() is not self._run:
            raise ToolError("only a member of this swarm can use its channels")
        span = current_agent_span_id() or ""
        own = self._run.own_loop(member.name)
        return Loop(member=member.name, span=span, nested=own is not None and own != span)

    def member_view(self, name: str) -> MemberView:
        """The view of member ``name`` now."""
        return self._run.member_view(name)

    def _next_id(self, channel: str) -> str:
        prefix = getattr(self.channels.get(channel), "prefix", None) or channel
        n = self._ids.get(prefix, 0) + 1
        self._ids[prefix] = n
        return f"{prefix}-{n}"

    def deliver(self, draft: Draft, apply: Callable[[Record], T]) -> tuple[Record, T]:
        """Stamp, admit, apply and commit a write; ``ToolError`` with the reason if refused.

        ``apply`` performs the channel's change; it may raise ``RecordRejected``.  Nothing is
        awaited between admission and commit.
        """
        loop = self.acting_loop()
        draft = attrs.evolve(draft, channel=self.resolve(draft.channel))
        if self.closed:
            raise ToolError("the swarm is stopping; nothing more is delivered.")
        view = self._run.member_view(loop.member)
        if view.state != "running":
            raise ToolError(f"{loop.member} has ended.")
        bad_text = _invalid_text(draft)
        record = Record(
            id=self._next_id(draft.channel),
            channel=draft.channel,
            kind=draft.kind,
            sender=loop.member,
            loop=loop.span,
            nested=loop.nested,
            size=len(draft.payload.encode("utf-8", errors="surrogatepass")),
            op=draft.op if bad_text is None else _escaped(draft.op),
            time=self._run.now(),
        )
        counts = self.counts_for(loop.member, draft.channel)
        if bad_text is not None:
            # refused before any plugin sees it: text that is not valid Unicode (a lone
            # surrogate) can be neither stored nor written to the log as JSON
            rejection: Rejection | None = Rejection(
                control="invalid",
                reason=f"{bad_text} contains a character that is not valid Unicode (a lone "
                "surrogate); nothing was written",
            )
        else:
            rejection = self._run.hooks.admit_record(self._run.view(), record)
        if rejection is None:
            try:
                result = apply(record)
            except RecordRejected as ex:
                rejection = Rejection(control=ex.control, reason=ex.reason)
        if rejection is not None:
            counts.rejections[rejection.control] = counts.rejections.get(rejection.control, 0) + 1
            self._evidence(
                "sent",
                loop,
                record,
                rejected={"control": rejection.control, "reason": rejection.reason},
            )
            raise ToolError(rejection.reason)
        self.seq += 1
        record = attrs.evolve(record, seq=self.seq)
        self.rate_control.committed(record)
        counts.records += 1
        counts.record_bytes += record.size
        self.commits.append((record.time, record.loop))
        self._evidence("delivered", loop, record)
        self._run.activity()
        self._run.hooks.record_delivered(self._run.view(), record)
        for listener in self._changed:
            listener(record)
        return record, result

    def note_read(self, channel: str, *, listing: bool, files: list[dict[str, Any]]) -> None:
        """Count a view (``listing`` for a directory) and record it as evidence, ids only."""
        loop = self.acting_loop()
        counts = self.counts_for(loop.member, channel)
        if listing:
            counts.listings += 1
        else:
            counts.reads += 1
        data: dict[str, Any] = {
            "version": 1,
            "type": "comm",
            "kind": "read",
            "member": loop.member,
            "loop": loop.span,
            "nested": loop.nested,
            "channel": channel,
            "listing": listing,
            "files": files,
        }
        transcript().info(data, source=INFO_SOURCE)

    def _evidence(
        self, kind: str, loop: Loop, record: Record, rejected: dict[str, str] | None = None
    ) -> None:
        data: dict[str, Any] = {
            "version": 1,
            "type": "comm",
            "kind": kind,
            "member": loop.member,
            "loop": loop.span,
            "nested": loop.nested,
            "channel": record.channel,
            "record": record.id,
            "record_kind": record.kind,
            "seq": record.seq or None,
            "size": record.size,
            "op": record.op,
            "rejected": rejected,
        }
        transcript().info(data, source=INFO_SOURCE)

    def notice(self, member: str, span: str, lines: list[NoticeLine]) -> tuple[str, dict[str, Any]]:
        """A member's notice from the channels' lines: its text and message metadata, counted
        per channel and recorded as ``notified`` evidence (ids only)."""
        self._notices += 1
        notice_id = f"n-{self._notices}"
        for line in lines:
            channel = self.resolve(line.channel)
            self.counts_for(member, channel).notices += 1
            data: dict[str, Any] = {
                "version": 1,
                "type": "comm",
                "kind": "notified",
                "member": member,
                "loop": span,
                "nested": False,
                "channel": channel,
                "notice": notice_id,
                "ids": list(line.ids),
            }
            transcript().info(data, source=INFO_SOURCE)
        text = "[Swarm notice] " + " ".join(line.text for line in lines)
        metadata = {
            "version": 1,
            "type": "notice",
            "id": notice_id,
            "lines": [{"channel": line.channel, "ids": list(line.ids)} for line in lines],
        }
        return text, metadata

    def close(self) -> None:
        """Refuse every later write (the swarm is stopping)."""
        self.closed = True


def _is_valid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _invalid_text(draft: Draft) -> str | None:
    """Which part of a draft holds text that is not valid Unicode, or ``None``."""
    if not _is_valid_text(draft.payload):
        return "the text"
    for key, value in draft.op.items():
        if isinstance(value, str) and not _is_valid_text(value):
            return f"{key!r}"
    return None


def _escaped(op: dict[str, Any]) -> dict[str, Any]:
    """``op`` with lone surrogates escaped, for the evidence of a refused write."""
    return {
        k: v.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(v, str) else v
        for k, v in op.items()
    }


def current_bus() -> Bus | None:
    """The bus of the swarm run the calling task belongs to, or ``None`` outside a swarm."""
    run = _RUN.get()
    return None if run is None else run.bus
