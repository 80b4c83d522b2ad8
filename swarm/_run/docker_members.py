"""A member's own Docker container, and the watcher beside it that sees what its tools read.

With ``sandboxes.per_member`` under Inspect's ``docker`` provider, each member (or share group)
gets a compose project of its own, made from the staging container (the sample's default
environment): a ``default`` service running the staging container's image, its working
directory ``/workspace`` a named volume of the project, with the staging container's network
(``none`` stays ``none``), and a ``swarm-watcher`` service with the same volume mounted
read-only, no network, and nothing else.  The runtime starts ``python3`` in the watcher (over
``docker exec``, the inotify reader of ``inotify.py`` sent as its program) and reads its file
events over that stream.

Why a watcher container and not the host's inotify: the member's reads happen in the engine's
kernel, which is the host's only where the engine is local.  Where the engine runs in a VM
(Docker Desktop on macOS and Windows), the host sees none of them, but the watcher runs in the
same kernel as the member, on the same volume, so it sees the same events in both setups.  The
member cannot reach it: another container (its own pid, mount, IPC and network namespaces; no
network at all), and the member has no engine socket.  What it reports reaches the runtime over
the engine's exec stream, which the member cannot write to.

After each tool call of the member ends, the runtime asks the watcher to ``sync``: it answers
with every event the kernel has queued by then (a read the call made is queued before the call's
process exits), so a read is recorded before anything the member does next.  A watcher that
cannot start (an image without ``python3``) or stops answering leaves its environment unwatched,
and the reads record then says ``watched: false``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from inspect_ai.util import ComposeConfig, SandboxEnvironment

from swarm._run import inotify
from swarm._run.inotify import FileEvent

__all__ = [
    "WATCHER",
    "WORKSPACE",
    "ContainerWatch",
    "DockerMembers",
    "member_compose",
    "watch_program",
]

logger = logging.getLogger("swarm")

WATCHER = "swarm-watcher"
"""The watcher's service in a member's compose project."""
WORKSPACE = "/workspace"
"""A member container's working directory: the volume the watcher watches."""
START_TIMEOUT = 60.0
"""Seconds the watcher has to start and set its watches."""
SYNC_TIMEOUT = 30.0
"""Seconds a ``sync`` may take before the watcher counts as stopped (its environment
unwatched from then on)."""

_MAIN = """

def _main() -> None:
    import json, select, sys
    root = sys.argv[1]
    watch = Inotify()
    watch.watch(root)
    out = sys.stdout

    def emit() -> None:
        for event in watch.drain():
            out.write(json.dumps([event.path, event.op]) + "\\n")

    out.write(json.dumps({"ready": root}) + "\\n")
    out.flush()
    pending = b""
    while True:
        ready, _, _ = select.select([watch._fd, 0], [], [])
        emit()
        if 0 in ready:
            data = os.read(0, 4096)
            if not data:
                return
            pending += data
            while b"\\n" in pending:
                line, pending = pending.split(b"\\n", 1)
                emit()
                out.write(json.dumps({"synced": line.decode()}) + "\\n")
        out.flush()


_main()
"""


def watch_program() -> str:
    """The watcher's program: ``inotify.py`` (the standard library only) and a loop that
    prints each file event as a JSON line ``[path, op]``, and answers a line ``N`` on its
    input with every event queued by then and ``{"synced": "N"}``."""
    return Path(inotify.__file__).read_text(encoding="utf-8") + _MAIN


class ContainerWatch:
    """The watcher process in one member's ``swarm-watcher`` container, over ``docker exec``."""

    def __init__(self, process: Process, lines: BufferedByteReceiveStream) -> None:
        self._process = process
        self._lines = lines
        self._lock = anyio.Lock()
        self._count = 0
        self.alive = True

    @classmethod
    async def start(cls, container: str, root: str = WORKSPACE) -> ContainerWatch:
        """Start the watcher in ``container`` on ``root``; returns once its watches are set.

        Raises:
            OSError: the watcher did not start (its message says why).
        """
        python = ["docker", "exec", "-i", container, "python3"]
        return await cls.launch(python, root, where=f"container {container}")

    @classmethod
    async def launch(cls, python: list[str], root: str, *, where: str) -> ContainerWatch:
        """Start the watcher program with the interpreter command ``python`` on ``root``.

        Raises:
            OSError: the watcher did not start (its message says why).
        """
        process = await anyio.open_process([*python, "-u", "-c", watch_program(), root])
        assert process.stdout is not None
        watch = cls(process, BufferedByteReceiveStream(process.stdout))
        try:
            with anyio.fail_after(START_TIMEOUT):
                first = await watch._line()
        except (TimeoutError, ValueError, anyio.EndOfStream, anyio.IncompleteRead) as ex:
            why = await _stderr(process)
            await watch.close()
            raise OSError(f"the watcher in {where} did not start: {why or repr(ex)}") from None
        if first != {"ready": root}:
            await watch.close()
            raise OSError(f"the watcher in {where} did not start: it said {first!r}")
        return watch

    async def _line(self) -> Any:
        raw = await self._lines.receive_until(b"\n", 1 << 20)
        return json.loads(raw)

    async def sync(self, root: str) -> list[FileEvent]:
        """Every file event the watcher's kernel queued until now, as events under ``root``.

        Raises:
            OSError: the watcher stopped or did not answer in time (it is then not ``alive``).
        """
        async with self._lock:
            if not self.alive:
                raise OSError("the watcher has stopped")
            self._count += 1
            token = str(self._count)
            found: list[FileEvent] = []
            try:
                with anyio.fail_after(SYNC_TIMEOUT):
                    assert self._process.stdin is not None
                    await self._process.stdin.send(f"{token}\n".encode())
                    while True:
                        line = await self._line()
                        if isinstance(line, dict):
                            if line.get("synced") == token:
                                return found
                            continue
                        path, op = line
                        found.append(FileEvent(root, str(path), str(op)))
            except (
                TimeoutError,
                OSError,
                ValueError,
                anyio.EndOfStream,
                anyio.IncompleteRead,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
            ) as ex:
                self.alive = False
                raise OSError(f"the watcher stopped answering: {ex!r}") from None

    def stop(self) -> None:
        """Stop the watcher's ``docker exec`` (from code that cannot wait: the process is
        reaped by the event loop; the watcher inside ends with its input)."""
        self.alive = False
        if self._process.returncode is None:
            try:
                self._process.kill()
            except ProcessLookupError:
                pass

    async def close(self) -> None:
        """Stop the watcher process (the container goes with the sample's cleanup)."""
        self.alive = False
        with anyio.CancelScope(shield=True):
            if self._process.returncode is None:
                try:
                    self._process.kill()
                except ProcessLookupError:
                    pass
            with anyio.move_on_after(5):
                await self._process.wait()
            await self._process.aclose()


async def _stderr(process: Process) -> str:
    if process.stderr is None:
        return ""
    with anyio.move_on_after(2):
        data = b""
        async for chunk in process.stderr:
            data += chunk
        return data.decode(errors="replace").strip()[-500:]
    return ""


async def _docker(*args: str) -> str:
    """``docker args...``'s output.

    Raises:
        OSError: the command failed.
    """
    result = await anyio.run_process(["docker", *args], check=False)
    if result.returncode != 0:
        why = result.stderr.decode(errors="replace").strip()
        raise OSError(f"docker {' '.join(args[:2])} failed: {why}")
    return result.stdout.decode().strip()


def member_compose(image: str, network_mode: str | None) -> ComposeConfig:
    """The compose project of one member's container: the member's ``default`` service on
    ``image`` (its working directory the ``workspace`` volume; ``network_mode`` as the staging
    container's, ``None`` for the project's own network) and the watcher beside it (the
    volume read-only, no network)."""
    idle = ["tail", "-f", "/dev/null"]
    member: dict[str, Any] = {
        "image": image,
        "x-local": True,
        "init": True,
        "command": idle,
        "working_dir": WORKSPACE,
        "volumes": [f"workspace:{WORKSPACE}"],
    }
    if network_mode is not None:
        member["network_mode"] = network_mode
    watcher = {
        "image": image,
        "x-local": True,
        "init": True,
        "command": idle,
        "network_mode": "none",
        "volumes": [f"workspace:{WORKSPACE}:ro"],
    }
    return ComposeConfig.model_validate(
        {"services": {"default": member, WATCHER: watcher}, "volumes": {"workspace": {}}}
    )


class DockerMembers:
    """Makes members' Docker containers, each with its watcher, from the staging container."""

    def __init__(self, provider: Any, staging: SandboxEnvironment) -> None:
        self._provider = provider
        self._staging = staging
        self._config: ComposeConfig | None = None
        self._lock = anyio.Lock()

    async def _compose(self) -> ComposeConfig:
        async with self._lock:
            if self._config is None:
                container = (await self._staging.connection()).container
                if container is None:
                    raise OSError("the staging container has no name")
                found = await _docker(
                    "inspect",
                    "--format",
                    "{{json .Config.Image}} {{json .HostConfig.NetworkMode}}",
                    container,
                )
                image_json, _, mode_json = found.partition(" ")
                mode = json.loads(mode_json)
                network = "none" if mode == "none" else None  # else: the project's own
                self._config = member_compose(json.loads(image_json), network)
            return self._config

    async def create(self) -> tuple[SandboxEnvironment, ContainerWatch | None]:
        """A new member container, and its running watcher (``None``, logged, when it could
        not start: the member's reads are then not watched)."""
        made: dict[str, SandboxEnvironment] = await self._provider.sample_init(
            "swarm", await self._compose(), {}
        )
        env = made["default"]
        watcher = made.get(WATCHER)
        watch: ContainerWatch | None = None
        try:
            if watcher is None:
                raise OSError(f"the member's project has no {WATCHER} service")
            container = (await watcher.connection()).container
            if container is None:
                raise OSError("the watcher container has no name")
            watch = await ContainerWatch.start(container)
        except OSError as ex:
            logger.warning("swarm: a member's Docker reads are not watched: %s", ex)
        return env, watch
