"""The bus: every write a member makes to a channel, stamped, admitted or rejected, counted.

A channel's tool hands the bus a ``Draft`` and a function that applies it.  The bus stamps the
record from the runtime's own context (sender, member span, acting loop: never from what a model
wrote), asks the admission hook (rate limits, policies), applies it, and commits: a sequence
number, counters, an evidence entry with ids only, and wakes the waits the change concerns.
Everything between admission and commit is synchronous, so no other member can interleave.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

import attrs
from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolError

from swarm._hooks.calls import RunHooks
from swarm._inspect.private import current_agent_span_id, tool_output_limit
from swarm._report.counters import CommCounts
from swarm._run.evidence import EvidenceLog
from swarm._run.identity import background_context, member_context
from swarm._run.ports import RunPort
from swarm.errors import RecordRejected
from swarm.hookspecs import hookimpl
from swarm.records import (
    INFO_SOURCE,
    NOTICE_PREFIX,
    NOTICE_SEPARATOR,
    Draft,
    Loop,
    MemberView,
    NoticeLine,
    Record,
    Rejection,
    SwarmView,
)

__all__ = ["Bus", "ChannelSettings", "RateControl", "bus_context", "current_bus"]

bus_context: ContextVar[Bus | None] = ContextVar("swarm_bus", default=None)

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class ChannelSettings:
    """What the kernel reads from a run's channel objects: each one's ``rate`` and the longest
    ``max_wait`` (``None``: no channel can wake members, so there is no ``swarm_wait``)."""

    rates: dict[str, tuple[int, float]]
    max_wait: float | None

    @classmethod
    def of(cls, channels: Iterable[tuple[str, object]]) -> ChannelSettings:
        """The settings of ``channels`` (name, channel object)."""
        rates: dict[str, tuple[int, float]] = {}
        max_wait: float | None = None
        for name, channel in channels:
            rate = getattr(channel, "rate", None)
            if rate is not None:
                rates[name] = (int(rate[0]), float(rate[1]))
            wait = getattr(channel, "max_wait", None)
            if wait is not None:
                max_wait = max(max_wait or 0.0, float(wait))
        return cls(rates=rates, max_wait=max_wait)


class RateControl:
    """The kernel's rate control: at most ``count`` committed records per sender per channel in
    any sliding window of ``seconds``.  Configured by a channel's ``rate`` attribute."""

    def __init__(self, rates: dict[str, tuple[int, float]], now: Callable[[], float]) -> None:
        self.rates = rates
        self._now = now
        self._windows: dict[tuple[str, str], collections.deque[float]] = {}

    @hookimpl
    def swarm_admit_record(self, view: SwarmView, record: Record) -> Rejection | None:
        rate = self.rates.get(record.channel)
        if rate is None:
            return None
        count, seconds = rate
        window = self._windows.setdefault((record.channel, record.sender), collections.deque())
        now = self._now()
        while window and window[0] <= now - seconds:
            window.popleft()
        if len(window) >= count:
            retry = max(1, int(window[0] + seconds - now + 0.999))
            return Rejection(control="rate", reason=f"rate limit: retry in {retry} s")
        return None

    def committed(self, record: Record) -> None:
        """Count a committed record in its sender's window."""
        if record.channel in self.rates:
            window = self._windows.setdefault((record.channel, record.sender), collections.deque())
            window.append(self._now())


class Bus:
    """One run's bus.  Reached from a channel's tool with ``current_bus()``."""

    def __init__(
        self,
        port: RunPort,
        hooks: RunHooks,
        channels: Iterable[tuple[str, object]],
        rate_control: RateControl,
    ) -> None:
        self._port = port
        self._hooks = hooks
        self.channels = dict(channels)
        self.rate_control = rate_control
        self.closed = False
        self.seq = 0
        self._ids: dict[str, int] = {}
        self.counts: dict[tuple[str, str], CommCounts] = {}
        self.commits: list[tuple[float, str]] = []
        self._notices = 0
        # per member: tool results and notices not yet in a model input that was sent
        self._shown: dict[str, dict[str, list[Callable[[float], None]]]] = {}
        # member -> notice id -> (what to do when it is sent, its text)
        self._unsent: dict[str, dict[str, tuple[Callable[[float], None], str]]] = {}
        self._changed: list[Callable[[Record], None]] = []
        self._calls: dict[str, int] = {}  # member -> its model calls sent so far
        self.evidence = EvidenceLog(port.now)

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
        return self._port.now()

    def on_commit(self, listener: Callable[[Record], None]) -> None:
        """Call ``listener`` after every committed record (the waits use this)."""
        self._changed.append(listener)

    def acting_loop(self) -> Loop:
        """The member and loop the calling task acts for; ``ToolError`` outside a member."""
        member = member_context.get()
        if member is None or bus_context.get() is not self:
            raise ToolError("only a member of this swarm can use its channels")
        span = current_agent_span_id() or ""
        own = self._port.own_loop(member.name)
        nested = background_context.get() or (own is not None and own != span)
        return Loop(member=member.name, span=span, nested=nested)

    def member_view(self, name: str) -> MemberView:
        """The view of member ``name`` now."""
        return self._port.member_view(name)

    def view(self) -> SwarmView:
        """A frozen snapshot of the run now (who spawned whom, who is running)."""
        return self._port.view()

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
        view = self._port.member_view(loop.member)
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
            time=self._port.now(),
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
            rejection = self._hooks.admit_record(self._port.view(), record)
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
        self._port.activity()
        self._hooks.record_delivered(self._port.view(), record)
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
        self.evidence.add(
            "read",
            loop.member,
            loop=loop.span,
            nested=loop.nested,
            channel=channel,
            listing=listing,
            files=files,
        )

    def _evidence(
        self, kind: str, loop: Loop, record: Record, rejected: dict[str, str] | None = None
    ) -> None:
        self.evidence.add(
            kind,
            loop.member,
            loop=loop.span,
            nested=loop.nested,
            channel=record.channel,
            record=record.id,
            record_kind=record.kind,
            seq=record.seq or None,
            size=record.size,
            op=record.op,
            rejected=rejected,
        )

    def notice(self, member: str, span: str, lines: list[NoticeLine]) -> tuple[str, dict[str, Any]]:
        """A member's notice from the channels' lines: its text and message metadata.

        It counts (per channel), is recorded as ``notified`` evidence (ids only) and calls each
        line's ``seen`` only when the member's model call whose input holds it is sent
        (``sending``); a notice no call carries never does.
        """
        self._notices += 1
        notice_id = f"n-{self._notices}"

        def sent(time: float) -> None:
            for line in lines:
                channel = self.resolve(line.channel)
                self.counts_for(member, channel).notices += 1
                self.evidence.add(
                    "notified",
                    member,
                    at=time,
                    loop=span,
                    nested=False,
                    channel=channel,
                    notice=notice_id,
                    ids=list(line.ids),
                )
            for line in lines:
                if line.seen is not None:
                    line.seen(time)

        text = NOTICE_PREFIX + " ".join(line.text for line in lines)
        self._unsent.setdefault(member, {})[notice_id] = (sent, text)
        metadata = {
            "version": 1,
            "type": "notice",
            "id": notice_id,
            "lines": [{"channel": line.channel, "ids": list(line.ids)} for line in lines],
        }
        return text, metadata

    # -- what reached a model ------------------------------------------------------------------

    def output_limit(self) -> int | None:
        """The most UTF-8 bytes a tool result reaches the model whole (Inspect truncates a
        longer one): the sample's ``max_tool_output``, 16 KiB by default; ``None``: no limit.
        A channel pages what it shows to fit, so nothing it marks seen was cut."""
        return tool_output_limit()

    def when_sent(self, text: str, seen: Callable[[float], None]) -> str:
        """Return ``text``, a tool result of the calling member's, and call ``seen(time)`` when
        the first model call of that member whose input holds it (a tool message of exactly
        this text) is sent; never, if no call that is sent holds it (the member ends first, or
        its next call is refused because the swarm is stopping or it is torn down)."""
        loop = self.acting_loop()
        self._shown.setdefault(loop.member, {}).setdefault(text, []).append(seen)
        return text

    def calls_sent(self, member: str) -> int:
        """How many of ``member``'s model calls have been sent so far (0 before its first).
        Inside a call's ``seen`` callbacks it is that call's number; while a call's tools run,
        the number of the call that asked for them."""
        return self._calls.get(member, 0)

    def sending(self, member: str, messages: Sequence[ChatMessage]) -> None:
        """``member``'s model call with input ``messages`` is being sent (it passed the run's
        refusal): the tool results (``when_sent``) and notices it holds are seen now.

        A notice is a user message, or rides at the end of a tool result (``NOTICE_SEPARATOR``
        and its text); either way its message metadata names it.  What is still unseen was
        added since the member's last call, so the input is read from its end and only until
        nothing is left unseen: O(what is new) per call, not O(conversation).  Every match is
        called with the same ``now``, so the order of reading changes nothing.  The call is
        counted first (``calls_sent``), so what it carries is seen in this call's number."""
        self._calls[member] = self._calls.get(member, 0) + 1
        shown = self._shown.get(member)
        unsent = self._unsent.get(member)
        if not shown and not unsent:
            return
        now = self.now()
        for message in reversed(messages):
            rider = ""  # the notice text a tool result carries
            if unsent and message.metadata and message.role in ("user", "tool"):
                meta = message.metadata.get(INFO_SOURCE)
                if isinstance(meta, dict) and meta.get("type") == "notice":
                    found = unsent.pop(str(meta.get("id")), None)
                    if found is not None:
                        sent, rider = found
                        sent(now)
            if message.role == "tool" and shown:
                text = message.text
                if rider:
                    text = text.removesuffix(NOTICE_SEPARATOR + rider)
                for seen in shown.pop(text, ()):
                    seen(now)
            if not shown and not unsent:
                break

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
    return bus_context.get()
