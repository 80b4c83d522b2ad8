"""The spawning tools a member that may spawn gets from ``swarm_tools()``: ``spawn_child``,
``list_children``, ``cancel_child`` and ``wait_for_children``.

Each acts for the member whose task calls it (the runtime's own record, never an argument), on
the spawning service of the run it is called in.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import get_type_hints

from inspect_ai.tool import Tool, ToolError, tool

from swarm._run.identity import member_context
from swarm._run.members import Roster
from swarm._run.spawning import Spawner, spawner_context
from swarm._run.tools import swarm_wait
from swarm._run.waits import Waits, clamped_timeout

__all__ = ["kernel_tool_kind", "kernel_tools", "spawn_tools"]


def _caller() -> tuple[Spawner, str]:
    spawner = spawner_context.get()
    member = member_context.get()
    if spawner is None or member is None:
        raise ToolError("spawning is only available to members of a swarm that allows it")
    return spawner, member.name


@tool(name="spawn_child")
def spawn_child() -> Tool:
    """The ``spawn_child`` tool."""

    async def execute(name: str, task: str, template: str = "") -> str:
        """Start a child member that works on a task of yours and reports back to you.

        Args:
            name: the child's name (letters, digits, '.', '_', '-').
            task: everything the child needs to know: it sees only this text.
            template: which kind of child (omit when you may spawn only one kind).
        """
        spawner, member = _caller()
        return spawner.spawn(member, name, task, template)

    execute.__annotations__ = get_type_hints(execute)  # Inspect reads them on every call
    return execute


@tool(name="list_children")
def list_children() -> Tool:
    """The ``list_children`` tool."""

    async def execute() -> str:
        """List your children: each one's state, how it ended, and whether it replied."""
        spawner, member = _caller()
        return spawner.describe(member)

    execute.__annotations__ = get_type_hints(execute)  # Inspect reads them on every call
    return execute


@tool(name="cancel_child")
def cancel_child() -> Tool:
    """The ``cancel_child`` tool."""

    async def execute(name: str) -> str:
        """Stop one of your running children.

        Args:
            name: the child's name.
        """
        spawner, member = _caller()
        return spawner.cancel(member, name)

    execute.__annotations__ = get_type_hints(execute)  # Inspect reads them on every call
    return execute


@tool(name="wait_for_children", parallel=False)
def wait_for_children() -> Tool:
    """The ``wait_for_children`` tool."""

    async def execute(timeout: float = 0) -> str:
        """Wait until every child of yours has ended (their replies and receipts are then in
        read_messages), instead of polling.

        Args:
            timeout: the most seconds to wait, 1 to 600 (omit: 600).
        """
        if not math.isfinite(timeout):
            raise ToolError(f"timeout must be a finite number of seconds, got {timeout!r}")
        spawner, member = _caller()
        return await spawner.wait(
            member, 600.0 if timeout == 0 else clamped_timeout(timeout, 600.0)
        )

    execute.__annotations__ = get_type_hints(execute)  # Inspect reads them on every call
    return execute


def spawn_tools() -> list[Tool]:
    """The four spawning tools."""
    return [spawn_child(), list_children(), cancel_child(), wait_for_children()]


def kernel_tool_kind(roster: Roster, spawner: Spawner | None, member: str, nested: bool) -> bool:
    """Which kernel tools a loop of ``member`` gets: whether it is the own loop of a member
    that may spawn (the tools are built once per kind, not per call)."""
    return not nested and spawner is not None and bool(roster[member].entry.spec.can_spawn)


def kernel_tools(waits: Waits | None, spawns: Hashable) -> list[Tool]:
    """The kernel's own tools: ``swarm_wait`` when a channel can wake members, and the spawning
    tools for the own loop of a member that may spawn."""
    tools: list[Tool] = [swarm_wait()] if waits is not None else []
    if spawns:
        tools.extend(spawn_tools())
    return tools
