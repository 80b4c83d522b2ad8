"""The run's watchers: its time cap, idleness, and every member waiting.

Each runs as a task of the run's task group and ends when the run stops or every member has
ended (``cancel``).  A watcher decides nothing itself: it tells the run (``WatchedRun``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import anyio

from swarm._run.members import RunMember
from swarm._run.waits import Waits

__all__ = ["WatchedRun", "Watchers", "cancel_after"]


class WatchedRun(Protocol):
    """What the watchers need of the run."""

    stopping: bool

    def now(self) -> float:
        """Seconds since the swarm started."""
        ...

    def idle_since(self) -> float:
        """When something last happened (seconds since the swarm started)."""
        ...

    def stop(self, reason: str) -> None:
        """Stop the swarm with ``reason``."""
        ...

    def quiescent(self, reason: Literal["all_waiting", "idle"], idle: float) -> None:
        """Nothing can change: ask the decision hooks."""
        ...


class Watchers:
    """The watchers of one run."""

    def __init__(self, run: WatchedRun) -> None:
        self._run = run
        self._scopes: list[anyio.CancelScope] = []

    def start(
        self,
        tg: anyio.abc.TaskGroup,
        *,
        time_cap: float | None,
        idle_seconds: float | None,
        waits: Waits | None,
    ) -> None:
        """Start the watchers the run needs."""
        if time_cap is not None:
            tg.start_soon(self._time_cap, time_cap, name="swarm time cap")
        if idle_seconds is not None:
            tg.start_soon(self._idle, idle_seconds, name="swarm idle watch")
        if waits is not None:
            tg.start_soon(self._waits, waits, name="swarm waits watch")

    def cancel(self) -> None:
        """End every watcher."""
        for scope in self._scopes:
            scope.cancel()

    async def _time_cap(self, seconds: float) -> None:
        with anyio.CancelScope() as scope:
            self._scopes.append(scope)
            await anyio.sleep(seconds)
            self._run.stop("swarm_time")

    async def _idle(self, seconds: float) -> None:
        run = self._run
        with anyio.CancelScope() as scope:
            self._scopes.append(scope)
            while not run.stopping:
                await anyio.sleep(max(0.0, run.idle_since() + seconds - run.now()))
                idle = run.now() - run.idle_since()
                if idle >= seconds and not run.stopping:
                    run.quiescent("idle", idle)

    async def _waits(self, waits: Waits) -> None:
        """Every running member's own loop waits: ask the hooks, then release the waits (a stop
        has released them as ``stopping`` already)."""
        run = self._run
        with anyio.CancelScope() as scope:
            self._scopes.append(scope)
            while not run.stopping:
                await waits.everyone_waiting.wait()
                waits.rearm()
                if waits.all_waiting() and not run.stopping:
                    run.quiescent("all_waiting", 0.0)
                    waits.release_all_waiting()


async def cancel_after(
    members: Sequence[RunMember], grace: float, ended: anyio.Event | None = None
) -> None:
    """After ``grace`` seconds, cancel those of ``members`` still running: a stop's last step,
    and a torn-down child's.  It ends as soon as ``ended`` is set (a stop: every member has
    ended) or, without ``ended``, as soon as every one of ``members`` has ended, so a teardown
    holds the run no longer than the members it tears down."""
    with anyio.move_on_after(grace):
        if ended is not None:
            await ended.wait()
        else:
            for m in members:
                if m.state == "running":
                    await m.ended_event().wait()
    for m in members:
        if m.state == "running" and m.scope is not None:
            m.scope.cancel()
