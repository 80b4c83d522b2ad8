"""A checked topology written out as plain JSON: what ran, for the eval log and for people.

``describe_topology`` gives members (with their agent and args), templates, the controller and
channels with their parameters, the budget, the spawning limits and the plugins involved with
their distributions and versions.  ``topology_digest`` hashes what defines the experiment (not
the plugin versions), so two logs of different topologies differ and ``inspect eval-set``
reruns when a topology file changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs
from inspect_ai.util import registry_info

from swarm._hooks.catalog import PluginCatalog
from swarm._spec.roster import MemberSpec
from swarm._spec.topology import PluginSpec, SwarmSpec

__all__ = ["describe_topology", "jsonable", "topology_digest"]


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON: containers recursively, records as mappings, a registered
    Inspect object as its registry name and parameters, anything else as its ``repr``."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if attrs.has(type(value)):
        return jsonable(attrs.asdict(value, recurse=False))
    try:
        info = registry_info(value)
    except Exception:
        return repr(value)
    params = getattr(value, "__registry_params__", None) or {}
    return {"registry": info.name, "params": jsonable(params)}


def _agent(spec: MemberSpec) -> Any:
    if isinstance(spec.agent, str):
        return spec.agent
    return jsonable(spec.agent)


def _member(spec: MemberSpec) -> dict[str, Any]:
    return {
        "agent": _agent(spec),
        "args": jsonable(spec.args),
        "name": spec.name,
        "count": spec.count,
        "role": spec.role,
        "model": spec.model,
        "limits": jsonable(spec.limits),
        "delivery": spec.delivery,
        "can_spawn": list(spec.can_spawn),
    }


def _plugin(spec: PluginSpec) -> dict[str, Any]:
    return {"name": spec.name, "params": jsonable(spec.params)}


def _plugins(catalog: PluginCatalog, spec: SwarmSpec) -> dict[str, Any]:
    """The plugins that provide the topology's controller and channels, and every plugin that
    takes part in runs, with their distributions and versions."""
    names = {catalog.lookup("controller", spec.controller.name).plugin}
    names.update(catalog.lookup("channel", c.name).plugin for c in spec.channels)
    names.update(name for name, _ in catalog.runtime_plugins())
    found: dict[str, Any] = {}
    for name in sorted(names):
        source = catalog.sources.get(name)
        found[name] = {
            "distribution": None if source is None else source.distribution,
            "version": None if source is None else source.version,
        }
    return found


def describe_topology(spec: SwarmSpec, catalog: PluginCatalog) -> dict[str, Any]:
    """The topology as plain JSON, with the plugins involved and its digest."""
    topology = {
        "members": [_member(m) for m in spec.members],
        "controller": _plugin(spec.controller),
        "channels": [_plugin(c) for c in spec.channels],
        "budget": jsonable(spec.budget),
        "on_member_error": spec.on_member_error,
        "templates": {name: _member(t) for name, t in spec.templates.items()},
        "spawning": jsonable(spec.spawning) if spec.spawns else None,
    }
    return {
        **topology,
        "plugins": _plugins(catalog, spec),
        "topology_sha256": topology_digest(topology),
    }


def topology_digest(topology: Mapping[str, Any]) -> str:
    """A stable hash of a described topology (its experiment, not its plugins' versions)."""
    core = {k: v for k, v in topology.items() if k not in ("plugins", "topology_sha256")}
    text = json.dumps(core, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
