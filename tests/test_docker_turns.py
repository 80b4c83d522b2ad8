"""Docker tests take turns, and a turn's wait is not counted toward the test's timeout."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import docker_turns
import pytest

INNER = """
import os
from pathlib import Path

import pytest


@pytest.fixture
def docker_engine():
    yield


def test_with_the_engine(docker_engine):
    Path(os.environ["RAN"], "with").write_text("ran")


@pytest.mark.docker
def test_asking_at_run_time(request):
    request.getfixturevalue("docker_engine")
    Path(os.environ["RAN"], "with").write_text("ran")


def test_without_the_engine():
    Path(os.environ["RAN"], "without").write_text("ran")
"""


def _waiting_on(lock: Path) -> bool:
    """A process is blocked on ``lock`` (``/proc/locks`` lists waiters after ``->``)."""
    inode = os.stat(lock).st_ino
    return any(
        line.split()[1] == "->" and line.split()[-3].endswith(f":{inode}")
        for line in Path("/proc/locks").read_text().splitlines()
        if len(line.split()) > 4
    )


def _pytest(tmp_path: Path, lock: Path, *selection: str) -> subprocess.Popen[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    docker: takes turns\n")
    (tmp_path / "test_inner.py").write_text(INNER)
    ran = tmp_path / "ran"
    ran.mkdir(exist_ok=True)
    env = dict(
        os.environ,
        PYTHONPATH=str(Path(docker_turns.__file__).parent),
        SWARM_EVAL_DOCKER_LOCK=str(lock),
        RAN=str(ran),
    )
    command = [sys.executable, "-m", "pytest", "-p", "docker_turns", "-p", "no:cacheprovider"]
    command += ["-p", "no:xdist", "--timeout=1", "-q", *selection]
    return subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.parametrize("inner", ["test_with_the_engine", "test_asking_at_run_time"])
def test_a_docker_test_waits_for_its_turn_and_the_wait_is_not_its_time(
    tmp_path: Path, inner: str
) -> None:
    """A test asking for the engine as an argument, or at run time with the ``docker`` mark
    (the fan-out's docker cases: before the mark they ran without a turn, and two runs side by
    side removed each other's containers)."""
    lock = tmp_path / "docker.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        run = _pytest(tmp_path, lock, f"test_inner.py::{inner}")
        deadline = time.monotonic() + 60
        while not _waiting_on(lock):
            assert run.poll() is None, run.communicate()[0]
            assert time.monotonic() < deadline, "the inner test never asked for the lock"
            time.sleep(0.05)
        # blocked for twice its timeout (1 s) before its turn comes
        time.sleep(2)
        assert not (tmp_path / "ran" / "with").exists()
        assert run.poll() is None
    out = run.communicate(timeout=60)[0]
    assert run.returncode == 0, out
    assert "1 passed" in out
    assert (tmp_path / "ran" / "with").read_text() == "ran"


def test_a_test_without_the_engine_never_waits(tmp_path: Path) -> None:
    lock = tmp_path / "docker.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        run = _pytest(tmp_path, lock, "test_inner.py::test_without_the_engine")
        out = run.communicate(timeout=60)[0]
    assert run.returncode == 0, out
    assert "1 passed" in out


def test_the_lock_is_the_machine_wide_file_unless_named(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.delenv("SWARM_EVAL_DOCKER_LOCK", raising=False)
    assert docker_turns.lock_path().name == "swarm-eval-docker-tests.lock"
    monkeypatch.setenv("SWARM_EVAL_DOCKER_LOCK", "/elsewhere/x.lock")
    assert docker_turns.lock_path() == Path("/elsewhere/x.lock")
