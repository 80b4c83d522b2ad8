"""What every benchmark mode shares: the model's fixed usage, the ``noop`` tool and the floor's
agent, the floor's task group, and ``Mode``.  (No ``from __future__ import annotations``: Inspect
evaluates the annotations of the ``@tool`` and ``@agent`` defined inside functions against
module globals.)"""

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

ANSWER = "42"
SUBMITTED_KEY = "bench:submitted"
"""Where the floor's solver leaves how many of its agents submitted (the swarms keep theirs in
their ``inspect_swarm:result`` record)."""
RESULT_KEY = "inspect_swarm:result"
"""The result record both swarm-eval and inspect-swarm 0.1.0 write to the sample store."""
USAGE = (100, 10)
"""Fixed (input, output) tokens per model call, so usage costs the same in every mode."""


def noop_script(n: int, k: int) -> dict[str, list[dict[str, Any]]]:
    """k calls to ``noop``, then ``submit``; for every member (``"*"``), usage always set."""
    steps: list[dict[str, Any]] = [
        {"tool": "noop", "args": {"i": i}, "usage": list(USAGE)} for i in range(k)
    ]
    steps.append({"submit": ANSWER, "usage": list(USAGE)})
    return {"*": steps}


@functools.cache
def noop_factory() -> Callable[..., Any]:
    """The registered ``noop`` tool."""
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

    return noop


@functools.cache
def worker_factory() -> Callable[..., Any]:
    """The registered ``@agent`` the no-channel modes run: ``react()`` with the ``noop`` tool."""
    from inspect_ai.agent import Agent, agent, react

    noop = noop_factory()

    @agent
    def worker() -> Agent:
        return react(tools=[noop()])

    return worker


def preamble(name: str, n: int) -> str:
    """What a swarm tells each member (the same words in swarm-eval and inspect-swarm)."""
    return f"You are {name}, one of {n} agents in a swarm working on this task at the same time."


def build_floor_worker_group(
    names: list[str],
    tools: list[Any] | None = None,
    worker: Callable[[], Any] | None = None,
    tools_for: Callable[[str], list[Any]] | None = None,
) -> Any:
    """The named agents in one anyio task group inside a solver, no swarm around them: react()
    agents with ``noop`` (or ``tools``; or ``worker()``'s agents; or ``tools_for(name)``, each
    agent's own), each told its name as a swarm would."""
    import anyio
    from inspect_ai.agent import AgentState, react, run
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.solver import Generate, TaskState, solver

    if worker is None:
        worker = worker_factory() if tools is None else (lambda: react(tools=tools))
    n = len(names)

    def submitted(state: AgentState | None) -> bool:
        # react() drops the submit call from the messages; the answer becomes the completion.
        return state is not None and state.output.completion.rstrip().endswith(ANSWER)

    @solver
    def floor() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            results: list[AgentState | None] = [None] * n

            async def one(i: int) -> None:
                messages = [
                    ChatMessageUser(content=state.input_text, source="input"),
                    ChatMessageUser(content=preamble(names[i], n), source="input"),
                ]
                agent = react(tools=tools_for(names[i])) if tools_for else worker()
                results[i] = await run(agent, messages, name=names[i])

            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(one, i)
            state.store.set(SUBMITTED_KEY, sum(submitted(s) for s in results))
            state.output.completion = ANSWER
            return state

        return solve

    return floor()


def _members_calls(n: int, k: int) -> int:
    return n * (k + 1)


def _members_tool_calls(n: int, k: int) -> int:
    return n * k


def _all_submit(n: int) -> int:
    return n


@dataclass(frozen=True)
class Mode:
    """One way of running W(n, k).  ``build(n, k)`` returns the task's solver (or agent)."""

    description: str
    build: Callable[[int, int], Any]
    script: Callable[[int, int], Mapping[str, Any]] = noop_script
    calls: Callable[[int, int], int] = _members_calls
    """The model calls a complete run makes."""
    tool_calls: Callable[[int, int], int] = _members_tool_calls
    """The calls of ``tool`` a complete run makes, every one without an error."""
    submitted: Callable[[int], int] = _all_submit
    """The members (or agents) that submit in a complete run."""
    requires: str | None = None
    """A distribution that must be installed (the mode is skipped without it)."""
    requires_version: str | None = None
    install_hint: str | None = None
    tags: tuple[str, ...] = field(default=())
    tool: str = "noop"
    """The tool each member calls k times; every one of those n·k calls must succeed."""
    check: Callable[[Any], str | None] | None = None
    """A mode's own check of the finished sample: why the run is not what it claims, or None."""
    sandbox: str | tuple[str, str] | None = None
    """The task's sandbox provider, or provider and configuration file (None: no sandbox)."""
    files: Callable[[int], Mapping[str, str]] | None = None
    """The sample's files at n (None: none)."""
    time_limit: float | None = None
    """The sample's ``time_limit`` (None: none).  With one, every plugin hook call is bounded by
    the time the sample has left (an interval timer armed and disarmed around each call)."""
    server: bool = False
    """Run on Inspect's ``openai-api`` provider and the scripted server (``swarm
    scripted-server``, in a process of its own) instead of the in-process ``swarm/scripted``."""
