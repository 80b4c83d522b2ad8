"""The catalog of what plugins provide, and the process-wide catalog.

``PluginCatalog`` asks the registration hooks of a plugin manager (see ``get_plugin_manager``
in ``loading.py``) for controllers, channels, rubrics and normalisers, and keeps our own record
of which distribution provided each plugin.  A plugin whose registration hook raises, whose
``register`` call is refused (a bad or taken name) or which implements a hook that does not
exist is broken: it is unregistered, what it had registered is dropped, and its source says
why.  A topology that names what a broken plugin provides fails with that reason; nothing else
does, unless the catalog is strict.

Environment switches (read when the default catalog is first built):

- ``SWARM_DISABLE_PLUGIN_AUTOLOAD=1``: load only swarm-eval's own plugins;
- ``SWARM_LOAD_PLUGINS=dist-a,dist-b``: load third-party plugins only from these distributions
  (empty: none);
- ``SWARM_BLOCK_PLUGINS=name,name``: never load the plugins registered under these names;
- ``SWARM_STRICT_PLUGINS=1``: a broken plugin is an error for every swarm (read on each use).
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

import attrs
import pluggy

from swarm._checks import did_you_mean, shown, unknown_parameters
from swarm._hooks.calls import call_each, call_registration_hook, call_rubric_rules
from swarm._hooks.loading import (
    BUILTIN_DISTRIBUTION,
    ENTRY_POINT_GROUP,
    STRICT_SWITCH,
    PluginSource,
    broken_plugins_error,
    get_plugin_manager,
    normalize_distribution,
    unknown_hooks_problem,
)
from swarm.errors import ConfigError, PluginError
from swarm.records import RubricRule

__all__ = [
    "BUILTIN_DISTRIBUTION",
    "ENTRY_POINT_GROUP",
    "PluginCatalog",
    "PluginSource",
    "Registration",
    "building_with",
    "catalog_in_use",
    "get_plugin_manager",
    "plugin_catalog",
    "reset_plugin_catalog",
    "rubric",
    "strict_from_environment",
]

logger = logging.getLogger("swarm")

REGISTRATION_HOOKS = frozenset(
    {
        "swarm_register_controllers",
        "swarm_register_channels",
        "swarm_register_rubrics",
        "swarm_register_normalizers",
        "swarm_register_commands",
    }
)
CATALOG_HOOKS = REGISTRATION_HOOKS | {"swarm_rubric_rules"}
"""Hooks asked through the catalog, never during a run."""

PluginKind = Literal["controller", "channel", "rubric", "normalizer"]
_KIND_HOOK: dict[PluginKind, str] = {
    "controller": "swarm_register_controllers",
    "channel": "swarm_register_channels",
    "rubric": "swarm_register_rubrics",
    "normalizer": "swarm_register_normalizers",
}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@attrs.frozen(kw_only=True)
class Registration:
    """A controller, channel or rubric factory and the plugin that registered it."""

    kind: PluginKind
    name: str
    factory: Callable[..., Any]
    plugin: str
    distribution: str | None


class PluginCatalog:
    """The loaded plugins and what they registered: controllers, channels, rubrics, normalisers.

    Args:
        pm: the plugin manager (``get_plugin_manager()``, perhaps with plugins registered
            in-process).
        sources: where each plugin came from (``get_plugin_manager()``'s record).
        strict: make a broken plugin an error (``PluginError``) instead of leaving it out.
    """

    def __init__(
        self, pm: pluggy.PluginManager, sources: dict[str, PluginSource], *, strict: bool = False
    ) -> None:
        self.pm = pm
        self.sources = dict(sources)
        self.strict = strict
        self._registered: dict[PluginKind, dict[str, Registration]] = {k: {} for k in _KIND_HOOK}
        self._dropped: dict[str, list[str]] = {}
        self._runtime: list[tuple[str, object]] | None = None
        for name, plugin in pm.list_name_plugin():
            problem = None if plugin is None else unknown_hooks_problem(pm, plugin)
            if problem is not None:
                self._set_broken(name, problem)
        for kind, hook in _KIND_HOOK.items():
            call_registration_hook(
                pm,
                hook,
                functools.partial(self._register_for, kind),
                first=self._is_builtin,
                failed=self._failed,
            )
        self.check_strict()

    @classmethod
    def load(
        cls,
        *,
        load_entrypoints: bool = True,
        blocked: Iterable[str] = (),
        allow: Iterable[str] | None = None,
        strict: bool = False,
    ) -> PluginCatalog:
        """Build a catalog from a fresh plugin manager (see ``get_plugin_manager``)."""
        pm, sources = get_plugin_manager(
            load_entrypoints=load_entrypoints, blocked=blocked, allow=allow, strict=strict
        )
        return cls(pm, sources, strict=strict)

    @property
    def broken(self) -> list[PluginSource]:
        """The plugins that are not used, and why (``error``), sorted by name."""
        return sorted((s for s in self.sources.values() if s.broken), key=lambda s: s.name)

    def check_strict(self, strict: bool | None = None) -> None:
        """Raise ``PluginError`` for the broken plugins when ``strict`` (default: the
        catalog's own setting)."""
        if self.strict if strict is None else strict:
            error = broken_plugins_error(self.broken)
            if error is not None:
                raise error

    def _is_builtin(self, plugin: str) -> bool:
        source = self.sources.get(plugin)
        return source is not None and source.builtin

    def _failed(self, error: PluginError) -> None:
        if self.strict:
            raise error
        self._set_broken(error.plugin, f"hook {error.hook!r}: {error.detail}")

    def _set_broken(self, plugin: str, problem: str) -> None:
        """Leave ``plugin`` out: unregister it, drop what it registered, record why."""
        if self.pm.get_plugin(plugin) is not None:
            self.pm.unregister(name=plugin)
        dropped = self._dropped.setdefault(plugin, [])
        for table in self._registered.values():
            for full, reg in list(table.items()):
                if reg.plugin == plugin:
                    dropped.append(full)
                    del table[full]
        source = self.sources.get(plugin) or PluginSource(
            name=plugin, distribution=None, version=None, entry_point=None, builtin=False
        )
        self.sources[plugin] = attrs.evolve(source, error=problem)
        self._runtime = None

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
        and no built-in does.  Unknown names raise ``ConfigError`` listing what is registered;
        a name a broken plugin would provide raises ``ConfigError`` saying why it is broken.
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
        culprit = self._broken_provider(name)
        if culprit is not None:
            raise ConfigError(
                f"{kind} {name!r} is not available: it comes from plugin {culprit.describe()}, "
                f"which is broken: {culprit.error}"
            )
        listing = ", ".join(self.names(kind)) or "none"
        names = {n for full in table for n in (full, full.rsplit("/", 1)[-1])}
        close = did_you_mean(name, sorted(names))
        suspects = [s for s in self.broken if not s.builtin]
        maybe = ""
        if suspects:
            maybe = "; broken plugins that may provide it: " + "; ".join(
                f"{s.describe()}: {s.error}" for s in suspects
            )
        raise ConfigError(
            f"unknown {kind} {shown(name)}{close}; registered {kind}s: {listing}{maybe}"
        )

    def _broken_provider(self, name: str) -> PluginSource | None:
        """The broken plugin that provides ``name``: one that registered it before it broke,
        or the one of the distribution ``name`` is namespaced with."""
        for source in self.broken:
            dropped = self._dropped.get(source.name, [])
            if name in dropped or name in (d.rsplit("/", 1)[-1] for d in dropped):
                return source
        if "/" in name:
            dist = normalize_distribution(name.rsplit("/", 1)[0])
            for source in self.broken:
                if source.distribution and normalize_distribution(source.distribution) == dist:
                    return source
        return None

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
        """Let every plugin add its subcommands to the ``swarm`` click group ``cli``.

        A plugin whose hook raises, or that would replace a command the group has, adds no
        command and is broken (an error naming it when the catalog is strict)."""

        def check(plugin: str, before: dict[str, Any]) -> None:
            replaced = [n for n, cmd in before.items() if cli.commands.get(n) is not cmd]
            if replaced:
                raise PluginError(
                    plugin,
                    "swarm_register_commands",
                    f"replaced the command(s) {', '.join(replaced)} the swarm command has",
                )

        def failed(error: PluginError, before: dict[str, Any]) -> None:
            cli.commands.clear()
            cli.commands.update(before)
            self._failed(error)

        call_each(
            self.pm,
            "swarm_register_commands",
            {"cli": cli},
            lambda: dict(cli.commands),
            check,
            failed,
        )

    def hooks_of(self, name: str) -> list[str]:
        """The hooks the plugin called ``name`` implements, sorted."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return []
        return sorted(c.name for c in self.pm.get_hookcallers(plugin) or [])


_default: PluginCatalog | None = None
_warned = False


def _env_list(name: str) -> list[str] | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def strict_from_environment() -> bool:
    """Whether ``SWARM_STRICT_PLUGINS`` asks for strict plugin loading (``1``, ``true``...)."""
    return os.environ.get(STRICT_SWITCH, "").strip().lower() in ("1", "true", "yes", "on")


def plugin_catalog(*, strict: bool | None = None, warn: bool = True) -> PluginCatalog:
    """The process-wide catalog, built on first use from the environment switches.

    A broken plugin is left out of it and, with ``warn``, logged as a warning (once per
    process, logger ``swarm``); with ``strict`` (by default: ``SWARM_STRICT_PLUGINS=1``), a
    broken plugin is a ``PluginError`` instead.
    """
    global _default, _warned
    if _default is None:
        _default = PluginCatalog.load(
            load_entrypoints=os.environ.get("SWARM_DISABLE_PLUGIN_AUTOLOAD", "") not in ("1",),
            blocked=_env_list("SWARM_BLOCK_PLUGINS") or (),
            allow=_env_list("SWARM_LOAD_PLUGINS"),
        )
    _default.check_strict(strict_from_environment() if strict is None else strict)
    if warn and not _warned:
        _warned = True
        for source in _default.broken:
            logger.warning(
                "swarm-eval plugin %s is broken and not used: %s (%s=1 makes this an error)",
                source.describe(),
                source.error,
                STRICT_SWITCH,
            )
    return _default


_in_use: ContextVar[PluginCatalog | None] = ContextVar("swarm_catalog_in_use", default=None)


@contextmanager
def building_with(catalog: PluginCatalog) -> Iterator[None]:
    """Make ``catalog`` the one ``catalog_in_use()`` gives while a plugin's factory runs (a
    controller's factory looks its ``normalize:`` name up in the catalog the swarm uses)."""
    token = _in_use.set(catalog)
    try:
        yield
    finally:
        _in_use.reset(token)


def catalog_in_use() -> PluginCatalog:
    """The catalog a swarm is being built with (``building_with``), else the process-wide one."""
    return _in_use.get() or plugin_catalog()


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
    unknown = unknown_parameters(reg.factory, params)
    if unknown is not None:
        raise ConfigError(f"rubric {reg.name!r}: {unknown}")
    try:
        inspect.signature(reg.factory).bind(**params)
    except TypeError as ex:
        raise ConfigError(f"rubric {reg.name!r} does not take these parameters: {ex}") from None
    return reg.factory(**params)


def reset_plugin_catalog() -> None:
    """Forget the process-wide catalog; the next ``plugin_catalog()`` reloads the plugins."""
    global _default, _warned
    _default = None
    _warned = False
