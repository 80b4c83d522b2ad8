"""Members take turns in a shared sandbox environment, so each file event there is credited to
the member whose command made it.

The reads record credits a file event to a member when the runtime collects the host kernel's
events, at the end of each of the member's calls (``sandboxes.MemberSandboxes``).  inotify says
which file, never which process; fanotify reports a process only to a privileged listener
(``CAP_SYS_ADMIN``; an unprivileged one gets pid 0 for every process but its own), and the
fan-out runs unprivileged.  So when two members of one environment (``sandboxes.share``) run
commands at once, the events of both are queued together and credited to whichever call ends
first.

``Turns`` removes the ambiguity instead of guessing: in one environment, one member's calls run
at a time (a member's own calls may overlap; other members wait, first come first served).
Under ``bwrap`` no process outlives the command that started it, so every event in the
environment's directory between the start of a member's turn and the collection at the end of
its last call was made by that member's processes: it is credited per process, by construction.
An environment with one member never waits.  The price: the members of a share group do not
run commands at the same moment (a command that waits for another member's command in the same
environment waits until its own times out).

Hooked up in ``sandboxes.MemberSandboxes``: each call of a member's ``WatchedSandbox`` runs in
its turn of the environment (``turns_for(env)``; the call bracket that collects the events is
inside the turn), and the runtime's own copy of sample files into an
environment that is already in use takes the turn of ``RUNTIME`` (``turns_for(env)``), so no
member's event is discarded with the copy's.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

__all__ = ["RUNTIME", "Turns", "turns_for"]

RUNTIME = ""
"""Whose turn the runtime's own work in an environment (copying a member's files) is."""


class _Waiter:
    def __init__(self, member: str) -> None:
        self.member = member
        self.event = anyio.Event()
        self.granted = False


class Turns:
    """Who may run calls in one environment now: one member at a time, its calls as many as it
    makes; the others wait in the order they asked."""

    def __init__(self) -> None:
        self._holder: str | None = None
        self._calls = 0
        self._waiting: deque[_Waiter] = deque()

    @property
    def holder(self) -> str | None:
        """The member whose turn it is (``None``: nobody's)."""
        return self._holder

    @asynccontextmanager
    async def turn(self, member: str) -> AsyncIterator[None]:
        """Run the body in ``member``'s turn: at once when it is already its turn and nobody
        waits, or when nobody's; else after the members that asked first."""
        await self._acquire(member)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, member: str) -> None:
        if self._holder is None or (self._holder == member and not self._waiting):
            self._holder = member
            self._calls += 1
            return
        waiter = _Waiter(member)
        self._waiting.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:  # granted as it was cancelled: give the turn on
                self._release()
            else:
                self._waiting.remove(waiter)
            raise

    def _release(self) -> None:
        self._calls -= 1
        if self._calls > 0:
            return
        self._holder = None
        if not self._waiting:
            return
        first = self._waiting.popleft()
        self._grant(first)
        for waiter in [w for w in self._waiting if w.member == first.member]:
            self._waiting.remove(waiter)  # its other calls that wait run with it
            self._grant(waiter)

    def _grant(self, waiter: _Waiter) -> None:
        self._holder = waiter.member
        self._calls += 1
        waiter.granted = True
        waiter.event.set()


_TURNS: weakref.WeakKeyDictionary[Any, Turns] = weakref.WeakKeyDictionary()


def turns_for(environment: Any) -> Turns:
    """The turns of ``environment`` (one per environment object, for as long as it lives)."""
    found = _TURNS.get(environment)
    if found is None:
        found = _TURNS[environment] = Turns()
    return found
