"""Gate checks the runtime makes: a member's submission checked by a verifier.

A verifier is ``"task"`` (the task's own scorers, through Inspect's ``score()``), the registry
name of an Inspect scorer, or a ``Scorer``.  A check passes when the first score's value is 1.0
under Inspect's ``value_to_float()``.
"""

from __future__ import annotations

from copy import copy

from inspect_ai.agent import AgentState
from inspect_ai.scorer import Score, score, value_to_float

from swarm._inspect.private import running_task_state
from swarm._spec.verifier import Verifier

__all__ = ["check"]


async def check(verifier: Verifier, state: AgentState) -> tuple[bool, Score | None]:
    """Check a member's answer; ``(passed, score)``."""
    if verifier == "task":
        scores = await score(state)
        found = scores[0] if scores else None
    else:
        # a scorer needs the sample's TaskState (its target above all): Inspect's score()
        # builds it the same way, from the running sample's state
        current = running_task_state()
        if current is None:
            return False, None
        task_state = copy(current)
        task_state.messages = state.messages
        task_state.output = state.output
        assert callable(verifier)
        found = await verifier(task_state, task_state.target)
    if found is None:
        return False, None
    return value_to_float()(found.value) == 1.0, found
