"""The ``swarm`` agent: what Inspect runs (``--solver swarm/swarm``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from inspect_ai.agent import Agent, AgentState, agent

from swarm._hooks.catalog import PluginCatalog, plugin_catalog
from swarm._run import metering  # noqa: F401  (registers the model-call hooks with Inspect)
from swarm._run.engine import SwarmRun
from swarm._spec.budget import Budget
from swarm._spec.roster import MemberSpec
from swarm._spec.spawning import Spawning
from swarm._spec.topology import PluginSpec, swarm_spec

__all__ = ["swarm"]


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
        config: a topology file (YAML or TOML) or mapping with any of the keys ``members``,
            ``controller``, ``channels``, ``budget``, ``on_member_error``, ``templates``,
            ``spawning``.
        plugins: the plugin catalog to use (default: the process-wide one).

    Returns:
        An Inspect agent, usable as a solver.

    Raises:
        ConfigError: a bad topology, naming the field.
    """
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
    )

    async def execute(state: AgentState) -> AgentState:
        return await SwarmRun(spec, catalog, state.messages).run(state)

    return execute
