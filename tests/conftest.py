"""Shared fixtures: every test runs offline on the scripted model, logs in a temp dir."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker_turns
import pytest
from hypothesis import settings

os.environ.setdefault("INSPECT_DISPLAY", "none")


def pytest_configure(config: pytest.Config) -> None:
    """Docker tests take turns on the machine (``docker_turns``, a plugin of its own)."""
    config.pluginmanager.register(docker_turns, "docker_turns")


@pytest.fixture(autouse=True, scope="session")
def _inspect_logs_in_a_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """An eval given no ``log_dir`` logs under a temp dir, never ``./logs`` of the checkout."""
    before = os.environ.get("INSPECT_LOG_DIR")
    os.environ["INSPECT_LOG_DIR"] = str(tmp_path_factory.mktemp("inspect-logs"))
    yield
    if before is None:
        os.environ.pop("INSPECT_LOG_DIR", None)
    else:
        os.environ["INSPECT_LOG_DIR"] = before


@pytest.fixture(autouse=True, scope="session")
def _no_live_view_buffer() -> Iterator[None]:
    """The suite's in-process evals keep no live-view buffer.

    By default Inspect writes each event of a running sample to a buffer database, which
    ``inspect view`` reads to show a sample while it runs (``log_realtime``); the log itself
    does not depend on it, and no test reads it.  It was a tenth of the CPU of every test that
    runs an eval, and the suite is bound by CPU.  ``eval()`` has no default for it but its
    argument, which it resolves before the logger starts, so the logger's start turns it off
    (Inspect's ``TaskLogger.init``; ``raising=True``: a release without it fails here,
    loudly).  Subprocesses and the docs pages keep Inspect's default."""
    from inspect_ai._eval.task import log as task_log

    started = task_log.TaskLogger.init

    async def init(self: Any) -> None:
        self.eval.config.log_realtime = False
        await started(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(task_log.TaskLogger, "init", init, raising=True)
        yield


@pytest.fixture(autouse=True, scope="session")
def _distributions_read_once() -> Iterator[None]:
    """Inspect reads the installed distributions' file lists once per test process, not once
    per eval.

    For each eval of a task registered by an installed package, Inspect records which
    distribution ships it (``resolve_task_distribution``).  swarm-eval's distribution name is
    not its package's (``swarm-eval``, ``swarm``), so Inspect falls back to
    ``importlib.metadata.packages_distributions()``, which reads every installed
    distribution's file list: 0.2 s of CPU per eval of ``swarm/fanout``, ``swarm/swarm_arm``
    or the demo.  Nothing is installed while a test process runs evals, so the answer is the
    same every time; the patch keeps the first.  ``raising=True``: an Inspect release that no
    longer imports it there fails here, loudly."""
    from functools import cache

    from inspect_ai._util import package

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            package, "packages_distributions", cache(package.packages_distributions), raising=True
        )
        yield


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    path = tmp_path / "logs"
    path.mkdir()
    return path


# Mutation runs (scripts/mutation.sh) must classify a mutant the same way every time: the
# property tests then draw the same examples on every run, and keep no example database.
settings.register_profile("mutation", derandomize=True, database=None, deadline=None)
if "MUTANT_UNDER_TEST" in os.environ:
    settings.load_profile("mutation")


@pytest.fixture
def priced() -> Iterator[None]:
    """The scripted model priced at $1 per million input and $2 per million output tokens, so
    that 250,000 input tokens cost exactly $0.25."""
    from inspect_ai.model import ModelCost, ModelInfo, set_model_info

    price = ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)
    set_model_info("swarm/scripted", ModelInfo(cost=price))
    yield
    set_model_info("swarm/scripted", ModelInfo())


DOCKER_FILES = ("tests/test_docker_members.py::", "tests/test_agent_clis.py::")
"""Test files whose tests run containers (or sit beside ones that do, and are quick)."""


def _uses_docker(nodeid: str) -> bool:
    """A test that runs containers: the Docker members' and agent CLIs' tests, and the runs
    under the docker provider (``[docker-...]``, which ask for the engine when they run)."""
    return "[docker" in nodeid or nodeid.startswith(DOCKER_FILES)


TOGETHER = ("tests/test_docs_site.py::",)
"""Test files whose tests share a costly module fixture (the docs site's build), run by one
worker."""


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The Docker tests are one unit of work: one worker runs them all, in turn, from the start,
    while the others run the rest (each of which is a unit of its own, as ``--dist load``
    makes them).  They take turns on the engine anyway (``docker_engine``); spread over the
    workers, a worker waiting for its turn did nothing, and the Docker tests, a quarter of the
    suite's time, ended it.  (xdist's own ``--dist loadgroup`` would do this with a mark, but
    under pytest 9.2 it no longer groups anything.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class DockerTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if _uses_docker(nodeid):
                return "docker"
            if nodeid.startswith(TOGETHER):  # one module fixture built once, not per worker
                return nodeid.split("::")[0]
            return nodeid

    return DockerTogether(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The Docker tests first (one worker's work, see ``pytest_xdist_make_scheduler``), then
    the docs pages, the longest single tests when they run (``tests/page_cache.py``), so that
    none of them starts last; then the rest, in their order.

    In a mutation run, the tests a mutant runs go fastest first (by their time in mutmut's
    clean run), so that a killed mutant is found killed as soon as possible."""
    docker = [item for item in items if _uses_docker(item.nodeid)]
    astray = [
        item.nodeid for item in items if docker_turns.takes_turns(item) and item not in docker
    ]
    if astray:  # on another worker it would wait for the Docker worker's turns, doing nothing
        raise pytest.UsageError(
            f"tests that use docker_engine outside DOCKER_FILES (tests/conftest.py): {astray}"
        )
    pages = [item for item in items if item.path.suffix == ".md"]
    first = {id(item) for item in docker + pages}
    items[:] = docker + pages + [item for item in items if id(item) not in first]
    stats = Path("mutmut-stats.json")
    if "MUTANT_UNDER_TEST" not in os.environ or not stats.exists():
        return
    durations: dict[str, float] = json.loads(stats.read_text())["duration_by_test"]
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """With ``SWARM_TEST_CPU=FOLDER``: each test's CPU seconds (its process's and its finished
    subprocesses', setup to teardown) as a JSON line in ``FOLDER/<worker>.jsonl``, which
    ``scripts/suite_durations.py --cpu FOLDER`` sums by file.  Wall time shows where a test
    waited; CPU time is what a second run beside it competes for."""
    folder = os.environ.get("SWARM_TEST_CPU")
    if not folder:
        yield
        return
    import resource

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    before = cpu()
    yield
    spent = cpu() - before
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with (Path(folder) / f"{worker}.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps({"test": item.nodeid, "cpu": round(spent, 3)}) + "\n")


# -- a Docker engine, for the tests that need one ---------------------------------------------


def _engine() -> str | None:
    """Why the Docker tests cannot run here, or ``None``."""
    try:
        found = subprocess.run(
            ["docker", "image", "inspect", "swarm-eval-base:bookworm"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as ex:
        return f"no Docker engine answers ({ex}); bash ../shared/docker/start-engine.sh"
    if found.returncode != 0:
        why = found.stderr.strip().splitlines()[-1] if found.stderr.strip() else "?"
        return f"no Docker engine with swarm-eval-base:bookworm answers ({why})"
    return None


def _leftovers() -> set[str]:
    names = subprocess.run(
        ["docker", "ps", "-a", "--filter", "name=inspect-", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
    ).stdout.split()
    volumes = subprocess.run(
        ["docker", "volume", "ls", "--filter", "name=inspect-", "--format", "{{.Name}}"],
        capture_output=True,
        text=True,
    ).stdout.split()
    return set(names) | set(volumes)


@pytest.fixture
def docker_engine(request: pytest.FixtureRequest) -> Iterator[None]:
    """Skips without an engine (saying why); fails a test that left a container or volume.
    Docker tests take turns on the machine (``docker_turns``, before the test's timeout
    starts), so what is left is the test's own."""
    if not docker_turns.holds_turn(request.node):
        pytest.fail(
            "docker_engine was asked for at run time by a test without the `docker` mark, so "
            "it would run containers without its turn on the engine: mark it pytest.mark.docker"
        )
    why = _engine()
    if why is not None:
        pytest.skip(why)
    before = _leftovers()
    yield
    left = _leftovers() - before
    if left:
        subprocess.run(["docker", "rm", "-f", *left], capture_output=True)
        pytest.fail(f"the test left Docker containers or volumes behind: {sorted(left)}")
