"""Docker tests take turns on the machine, and waiting for a turn is not a test's time.

The engine is shared: a test run beside another (the suite's other workers, or a second run of
the test command) would count the other's containers as its own leftovers, and remove them.  So
a test that uses the ``docker_engine`` fixture (as an argument, or at run time with the
``docker`` mark) holds an exclusive lock on a file in the temp dir for the whole of its run
(setup, call, teardown).

The lock is taken by a ``pytest_runtest_protocol`` wrapper that runs outside pytest-timeout's
(``tryfirst``): the timeout starts once the turn is this test's.  Taken inside the fixture, a
120-second test queued behind the 8-member Codex fan-out (four minutes) timed out waiting.
``SWARM_EVAL_DOCKER_LOCK`` names another lock file (the test of this module uses its own)."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def lock_path() -> Path:
    """The machine-wide lock file (``SWARM_EVAL_DOCKER_LOCK`` overrides it)."""
    named = os.environ.get("SWARM_EVAL_DOCKER_LOCK")
    if named:
        return Path(named)
    return Path(tempfile.gettempdir()) / "swarm-eval-docker-tests.lock"


HELD = pytest.StashKey[bool]()
"""Set on a test's item while it holds the machine's lock."""


def takes_turns(item: pytest.Item) -> bool:
    """A test that runs containers: it asks for ``docker_engine`` as an argument, or is marked
    ``docker`` (one that asks for the engine at run time, ``request.getfixturevalue``, which
    ``fixturenames`` does not list)."""
    asks = "docker_engine" in getattr(item, "fixturenames", ())
    return asks or item.get_closest_marker("docker") is not None


def holds_turn(item: pytest.Item) -> bool:
    """Whether ``item`` runs while holding the machine's lock (``docker_engine`` checks it, so
    a test that would run containers without its turn fails, saying how to mark it)."""
    return item.stash.get(HELD, False)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Runs a test that takes turns (``takes_turns``) only while it holds the machine's lock."""
    if not takes_turns(item):
        yield
        return
    with lock_path().open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        item.stash[HELD] = True
        try:
            yield
        finally:
            item.stash[HELD] = False
