"""Per-member Docker sandboxes: each member's container with a watcher beside it that records
what the member's tools read (``swarm/_run/docker_members.py``), and the fan-out eval under
``docker`` (its scenarios and cases, under ``bwrap`` and ``docker``: test_fanout_cases.py).

The watcher's program and protocol, the compose project of a member and the reads record of a
provider nobody can watch are tested everywhere; the tests that need a Docker engine run when
one answers (``bash ../shared/docker/start-engine.sh`` brings one up, as ``.ci/run`` does) and
are skipped with the reason otherwise.  Each checks that it left no container or volume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.util import SandboxEnvironment, sandboxenv
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from swarm import member, swarm
from swarm._run.docker_members import WATCHER, ContainerWatch, member_compose
from swarm._run.inotify import FileEvent
from swarm.testing import call, scripted_model, submit
from tests.fanout_cases import failing, honest, run_fanout, small_fixture, step

# -- the watcher, on this machine's own kernel ----------------------------------------------------


def watched_dir(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "shards").mkdir(parents=True)
    (root / "shards" / "a.txt").write_text("apples\n")
    return root


async def _watch_reads(root: Path) -> list[list[FileEvent]]:
    watch = await ContainerWatch.launch([sys.executable], str(root), where="the test")
    try:
        quiet = await watch.sync("R")
        (root / "shards" / "a.txt").read_text()
        first = await watch.sync("R")
        (root / "new").mkdir()
        await anyio.sleep(0.2)  # the watcher adds its watch on new/ when it sees it made
        (root / "new" / "odd\nname.txt").write_text("x")
        (root / "new" / "odd\nname.txt").read_text()
        second = await watch.sync("R")
        return [quiet, first, second]
    finally:
        await watch.close()


def test_the_watcher_reports_each_read_by_the_time_a_sync_returns(tmp_path: Path) -> None:
    """A read done before the sync is in its answer (none is left for later), a file in a
    directory made after the watcher started is seen, and a name holding a newline is one
    event (the events are JSON lines)."""
    quiet, first, second = anyio.run(_watch_reads, watched_dir(tmp_path))
    assert quiet == []
    assert first == [FileEvent("R", "shards/a.txt", "open"), FileEvent("R", "shards/a.txt", "read")]
    assert second == [
        FileEvent("R", "new/odd\nname.txt", "open"),
        FileEvent("R", "new/odd\nname.txt", "write"),
        FileEvent("R", "new/odd\nname.txt", "open"),
        FileEvent("R", "new/odd\nname.txt", "read"),
    ]


async def _stopped(root: Path) -> tuple[str, bool]:
    watch = await ContainerWatch.launch([sys.executable], str(root), where="the test")
    watch.stop()
    try:
        await watch.sync("R")
    except OSError as ex:
        return str(ex).split(":")[0], watch.alive
    finally:
        await watch.close()
    return "answered", watch.alive


def test_a_watcher_that_stopped_fails_closed(tmp_path: Path) -> None:
    assert anyio.run(_stopped, watched_dir(tmp_path)) == ("the watcher has stopped", False)


async def _never_started(root: Path) -> str:
    try:
        await ContainerWatch.launch(["sh", "-c", "echo no python3 >&2", "sh"], str(root), where="x")
    except OSError as ex:
        return str(ex)
    return "started"


def test_a_watcher_that_cannot_start_says_why(tmp_path: Path) -> None:
    assert anyio.run(_never_started, watched_dir(tmp_path)) == (
        "the watcher in x did not start: no python3"
    )


def test_a_members_project_is_its_container_and_the_watcher_on_one_volume() -> None:
    dumped = member_compose("img:1", "none").model_dump(by_alias=True, exclude_none=True)
    idle = ["tail", "-f", "/dev/null"]
    assert dumped == {
        "services": {
            "default": {
                "image": "img:1",
                "x-local": True,
                "init": True,
                "command": idle,
                "working_dir": "/workspace",
                "volumes": ["workspace:/workspace"],
                "network_mode": "none",
            },
            WATCHER: {
                "image": "img:1",
                "x-local": True,
                "init": True,
                "command": idle,
                "network_mode": "none",
                "volumes": ["workspace:/workspace:ro"],
            },
        },
        "volumes": {"workspace": {}},
    }
    # a staging container on a network: the member is on its project's own, the watcher never
    other = member_compose("img:1", None).model_dump(by_alias=True, exclude_none=True)
    assert "network_mode" not in other["services"]["default"]
    assert other["services"][WATCHER]["network_mode"] == "none"


# -- a provider with no directory of the host: nothing watched, and the record says so ---------


@sandboxenv(name="test-opaque")
class OpaqueSandbox(SandboxEnvironment):
    """Inspect's ``local`` behind a wrapper that shows no host directory (as a remote
    provider's environment would)."""

    def __init__(self, inner: LocalSandboxEnvironment) -> None:
        super().__init__()
        self._inner = inner

    @classmethod
    async def sample_init(
        cls, task_name: str, config: Any, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        made = await LocalSandboxEnvironment.sample_init(task_name, config, metadata)
        return {"default": cls(made["default"])}  # type: ignore[arg-type]  # a local one

    @classmethod
    async def sample_cleanup(
        cls, task_name: str, config: Any, environments: dict[str, Any], interrupted: bool
    ) -> None:
        inner = {k: v._inner for k, v in environments.items()}
        await LocalSandboxEnvironment.sample_cleanup(task_name, config, inner, interrupted)

    async def exec(self, cmd: list[str], *args: Any, **kwargs: Any) -> Any:
        return await self._inner.exec(cmd, *args, **kwargs)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        await self._inner.write_file(file, contents)

    async def read_file(self, file: str, text: bool = True) -> Any:  # type: ignore[override]
        return await self._inner.read_file(file, text)  # type: ignore[call-overload]


def test_a_member_environment_nobody_can_watch_makes_the_record_unwatched(tmp_path: Path) -> None:
    """Before, an environment without a host directory was recorded ``watched: true`` with no
    entries: a proof reading it saw a run where nobody read anything, not one it could not
    see."""
    model = scripted_model({"a": [call("bash", cmd="cat mine.txt"), submit("done")]})
    task = Task(
        dataset=[Sample(input="go", files={"mine.txt": "apples"})],
        solver=swarm(
            members=[member("swarm/worker", name="a", args={"tools": ["bash"]})],
            sandboxes={"per_member": True, "files": {"a": ["mine.txt"]}},
        ),
        sandbox="test-opaque",
    )
    [log] = eval(task, model=model, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    reads = (log.samples or [])[0].store["inspect_swarm:reads"]
    assert (reads["provider"], reads["watched"], reads["entries"]) == ("test-opaque", False, [])


# -- with a Docker engine -------------------------------------------------------------------------


def test_a_member_sees_neither_the_watcher_nor_the_engine(
    tmp_path: Path, docker_engine: None
) -> None:
    """A child that lists the command line of every process it can see finds only its own
    (no watcher program), and no engine socket; its read is recorded and the run resolves
    (two shards: one child's view is what it shows, and each child costs containers)."""
    fixture = small_fixture(tmp_path / "fixture")
    scripts = honest(fixture)
    worker = fixture.shards[0].worker
    probe = (
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done; "
        "ls /var/run/docker.sock /run/docker.sock 2>&1; echo probed"
    )
    scripts[worker].insert(0, step("bash", command=probe))
    sample = run_fanout(fixture, "docker", scripts, log_dir=tmp_path / "logs")
    assert failing(sample) == {}
    [seen] = [
        str(e.result)
        for e in sample.events
        if e.event == "tool" and e.function == "bash" and "probed" in str(e.result)
    ]
    assert "tail -f /dev/null" in seen  # the member's own container's processes are listed
    assert "Inotify" not in seen and "python3" not in seen  # the watcher's are not
    assert seen.count("No such file or directory") == 2  # no engine socket


def test_the_command_resolves_under_docker(tmp_path: Path, docker_engine: None) -> None:
    # a fixture of two shards: the command's part is building the shipped image and running
    # the task under docker (eight children under docker: test_fanout_cases.py)
    fixture = small_fixture(tmp_path / "fixture", "csv-metrics")
    swarm_cli = str(Path(sys.executable).parent / "swarm")
    command = [swarm_cli, "fanout", "--fixture", str(fixture.directory), "--sandbox", "docker"]
    done = subprocess.run(
        [*command, "--log-dir", str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "INSPECT_DISPLAY": "none"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert (outcome["resolved"], outcome["isolation"]["provider"]) == (True, "docker")
    assert outcome["fixture"] == "csv-metrics-2"
