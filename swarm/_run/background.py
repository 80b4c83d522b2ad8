"""A member's background work: what it starts with Inspect's ``background()``.

Inspect 0.3.285's ``background()`` starts work in the sample's task group, where it runs until
the sample ends, unless its private ``background_target`` context variable names a target
(``deepagent``'s background subagents honour the target too).  Each member's task installs a
``BackgroundOwner`` as that target, so the member owns its background work:

- it runs in a task group inside the member's task, with the member's context (its name, usage
  tap, limits, span, sandbox): its model calls are metered and capped as the member's;
- when the member's agent returns, the work gets the grace to finish (the member's waits end
  ``member_ending``), then is cancelled; a stop or teardown that cancels the member cancels it;
- a limit error out of the work (the member's own limit, a cap, the swarm's stop) ends only the
  task that raised it; any other error cancels the member's agent and the member ends
  ``errored`` (a plugin's fault or a sample limit ends the run, as from the agent itself).

The owner counts what it started and what it cancelled unfinished (the ledger's
``background_started`` and ``background_cancelled``), and tells the waits when the member has
work running (a member with background work running is neither idle nor waiting).  Work
started any other way (an ``asyncio`` task, a sandbox process) is not the member's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio
import anyio.abc

from swarm._inspect.private import background_owned_by
from swarm._run.identity import background_context
from swarm._run.status import classify

__all__ = ["BackgroundOwner", "BackgroundWatcher"]


class BackgroundWatcher(Protocol):
    """Who hears about a member's background work (the run's waits)."""

    def busy(self, member: str, busy: bool) -> None:
        """``member`` now has background work running (``busy``) or none."""
        ...

    def ending(self, member: str) -> None:
        """``member``'s own agent has returned: its background work drains."""
        ...


class BackgroundOwner:
    """Where one member's ``background()`` work runs (Inspect's ``BackgroundTarget``)."""

    def __init__(self, member: str, watcher: BackgroundWatcher | None = None) -> None:
        self.member = member
        self._watcher = watcher
        self.started = 0
        self.cancelled = 0
        self.running = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self._none_running: anyio.Event | None = None

    @asynccontextmanager
    async def hosting(self) -> AsyncIterator[BackgroundOwner]:
        """Own the calling task's background work while the body runs; the body's end waits
        for it (``drain`` first, to bound the wait)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            with background_owned_by(self):
                yield self
        self._tg = None

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Start ``func(*args)`` as the member's background work."""
        if self._tg is None:
            raise RuntimeError(
                f"swarm member {self.member!r} has ended: it cannot start background work"
            )
        self.started += 1
        self.running += 1
        if self.running == 1:
            self._none_running = anyio.Event()
            if self._watcher is not None:
                self._watcher.busy(self.member, True)
        self._tg.start_soon(self._run, func, args, name=f"{self.member} background")

    async def _run(self, func: Callable[..., Coroutine[Any, Any, Any]], args: Any) -> None:
        background_context.set(True)  # this task's own context: its loops are never the own
        try:
            await func(*args)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1  # unfinished: its calls in flight are unknown
            raise
        except Exception as ex:
            end = classify(ex)
            if end.propagate or end.error is not None:
                raise  # the member's error (or the run's): its agent is cancelled with it
            # a limit (the member's own, a cap, the swarm's stop) ends only this task
        finally:
            self.running -= 1
            if self.running == 0:
                assert self._none_running is not None
                self._none_running.set()
                if self._watcher is not None:
                    self._watcher.busy(self.member, False)

    async def drain(self, grace: float) -> bool:
        """The member's agent has returned: give its background work ``grace`` seconds to
        finish, then cancel what still runs.  Whether anything was cancelled."""
        if self.running == 0:
            return False
        if self._watcher is not None:
            self._watcher.ending(self.member)
        assert self._none_running is not None
        with anyio.move_on_after(grace):
            await self._none_running.wait()
        if self.running == 0:
            return False
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        return True
