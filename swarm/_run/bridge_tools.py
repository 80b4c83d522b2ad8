"""``bridge_tools()``: the swarm's tools for a bridged member, whose agent talks to its model
through Inspect's agent bridge rather than running Inspect tools itself.

A bridged agent declares tools to its model in its SDK's format and runs each call the model
makes.  ``BridgeTools`` gives it the member's swarm tools both ways: as tool declarations for
the OpenAI Chat Completions, OpenAI Responses and Anthropic Messages APIs, with ``call`` to run
a call the model made (an in-process agent under ``agent_bridge()``), and as a
``BridgedToolsSpec`` that ``sandbox_agent_bridge(bridged_tools=[...])`` serves to an agent in
the member's sandbox over MCP (Inspect's bridged host tools).

Either way the tools are the ones ``swarm_tools()`` gives a member's own loop, run by Inspect
(``execute_tools`` in process, the sandbox service's host tools from a sandbox): their
arguments are checked against their schemas as for any tool call, each call is a tool event in
the member's span, and a call with bad arguments is refused with Inspect's message and counted
as the channel's ``invalid`` rejection.  Outside a swarm there are no tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inspect_ai.agent import BridgedToolsSpec
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, execute_tools
from inspect_ai.tool import Tool, ToolCall, ToolDef
from shortuuid import uuid as shortuuid

from swarm._inspect.private import current_agent_span_id, current_background_registry
from swarm._run.identity import background_context, member_context
from swarm._run.wiring import wiring_context

__all__ = ["BridgeTools", "bridge_tools"]


class BridgeTools:
    """The swarm tools of one bridged member, for its agent's SDK (see ``bridge_tools()``).

    Attributes:
        tools: the Inspect tools themselves (channel tools, ``swarm_wait``, spawning tools),
            in the order ``swarm_tools()`` gives them.
    """

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = list(tools)
        self._defs = [ToolDef(t) for t in self.tools]
        self._by_name = {d.name: d for d in self._defs}

    @property
    def names(self) -> list[str]:
        """The tools' names, as the model calls them."""
        return [d.name for d in self._defs]

    def _schema(self, tool: ToolDef) -> dict[str, Any]:
        schema: dict[str, Any] = tool.parameters.model_dump(exclude_none=True)
        return schema

    def openai(self) -> list[dict[str, Any]]:
        """The tools for the OpenAI Chat Completions API (``tools=`` of
        ``chat.completions.create``)."""
        return [
            {
                "type": "function",
                "function": {
                    "name": d.name,
                    "description": d.description,
                    "parameters": self._schema(d),
                },
            }
            for d in self._defs
        ]

    def openai_responses(self) -> list[dict[str, Any]]:
        """The tools for the OpenAI Responses API (``tools=`` of ``responses.create``)."""
        return [
            {
                "type": "function",
                "name": d.name,
                "description": d.description,
                "parameters": self._schema(d),
                "strict": False,
            }
            for d in self._defs
        ]

    def anthropic(self) -> list[dict[str, Any]]:
        """The tools for the Anthropic Messages API (``tools=`` of ``messages.create``)."""
        return [
            {"name": d.name, "description": d.description, "input_schema": self._schema(d)}
            for d in self._defs
        ]

    def spec(self, name: str = "swarm", *, require_proposal: bool = True) -> BridgedToolsSpec:
        """The tools as Inspect's bridged host tools, for ``sandbox_agent_bridge(
        bridged_tools=[...])``: an MCP server called ``name`` that the agent in the sandbox
        reaches at ``bridge.mcp_server_configs``.  ``require_proposal`` as in
        ``BridgedToolsSpec`` (a host tool runs only for a call the model proposed)."""
        return BridgedToolsSpec(
            name=name, tools=list(self.tools), require_proposal=require_proposal
        )

    async def call(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None = None,
        *,
        id: str | None = None,
    ) -> str:
        """Run one tool call the model made and return what the model should read.

        Args:
            name: the tool's name, as the model called it.
            arguments: its arguments: the JSON text an OpenAI tool call carries, or the mapping
                an Anthropic ``tool_use`` block has (``None``: none).
            id: the call's id (the SDK's tool call id), for the tool event.

        Returns:
            The tool's result as text; a refused call (an unknown tool, arguments that are not
            a JSON object or do not fit the tool's schema, a channel's refusal such as a rate
            limit) as ``"Error: "`` and the reason, as Inspect shows a tool error to a model.
        """
        if name not in self._by_name:
            known = ", ".join(self.names) or "none (outside a swarm)"
            return f"Error: there is no swarm tool called {name!r}; the tools are: {known}"
        parsed, problem = _arguments(arguments)
        call = ToolCall(
            id=id or f"swarm-bridge-{shortuuid()}",
            function=name,
            arguments=parsed,
            parse_error=problem,
        )
        result = await execute_tools(
            [ChatMessageAssistant(content="", tool_calls=[call])], self.tools
        )
        replies = [m for m in result.messages if isinstance(m, ChatMessageTool)]
        if not replies:
            return "Error: the tool gave no result"
        reply = replies[0]
        if reply.error is not None:
            return f"Error: {reply.error.message}"
        return reply.text


def _arguments(arguments: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as a mapping, or why they cannot be (Inspect then refuses the
    call with that message, as a parsing error)."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, Mapping):
        return dict(arguments), None
    if not isinstance(arguments, str):
        return {}, f"Tool call arguments must be a JSON object, got {type(arguments).__name__}"
    text = arguments.strip()
    if not text:
        return {}, None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as ex:
        return {}, f"Error parsing the following tool call arguments:\n\n{text}\n\nError: {ex}"
    if not isinstance(value, dict):
        return {}, f"Tool call arguments must be a JSON object, got: {text}"
    return value, None


def bridge_tools() -> BridgeTools:
    """The swarm's tools for a bridged member's agent (none outside a swarm).

    Call it in the member's agent, before its loop starts: the first loop of a member that
    resolves its tools (this or ``swarm_tools()``) is the member's own, and gets every channel's
    tools and ``swarm_wait`` when a channel can wake members::

        @agent
        def sdk_member() -> Agent:
            async def execute(state: AgentState) -> AgentState:
                tools = bridge_tools()
                async with agent_bridge(state) as bridge:
                    client = AsyncOpenAI(api_key="unused", base_url="http://unused.invalid/v1")
                    ...  # chat.completions.create(model="inspect", tools=tools.openai(), ...)
                    ...  # await tools.call(call.function.name, call.function.arguments)
                    return bridge.state

            return execute
    """
    wiring = wiring_context.get()
    member = member_context.get()
    if wiring is None or member is None:
        return BridgeTools([])
    span = current_agent_span_id() or ""
    if background_context.get():  # background work is never the member's own loop
        return BridgeTools(wiring.member_tools(member.name, nested=True))
    own = wiring.bind_own_loop(member.name, span)
    wiring.note_background(member.name, current_background_registry())
    return BridgeTools(wiring.member_tools(member.name, nested=own != span))
