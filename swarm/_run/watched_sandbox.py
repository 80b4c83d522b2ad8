"""A member's sandbox environment as its tools see it: every call bracketed, in the member's
turn of a shared environment (``turns``), so the runtime collects the file events it caused as
soon as it ends (``sandboxes.MemberSandboxes``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal, Protocol, overload

from inspect_ai.util import ExecResult, SandboxEnvironment

from swarm._run.turns import Turns

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
    """A member's environment as its tools see it: every call runs in the member's turn of its
    environment (``turns``: members of a share group take turns, so each event is credited to
    the member whose command made it) and is bracketed, so the runtime collects the file events
    it caused as soon as it ends, still in that turn."""

    def __init__(self, env: Any, owner: CallWatcher, member: str, turns: Turns) -> None:
        super().__init__()
        self._env = env
        self._owner = owner
        self._member = member
        self._turns = turns

    @asynccontextmanager
    async def _call(self) -> AsyncIterator[None]:
        async with self._turns.turn(self._member):
            self._owner.busy(self._member, 1)
            try:
                yield
            finally:
                await self._owner.settle(self._member)
                self._owner.busy(self._member, -1)

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
        async with self._call():
            result: ExecResult[str] = await self._env.exec(
                cmd, input, cwd, env, user, timeout, timeout_retry, concurrency
            )
            return result

    async def write_file(self, file: str, contents: str | bytes) -> None:
        async with self._call():
            await self._env.write_file(file, contents)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        async with self._call():
            data: str | bytes = await self._env.read_file(file, text)
            return data

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
