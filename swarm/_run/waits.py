"""``swarm_wait``: a member sleeps until something it watches changes, and why it woke.

Outcomes: ``news`` (a watched change by another loop, or another member ended), ``all_waiting``
(every running member's own loop is waiting, so nothing can change), ``stopping`` (the swarm
began its stop), ``timeout``; ``cancelled`` is recorded when a wait is cancelled.  A wait the
channels refuse (a path outside the grammar, an unknown file id: a tool error) is no wait and is
not counted.  A change wakes only the waits it concerns: the bus calls ``changed`` once per
committed record and each wait asks the channels whether the record is news to its loop.
"""

from __future__ import annotations

from contextvars import ContextVar

import anyio
from inspect_ai.tool import ToolError

from swarm._hooks.calls import RunHooks
from swarm._report.counters import WaitCounts
from swarm._run.bus import Bus
from swarm._run.ports import RunPort
from swarm.records import Record, WaitNews

__all__ = ["OUTCOMES", "Waits", "clamped_timeout", "waits_context"]

OUTCOMES = ("news", "all_waiting", "stopping", "member_ending", "timeout", "cancelled")

waits_context: ContextVar[Waits | None] = ContextVar("swarm_waits", default=None)


def clamped_timeout(timeout: float, longest: float) -> float:
    """A model's ``timeout`` within [1, ``longest``] seconds: a negative one (or NaN, which the
    tools refuse before) waits the shortest time, never the longest."""
    return min(float(timeout), longest) if timeout >= 1.0 else 1.0


class _Waiter:
    """One wait of one loop: what it watches, the event that wakes it (armed before each
    sleep) and whether the release that woke it found every member waiting."""

    __slots__ = ("event", "everyone_waits", "idle", "idle_from", "loop", "member", "own", "path")

    def __init__(self, member: str, loop: str, own: bool, path: str | None) -> None:
        self.member = member
        self.loop = loop
        self.own = own
        self.path = path
        self.event: anyio.Event
        self.everyone_waits: bool
        # the idle clock of an own loop's wait: seconds so far, and since when it runs (it
        # stops while the member's background work runs)
        self.idle = 0.0
        self.idle_from: float | None = None

    def idle_clock(self, running: bool, now: float) -> None:
        """Start (``running``) or stop the idle clock at ``now``."""
        if running and self.idle_from is None:
            self.idle_from = now
        elif not running and self.idle_from is not None:
            self.idle += now - self.idle_from
            self.idle_from = None

    def arm(self) -> None:
        """Ready for a sleep: a fresh event (``everyone_waits`` is read only once it is set)."""
        self.event = anyio.Event()

    def release(self, everyone_waits: bool) -> None:
        """Wake the wait; the first release says why."""
        if not self.event.is_set():
            self.everyone_waits = everyone_waits
        self.event.set()


class Waits:
    """Every wait in progress in one run.

    When every running member's own loop is waiting, ``everyone_waiting`` is set: the run
    watches it, asks its decision hooks and then releases the waits (``release_all_waiting``),
    so no decision is taken from inside a wait.  ``max_wait`` is the longest wait (the run's
    channels' largest ``max_wait``, a positive number of seconds).
    """

    def __init__(self, port: RunPort, bus: Bus, hooks: RunHooks, max_wait: float) -> None:
        self._port = port
        self._max_wait = max_wait
        self._hooks = hooks
        self._bus = bus
        self.everyone_waiting = anyio.Event()
        self._waiters: dict[str, _Waiter] = {}
        self._told_ends: dict[str, set[str]] = {}
        self._ended: list[tuple[str, str]] = []
        # members whose own loop sleeps in a wait now: "everyone waits" is a count, not a scan
        self._sleeping: set[str] = set()
        # members with background work running (never waiting, never idle), and those whose
        # own agent has returned while that work drains
        self._busy: set[str] = set()
        self._ending: set[str] = set()
        self._own: dict[str, _Waiter] = {}  # each member's own loop's wait in progress
        self.counts: dict[str, WaitCounts] = {}
        self._ids = 0
        bus.on_commit(self.changed)

    # -- what wakes a wait ---------------------------------------------------------------------

    def _news(self, w: _Waiter) -> tuple[list[WaitNews], list[tuple[str, str]]]:
        view = self._port.view()
        found = self._hooks.wait_news(view, self._bus.member_view(w.member), w.loop, w.path)
        told = self._told_ends.get(w.loop, set())
        ends = [
            (name, status) for name, status in self._ended if name != w.member and name not in told
        ]
        return found, ends

    def _release(self, w: _Waiter, everyone_waits: bool = False) -> None:
        w.release(everyone_waits)
        if w.own:
            self._sleeping.discard(w.member)

    def changed(self, record: Record) -> None:
        """A record was committed: wake the waits it is news to."""
        for w in list(self._waiters.values()):
            if w.loop != record.loop and self._news(w)[0]:
                self._release(w)

    def member_ended(self, name: str, status: str) -> None:
        """A member ended: that is news to every wait (none is the ended member's own: its
        waits ended with its agent); it may leave all others waiting."""
        self._ended.append((name, status))
        for w in list(self._waiters.values()):
            self._release(w)
        self._check_all_waiting()

    def stopping(self) -> None:
        """The swarm began its stop: release every wait (the bus is closed already, so each
        finds that and ends ``stopping``)."""
        for w in list(self._waiters.values()):
            self._release(w)

    def busy(self, member: str, busy: bool) -> None:
        """``member`` now has background work running (``busy``) or none: its own wait's idle
        clock stops or runs again, and it counts as waiting only with none."""
        if busy:
            self._busy.add(member)
        else:
            self._busy.discard(member)
        w = self._own.get(member)
        if w is not None:
            w.idle_clock(not busy, self._port.now())
        if not busy:
            self._check_all_waiting()

    def ending(self, member: str) -> None:
        """``member``'s own agent has returned while its background work runs: that work's
        waits end ``member_ending``."""
        self._ending.add(member)
        for w in list(self._waiters.values()):
            if w.member == member:
                self._release(w)

    def waiting(self, member: str) -> bool:
        """Whether ``member``'s own loop is in a wait now."""
        return member in self._sleeping

    def all_waiting(self) -> bool:
        """Whether every running member's own loop is waiting now."""
        running = self._port.running()
        waiting = self._sleeping - self._busy if self._busy else self._sleeping
        return bool(running) and len(waiting) >= running

    def _check_all_waiting(self) -> None:
        if self.all_waiting():
            self.everyone_waiting.set()

    def rearm(self) -> None:
        """A fresh ``everyone_waiting`` (the run took in the last one)."""
        self.everyone_waiting = anyio.Event()

    def release_all_waiting(self) -> None:
        """Every running member's own loop waits (the run has asked its decision hooks):
        release every wait with ``all_waiting``."""
        for w in list(self._waiters.values()):
            self._release(w, everyone_waits=True)

    # -- the tool body -------------------------------------------------------------------------

    async def wait(self, path: str | None, timeout: float | None) -> str:
        """Run one ``swarm_wait`` call for the calling loop and return what the model reads."""
        loop = self._bus.acting_loop()
        max_wait = self._max_wait
        effective = max_wait if timeout is None else clamped_timeout(timeout, max_wait)
        own = not loop.nested
        if own and self.waiting(loop.member):
            raise ToolError(f"{loop.member} is already waiting: one wait at a time.")
        self._ids += 1
        wait_id = f"x-{self._ids}"
        waiter = _Waiter(loop.member, loop.span, own, path)
        started = self._port.now()
        outcome = "cancelled"  # unless the wait ends below (a hard stop, a member time limit...)
        found: str  # each is set by the first look, before anything reads it
        news: list[WaitNews]
        ends: list[tuple[str, str]]
        key = f"{loop.span}#{wait_id}"
        if own:
            self._own[loop.member] = waiter
            waiter.idle_clock(loop.member not in self._busy, started)
        try:
            with anyio.move_on_after(effective):
                while True:
                    found, news, ends = self._outcome(waiter)
                    if found:
                        break
                    waiter.arm()
                    self._waiters[key] = waiter
                    if own:
                        self._sleeping.add(waiter.member)
                        self._check_all_waiting()
                    await waiter.event.wait()
                    if waiter.everyone_waits:
                        found = "all_waiting"
                        news, ends = self._news(waiter)
                        break
                    # any other release (news, a member ended, the stop): look again
            outcome = found or "timeout"
        except ToolError:  # the channel refused what was asked (a bad path): no wait happened
            outcome = ""
            raise
        finally:
            self._waiters.pop(key, None)
            ended = self._port.now()
            if own:
                self._sleeping.discard(waiter.member)
                self._own.pop(waiter.member, None)
                waiter.idle_clock(False, ended)
            duration = ended - started
            if outcome:
                times = (duration, waiter.idle)
                self._record(wait_id, loop.member, own, path, effective, timeout, times, outcome)
        return self._text(outcome, news, ends, waiter, effective)

    def _outcome(self, w: _Waiter) -> tuple[str, list[WaitNews], list[tuple[str, str]]]:
        if self._bus.closed:
            return "stopping", [], []
        if w.member in self._ending:
            return "member_ending", [], []
        news, ends = self._news(w)
        if news or ends:
            return "news", news, ends
        return "", [], []

    def _text(
        self,
        outcome: str,
        news: list[WaitNews],
        ends: list[tuple[str, str]],
        w: _Waiter,
        effective: float,
    ) -> str:
        if ends:
            self._told_ends.setdefault(w.loop, set()).update(name for name, _ in ends)
        lines = [n.text for n in news] + [f"{name} ended ({status})." for name, status in ends]
        if outcome == "stopping":
            return "The swarm is stopping."
        if outcome == "member_ending":
            return f"{w.member} is ending: its own agent has finished."
        if outcome == "all_waiting":
            return " ".join(
                [
                    *lines,
                    "Nothing can change: every member is waiting, has ended or has not started.",
                ]
            )
        if outcome == "timeout":
            return f"Nothing you waited for happened in {effective:g} s."
        return " ".join(lines)

    def _record(
        self,
        wait_id: str,
        member: str,
        own: bool,
        path: str | None,
        effective: float,
        requested: float | None,
        times: tuple[float, float],
        outcome: str,
    ) -> None:
        duration, idle = times  # the wait's seconds, and those it was idle
        counts = self.counts.setdefault(member, WaitCounts())
        counts.waits += 1
        counts.by_outcome[outcome] = counts.by_outcome.get(outcome, 0) + 1
        counts.wait_time += duration
        counts.idle_time += idle
        self._bus.evidence.add(
            "waited",
            member,
            wait=wait_id,
            nested=not own,
            path=path,
            timeout={"requested": requested, "effective": effective},
            duration=duration,
            idle=idle,
            outcome=outcome,
        )
