"""Per-member Docker sandboxes: each member's container with a watcher beside it that records
what the member's tools read (``swarm/_run/docker_members.py``), and the fan-out eval under
``docker`` (the same scenarios under ``bwrap``: test_fanout_honest_bwrap.py).

The watcher's program and protocol, the compose project of a member and the reads record of a
provider nobody can watch are tested everywhere; the tests that need a Docker engine run when
one answers (``bash ../shared/docker/start-engine.sh`` brings one up, as ``.ci/run`` does) and
are skipped with the reason otherwise.  Each checks that it left no container or volume."""

from __future__ import annotations

import copy
import fcntl
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.model import get_model
from inspect_ai.util import SandboxEnvironment, sandboxenv
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from swarm import member, swarm
from swarm._run.docker_members import WATCHER, ContainerWatch, member_compose
from swarm._run.inotify import FileEvent
from swarm.plugins.scorers.fanout import fanout_rubric, fanout_sample, honest_scripts, load_fixture
from swarm.plugins.scorers.fanout._task import fanout_topology, sandbox_spec
from swarm.testing import call, scripted_model, submit
from tests.fanout_records import RULES

FIXTURES = ("json-events", "csv-metrics")


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


_LOCK = Path(tempfile.gettempdir()) / "swarm-eval-docker-tests.lock"
"""Held by one Docker test at a time, on this machine: the engine is shared, so a test run
beside another (the suite's second worker, or a second run of the test command) would count the
other's containers as its leftovers, and remove them."""


@pytest.fixture
def docker_engine() -> Iterator[None]:
    """Skips without an engine (saying why); fails a test that left a container or volume.
    Docker tests take turns on the machine (``_LOCK``), so what is left is the test's own."""
    why = _engine()
    if why is not None:
        pytest.skip(why)
    with _LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        before = _leftovers()
        yield
        left = _leftovers() - before
        if left:
            subprocess.run(["docker", "rm", "-f", *left], capture_output=True)
            pytest.fail(f"the test left Docker containers or volumes behind: {sorted(left)}")


def step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def run_fanout(fixture: str, provider: str, scripts: dict[str, Any], log_dir: Path) -> EvalSample:
    loaded = load_fixture(fixture)
    task = Task(
        dataset=[fanout_sample(loaded)],
        solver=fanout_topology(loaded),
        scorer=fanout_rubric(fixture=fixture),
        sandbox=sandbox_spec(provider),
    )
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = eval(task, model=model, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def failing(sample: EvalSample) -> dict[str, Any]:
    [score] = (sample.scores or {}).values()
    rules = score.metadata["rules"]
    return {r: rules[r]["failures"] for r in RULES if score.value[r] is not True}


def honest(fixture: str) -> dict[str, list[dict[str, Any]]]:
    return copy.deepcopy(honest_scripts(load_fixture(fixture)))


def with_retry(fixture: str) -> dict[str, list[dict[str, Any]]]:
    """The third child ends without replying; the lead spawns it again (``<worker>~2``)."""
    scripts = honest(fixture)
    worker = load_fixture(fixture).shards[2].worker
    retry = next(s for s in scripts["lead"] if s["args"].get("name") == worker)
    index = scripts["lead"].index(next(s for s in scripts["lead"] if s["tool"] == "read_messages"))
    scripts["lead"][index:index] = [copy.deepcopy(retry), step("wait_for_children")]
    scripts[f"{worker}~2"] = scripts[worker]
    scripts[worker] = [{"submit": "gave up"}]
    return scripts


def out_of_order(fixture: str) -> dict[str, list[dict[str, Any]]]:
    """The first child spawned works 3 s before it reads its shard: its reply comes last."""
    scripts = honest(fixture)
    first = load_fixture(fixture).shards[0]
    scripts[first.worker].insert(0, step("bash", command="sleep 3"))
    return scripts


def lead_ends_first(fixture: str, provider: str) -> dict[str, list[dict[str, Any]]]:
    """The children reply, then work on; the lead gives them time to reply (5 s; 20 s under
    docker, where eight containers start first), reads every reply, writes the artifact and
    submits while they run."""
    lead_wait, work = (20, 30) if provider == "docker" else (5, 8)
    scripts = honest(fixture)
    waited = next(s for s in scripts["lead"] if s.get("tool") == "wait_for_children")
    scripts["lead"][scripts["lead"].index(waited)] = step("bash", command=f"sleep {lead_wait}")
    for s in load_fixture(fixture).shards:
        scripts[s.worker].insert(2, step("bash", command=f"sleep {work}"))
    return scripts


def check_scenario(name: str, fixture: str, sample: EvalSample) -> None:
    """What each scenario must show beyond resolving."""
    shards = load_fixture(fixture).shards
    reads = sample.store["inspect_swarm:reads"]
    read = {(e["member"], e["path"]) for e in reads["entries"] if e["op"] == "read"}
    retried = f"{shards[2].worker}~2"
    expected = {
        (retried if name == "retry" and s is shards[2] else s.worker, f"shards/{s.file}")
        for s in shards
    }
    assert read == expected
    if name == "out_of_order":
        order = [m["sender"] for m in sample.store["inspect_swarm:messages"]["messages"]]
        assert order[-1] == shards[0].worker
    if name == "lead_ends_first":
        ends = {m["name"]: m["time"] for m in sample.store["inspect_swarm:result"]["members"]}
        assert all(ends[s.worker] > ends["lead"] for s in shards)


SCENARIOS = {
    "honest": lambda fixture, provider: honest(fixture),
    "retry": lambda fixture, provider: with_retry(fixture),
    "out_of_order": lambda fixture, provider: out_of_order(fixture),
    "lead_ends_first": lead_ends_first,
}


def _resolves(provider: str, fixture: str, scenario: str, tmp_path: Path) -> EvalSample:
    sample = run_fanout(fixture, provider, SCENARIOS[scenario](fixture, provider), tmp_path)
    assert failing(sample) == {}
    [score] = (sample.scores or {}).values()
    assert score.value["resolved"] is True
    check_scenario(scenario, fixture, sample)
    reads = sample.store["inspect_swarm:reads"]
    assert (reads["provider"], reads["watched"]) == (provider, True)
    return sample


# lead_ends_first is not here yet: under docker its children had not replied when the lead
# ended after 20 s (their containers still starting, on a machine running other tests), and the
# run took 149 s; see the benchmark for the start times
@pytest.mark.timeout(300)  # eight containers start, and are brought down, around the run
@pytest.mark.parametrize("scenario", ["honest", "retry", "out_of_order"])
@pytest.mark.parametrize("fixture", FIXTURES)
def test_each_scenario_resolves_under_docker(
    fixture: str, scenario: str, tmp_path: Path, docker_engine: None
) -> None:
    sample = _resolves("docker", fixture, scenario, tmp_path)
    [score] = (sample.scores or {}).values()
    isolation = score.metadata["isolation"]
    assert (isolation["provider"], isolation["isolated"]) == ("docker", True)


def test_a_member_sees_neither_the_watcher_nor_the_engine(
    tmp_path: Path, docker_engine: None
) -> None:
    """A child that lists the command line of every process it can see finds only its own
    (no watcher program), and no engine socket; its read is recorded and the run resolves."""
    fixture = "json-events"
    scripts = honest(fixture)
    worker = load_fixture(fixture).shards[0].worker
    probe = (
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done; "
        "ls /var/run/docker.sock /run/docker.sock 2>&1; echo probed"
    )
    scripts[worker].insert(0, step("bash", command=probe))
    sample = run_fanout(fixture, "docker", scripts, tmp_path)
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
    swarm_cli = str(Path(sys.executable).parent / "swarm")
    command = [swarm_cli, "fanout", "--fixture", "csv-metrics", "--sandbox", "docker"]
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
