"""The demo task: a small arithmetic question for a swarm, on the scripted model by default.

``swarm demo`` runs it; so does ``inspect eval swarm/swarm_demo --model swarm/scripted``
(with ``-M scripts=...`` or any real model).  ``swarm/arithmetic`` is the same question with no
solver of its own, for ``--solver swarm/swarm`` (the README's first command, which works from
an installed package in any directory).
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.agent import Agent, agent, react
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.tool import Tool, tool

from swarm import member, swarm

__all__ = ["DEMO_SCRIPTS", "arithmetic", "calculator_worker", "multiply", "swarm_demo"]

DEMO_SCRIPTS = {
    "worker-1": [
        {"tool": "multiply", "args": {"x": 6, "y": 7}},
        {"submit": "42"},
    ],
    "worker-2": [
        {"tool": "multiply", "args": {"x": 7, "y": 6}},
        {"tool": "multiply", "args": {"x": 42, "y": 1}},
        {"submit": "42"},
    ],
    "*": [
        {"reply": "Let me think about 6 * 7 first."},
        {"tool": "multiply", "args": {"x": 6, "y": 7}},
        {"submit": "42"},
    ],
}
"""Scripts for the scripted model: worker-1 answers first, the others take longer."""


@tool
def multiply() -> Tool:
    async def execute(x: float, y: float) -> str:
        """Multiply two numbers.

        Args:
            x: the first number.
            y: the second number.
        """
        result = x * y
        return str(int(result)) if float(result).is_integer() else str(result)

    return execute


@agent
def calculator_worker() -> Agent:
    """A react agent with a multiply tool."""
    return react(
        description="Answers arithmetic questions with a calculator.",
        tools=[multiply()],
    )


def _question() -> Sample:
    return Sample(id="six-times-seven", input="What is 6 * 7?", target="42")


@task
def arithmetic() -> Task:
    """'What is 6 * 7?' with no solver of its own: give it one, such as ``--solver swarm/swarm``
    (``docs/examples/task.py`` is the same task, written out as yours would be)."""
    return Task(dataset=[_question()], scorer=includes())


@task
def swarm_demo(members: int = 3, stop_on_submission: bool = False) -> Task:
    """Three calculator workers answer 'What is 6 * 7?'; every one finishes by default."""
    return Task(
        dataset=[_question()],
        solver=swarm(
            members=member(calculator_worker, name="worker", count=members),
            controller={"name": "leaderless", "stop_on_submission": stop_on_submission},
        ),
        scorer=includes(),
    )
