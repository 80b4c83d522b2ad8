"""The plugin manager factory and the catalog of what plugins provide.

``get_plugin_manager()`` is the one way to build the process-wide manager: it adds the
hookspecs, loads every ``swarm`` entry point (built-ins are entry points of ``swarm-eval``, loaded
exactly like third-party ones) and finishes with ``check_pending()``.  ``PluginCatalog`` then
asks the registration hooks for controllers, channels and rubrics and keeps our own record of
which distribution provided each plugin.

Environment switches (read when the default catalog is first built):

- ``SWARM_DISABLE_PLUGIN_AUTOLOAD=1``: load only swarm-eval's own plugins;
- ``SWARM_LOAD_PLUGINS=dist-a,dist-b``: load third-party plugins only from these distributions
  (empty: none);
- ``SWARM_BLOCK_PLUGINS=name,name``: never load the plugins registered under these names.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from collections.abc import Callable, Iterable
from importlib.metadata import Distribution, distributions
from typing import Any, Literal

import attrs
import pluggy

from swarm import hookspecs
from swarm._hooks.calls import call_each, call_registration_hook, call_rubric_rules
from swarm.errors import ConfigError, PluginError
from swarm.records import RubricRule

__all__ = [
    "BUILTIN_DISTRIBUTION",
    "ENTRY_POINT_GROUP",
    "PluginCatalog",
    "PluginSource",
    "Registration",
    "get_plugin_manager",
    "plugin_catalog",
    "reset_plugin_catalog",
    "rubric",
]

ENTRY_POINT_GROUP = "swarm"
BUILTIN_DISTRIBUTION = "swarm-eval"
ESSENTIAL_PLUGINS = frozenset({"leaderless"})
"""Plugins that cannot be blocked: the default controller."""
REGISTRATION_HOOKS = frozenset(
    {
        "swarm_register_controllers",
        "swarm_register_channels",
        "swarm_register_rubrics",
        "swarm_register_commands",
    }
)
CATALOG_HOOKS = REGISTRATION_HOOKS | {"swarm_rubric_rules"}
"""Hooks asked through the catalog, never during a run."""

PluginKind = Literal["controller", "channel", "rubric"]
_KIND_HOOK: dict[PluginKind, str] = {
    "controller": "swarm_register_controllers",
    "channel": "swarm_register_channels",
    "rubric": "swarm_register_rubrics",
}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _normalize(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()


@attrs.frozen(kw_only=True)
class PluginSource:
    """Where a plugin came from: its name, distribution, version and entry point."""

    name: str
    distribution: str | None
    version: str | None
    entry_point: str | None
    builtin: bool


@attrs.frozen(kw_only=True)
class Registration:
    """A controller, channel or rubric factory and the plugin that registered it."""

    kind: PluginKind
    name: str
    factory: Callable[..., Any]
    plugin: str
    distribution: str | None


def _swarm_entry_points() -> Iterable[tuple[Distribution, Any]]:
    seen: set[str] = set()
    for dist in distributions():
        dist_name = dist.metadata["Name"] or ""
        key = _normalize(dist_name)
        if key in seen:
            continue
        seen.add(key)
        for ep in dist.entry_points:
            if ep.group == ENTRY_POINT_GROUP:
                yield dist, ep


def get_plugin_manager(
    *,
    load_entrypoints: bool = True,
    blocked: Iterable[str] = (),
    allow: Iterable[str] | None = None,
) -> tuple[pluggy.PluginManager, dict[str, PluginSource]]:
    """Build the process-wide plugin manager.

    Args:
        load_entrypoints: load third-party ``swarm`` entry points (swarm-eval's own are always
            loaded).
        blocked: plugin names never to load.
        allow: when given, load third-party plugins only from these distributions.

    Returns:
        The manager, and a record of where each registered plugin came from.

    Raises:
        PluginError: an entry point failed to import, or a plugin implements a hook that does
            not exist or with the wrong arguments.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in blocked:
        if name in ESSENTIAL_PLUGINS:
            raise ConfigError(
                f"plugin {name!r} is essential (the default controller) and cannot be blocked"
            )
        pm.set_blocked(name)
    allowed = None if allow is None else {_normalize(d) for d in allow}
    sources: dict[str, PluginSource] = {}
    for dist, ep in _swarm_entry_points():
        dist_name = dist.metadata["Name"]
        builtin = _normalize(dist_name) == BUILTIN_DISTRIBUTION
        if not builtin and (
            not load_entrypoints or (allowed is not None and _normalize(dist_name) not in allowed)
        ):
            continue
        if pm.is_blocked(ep.name) or pm.has_plugin(ep.name):
            continue
        try:
            plugin = ep.load()
        except Exception as ex:
            raise PluginError(
                ep.name,
                "<load>",
                f"entry point {ep.value!r} of distribution {dist_name!r} failed to import: {ex!r}",
            ) from ex
        try:
            pm.register(plugin, name=ep.name)
        except pluggy.PluginValidationError as ex:
            raise PluginError(ep.name, "<register>", str(ex)) from ex
        sources[ep.name] = PluginSource(
            name=ep.name,
            distribution=dist_name,
            version=dist.version,
            entry_point=ep.value,
            builtin=builtin,
        )
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as ex:
        name = getattr(ex.plugin, "__name__", str(ex.plugin))
        raise PluginError(name, "<unknown hook>", str(ex)) from None
    return pm, sources


class PluginCatalog:
    """The loaded plugins and what they registered: controllers, channels, rubrics."""

    def __init__(self, pm: pluggy.PluginManager, sources: dict[str, PluginSource]) -> None:
        self.pm = pm
        self.sources = sources
        self._registered: dict[PluginKind, dict[str, Registration]] = {k: {} for k in _KIND_HOOK}
        self._runtime: list[tuple[str, object]] | None = None
        for kind, hook in _KIND_HOOK.items():
            call_registration_hook(pm, hook, functools.partial(self._register_for, kind))

    @classmethod
    def load(
        cls,
        *,
        load_entrypoints: bool = True,
        blocked: Iterable[str] = (),
        allow: Iterable[str] | None = None,
    ) -> PluginCatalog:
        """Build a catalog from a fresh plugin manager (see ``get_plugin_manager``)."""
        pm, sources = get_plugin_manager(
            load_entrypoints=load_entrypoints, blocked=blocked, allow=allow
        )
        return cls(pm, sources)

    def _register_for(
        self, kind: PluginKind, plugin: str
    ) -> Callable[[str, Callable[..., Any]], None]:
        source = self.sources.get(plugin)
        dist = source.distribution if source else None
        prefix = None if source is None or source.builtin else dist

        def register(name: str, factory: Callable[..., Any]) -> None:
            hook = _KIND_HOOK[kind]
            if not isinstance(name, str) or not _NAME.match(name):
                raise PluginError(plugin, hook, f"registered a {kind} with a bad name {name!r}")
            if not callable(factory):
                raise PluginError(plugin, hook, f"registered {kind} {name!r} with no factory")
            full = f"{prefix}/{name}" if prefix else name
            known = self._registered[kind].get(full)
            if known is not None:
                raise PluginError(
                    plugin,
                    hook,
                    f"{kind} {full!r} is registered twice: by plugin {known.plugin!r} and by "
                    f"plugin {plugin!r}",
                )
            self._registered[kind][full] = Registration(
                kind=kind, name=full, factory=factory, plugin=plugin, distribution=dist
            )

        return register

    def names(self, kind: PluginKind) -> list[str]:
        """Every registered name of ``kind``, sorted."""
        return sorted(self._registered[kind])

    def registrations(self, kind: PluginKind) -> list[Registration]:
        """Every registration of ``kind``, sorted by name."""
        return [self._registered[kind][n] for n in self.names(kind)]

    def lookup(self, kind: PluginKind, name: str) -> Registration:
        """The registration called ``name``.

        A bare name also finds a third-party ``dist/name`` when exactly one distribution has it
        and no built-in does.  Unknown names raise ``ConfigError`` listing what is registered.
        """
        table = self._registered[kind]
        if name in table:
            return table[name]
        if "/" not in name:
            matches = [r for full, r in table.items() if full.rsplit("/", 1)[-1] == name]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                raise ConfigError(
                    f"{kind} name {name!r} is ambiguous: it could be "
                    f"{', '.join(sorted(m.name for m in matches))}; use the full name"
                )
        listing = ", ".join(self.names(kind)) or "none"
        raise ConfigError(f"unknown {kind} {name!r}; registered {kind}s: {listing}")

    def rubric_rules(self, rubric: str) -> list[tuple[str, RubricRule]]:
        """The rules plugins add to ``rubric`` (``swarm_rubric_rules``), each with the name
        of the plugin that gave it, sorted by rule name.

        Raises:
            PluginError: a plugin raised, returned the wrong type, gave a rule a bad name, or
                gave a name another rule has (the message names both plugins).
        """
        hook = "swarm_rubric_rules"
        found = call_rubric_rules(self.pm, rubric)
        seen: dict[str, str] = {}
        for plugin, rule in found:
            if not _NAME.match(rule.name):
                raise PluginError(plugin, hook, f"returned a rule with a bad name {rule.name!r}")
            if rule.name in seen:
                raise PluginError(
                    plugin,
                    hook,
                    f"rule {rule.name!r} of rubric {rubric!r} is given twice: by plugin "
                    f"{seen[rule.name]!r} and by plugin {plugin!r}",
                )
            seen[rule.name] = plugin
        return sorted(found, key=lambda pair: pair[1].name)

    def runtime_plugins(self) -> list[tuple[str, object]]:
        """Loaded plugins that implement run-time hooks (anything but registration).

        Computed once: a catalog's plugins are fixed once it is built, and every run asks.
        """
        if self._runtime is None:
            self._runtime = self._find_runtime_plugins()
        return list(self._runtime)

    def _find_runtime_plugins(self) -> list[tuple[str, object]]:
        found: list[tuple[str, object]] = []
        for name, plugin in self.pm.list_name_plugin():
            if plugin is None:
                continue
            hooks = {c.name for c in self.pm.get_hookcallers(plugin) or []}
            if hooks - CATALOG_HOOKS:
                found.append((name, plugin))
        return found

    def register_commands(self, cli: Any) -> None:
        """Let every plugin add its subcommands to the ``swarm`` click group ``cli``; a plugin
        that would replace a command the group has is an error naming it."""

        def check(plugin: str, before: dict[str, Any]) -> None:
            replaced = [n for n, cmd in before.items() if cli.commands.get(n) is not cmd]
            if replaced:
                cli.commands.update(before)
                raise PluginError(
                    plugin,
                    "swarm_register_commands",
                    f"replaced the command(s) {', '.join(replaced)} the swarm command has",
                )

        call_each(
            self.pm, "swarm_register_commands", {"cli": cli}, lambda: dict(cli.commands), check
        )

    def hooks_of(self, name: str) -> list[str]:
        """The hooks the plugin called ``name`` implements, sorted."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return []
        return sorted(c.name for c in self.pm.get_hookcallers(plugin) or [])


_default: PluginCatalog | None = None


def _env_list(name: str) -> list[str] | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def plugin_catalog() -> PluginCatalog:
    """The process-wide catalog, built on first use from the environment switches."""
    global _default
    if _default is None:
        _default = PluginCatalog.load(
            load_entrypoints=os.environ.get("SWARM_DISABLE_PLUGIN_AUTOLOAD", "") not in ("1",),
            blocked=_env_list("SWARM_BLOCK_PLUGINS") or (),
            allow=_env_list("SWARM_LOAD_PLUGINS"),
        )
    return _default


def rubric(name: str, /, *, plugins: PluginCatalog | None = None, **params: Any) -> Any:
    """Build the scoring rubric registered as ``name`` with ``params``: an Inspect ``Scorer``.

    ``name`` is a built-in's name (``"fanout"``) or a third-party ``dist/name`` (a bare name finds
    it when only one distribution has it).  ``plugins`` is the catalog to look in (default: the
    process-wide one).

    Raises:
        ConfigError: no rubric of that name, or parameters its factory refuses.
    """
    catalog = plugins or plugin_catalog()
    reg = catalog.lookup("rubric", name)
    try:
        inspect.signature(reg.factory).bind(**params)
    except TypeError as ex:
        raise ConfigError(f"rubric {reg.name!r} does not take these parameters: {ex}") from None
    return reg.factory(**params)


def reset_plugin_catalog() -> None:
    """Forget the process-wide catalog; the next ``plugin_catalog()`` reloads the plugins."""
    global _default
    _default = None
