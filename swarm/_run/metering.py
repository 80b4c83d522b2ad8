"""Inspect hooks: where swarm-eval meets every model call made inside a swarm.

Inspect awaits these hooks in the task that makes the call, so the context variables say which
run's usage sink and which member the call belongs to.  A call that comes through Inspect's
agent bridge marks its member bridged (``bridging``); one from the sandbox service of
``sandbox_agent_bridge()`` is never raised into: the member is halted instead.
"""

from __future__ import annotations

from contextvars import ContextVar

from inspect_ai.hooks import BeforeModelGenerate, Hooks, ModelUsageData, hooks

from swarm._accounts.limit_errors import SwarmLimitError
from swarm._inspect.private import bridged_call
from swarm._run.bridging import BridgedCallRefused, halt, note_bridged
from swarm._run.bus import bus_context
from swarm._run.identity import member_context
from swarm._run.ports import UsageSink

__all__ = ["SwarmModelHooks", "register_model_hooks", "usage_context"]

usage_context: ContextVar[UsageSink | None] = ContextVar("swarm_usage", default=None)


def register_model_hooks() -> None:
    """Register the hooks with Inspect, once per process, when the first swarm runs.

    Not at import: Inspect prints a banner at the start of every eval when any hook is
    registered, and evals that run no swarm should see nothing of swarm-eval.  A swarm's first
    run starts inside a sample, after that banner; Inspect picks up hooks added later at its
    next model call.
    """
    global _registered
    if not _registered:
        hooks(name="swarm_eval", description="swarm-eval: meters swarm members' model calls")(
            SwarmModelHooks
        )
        _registered = True


_registered = False


class SwarmModelHooks(Hooks):
    """Meters every model call made in a swarm, refuses new ones once it stops (or once the
    share the calling member spends from is used up), and tells the bus what each call that is
    sent carries (``Bus.sending``: what is seen)."""

    def enabled(self) -> bool:
        # Inspect asks in the calling task: active only for calls made inside a swarm run,
        # so evals without a swarm pay nothing for these hooks
        return usage_context.get() is not None

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        sink = usage_context.get()
        member = member_context.get()
        if sink is None or member is None:
            return
        bridge = bridged_call()
        if bridge is not None:
            note_bridged(sink.member(member.name), bridge)
        refused = sink.refused(member.name)
        if refused is not None:
            if bridge == "sandbox":  # a limit error here would end the whole sample
                halt(sink.member(member.name), refused.status)
                raise BridgedCallRefused(refused.message)
            raise refused
        bus = bus_context.get()
        if bus is not None:  # the call is sent: the tool results and notices in it are seen
            bus.sending(member.name, data.input)

    async def on_model_usage(self, data: ModelUsageData) -> None:
        sink = usage_context.get()
        if sink is None:
            return
        member = member_context.get()
        try:
            sink.record_usage(None if member is None else member.name, data.usage)
        except SwarmLimitError as ex:
            if member is None or bridged_call() != "sandbox":
                raise
            # metered; the call's output still reaches the agent, which is then ended
            halt(sink.member(member.name), ex.status)
