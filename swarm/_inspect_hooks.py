"""Inspect hooks: where swarm-eval meets every model call made inside a swarm."""

from __future__ import annotations

from inspect_ai.hooks import BeforeModelGenerate, Hooks, ModelUsageData, hooks

from swarm._context import _MEMBER, _RUN
from swarm._limits import SwarmStopped

__all__ = ["SwarmModelHooks"]


@hooks(name="swarm_eval", description="swarm-eval: meters swarm members' model calls")
class SwarmModelHooks(Hooks):
    """Meters every model call made in a swarm, and refuses new ones once it stops.

    Inspect awaits these hooks in the task that makes the call, so the swarm's context
    variables say which run and which member it belongs to.
    """

    def enabled(self) -> bool:
        # Inspect asks in the calling task: active only for calls made inside a swarm run,
        # so evals without a swarm pay nothing for these hooks
        return _RUN.get() is not None

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        run = _RUN.get()
        if run is None or not run.stopping or _MEMBER.get() is None:
            return
        raise SwarmStopped(run.stop_reason or "stopping")

    async def on_model_usage(self, data: ModelUsageData) -> None:
        run = _RUN.get()
        if run is None:
            return
        member = _MEMBER.get()
        run.record_usage(None if member is None else member.name, data.usage)
