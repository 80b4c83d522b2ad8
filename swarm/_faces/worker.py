"""``swarm/worker``: a ready-made member wired to the swarm, for the command line and topologies.

``react()`` with ``swarm_tools()`` and ``swarm_on_continue()``, plus any Inspect tools named by
their registry names, so a topology can give members channels without Python code::

    inspect eval task.py --solver swarm/swarm \\
        -S 'members={factory: swarm/worker, count: 4, args: {tools: [bash]}}' \\
        -S 'channels=[shared_memory]' --sandbox local
"""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.agent import Agent, agent, react
from inspect_ai.tool import Tool
from inspect_ai.util import registry_create

from swarm._run.tools import swarm_on_continue, swarm_tools
from swarm.errors import ConfigError

__all__ = ["inspect_tools", "worker"]


def inspect_tools(names: Sequence[str] | str, where: str) -> list[Tool]:
    """The Inspect tools ``names`` (registry names), each built with its defaults; a
    ``ConfigError`` naming ``where`` for anything else."""
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"{where}: expected a list of Inspect tool names, got {names!r}")
    built: list[Tool] = []
    for name in names:
        try:
            built.append(registry_create("tool", name))
        except Exception as ex:
            raise ConfigError(f"{where}: no Inspect tool {name!r} ({ex})") from None
    return built


@agent(name="worker")
def worker(tools: Sequence[str] = (), prompt: str | None = None, model: str | None = None) -> Agent:
    """A react member with the swarm's channel tools and notices.

    Args:
        tools: Inspect tools to add, by registry name (``"bash"``, ``"python"``,
            ``"mypkg/search"``); each is built with its defaults.
        prompt: the system prompt (react's default when ``None``).
        model: the model the member uses (``None``: the eval's model).
    """
    return react(
        prompt=prompt,
        tools=[*inspect_tools(tools, "worker.tools"), swarm_tools()],
        on_continue=swarm_on_continue(),
        model=model,
    )
