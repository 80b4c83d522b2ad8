"""What a member's agent wires in to reach the swarm: ``swarm_tools()`` and
``swarm_on_continue()``.

Both work inside an ``@agent`` member builder, so a log can rebuild the member, and both do
nothing outside a swarm, so the same agent runs alone too::

    @agent
    def worker() -> Agent:
        return react(tools=[swarm_tools()], on_continue=swarm_on_continue())
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeGuard, get_type_hints

from inspect_ai.agent import AgentState
from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import Tool, ToolError, ToolSource, tool

from swarm._inspect.private import current_agent_span_id, current_background_registry
from swarm._run.identity import background_context, member_context
from swarm._run.waits import waits_context
from swarm._run.wiring import wiring_context
from swarm.records import INFO_SOURCE, NOTICE_SEPARATOR

__all__ = ["swarm_on_continue", "swarm_tools", "swarm_wait"]


class _SwarmTools(ToolSource):
    """The tools of every channel the calling loop can reach (none outside a swarm)."""

    async def tools(self) -> list[Tool]:
        wiring = wiring_context.get()
        member = member_context.get()
        if wiring is None or member is None:
            return []
        span = current_agent_span_id() or ""
        if background_context.get():  # background work is never the member's own loop
            return wiring.member_tools(member.name, nested=True)
        own = wiring.bind_own_loop(member.name, span)
        wiring.note_background(member.name, current_background_registry())
        return wiring.member_tools(member.name, nested=own != span)


def swarm_tools() -> ToolSource:
    """A tool source for a member's tools: every channel's tools it can reach.

    The member's own loop (the first that resolves this source) gets every channel's tools
    and ``swarm_wait`` when a channel supports waiting; a subagent's loop gets the tools of
    channels that reach subagents.  Outside a swarm it gives no tools.
    """
    return _SwarmTools()


@tool(name="swarm_wait", parallel=False)
def swarm_wait() -> Tool:
    """The ``swarm_wait`` tool (offered by ``swarm_tools()`` when a channel can wake members)."""

    # plain defaults rather than Optional: Inspect copies every tool's schema on every call
    async def execute(path: str = "", timeout: float = 0) -> str:
        """Wait for another member's work instead of polling: returns when a file you watch
        changes, a member ends, every member is waiting, the swarm stops, or the time is up.

        Args:
            path: a shared file or directory to watch, or a file id such as f-3; omit it to
                watch everything.
            timeout: the most seconds to wait, 1 to the swarm's max_wait (omit: max_wait).
        """
        if not math.isfinite(timeout):  # JSON from a model may hold NaN or Infinity
            raise ToolError(f"timeout must be a finite number of seconds, got {timeout!r}")
        waits = waits_context.get()
        if waits is None:
            return "There is nothing to wait for outside a swarm."
        return await waits.wait(path or None, None if timeout == 0 else timeout)

    execute.__annotations__ = get_type_hints(execute)  # Inspect reads them on every call
    return execute


ContinueResult = bool | str | AgentState


def swarm_on_continue(
    inner: str | Callable[[AgentState], Awaitable[ContinueResult]] | None = None,
    *,
    no_tool_calls: Literal["continue", "stop"] = "continue",
) -> Callable[[AgentState], Awaitable[ContinueResult]]:
    """An ``on_continue`` for ``react()`` that adds the swarm's notice at turn boundaries.

    It first decides what the agent would do without it: ``inner`` (a message, or an
    ``on_continue`` function) or, without one, continue (``no_tool_calls="continue"``, for
    react with a submit tool) or stop when the model called no tool (``"stop"``, for
    ``react(submit=False)``).  Unless that is to stop, a member in ``notify`` mode gets at most
    one notice per turn boundary naming what changed in the channels since it last looked: at
    the end of the turn's last tool result, or as a user message when the turn ended without a
    tool call or its last result failed or is not plain text (or when ``inner`` gave a
    message: added to it).
    Poll-mode members, subagents and agents outside a swarm get nothing added.
    """

    async def on_continue(state: AgentState) -> ContinueResult:
        if callable(inner):
            base: ContinueResult = await inner(state)
        elif isinstance(inner, str):
            base = inner
        elif no_tool_calls == "stop" and not state.output.message.tool_calls:
            base = False
        else:
            base = True
        if base is False:
            return base
        wiring = wiring_context.get()
        member = member_context.get()
        if wiring is None or member is None:
            return base
        span = current_agent_span_id() or ""
        notice = wiring.notice_for(member.name, span)
        if notice is None:
            return base
        text, metadata = notice
        if isinstance(base, AgentState):
            state = base
        elif isinstance(base, str):
            text = f"{base}\n\n{text}"
        last = state.messages[-1] if state.messages else None
        if not isinstance(base, str) and _can_carry(last):
            state.messages[-1] = _carrying(last, text, metadata)
        else:
            state.messages.append(ChatMessageUser(content=text, metadata={INFO_SOURCE: metadata}))
        return state

    return on_continue


def _can_carry(message: ChatMessage | None) -> TypeGuard[ChatMessageTool]:
    """Whether a notice can ride on ``message``: a tool result of plain text that succeeded.
    A provider sends a failed result's error, not its content; and Inspect rebuilds a result
    of several parts that holds media (moving the media to a user message), dropping its
    metadata: a notice riding on either would not reach the model as the one the bus counts."""
    return (
        isinstance(message, ChatMessageTool)
        and message.error is None
        and isinstance(message.content, str)
    )


def _carrying(result: ChatMessageTool, text: str, metadata: dict[str, Any]) -> ChatMessageTool:
    """A copy of the turn's last tool result with the notice at its end, as a shared-memory
    result carries its status line: the notice adds no message to the conversation."""
    carried = {**(result.metadata or {}), INFO_SOURCE: metadata}
    content = result.text + NOTICE_SEPARATOR + text
    return result.model_copy(update={"content": content, "metadata": carried})
