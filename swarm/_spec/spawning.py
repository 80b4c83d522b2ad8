"""What members may spawn: the topology's templates and its ``spawning`` settings.

A *template* says what a child runs (an agent, its args, model, role, limits and delivery, and
which templates the child may spawn in turn); a member spawns only the templates its own
``can_spawn`` names.  ``Spawning`` holds the limits the kernel's default decision enforces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from swarm._checks import as_whole, number_field, unknown_names
from swarm._spec.roster import MAX_MEMBERS, MemberSpec, checked_member
from swarm.errors import ConfigError

__all__ = ["TEMPLATE_KEYS", "Spawning", "spawning_from", "templates_from"]

TEMPLATE_KEYS = {
    "agent",
    "factory",
    "args",
    "role",
    "limits",
    "delivery",
    "model",
    "can_spawn",
    "sandbox",
    "bridged",
}


def _whole(default: int, low: int) -> Any:
    # bounded like a member's count: spawning never makes more members than a swarm may have
    return attrs.field(
        default=default,
        converter=as_whole,
        validator=number_field("spawning", whole=True, low=low, high=MAX_MEMBERS, optional=False),
    )


@attrs.frozen(kw_only=True)
class Spawning:
    """The limits on spawning that the kernel's default decision enforces.

    Each is a whole number up to 10,000 (``MAX_MEMBERS``), and ``max_spawns`` plus the roster's
    members at most 10,000 in a swarm whose members spawn.

    Attributes:
        max_depth: the deepest a child may be (roster members are depth 0, their children 1).
        max_children: children one member may spawn in all (respawns included).
        max_live: members running at once in the whole swarm, children included.
        max_spawns: spawns admitted in the whole swarm.
        retries: how many times a member may spawn a name again after that name's child ended.
    """

    max_depth: int = _whole(2, 1)
    max_children: int = _whole(16, 1)
    max_live: int = _whole(64, 1)
    max_spawns: int = _whole(64, 1)
    retries: int = _whole(1, 0)


def spawning_from(value: object) -> Spawning:
    """``Spawning`` from a ``Spawning``, a mapping of its fields, or ``None`` (the defaults)."""
    if value is None:
        return Spawning()
    if isinstance(value, Spawning):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"spawning: expected a mapping of spawning limits, got {value!r}")
    known = {f.name for f in attrs.fields(Spawning)}
    extra = sorted(str(k) for k in value if k not in known)
    if extra:
        raise ConfigError(f"spawning: {unknown_names(extra, sorted(known))}")
    return Spawning(**{str(k): v for k, v in value.items()})


def templates_from(value: object) -> dict[str, MemberSpec]:
    """Templates by name from a mapping of ``member(...)`` records or member mappings (without
    ``name`` or ``count``: a child is named when it is spawned)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"templates: expected a mapping of template name to a member, got {value!r}"
        )
    found: dict[str, MemberSpec] = {}
    for name, item in value.items():
        where = f"templates.{name}"
        if not isinstance(name, str) or not name:
            raise ConfigError(f"templates: a template name must be a non-empty string: {name!r}")
        if isinstance(item, MemberSpec):
            if item.name is not None or item.count != 1:
                raise ConfigError(
                    f"{where}: a template has no name or count (a child is named when spawned)"
                )
            found[name] = item
            continue
        if not isinstance(item, Mapping):
            raise ConfigError(f"{where}: expected member(...) or a mapping, got {item!r}")
        extra = sorted(str(k) for k in item if k not in TEMPLATE_KEYS)
        if extra:
            raise ConfigError(f"{where}: {unknown_names(extra, sorted(TEMPLATE_KEYS))}")
        agents = [item[k] for k in ("agent", "factory") if k in item]
        if len(agents) != 1:
            raise ConfigError(f"{where}: give exactly one of 'agent' or 'factory'")
        found[name] = checked_member(
            agents[0],
            item.get("args"),
            role=item.get("role"),
            limits=item.get("limits"),
            delivery=item.get("delivery"),
            model=item.get("model"),
            can_spawn=item.get("can_spawn") or (),
            sandbox=item.get("sandbox"),
            bridged=item.get("bridged"),
            where=where,
        )
    return found


def check_spawn_room(spawning: Spawning, roster: int) -> None:
    """The roster's ``roster`` members and ``spawning.max_spawns`` children fit in a swarm."""
    total = roster + spawning.max_spawns
    if total > MAX_MEMBERS:
        raise ConfigError(
            f"spawning.max_spawns: {spawning.max_spawns:,} spawns and {roster:,} roster members "
            f"make {total:,} members; a swarm has at most {MAX_MEMBERS:,}"
        )


def check_spawn_names(members: tuple[MemberSpec, ...], templates: Mapping[str, MemberSpec]) -> None:
    """Every ``can_spawn`` names a template."""
    owners = [(f"members[{i}]", m) for i, m in enumerate(members)]
    owners += [(f"templates.{name}", t) for name, t in templates.items()]
    for where, spec in owners:
        for i, template in enumerate(spec.can_spawn):
            if template not in templates:
                known = ", ".join(sorted(templates)) or "none"
                raise ConfigError(
                    f"{where}.can_spawn[{i}]: no template {template!r} (templates: {known})"
                )
