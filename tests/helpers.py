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


# -- for the value tests (tests/test_values_*.py) ---------------------------------------------


def only_sample(log: Any) -> EvalSample:
    """The one sample of a successful eval log."""
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 1
    sample: EvalSample = log.samples[0]
    return sample


def ledger(sample: EvalSample) -> dict[str, Any]:
    """The sample's inspect_swarm:ledger record."""
    record: dict[str, Any] = sample.store["inspect_swarm:ledger"]
    return record


def metrics(sample: EvalSample) -> dict[str, Any]:
    """The sample's inspect_swarm:metrics record."""
    record: dict[str, Any] = sample.store["inspect_swarm:metrics"]
    return record


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A record's member rows by member name."""
    return {row["name"]: row for row in rows}


def comm_events(sample: EvalSample, kind: str | None = None) -> list[dict[str, Any]]:
    """The data of the swarm's comm evidence events (of one ``kind``), in order."""
    from inspect_ai.event import InfoEvent

    found = []
    for e in sample.events:
        if isinstance(e, InfoEvent) and e.source == "inspect_swarm":
            data = e.data
            if isinstance(data, dict) and data.get("type") == "comm":
                if kind is None or data.get("kind") == kind:
                    found.append(data)
    return found
