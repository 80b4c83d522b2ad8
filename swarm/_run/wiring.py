"""What a member's agent is wired to: its own loop, the channels' tools, and its notices.

A member's *own loop* is the first agent loop that resolves ``swarm_tools()`` in its task; every
other loop acting for it is a subagent's (``nested``).  Tools are resolved once per run for own
loops and once for nested ones; notices go to own loops only, at turn boundaries, in notify mode.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
from inspect_ai.tool import Tool, ToolDef

from swarm._hooks.calls import RunHooks
from swarm._run.bus import Bus
from swarm._run.ports import RunPort
from swarm.errors import PluginError

__all__ = ["Wiring", "wiring_context", "with_execute"]


def _contained(plugin: str, tool: Any) -> Any:
    """``tool`` (a plugin's) as the model is offered it, but whatever its call raises that is
    not an ``Exception`` (``SystemExit``...) and not the run's own cancellation is the plugin's
    fault, a ``PluginError`` naming it and the tool (which fails the run), never the process's
    end."""
    found = ToolDef(tool)
    inner, name = found.tool, found.name

    async def execute(**kwargs: Any) -> Any:
        try:
            return await inner(**kwargs)
        except (Exception, anyio.get_cancelled_exc_class()):
            raise
        except BaseException as ex:
            raise PluginError(plugin, f"swarm_member_tools: tool {name}", f"raised {ex!r}") from ex

    return with_execute(found, execute)


def with_execute(found: ToolDef, execute: Callable[..., Any]) -> Tool:
    """The tool ``found`` defines, with ``execute`` as what its call runs: everything else the
    model and Inspect see of it kept (name, description, parameters, parallel, viewer,
    model_input, max_output, options)."""
    return ToolDef(
        execute,
        name=found.name,
        description=found.description,
        parameters=found.parameters,
        parallel=found.parallel,
        viewer=found.viewer,
        model_input=found.model_input,
        max_output=found.max_output,
        options=found.options,
    ).as_tool()


class Wiring:
    """One run's wiring: own loops, each loop kind's tools, notices, and what was wired."""

    def __init__(
        self,
        port: RunPort,
        hooks: RunHooks,
        bus: Bus,
        channel_names: Sequence[str],
        tool_kind: Callable[[str, bool], Hashable],
        extra_tools: Callable[[Hashable], list[Any]],
    ) -> None:
        self._port = port
        self._hooks = hooks
        self._bus = bus
        self._channel_names = tuple(channel_names)
        self._tool_kind = tool_kind
        self._extra_tools = extra_tools
        self._own_loops: dict[str, str] = {}
        self._tools: dict[tuple[bool, Hashable], list[Any]] = {}
        self._channel_tools: dict[tuple[bool, Hashable], bool] = {}
        # the name a model calls each channel tool by -> its channel (to count malformed calls)
        self.tool_channels: dict[str, str] = {}
        self.continue_wired: set[str] = set()
        # each member's deepagent background registry, seen when its loop resolved its tools
        self.background: dict[str, Any] = {}

    # -- loops -----------------------------------------------------------------------------------

    def bind_own_loop(self, member: str, span: str) -> str:
        """The member's own loop: the first loop that resolves ``swarm_tools()``."""
        return self._own_loops.setdefault(member, span)

    def note_background(self, member: str, registry: Any) -> None:
        """Keep the deepagent background registry a loop of ``member``'s runs under (its first)."""
        if registry is not None:
            self.background.setdefault(member, registry)

    def own_loop(self, member: str) -> str | None:
        """The member's own loop, once bound."""
        return self._own_loops.get(member)

    # -- tools -----------------------------------------------------------------------------------

    def member_tools(self, member: str, *, nested: bool) -> list[Any]:
        """The tools a member's own (or a nested) loop gets: the channels' and the kernel's
        (``swarm_wait``, the spawning tools), resolved once per kind of loop."""
        kind = self._tool_kind(member, nested)
        tools = self._tools.get((nested, kind))
        if tools is None:
            order = {f"channel:{name}": i for i, name in enumerate(self._channel_names)}
            found = self._hooks.member_tools(
                self._port.view(), self._port.member_view(member), nested
            )
            found.sort(key=lambda pair: order.get(pair[0], len(order)))
            found = [(plugin, [_contained(plugin, t) for t in ts]) for plugin, ts in found]
            tools = [t for _, ts in found for t in ts]
            self._channel_tools[(nested, kind)] = bool(tools)
            for plugin, ts in found:
                family, _, channel = plugin.partition(":")
                if family == "channel":
                    for t in ts:
                        self.tool_channels[ToolDef(t).name] = channel
            tools.extend(self._extra_tools(kind))
            self._tools[(nested, kind)] = tools
        return tools

    def has_channel_tools(self, member: str | None) -> bool:
        """Whether some channel gives members tools (besides the kernel's own).

        A channel whose hook fails here has already failed the run; it counts as none.
        """
        if member is None:
            return False
        known = self._channel_tools.get((False, self._tool_kind(member, False)))
        if known is not None:
            return known
        try:
            found = self._hooks.member_tools(
                self._port.view(), self._port.member_view(member), False
            )
        except PluginError:
            return False
        return any(tools for _, tools in found)

    # -- notices ---------------------------------------------------------------------------------

    def notice_for(self, member: str, span: str) -> tuple[str, dict[str, Any]] | None:
        """The notice for a member's own loop at a turn boundary, or ``None``.

        None once the swarm is stopping, the member is torn down or its share is used up: its
        next model call is refused, so no notice is built, counted or marks anything seen.
        """
        if self._own_loops.get(member) != span:
            return None
        self.continue_wired.add(member)
        view = self._port.member_view(member)
        if view.delivery != "notify" or self._port.refused(member) is not None:
            return None
        lines = self._hooks.notice_lines(self._port.view(), view, span)
        if not lines:
            return None
        return self._bus.notice(member, span, lines)


wiring_context: ContextVar[Wiring | None] = ContextVar("swarm_wiring", default=None)
