"""The ``swarm`` agent: what Inspect runs (``--solver swarm/swarm``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Never

from inspect_ai.agent import Agent, AgentState, agent

from swarm._checks import unknown_names
from swarm._hooks.catalog import PluginCatalog, plugin_catalog
from swarm._inspect.private import require_private_api
from swarm._run.engine import SwarmRun
from swarm._spec.budget import Budget
from swarm._spec.describe import describe_topology, jsonable
from swarm._spec.roster import MemberSpec
from swarm._spec.sandboxes import Sandboxes
from swarm._spec.spawning import Spawning
from swarm._spec.topology import PluginSpec, SwarmSpec, swarm_spec
from swarm.errors import ConfigError

__all__ = ["SwarmAgent", "swarm"]

# the attributes Inspect tags an @agent's result with: the arguments it was called with (its
# identity in an eval set) and every parameter (the plan in the log)
REGISTRY_PARAMS = "__registry_params__"
SOLVER_ALL_PARAMS = "__solver_all_params__"

PARAMETERS = (
    "budget",
    "channels",
    "config",
    "controller",
    "members",
    "on_member_error",
    "plugins",
    "sandboxes",
    "spawning",
    "templates",
)
"""``swarm()``'s parameters, sorted (an unknown one is refused naming them)."""


@agent(name="swarm", description="A swarm of agents working on one sample at the same time.")
def swarm(
    members: MemberSpec | Agent | str | Mapping[str, Any] | Sequence[Any] | None = None,
    controller: str | PluginSpec | Mapping[str, Any] | None = None,
    channels: Sequence[str | PluginSpec | Mapping[str, Any]] | str | None = None,
    budget: Budget | Mapping[str, Any] | None = None,
    on_member_error: Literal["continue", "fail"] | None = None,
    templates: Mapping[str, MemberSpec | Mapping[str, Any]] | None = None,
    spawning: Spawning | Mapping[str, Any] | None = None,
    config: str | Path | Mapping[str, Any] | None = None,
    plugins: PluginCatalog | None = None,
    sandboxes: Sandboxes | Mapping[str, Any] | None = None,
    **unknown: Never,
) -> Agent:
    """A swarm of agents working on one sample at the same time.

    Args:
        members: the roster: ``member(...)`` records, agents, ``@agent`` names, or mappings
            with member fields (``{factory: react, count: 4}``), alone or in a list.
        controller: who starts, when to stop, which answer: a registered name
            (``"leaderless"``), ``controller(name, **params)``, or ``{name: ..., param: ...}``.
        channels: how members communicate: registered names, ``channel(name, **params)`` or
            mappings.  ``[]`` (the default) gives no channel.
        budget: the swarm's ``Budget`` (or a mapping of its fields).
        on_member_error: ``"continue"`` (the default): a member's own error ends that member
            (``errored``) and the others go on; the sample is an error only when every member
            that started errored.  ``"fail"``: the first member error stops the swarm and fails
            the sample (after the records are written).
        templates: what spawned children run, by template name: ``member(...)`` records or
            mappings (no name or count; a child is named when spawned).  A member spawns only
            the templates its ``can_spawn`` names.
        spawning: the limits on spawning (``Spawning`` or a mapping of its fields).
        sandboxes: which sandbox environment each member works in (``Sandboxes`` or a
            mapping: ``per_member``, ``share``, ``files``; see docs/sandboxes.md).  By default
            every member uses the sample's own environment.
        config: a topology file (YAML or TOML) or mapping with any of the keys ``members``,
            ``controller``, ``channels``, ``budget``, ``on_member_error``, ``templates``,
            ``spawning``, ``sandboxes``.
        plugins: the plugin catalog to use (default: the process-wide one).
        **unknown: none: a parameter ``swarm()`` does not have (a typo such as ``member``,
            from Python or ``-S``) is a ``ConfigError`` naming the closest one, not a
            ``TypeError``.

    Returns:
        An Inspect agent, usable as a solver.

    Raises:
        ConfigError: a bad topology, naming the field.
    """
    require_private_api()  # an Inspect that moved a private name: one message, before any run
    if unknown:
        raise ConfigError(f"swarm: {unknown_names(sorted(unknown), PARAMETERS, 'parameter')}")
    catalog = plugins or plugin_catalog()
    spec = swarm_spec(
        catalog,
        members=members,
        controller=controller,
        channels=channels,
        budget=budget,
        on_member_error=on_member_error,
        templates=templates,
        spawning=spawning,
        config=config,
        sandboxes=sandboxes,
    )

    return SwarmAgent(spec, catalog)


class SwarmAgent:
    """The agent ``swarm()`` returns: runs the swarm on a sample, and says in the eval log what
    it runs.

    Inspect tags an ``@agent``'s result with the arguments it was called with (the log's plan
    shows them, and ``inspect eval-set`` tells tasks apart by them).  ``-S config=x.yaml`` alone
    would say only the file's name and Python objects only their class, so this agent adds the
    resolved topology (members with agent and args, controller, channels, budget, templates,
    spawning, and the plugins with their versions) to the plan's parameters, and its digest to
    the arguments: two logs of different topologies differ, and an edited file reruns.
    """

    _spec: SwarmSpec
    _catalog: PluginCatalog
    _described: dict[str, Any]

    def __init__(self, spec: SwarmSpec, catalog: PluginCatalog) -> None:
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_catalog", catalog)
        object.__setattr__(self, "_described", describe_topology(spec, catalog))

    async def __call__(self, state: AgentState) -> AgentState:
        return await SwarmRun(self._spec, self._catalog, state.messages).run(state)

    @property
    def topology(self) -> dict[str, Any]:
        """The resolved topology, as the eval log records it."""
        return dict(self._described)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == REGISTRY_PARAMS and isinstance(value, dict):
            value = {**value, "topology_sha256": self._described["topology_sha256"]}
        elif name == SOLVER_ALL_PARAMS and isinstance(value, dict):
            given = {k: v for k, v in value.items() if k == "config" and v is not None}
            value = {**jsonable(given), "topology": self._described}
        object.__setattr__(self, name, value)
