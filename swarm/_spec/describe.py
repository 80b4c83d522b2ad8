"""A checked topology as plain data: what ``swarm topology check`` prints.

Every part is resolved: members with their agent's registry name, arguments and the names the
roster gives them; the controller and channels by their registered names, with the plugin and
distribution that provide them and every parameter their factory takes (given or default);
the budget, the templates and the spawning limits with all their fields.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import attrs
from inspect_ai.util import registry_info

from swarm._hooks.catalog import PluginCatalog, PluginKind
from swarm._spec.roster import MemberSpec, expand_roster
from swarm._spec.topology import PluginSpec, SwarmSpec
from swarm.serialization import unstructure

__all__ = ["agent_name", "describe_topology"]


def agent_name(agent: object) -> str:
    """An agent's registry name (``react``, ``swarm/worker``), else its Python name."""
    if isinstance(agent, str):
        return agent
    try:
        return registry_info(agent).name
    except Exception:
        return getattr(agent, "__qualname__", None) or type(agent).__name__


def _member(spec: MemberSpec) -> dict[str, Any]:
    return {
        "agent": agent_name(spec.agent),
        "args": dict(spec.args),
        "name": spec.name,
        "role": spec.role,
        "count": spec.count,
        "model": spec.model,
        "delivery": spec.delivery,
        "limits": unstructure(spec.limits),
        "can_spawn": list(spec.can_spawn),
    }


def _parameters(factory: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter ``factory`` is called with for ``given``: the given ones and the
    defaults of the others, in the signature's order."""
    try:
        bound = inspect.signature(factory).bind(**dict(given))
    except (TypeError, ValueError):
        return dict(given)
    bound.apply_defaults()
    found: dict[str, Any] = {}
    for name, param in bound.signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            found.update(bound.arguments.get(name, {}))
        elif param.kind is not inspect.Parameter.VAR_POSITIONAL and name in bound.arguments:
            found[name] = bound.arguments[name]
    return found


def _plugin(catalog: PluginCatalog, kind: PluginKind, spec: PluginSpec) -> dict[str, Any]:
    reg = catalog.lookup(kind, spec.name)
    source = catalog.sources.get(reg.plugin)
    return {
        "name": reg.name,
        "plugin": reg.plugin,
        "distribution": reg.distribution,
        "version": source.version if source else None,
        "params": _parameters(reg.factory, spec.params),
    }


def describe_topology(spec: SwarmSpec, catalog: PluginCatalog) -> dict[str, Any]:
    """``spec`` as plain data (JSON but for parameter values given as Python objects)."""
    roster = [entry.info.name for entry in expand_roster(spec.members)]
    members = []
    start = 0
    for member in spec.members:
        described = _member(member)
        described["names"] = roster[start : start + member.count]
        start += member.count
        members.append(described)
    return {
        "members": members,
        "controller": _plugin(catalog, "controller", spec.controller),
        "channels": [_plugin(catalog, "channel", ch) for ch in spec.channels],
        "budget": attrs.asdict(spec.budget),
        "on_member_error": spec.on_member_error,
        "templates": {name: _member(t) for name, t in spec.templates.items()},
        "spawning": attrs.asdict(spec.spawning),
    }
