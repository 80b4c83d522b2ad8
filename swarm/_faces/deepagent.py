"""``swarm/deepagent``: Inspect's ``deepagent()`` as a swarm member, wired to the channels.

``deepagent()`` with ``swarm_tools()`` among its tools and ``swarm_on_continue()`` as its
``on_continue`` (deepagent composes its own background reminder around it), its subagents named
in a topology file, so a deepagent member gets the channel tools and notices at its own turn
boundaries; its subagents and their background dispatch run as deepagent runs them, inside the
member's task, so their calls are the member's::

    members:
      - factory: swarm/deepagent
        name: lead
        args: {tools: [bash], background: true, subagents: [general, {name: checker,
               description: checks a result, prompt: You check results., tools: [bash]}]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.agent import Agent, Subagent, agent, deepagent, general, plan, research, subagent

from swarm._faces.subagent_sandbox import own_sandbox
from swarm._faces.worker import inspect_tools
from swarm._run.tools import swarm_on_continue, swarm_tools
from swarm.errors import ConfigError

__all__ = ["deepagent_member"]

BUILT_IN = {"general": general, "plan": plan, "research": research}
SUBAGENT_KEYS = ("description", "fork", "name", "prompt", "tools")


def _subagent(value: object, where: str) -> Subagent:
    if isinstance(value, str):
        factory = BUILT_IN.get(value)
        if factory is None:
            raise ConfigError(
                f"{where}: {value!r} is not one of deepagent's subagents "
                f"({', '.join(sorted(BUILT_IN))}); give a custom one as a mapping with "
                f"{', '.join(SUBAGENT_KEYS)}"
            )
        made: Subagent = factory()
        return made
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a subagent's name or a mapping, got {value!r}")
    unknown = sorted(set(value) - set(SUBAGENT_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}; expected {', '.join(SUBAGENT_KEYS)}")
    for key in ("name", "description", "prompt"):
        if not isinstance(value.get(key), str) or not value[key]:
            raise ConfigError(f"{where}.{key}: expected a non-empty string")
    fork = value.get("fork", False)
    if not isinstance(fork, bool):
        raise ConfigError(f"{where}.fork: expected true or false, got {fork!r}")
    name = value["name"]
    tools = [own_sandbox(t, name) for t in inspect_tools(value.get("tools", []), f"{where}.tools")]
    return subagent(
        name=value["name"],
        description=value["description"],
        prompt=value["prompt"],
        tools=tools,
        fork=fork,
    )


@agent(name="deepagent")
def deepagent_member(
    tools: Sequence[str] = (),
    subagents: Sequence[str | Mapping[str, Any]] | None = None,
    background: bool | int = True,
    max_depth: int = 1,
    prompt: str | None = None,
    instructions: str | None = None,
    memory: bool = True,
    todo_write: bool = True,
    model: str | None = None,
) -> Agent:
    """Inspect's ``deepagent()`` with the swarm's channel tools and notices.

    Args:
        tools: Inspect tools to add, by registry name (``"bash"``, ``"python"``); they flow to
            deepagent's ``general`` subagent too, as deepagent does.
        subagents: deepagent's subagents: a built-in one by name (``general``, ``plan``,
            ``research``) or a mapping with ``name``, ``description``, ``prompt``, ``tools``
            (registry names) and ``fork``; ``None``: deepagent's default three.  A custom
            subagent's tools run in a sandbox of its own per dispatch when the swarm gives
            members their own (``sandboxes.per_member``).
        background: background dispatch (``agent(background=True)`` and the lifecycle tools):
            ``True``, ``False`` or the most running at once (deepagent's argument).
        max_depth: how deep subagents may dispatch subagents (deepagent's argument).
        prompt: a full replacement of deepagent's system prompt (its placeholders work).
        instructions: text appended to deepagent's system prompt.
        memory: give it (and its subagents) the memory tool.
        todo_write: give it the todo_write tool.
        model: the model the member uses (``None``: the eval's model).
    """
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 1:
        raise ConfigError(f"deepagent.max_depth: expected a whole number >= 1, got {max_depth!r}")
    if isinstance(background, int) and not isinstance(background, bool) and background < 1:
        raise ConfigError(
            f"deepagent.background: expected true, false or a whole number >= 1, got "
            f"{background!r} (false turns background dispatch off)"
        )
    if isinstance(subagents, (str, Mapping)):
        subagents = [subagents]
    built = (
        None
        if subagents is None
        else [_subagent(s, f"deepagent.subagents[{i}]") for i, s in enumerate(subagents)]
    )
    if built is not None and not built:
        raise ConfigError("deepagent.subagents: give at least one subagent (or leave it out)")
    names = [s.name for s in built or []]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"deepagent.subagents: the names {twice} are given more than once")
    return deepagent(
        tools=[*inspect_tools(tools, "deepagent.tools"), swarm_tools()],
        subagents=built,
        background=background,
        max_depth=max_depth,
        prompt=prompt,
        instructions=instructions,
        memory=memory,
        todo_write=todo_write,
        model=model,
        on_continue=swarm_on_continue(),
    )
