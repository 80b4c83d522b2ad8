"""Calling plugin code so that nothing it does can end, hang or silence a run.

Every plugin implementation swarm-eval calls goes through ``guarded_call``:

- an exception that is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``,
  ``GeneratorExit`` or any other ``BaseException``) is held as a ``Contained`` error, an
  ``Exception``, so the caller's handling of a plugin's fault applies to it as to any other
  (the plugin named, the sample failed or the observer logged, the records written).  A sync
  hook cannot receive the run's own cancellation (that arrives at an ``await``), so whatever it
  raises is its own;
- with a ``bound`` (the seconds left before the sample's time or working limit), a call that
  has not returned when it runs out is interrupted and raises ``Blocked``.  The hook runs in
  the event loop's thread, as before (a decision stays atomic); the bound is an interval timer
  (``SIGALRM``), whose handler raises in that thread and so interrupts ``time.sleep``, a
  blocking system call, a lock or a Python loop.  It needs the main thread of a POSIX system
  (where ``inspect eval`` runs); elsewhere a call is not bounded.  An interval timer someone
  else armed (pytest-timeout's) is kept: ours is armed only when it is sooner, and theirs is
  put back after the call.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["MIN_BOUND", "Blocked", "Contained", "guarded_call"]

MIN_BOUND = 1.0
"""The shortest bound a call gets: one made after the limit has passed (the records written
at the end of a run that hit it) still has a second to return."""

_CAN_ALARM = hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")
_armed = threading.local()


class Contained(Exception):
    """A ``BaseException`` that is not an ``Exception``, raised by a plugin and held as one."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(original)
        self.original = original

    def __repr__(self) -> str:
        notes = getattr(self.original, "__notes__", ())
        return repr(self.original) + "".join(f" ({note})" for note in notes)


class Blocked(Exception):
    """A plugin's call that had not returned when its bound ran out."""

    def __init__(self, bound: float, notes: tuple[str, ...] = ()) -> None:
        where = "".join(f" ({note})" for note in notes)
        super().__init__(
            f"did not return within {bound:.1f} s, the time the sample had left{where}; a hook "
            "must return promptly (run slow work in a tool or a task of your own)"
        )
        self.bound = bound


class _Alarm(BaseException):
    """Raised in the hook's frame by the timer's handler (a ``BaseException``, so that a
    plugin's ``except Exception`` cannot swallow it)."""


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if getattr(_armed, "on", False):  # not once the call has returned
        raise _Alarm


def guarded_call(function: Callable[..., Any], args: tuple[Any, ...], bound: float | None) -> Any:
    """``function(*args)``, contained (``Contained``) and bounded by ``bound`` seconds
    (``Blocked``; at least ``MIN_BOUND``; ``None``: no bound)."""
    try:
        if bound is None or not _CAN_ALARM or getattr(_armed, "on", False):
            return function(*args)  # a nested call is bounded by the outer one
        if threading.current_thread() is not threading.main_thread():
            return function(*args)
        return _bounded(function, args, max(bound, MIN_BOUND))
    except Exception:
        raise
    except _Alarm as ex:
        raise Blocked(max(bound or 0.0, MIN_BOUND), tuple(getattr(ex, "__notes__", ()))) from None
    except BaseException as ex:
        raise Contained(ex) from ex


def _bounded(function: Callable[..., Any], args: tuple[Any, ...], bound: float) -> Any:
    theirs, interval = signal.getitimer(signal.ITIMER_REAL)
    if theirs and theirs <= bound:
        return function(*args)  # their timer fires first: it bounds this call
    handler = signal.signal(signal.SIGALRM, _on_alarm)
    started = time.monotonic()
    _armed.on = True
    try:
        signal.setitimer(signal.ITIMER_REAL, bound)
        return function(*args)
    finally:
        try:
            _armed.on = False
        except _Alarm:  # it fired as the call returned: the call's result stands
            _armed.on = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        if theirs:
            left = max(theirs - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, interval)
