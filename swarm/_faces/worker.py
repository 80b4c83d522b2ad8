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

__all__ = ["worker"]


@agent(name="worker")
def worker(tools: Sequence[str] = (), prompt: str | None = None, model: str | None = None) -> Agent:
    """A react member with the swarm's channel tools and notices.

    Args:
        tools: Inspect tools to add, by registry name (``"bash"``, ``"python"``,
            ``"mypkg/search"``); each is built with its defaults.
        prompt: the system prompt (react's default when ``None``).
        model: the model the member uses (``None``: the eval's model).
    """
    if isinstance(tools, str):
        tools = [tools]
    built: list[Tool] = []
    for name in tools:
        try:
            built.append(registry_create("tool", name))
        except Exception as ex:
            raise ConfigError(f"worker.tools: no Inspect tool {name!r} ({ex})") from None
    return react(
        prompt=prompt,
        tools=[*built, swarm_tools()],
        on_continue=swarm_on_continue(),
        model=model,
    )
