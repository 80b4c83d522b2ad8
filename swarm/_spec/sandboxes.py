"""Which sandbox each member works in: the topology's ``sandboxes`` settings.

    sandboxes:
      per_member: true              # each member gets its own sandbox environment
      share: [[planner, coder]]     # these members work in one environment together
      files:                        # what each member's environment receives from the sample
        coder: [src/main.py]

``per_member: false`` (the default) keeps Inspect's own behaviour: every member's tools use the
sample's default environment.  With ``per_member: true`` the sample's default environment is a
staging area no member sees: each member (or each ``share`` group) gets a fresh environment of
the same provider, created when the member starts (a spawned child when it joins and starts),
and the files ``files`` names for it are copied there from the staging area.  A spawned child
renamed because its name was taken (``worker-a~2``, a retry) receives the files of the name it
was spawned as (``worker-a``).

A name in ``share`` or ``files`` is one a member can have: a roster member's, a custom subagent's
a member or template names (``swarm/deepagent``'s), or, when members spawn, any valid member
name (the parent names a child).  A path has no control character (NUL above all).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarm._checks import did_you_mean, shown, unknown_names
from swarm._spec.roster import MemberSpec, check_member_name, expand_roster
from swarm.errors import ConfigError

__all__ = ["Sandboxes", "check_named_sandboxes", "check_sandbox_members", "sandboxes_from"]

_KEYS = ("per_member", "share", "files")


@attrs.frozen(kw_only=True)
class Sandboxes:
    """Which members get their own sandbox environment, which share one, and the sample files
    each receives.

    Attributes:
        per_member: each member (or ``share`` group) in its own environment.
        share: groups of member names that work in one environment.
        files: member name to the paths (in the sample's default environment) it receives.
    """

    per_member: bool = False
    share: tuple[tuple[str, ...], ...] = ()
    files: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    def group(self, member: str) -> str:
        """The environment ``member`` works in: its ``share`` group's first name, or its own
        (a renamed spawn ``name~2`` is placed as ``name``)."""
        base = base_name(member)
        for names in self.share:
            if base in names:
                return names[0]
        return member

    def files_for(self, member: str) -> tuple[str, ...]:
        """The sample files ``member``'s environment receives."""
        return self.files.get(member, self.files.get(base_name(member), ()))


def base_name(member: str) -> str:
    """The name a member was spawned as (``worker-a`` for ``worker-a~2``)."""
    return member.split("~", 1)[0]


def _names(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError(f"{where}: expected a list of member names, got {value!r}")
    found: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item or "~" in item:
            raise ConfigError(
                f"{where}[{i}]: expected a member name (a non-empty string without '~'), "
                f"got {item!r}"
            )
        found.append(item)
    return tuple(found)


def _share(value: object) -> tuple[tuple[str, ...], ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError(
            f"sandboxes.share: expected a list of lists of member names, got {value!r}"
        )
    groups: list[tuple[str, ...]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(value):
        names = _names(item, f"sandboxes.share[{i}]")
        if len(names) < 2:
            raise ConfigError(
                f"sandboxes.share[{i}]: a shared sandbox needs two or more members, got {item!r}"
            )
        for name in names:
            if name in seen:
                raise ConfigError(
                    f"sandboxes.share[{i}]: {name!r} is already in sandboxes.share[{seen[name]}]; "
                    "a member works in one sandbox"
                )
            seen[name] = i
        groups.append(names)
    return tuple(groups)


def _path(item: object, where: str) -> str:
    if not isinstance(item, str) or not item:
        raise ConfigError(f"{where}: expected a file path (a non-empty string), got {item!r}")
    control = next((i for i, c in enumerate(item) if unicodedata.category(c) == "Cc"), None)
    if control is not None:  # NUL cannot be in a path, and the rest are a mistake
        raise ConfigError(
            f"{where}: {shown(item)} holds a control character ({item[control]!r} at "
            f"{control}); a file path cannot"
        )
    parts = item.split("/")
    if item.startswith("/") or ".." in parts or ":" in item:
        raise ConfigError(
            f"{where}: {item!r} is not a path relative to the sample's files (no leading '/', "
            "no '..', no ':')"
        )
    return item


def _files(value: object) -> dict[str, tuple[str, ...]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"sandboxes.files: expected a mapping of member name to a list of file paths, "
            f"got {value!r}"
        )
    found: dict[str, tuple[str, ...]] = {}
    for name, paths in value.items():
        if not isinstance(name, str) or not name or "~" in name:
            raise ConfigError(
                f"sandboxes.files: expected member names as keys (without '~'), got {name!r}"
            )
        where = f"sandboxes.files.{name}"
        if isinstance(paths, str) or not isinstance(paths, Sequence):
            raise ConfigError(f"{where}: expected a list of file paths, got {paths!r}")
        found[name] = tuple(_path(p, f"{where}[{i}]") for i, p in enumerate(paths))
    return found


def sandboxes_from(value: object) -> Sandboxes:
    """``Sandboxes`` from a ``Sandboxes``, a mapping of its fields, or ``None`` (the default:
    every member in the sample's own environment)."""
    if value is None:
        return Sandboxes()
    if isinstance(value, Sandboxes):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"sandboxes: expected a mapping of sandbox settings, got {value!r}")
    extra = sorted(str(k) for k in value if k not in _KEYS)
    if extra:
        raise ConfigError(f"sandboxes: {unknown_names(extra, _KEYS)}")
    per_member: Any = value.get("per_member", False)
    if not isinstance(per_member, bool):
        raise ConfigError(f"sandboxes.per_member: expected true or false, got {per_member!r}")
    share, files = _share(value.get("share")), _files(value.get("files"))
    if not per_member and (share or files):
        key = "share" if share else "files"
        raise ConfigError(
            f"sandboxes.{key}: needs sandboxes.per_member: true (without it every member works "
            "in the sample's own sandbox)"
        )
    return Sandboxes(per_member=per_member, share=share, files=files)


def check_named_sandboxes(
    members: Sequence[MemberSpec], templates: Mapping[str, MemberSpec], config: Sandboxes
) -> None:
    """Check the sandbox settings against the members and templates: every ``share`` and
    ``files`` name is one a member can have (``check_sandbox_members``), and no named sandbox
    environment (``member(sandbox=...)``) is one the run cannot give: beside
    ``sandboxes.per_member``, or for some members and templates but not all."""
    if config.share or config.files:
        roster = [e.info.name for e in expand_roster(members)]
        check_sandbox_members(roster, members, templates, config)
    owners = [(f"members[{i}]", m) for i, m in enumerate(members)]
    owners += [(f"templates.{name}", t) for name, t in templates.items()]
    named = [(where, spec) for where, spec in owners if spec.sandbox is not None]
    if not named:
        return
    where, spec = named[0]
    if config.per_member:
        raise ConfigError(
            f"{where}.sandbox: {spec.sandbox!r} names one of the sample's environments, and "
            "sandboxes.per_member: true gives every member a new environment of its own; use "
            "one or the other"
        )
    for other, unnamed in owners:
        if unnamed.sandbox is None:
            raise ConfigError(
                f"{other}.sandbox: names no sandbox environment while {where} names "
                f"{spec.sandbox!r}; when one member works in a named environment, every member "
                "and template names one (one without would reach every environment, the "
                "others' too): name the sample's default environment ('default') for one that "
                "works there"
            )


_SHOWN_NAMES = 20  # the most known names an error lists


def _subagent_names(specs: Iterable[MemberSpec]) -> list[str]:
    """The custom subagents members and templates name in their ``args`` (``swarm/deepagent``'s
    ``subagents: [{name: ...}]``): each one's tools run in a sandbox of its own, holding the
    files ``sandboxes.files`` names for it."""
    found: list[str] = []
    for spec in specs:
        given = spec.args.get("subagents")
        items = [given] if isinstance(given, str | Mapping) else given
        if not isinstance(items, Sequence):
            continue
        for item in items:
            name = item.get("name") if isinstance(item, Mapping) else None
            if isinstance(name, str) and name not in found:
                found.append(name)
    return found


def check_sandbox_members(
    roster: Sequence[str],
    members: Sequence[MemberSpec],
    templates: Mapping[str, MemberSpec],
    config: Sandboxes,
) -> None:
    """Refuse a ``share`` or ``files`` name no member can have (a typo would give nobody the
    files).  Known are the roster's ``roster`` names and the custom subagents members and
    templates name; in a swarm whose members spawn, also any valid member name (a child is
    named by its parent's ``spawn_child``, not by the topology)."""
    spawns = any(m.can_spawn for m in members) or any(t.can_spawn for t in templates.values())
    in_roster = set(roster)
    subagents = [n for n in _subagent_names([*members, *templates.values()]) if n not in in_roster]
    known = [*roster, *subagents]
    kept = in_roster.union(subagents)
    places = [(f"sandboxes.share[{i}]", name) for i, g in enumerate(config.share) for name in g]
    places += [("sandboxes.files", name) for name in config.files]
    for where, name in places:
        if name in kept:
            continue
        if spawns:  # a child may be called so (its parent names it), if a member may
            try:
                check_member_name(name, where)
            except ConfigError as ex:
                raise ConfigError(
                    f"{ex}; it names no member or subagent, and no child can be called so"
                ) from None
            continue
        listed = ", ".join(known[:_SHOWN_NAMES])
        if len(known) > _SHOWN_NAMES:
            listed += f", ... ({len(known):,} in all)"
        whose = "the members and subagents" if subagents else "the members"
        raise ConfigError(
            f"{where}: {shown(name)} names no member{did_you_mean(name, known)}; {whose} are "
            f"{listed} (no member spawns, so no other member joins)"
        )
