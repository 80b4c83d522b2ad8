"""Inspect hooks: where swarm-eval meets every model call made inside a swarm."""

from __future__ import annotations

from inspect_ai.hooks import BeforeModelGenerate, Hooks, hooks

from swarm._context import _MEMBER, _RUN

__all__ = ["SwarmModelHooks"]


@hooks(name="swarm_eval", description="swarm-eval: refuses model calls once a swarm stops")
class SwarmModelHooks(Hooks):
    """Refuses new model calls in a stopping swarm (calls already in flight finish)."""

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        run = _RUN.get()
        if run is None or not run.stopping or _MEMBER.get() is None:
            return
        from swarm._run import SwarmStopped

        raise SwarmStopped(run.stop_reason or "stopping")
