"""Topologies: what ``swarm()`` is given (objects, names, mappings or a file) made into a spec.

The same parameters come from Python, from ``-S`` on the Inspect command line (YAML values) and
from a topology file (YAML or TOML) named by ``config=``.  Unknown keys and bad values raise
``ConfigError`` with the path of the field.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from swarm._checks import number_problem, text_number_note, unknown_names, unknown_parameters
from swarm._hooks.catalog import PluginCatalog, PluginKind, building_with
from swarm._hooks.guard import guarded_call
from swarm._spec.budget import Budget, budget_from
from swarm._spec.files import bound_problem, parsed_topology_file
from swarm._spec.roster import MemberSpec, checked_member, expand_roster
from swarm._spec.sandboxes import Sandboxes, check_named_sandboxes, sandboxes_from
from swarm._spec.spawning import (
    Spawning,
    check_spawn_names,
    check_spawn_room,
    spawning_from,
    templates_from,
)
from swarm._spec.verifier import resolve_verifier
from swarm.errors import ConfigError

__all__ = ["PluginSpec", "SwarmSpec", "channel", "controller", "load_topology", "swarm_spec"]

_MEMBER_KEYS = {
    "agent",
    "factory",
    "args",
    "name",
    "role",
    "count",
    "limits",
    "delivery",
    "model",
    "can_spawn",
    "sandbox",
    "bridged",
}
_TOPOLOGY_KEYS = {
    "members",
    "controller",
    "channels",
    "budget",
    "on_member_error",
    "templates",
    "spawning",
    "sandboxes",
}


@attrs.frozen(kw_only=True)
class PluginSpec:
    """A controller or channel named by its registered name, with the factory's parameters."""

    name: str
    params: Mapping[str, Any] = attrs.field(factory=dict)


def controller(name: str, **params: Any) -> PluginSpec:
    """Name a registered controller with parameters: ``controller("leaderless", final="last")``."""
    return PluginSpec(name=name, params=params)


def channel(name: str, **params: Any) -> PluginSpec:
    """Name a registered channel with parameters: ``channel("shared_memory", rate=None)``."""
    return PluginSpec(name=name, params=params)


@attrs.frozen(kw_only=True)
class SwarmSpec:
    """A whole topology, checked: members, controller, channels, budget."""

    members: tuple[MemberSpec, ...]
    controller: PluginSpec
    channels: tuple[PluginSpec, ...]
    budget: Budget
    on_member_error: Literal["continue", "fail"] = "continue"
    templates: Mapping[str, MemberSpec] = attrs.field(factory=dict)
    spawning: Spawning = attrs.field(factory=Spawning)
    sandboxes: Sandboxes = attrs.field(factory=Sandboxes)

    @property
    def spawns(self) -> bool:
        """Whether any member (or template) may spawn children."""
        return any(m.can_spawn for m in self.members) or any(
            t.can_spawn for t in self.templates.values()
        )


def load_topology(path: str | Path) -> dict[str, Any]:
    """Read a topology file (``.yaml``, ``.yml`` or ``.toml``) into a mapping.

    Raises:
        ConfigError: the file cannot be read or parsed, or holds unknown keys; the message
            starts with the file's name.
    """
    p = Path(path)
    if p.suffix not in (".yaml", ".yml", ".toml"):
        raise ConfigError(f"{p}: a topology file's name ends in .yaml, .yml or .toml")
    data = parsed_topology_file(p)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{p}: a topology file holds a mapping with keys members, controller...")
    extra = sorted(set(data) - _TOPOLOGY_KEYS)
    if extra:
        raise ConfigError(f"{p}: {unknown_names(extra, sorted(_TOPOLOGY_KEYS))}")
    return dict(data)


@contextlib.contextmanager
def _from_file(file: str | None) -> Iterator[None]:
    """Start every ``ConfigError`` raised inside with ``file``'s name, when there is one."""
    try:
        yield
    except ConfigError as ex:
        if file is None:
            raise
        raise ConfigError(f"{file}: {ex}") from None


def _member_from_mapping(data: Mapping[str, Any], where: str) -> MemberSpec:
    extra = sorted(set(data) - _MEMBER_KEYS)
    if extra:
        raise ConfigError(f"{where}: {unknown_names(extra, sorted(_MEMBER_KEYS))}")
    agents = [data[k] for k in ("agent", "factory") if k in data]
    if len(agents) != 1:
        raise ConfigError(f"{where}: give exactly one of 'agent' or 'factory' (an @agent name)")
    return checked_member(
        agents[0],
        data.get("args"),
        name=data.get("name"),
        role=data.get("role"),
        count=data.get("count", 1),
        limits=data.get("limits"),
        delivery=data.get("delivery"),
        model=data.get("model"),
        can_spawn=data.get("can_spawn") or (),
        sandbox=data.get("sandbox"),
        bridged=data.get("bridged"),
        where=where,
    )


def _members(value: object) -> tuple[MemberSpec, ...]:
    items: Sequence[object]
    if value is None:
        raise ConfigError("members: a swarm needs members (member(...), an agent, or a mapping)")
    if isinstance(value, MemberSpec | Mapping | str) or callable(value):
        items = [value]
    elif isinstance(value, Sequence):
        items = value
    else:
        raise ConfigError(f"members: expected members or a list of them, got {value!r}")
    specs: list[MemberSpec] = []
    for i, item in enumerate(items):
        where = f"members[{i}]"
        if isinstance(item, MemberSpec):  # member() checked it; MemberSpec(...) did not
            specs.append(
                checked_member(
                    item.agent,
                    item.args,
                    name=item.name,
                    role=item.role,
                    count=item.count,
                    limits=item.limits,
                    delivery=item.delivery,
                    model=item.model,
                    can_spawn=item.can_spawn,
                    sandbox=item.sandbox,
                    bridged=item.bridged,
                    where=where,
                )
            )
        elif isinstance(item, Mapping):
            specs.append(_member_from_mapping(item, where))
        elif isinstance(item, str) or callable(item):
            specs.append(checked_member(item, where=where))
        else:
            raise ConfigError(f"{where}: expected member(...), an agent or a mapping, got {item!r}")
    if not specs:
        raise ConfigError("members: a swarm needs at least one member")
    return tuple(specs)


def _plugin_spec(value: object, where: str) -> PluginSpec:
    if isinstance(value, PluginSpec):
        return value
    if isinstance(value, str):
        return PluginSpec(name=value)
    if isinstance(value, Mapping):
        if "name" not in value or not isinstance(value["name"], str):
            raise ConfigError(f"{where}.name: give the registered name, e.g. {{name: leaderless}}")
        params = {k: v for k, v in value.items() if k != "name"}
        bad = [k for k in params if not isinstance(k, str)]
        if bad:
            raise ConfigError(f"{where}: parameter names must be strings, got {bad[0]!r}")
        return PluginSpec(name=value["name"], params=params)
    helper = "channel(...)" if where.startswith("channels") else "controller(...)"
    raise ConfigError(
        f"{where}: expected a registered name, a mapping with 'name', or {helper}, got {value!r}"
    )


def check_plugin(
    catalog: PluginCatalog, kind: PluginKind, spec: PluginSpec, where: str
) -> PluginSpec:
    """Resolve ``spec`` in ``catalog`` and check its parameters against the factory.

    The factory is called once here, so that a value it refuses fails before any sample runs,
    and the attributes the runtime reads from what it builds (a channel's ``rate`` and
    ``max_wait``, a controller's ``idle_seconds`` and ``verifier``) are checked too.
    """
    if not isinstance(spec.name, str):
        raise ConfigError(f"{where}: expected a registered {kind} name, got {spec.name!r}")
    if not isinstance(spec.params, Mapping) or not all(isinstance(k, str) for k in spec.params):
        raise ConfigError(f"{where}: parameters must map names to values, got {spec.params!r}")
    try:
        reg = catalog.lookup(kind, spec.name)
    except ConfigError as ex:
        raise ConfigError(f"{where}: {ex}") from None
    unknown = unknown_parameters(reg.factory, spec.params)
    if unknown is not None:
        raise ConfigError(f"{where}: {kind} {reg.name!r}: {unknown}")
    try:
        inspect.signature(reg.factory).bind(**dict(spec.params))
    except TypeError as ex:
        raise ConfigError(
            f"{where}: {kind} {reg.name!r} does not take these parameters: {ex}"
        ) from None
    try:
        with building_with(catalog):  # a factory's SystemExit is its fault too (Contained)
            built = guarded_call(lambda: reg.factory(**dict(spec.params)), (), None)
    except ConfigError as ex:
        raise ConfigError(f"{where}: {ex}{_number_text(ex, spec.params)}") from None
    except Exception as ex:
        raise ConfigError(f"{where}: {kind} {reg.name!r} refused its parameters: {ex!r}") from ex
    _check_runtime_attributes(built, f"{where}: {kind} {reg.name!r}")
    return PluginSpec(name=reg.name, params=spec.params)


def _number_text(error: ConfigError, params: Mapping[str, Any]) -> str:
    """``: that is the text '1e5' (YAML reads...)`` when a plugin refused a parameter that is
    text YAML read from a number (its message shows the text; a list's items are looked at
    too, as in ``rate: [1e3, 60]``), else ``""``."""
    values = list(params.values())
    values += [v for value in values if isinstance(value, list | tuple) for v in value]
    for value in values:
        note = text_number_note(value)
        if note is not None and repr(value) in str(error):
            return f"; that is {note}"
    return ""


def _check_runtime_attributes(built: object, who: str) -> None:
    """Refuse what a controller or channel object would hand the runtime that it cannot use:
    a non-finite rate window, wait or idle time, or a verifier that names no scorer."""
    rate = getattr(built, "rate", None)
    if rate is not None:
        ok = isinstance(rate, Sequence) and len(rate) == 2
        if ok:
            ok = number_problem(rate[0], whole=True, low=1) is None
            ok = ok and number_problem(rate[1], low=0, low_open=True) is None
        if not ok:
            raise ConfigError(
                f"{who} has rate {rate!r}: expected (count, seconds), a whole count >= 1 and a "
                "finite number of seconds > 0"
            )
    for attribute in ("max_wait", "idle_seconds"):
        value = getattr(built, attribute, None)
        problem = None if value is None else number_problem(value, low=0, low_open=True)
        if problem is not None:
            raise ConfigError(f"{who} has {attribute} {value!r}: {problem}")
    verifier = getattr(built, "verifier", None)
    if verifier is not None:
        try:
            resolve_verifier(verifier)
        except ConfigError as ex:
            raise ConfigError(f"{who}: {ex}") from None


def swarm_spec(
    catalog: PluginCatalog,
    *,
    members: object = None,
    controller: object = None,
    channels: object = None,
    budget: object = None,
    on_member_error: object = None,
    templates: object = None,
    spawning: object = None,
    config: str | Path | Mapping[str, Any] | None = None,
    sandboxes: object = None,
) -> SwarmSpec:
    """Check every part of a topology and return it as a ``SwarmSpec``.

    Values from ``config`` (a file path or mapping) are used for parameters not given directly;
    giving one both ways is an error.
    """
    given = {
        "members": members,
        "controller": controller,
        "channels": channels,
        "budget": budget,
        "on_member_error": on_member_error,
        "templates": templates,
        "spawning": spawning,
        "sandboxes": sandboxes,
    }
    # before anything walks them: a value Inspect's -S parsed from YAML (or a caller built)
    # can hold an alias bomb, kept by reference, that every later walk would expand
    for key, value in [*given.items(), ("config", config)]:
        problem = bound_problem(value)
        if problem is not None:
            raise ConfigError(f"{key}: {problem}")
    origin: dict[str, str | None] = dict.fromkeys(given)
    if config is not None:
        if not isinstance(config, str | Path | Mapping):
            raise ConfigError(
                f"config: expected a topology file's path or a mapping, got {config!r}"
            )
        file = str(config) if isinstance(config, str | Path) else None
        data = load_topology(config) if isinstance(config, str | Path) else dict(config)
        for key, value in data.items():
            if key not in _TOPOLOGY_KEYS:
                raise ConfigError(f"config: {unknown_names([key], sorted(_TOPOLOGY_KEYS))}")
            if given[key] is not None:
                with _from_file(file):
                    raise ConfigError(
                        f"{key}: given both in config and as a parameter; give it once"
                    )
            given[key] = value
            origin[key] = file

    def at(*keys: str) -> contextlib.AbstractContextManager[None]:
        """Errors about these keys name the file they came from."""
        return _from_file(next((f for k in keys if (f := origin[k]) is not None), None))

    # only an absent controller means the default: [], false, 0 or {} are mistakes
    raw_controller = given["controller"]
    with at("controller"):
        ctrl = _plugin_spec(
            "leaderless" if raw_controller is None else raw_controller, "controller"
        )
    with at("channels"):
        chans = _channels(catalog, given["channels"])
    budget_value = given["budget"]
    with at("budget"):
        if budget_value is not None and not isinstance(budget_value, Budget | Mapping):
            raise ConfigError(f"budget: expected Budget(...) or a mapping, got {budget_value!r}")
    with at("members"):
        members = _members(given["members"])
        roster = expand_roster(members)  # names are checked now, before any sample runs
    with at("budget"):
        budget = budget_from(budget_value)
    with at("budget", "members"):
        if isinstance(budget.split, tuple) and len(budget.split) != len(roster):
            raise ConfigError(
                f"budget.split: {len(budget.split)} weight(s) for {len(roster)} member(s); give "
                "one weight per member, in roster order"
            )
    mode = given["on_member_error"]
    if mode is None:
        mode = "continue"
    with at("on_member_error"):
        if mode != "continue" and mode != "fail":
            raise ConfigError(
                f"on_member_error: expected 'continue' (a member's error ends only that member) "
                f"or 'fail' (it fails the sample), got {mode!r}"
            )
    with at("templates"):
        found_templates = templates_from(given["templates"])
    with at("members", "templates"):
        check_spawn_names(members, found_templates)
    with at("controller"):
        checked_controller = check_plugin(catalog, "controller", ctrl, "controller")
    with at("spawning"):
        found_spawning = spawning_from(given["spawning"])
    with at("sandboxes"):
        found_sandboxes = sandboxes_from(given["sandboxes"])
    with at("members", "templates", "sandboxes"):
        check_named_sandboxes(members, found_templates, found_sandboxes)
    spec = SwarmSpec(
        members=members,
        controller=checked_controller,
        channels=tuple(chans),
        budget=budget,
        on_member_error=mode,
        templates=found_templates,
        spawning=found_spawning,
        sandboxes=found_sandboxes,
    )
    if spec.spawns:
        with at("spawning", "members"):
            check_spawn_room(found_spawning, len(roster))
        with at("channels", "members", "templates"):
            spec = _with_receipts(catalog, spec)
    return spec


def _channels(catalog: PluginCatalog, raw: object) -> list[PluginSpec]:
    """The topology's channels, each resolved and checked, none twice."""
    if raw is None:
        raw = []
    if isinstance(raw, str | Mapping | PluginSpec):
        raw = [raw]
    if not isinstance(raw, Sequence):
        raise ConfigError(f"channels: expected a list of channels, got {raw!r}")
    chans = [
        check_plugin(catalog, "channel", _plugin_spec(c, f"channels[{i}]"), f"channels[{i}]")
        for i, c in enumerate(raw)
    ]
    names = [c.name for c in chans]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"channels: {', '.join(dup)} given more than once")
    return chans


def _with_receipts(catalog: PluginCatalog, spec: SwarmSpec) -> SwarmSpec:
    """A swarm whose members spawn needs a channel that carries receipts to parents: the one
    the topology names, or ``messages``, added with its defaults."""
    for ch in spec.channels:
        reg = catalog.lookup("channel", ch.name)
        if getattr(reg.factory(**dict(ch.params)), "receipts", False):
            return spec
    try:
        messages = check_plugin(catalog, "channel", PluginSpec(name="messages"), "channels")
    except ConfigError as ex:
        raise ConfigError(
            "channels: members that spawn need a channel that carries receipts to their parents "
            f"(such as 'messages'), and none is configured or available ({ex}); add one to "
            "channels"
        ) from None
    return attrs.evolve(spec, channels=(*spec.channels, messages))
