"""A checked topology as plain JSON: what ran, for the eval log, and what ``swarm topology
check`` prints.

Every part is resolved: members with their agent, arguments and the names the roster gives
them; the controller and channels by their registered names, with the plugin and distribution
that provide them and every parameter their factory takes (given or default); the budget, the
templates and the spawning limits with all their fields; the plugins that take part, with
their versions.  ``topology_digest`` hashes what defines the experiment (not the plugins'
distributions and versions), so two logs of different topologies differ and ``inspect
eval-set`` reruns when a topology file changes.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Mapping
from typing import Any

import attrs
from inspect_ai.util import registry_info

from swarm._hooks.catalog import PluginCatalog, PluginKind
from swarm._spec.roster import MemberSpec, expand_roster
from swarm._spec.topology import PluginSpec, SwarmSpec

__all__ = ["describe_topology", "jsonable", "topology_digest"]

UNVERSIONED = ("plugins", "topology_sha256")
"""The parts of a description the digest leaves out: which plugins, at which versions."""


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


def _agent(agent: object) -> Any:
    """A member's agent: its name as given, or a registered object's name and parameters."""
    return agent if isinstance(agent, str) else jsonable(agent)


def _member(spec: MemberSpec) -> dict[str, Any]:
    return {
        "agent": _agent(spec.agent),
        "args": jsonable(spec.args),
        "name": spec.name,
        "role": spec.role,
        "count": spec.count,
        "model": spec.model,
        "delivery": spec.delivery,
        "limits": jsonable(spec.limits),
        "can_spawn": list(spec.can_spawn),
        "sandbox": spec.sandbox,
        "bridged": spec.bridged,
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
        "params": jsonable(_parameters(reg.factory, spec.params)),
    }


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
    """``spec`` as plain JSON, with the plugins involved and its digest."""
    roster = [entry.info.name for entry in expand_roster(spec.members)]
    members = []
    start = 0
    for member in spec.members:
        described = _member(member)
        described["names"] = roster[start : start + member.count]
        start += member.count
        members.append(described)
    topology = {
        "members": members,
        "controller": _plugin(catalog, "controller", spec.controller),
        "channels": [_plugin(catalog, "channel", ch) for ch in spec.channels],
        "budget": jsonable(spec.budget),
        "on_member_error": spec.on_member_error,
        "templates": {name: _member(t) for name, t in spec.templates.items()},
        "spawning": jsonable(spec.spawning),
    }
    if spec.sandboxes.per_member:  # absent by default, so the digests of older topologies hold
        topology["sandboxes"] = jsonable(spec.sandboxes)
    return {
        **topology,
        "plugins": _plugins(catalog, spec),
        "topology_sha256": topology_digest(topology),
    }


def _unversioned(part: Any) -> Any:
    if isinstance(part, dict) and "plugin" in part:
        return {k: v for k, v in part.items() if k not in ("distribution", "version")}
    return part


def topology_digest(topology: Mapping[str, Any]) -> str:
    """A stable hash of a described topology (its experiment, not its plugins' versions)."""
    core = {k: v for k, v in topology.items() if k not in UNVERSIONED}
    core["controller"] = _unversioned(core.get("controller"))
    core["channels"] = [_unversioned(c) for c in core.get("channels") or []]
    text = json.dumps(core, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
