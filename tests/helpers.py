"""Small helpers shared by the tests: agents with tools, and reading a swarm's records."""

from __future__ import annotations

from typing import Any

from inspect_ai.agent import Agent, agent, react
from inspect_ai.log import EvalSample
from inspect_ai.tool import Tool, tool


@tool
def noop() -> Tool:
    async def execute(i: int) -> str:
        """Do nothing.

        Args:
            i: a counter
        """
        return f"ok {i}"

    return execute


@agent
def worker() -> Agent:
    """A react agent with a no-op tool."""
    return react(tools=[noop()])


def result(sample: EvalSample) -> dict[str, Any]:
    """The sample's inspect_swarm:result record."""
    record: dict[str, Any] = sample.store["inspect_swarm:result"]
    return record


def statuses(sample: EvalSample) -> dict[str, str | None]:
    """Member name -> status from the result record."""
    return {m["name"]: m["status"] for m in result(sample)["members"]}


@agent
def shm_worker() -> Agent:
    """A react agent wired to the swarm: channel tools and notices."""
    from swarm import swarm_on_continue, swarm_tools

    return react(tools=[noop(), swarm_tools()], on_continue=swarm_on_continue())


def tool_results(sample: EvalSample, function: str) -> list[tuple[str, str | None]]:
    """(result text, error message) of every call of ``function``, in order."""
    from inspect_ai.event import ToolEvent

    return [
        (str(e.result), None if e.error is None else e.error.message)
        for e in sample.events
        if isinstance(e, ToolEvent) and e.function == function
    ]
