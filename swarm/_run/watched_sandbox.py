"""A member's sandbox environment as its tools see it: every call bracketed, so the runtime
collects the file events it caused as soon as it ends (``sandboxes.MemberSandboxes``)."""

from __future__ import annotations

from typing import Any, Literal, Protocol, overload

from inspect_ai.util import ExecResult, SandboxEnvironment

__all__ = ["CallWatcher", "WatchedSandbox"]


class CallWatcher(Protocol):
    """Who is told when a member's tool call begins and ends."""

    def busy(self, member: str, delta: int) -> None:
        """A call of ``member``'s tools began (+1) or ended (-1)."""
        ...

    async def settle(self, member: str) -> None:
        """A call of ``member``'s tools ended: record the file events queued now."""
        ...


class WatchedSandbox(SandboxEnvironment):
    """A member's environment as its tools see it: every call bracketed, so the runtime
    collects the file events it caused as soon as it ends."""

    def __init__(self, env: Any, owner: CallWatcher, member: str) -> None:
        super().__init__()
        self._env = env
        self._owner = owner
        self._member = member

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
        self._owner.busy(self._member, 1)
        try:
            result: ExecResult[str] = await self._env.exec(
                cmd, input, cwd, env, user, timeout, timeout_retry, concurrency
            )
            return result
        finally:
            await self._owner.settle(self._member)
            self._owner.busy(self._member, -1)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        self._owner.busy(self._member, 1)
        try:
            await self._env.write_file(file, contents)
        finally:
            await self._owner.settle(self._member)
            self._owner.busy(self._member, -1)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        self._owner.busy(self._member, 1)
        try:
            data: str | bytes = await self._env.read_file(file, text)
            return data
        finally:
            await self._owner.settle(self._member)
            self._owner.busy(self._member, -1)

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: Any,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        return None  # the environment inside is cleaned up with the sample's own

    def default_polling_interval(self) -> float:
        polling: float = self._env.default_polling_interval()
        return polling
