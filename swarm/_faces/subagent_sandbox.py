"""A deepagent subagent's tool that runs in a sandbox of the subagent's own.

With ``sandboxes.per_member``, each run of a subagent (one ``agent`` dispatch) gets an
environment of its own at its first tool call, holding the sample files ``sandboxes.files``
names for its subagent type, and its file events are recorded under its runtime name
(``<member>/AGENT-N`` for a background dispatch, ``<member>/<span id>`` for a foreground one),
the name the subagents record gives it.  Outside such a swarm, or called from the member's own
loop, the tool runs as it is.
"""

from __future__ import annotations

from typing import Any

import anyio
from inspect_ai.tool import Tool, ToolDef

from swarm._inspect.private import current_agent_span_id, current_background_registry
from swarm._run.identity import member_context
from swarm._run.sandboxes import sandboxes_context
from swarm._run.wiring import wiring_context, with_execute

__all__ = ["own_sandbox", "subagent_run_name"]


def subagent_run_name(member: str, span: str) -> str:
    """The runtime's name for the subagent run whose agent span is ``span``."""
    registry = current_background_registry()
    futures = [] if registry is None else list(registry.futures.values())
    agent = next((f.agent_id for f in futures if f.span_id == span), None)
    return f"{member}/{agent or span}"


def own_sandbox(tool: Tool, subagent: str) -> Tool:
    """``tool`` for subagent type ``subagent``, run in the dispatch's own sandbox."""
    tdef = ToolDef(tool)
    inner = tdef.tool

    async def execute(**kwargs: Any) -> Any:
        sandboxes = sandboxes_context.get()
        member = member_context.get()
        span = current_agent_span_id()
        wiring = wiring_context.get()
        own = None if wiring is None or member is None else wiring.own_loop(member.name)
        if sandboxes is None or member is None or span is None or span == own:
            return await inner(**kwargs)
        name = subagent_run_name(member.name, span)
        result: list[Any] = []
        errors: list[Exception] = []

        async def in_own() -> None:  # a task of its own: the sandbox it sets stays in it
            try:
                await sandboxes.enter_subagent(name, subagent)
                result.append(await inner(**kwargs))
            except Exception as ex:  # the tool's own error, as the tool raised it
                errors.append(ex)

        async with anyio.create_task_group() as tg:
            tg.start_soon(in_own)
        if errors:
            raise errors[0]
        return result[0]

    return with_execute(tdef, execute)
