"""Loading plugins from entry points, and what a plugin that does not load leaves behind.

``get_plugin_manager()`` is the one way to build the process-wide manager: it adds the
hookspecs, loads every ``swarm`` entry point (built-ins are entry points of ``swarm-eval``,
loaded first and exactly like third-party ones) and finishes with ``check_pending()``.

A plugin that cannot be used is *broken*: its entry point fails to import, pluggy refuses it
(a hook implemented with arguments the hook does not have), or it implements a hook swarm-eval
does not have (a misspelled name: the problem suggests the closest hook).  A broken plugin is
not registered; its ``PluginSource`` says why in ``error``.  By default loading goes on without
it, so that one broken third-party plugin breaks only the runs that name what it provides;
``strict=True`` makes any broken plugin an error.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from importlib.metadata import Distribution, EntryPoint, distributions

import attrs
import pluggy

from swarm import hookspecs
from swarm.errors import ConfigError, PluginError

__all__ = [
    "BUILTIN_DISTRIBUTION",
    "ENTRY_POINT_GROUP",
    "ESSENTIAL_PLUGINS",
    "PluginSource",
    "broken_plugins_error",
    "get_plugin_manager",
    "normalize_distribution",
    "unknown_hooks_problem",
]

ENTRY_POINT_GROUP = "swarm"
BUILTIN_DISTRIBUTION = "swarm-eval"
ESSENTIAL_PLUGINS = frozenset({"leaderless"})
"""Plugins that cannot be blocked: the default controller."""
STRICT_SWITCH = "SWARM_STRICT_PLUGINS"
_PREFIX = "swarm_"


def normalize_distribution(name: str) -> str:
    """A distribution's name as packaging compares them (``My_Pkg`` is ``my-pkg``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@attrs.frozen(kw_only=True)
class PluginSource:
    """Where a plugin came from: its name, distribution, version and entry point.

    ``error`` is ``None`` for a plugin in use; for a broken one, why it is not used (it then
    provides nothing and takes part in no run).
    """

    name: str
    distribution: str | None
    version: str | None
    entry_point: str | None
    builtin: bool
    error: str | None = None

    @property
    def broken(self) -> bool:
        """Whether the plugin failed to load and is not used."""
        return self.error is not None

    def describe(self) -> str:
        """``'name' (distribution version)``, for messages."""
        where = " ".join(p for p in (self.distribution, self.version) if p)
        return f"{self.name!r} ({where})" if where else repr(self.name)


def _swarm_entry_points() -> Iterator[tuple[Distribution, EntryPoint]]:
    """Every ``swarm`` entry point, swarm-eval's own first, each distribution once."""
    seen: set[str] = set()
    found: list[tuple[bool, int, Distribution, EntryPoint]] = []
    for dist in distributions():
        key = normalize_distribution(dist.metadata["Name"] or "")
        if key in seen:
            continue
        seen.add(key)
        for ep in dist.entry_points:
            if ep.group == ENTRY_POINT_GROUP:
                found.append((key != BUILTIN_DISTRIBUTION, len(found), dist, ep))
    for _, _, dist, ep in sorted(found, key=lambda item: item[:2]):
        yield dist, ep


def unknown_hooks_problem(pm: pluggy.PluginManager, plugin: object) -> str | None:
    """What is wrong with ``plugin``'s hook names, or ``None``: the hooks it implements that
    swarm-eval does not have, each with the closest hook that exists."""
    unknown = sorted(
        caller.name
        for caller in pm.get_hookcallers(plugin) or []
        if not caller.has_spec()
        and any(i.plugin is plugin and not i.optionalhook for i in caller.get_hookimpls())
    )
    if not unknown:
        return None
    # compared without the shared "swarm_" prefix, which would make every name look close
    known = {
        name.removeprefix(_PREFIX): name
        for name, caller in vars(pm.hook).items()
        if not name.startswith("_") and caller.has_spec()
    }
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name.removeprefix(_PREFIX), sorted(known), n=1)
        parts.append(f"{name!r} (did you mean {known[close[0]]!r}?)" if close else repr(name))
    return f"implements hooks that swarm-eval does not have: {', '.join(parts)}"


def _load(pm: pluggy.PluginManager, ep: EntryPoint) -> str | None:
    """Import and register the plugin of ``ep``; why it cannot be used, or ``None``."""
    try:
        plugin = ep.load()
    except Exception as ex:
        return f"entry point {ep.value!r} failed to import: {ex!r}"
    try:
        pm.register(plugin, name=ep.name)
    except pluggy.PluginValidationError as ex:
        return " ".join(str(ex).split())
    except ValueError as ex:  # pluggy: the same object is already registered
        return str(ex)
    problem = unknown_hooks_problem(pm, plugin)
    if problem is not None:
        pm.unregister(plugin)
    return problem


def broken_plugins_error(sources: Iterable[PluginSource]) -> PluginError | None:
    """The error strict loading raises for the broken plugins among ``sources``, or ``None``."""
    broken = sorted((s for s in sources if s.broken), key=lambda s: s.name)
    if not broken:
        return None
    listing = "; ".join(f"plugin {s.describe()}: {s.error}" for s in broken)
    return PluginError(
        broken[0].name,
        "<load>",
        f"{listing}. Strict plugin loading ({STRICT_SWITCH}=1 or strict=True) makes "
        "a broken plugin an error; fix or uninstall the distribution, or block the plugin "
        "with SWARM_BLOCK_PLUGINS",
    )


def get_plugin_manager(
    *,
    load_entrypoints: bool = True,
    blocked: Iterable[str] = (),
    allow: Iterable[str] | None = None,
    strict: bool = False,
) -> tuple[pluggy.PluginManager, dict[str, PluginSource]]:
    """Build the process-wide plugin manager.

    Args:
        load_entrypoints: load third-party ``swarm`` entry points (swarm-eval's own are always
            loaded).
        blocked: plugin names never to load.
        allow: when given, load third-party plugins only from these distributions.
        strict: make a broken plugin an error instead of leaving it out.

    Returns:
        The manager, and a record of where each plugin came from, broken ones included (with
        their ``error``; they are not registered).

    Raises:
        PluginError: with ``strict``, a plugin is broken (the message names each one, its
            distribution and the reason).
        ConfigError: an essential plugin is blocked.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in blocked:
        if name in ESSENTIAL_PLUGINS:
            raise ConfigError(
                f"plugin {name!r} is essential (the default controller) and cannot be blocked"
            )
        pm.set_blocked(name)
    allowed = None if allow is None else {normalize_distribution(d) for d in allow}
    sources: dict[str, PluginSource] = {}
    for dist, ep in _swarm_entry_points():
        dist_name = dist.metadata["Name"]
        key = normalize_distribution(dist_name)
        builtin = key == BUILTIN_DISTRIBUTION
        if not builtin and (not load_entrypoints or (allowed is not None and key not in allowed)):
            continue
        if pm.is_blocked(ep.name):
            continue
        source = PluginSource(
            name=ep.name,
            distribution=dist_name,
            version=dist.version,
            entry_point=ep.value,
            builtin=builtin,
        )
        taken = sources.get(ep.name)
        if taken is not None:
            sources[f"{dist_name}:{ep.name}"] = attrs.evolve(
                source,
                error=f"its entry point's name {ep.name!r} is already the name of a plugin of "
                f"distribution {taken.distribution!r}; plugin names must be unique",
            )
            continue
        sources[ep.name] = attrs.evolve(source, error=_load(pm, ep))
    pm.check_pending()  # every plugin with an unknown hook was left out above
    if strict and (error := broken_plugins_error(sources.values())) is not None:
        raise error
    return pm, sources
