"""Building one run's plugins: its controller and channels from their registered factories, and
the small plugin manager that holds them for that run only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pluggy

from swarm import hookspecs
from swarm._hooks.catalog import PluginCatalog, PluginKind, building_with
from swarm._hooks.defaults import KernelDefaults
from swarm._hooks.guard import guarded_call
from swarm._spec.topology import PluginSpec
from swarm.errors import PluginError, SwarmError

__all__ = ["instantiate", "run_plugin_manager"]


def instantiate(catalog: PluginCatalog, kind: PluginKind, spec: PluginSpec) -> Any:
    """A controller or channel built from its registered factory with the spec's parameters."""
    reg = catalog.lookup(kind, spec.name)
    try:
        with building_with(catalog):
            obj = guarded_call(lambda: reg.factory(**dict(spec.params)), (), None)
    except SwarmError:
        raise
    except Exception as ex:
        raise PluginError(reg.plugin, f"{kind} factory {reg.name!r}", f"raised {ex!r}") from ex
    if obj is None:
        raise PluginError(reg.plugin, f"{kind} factory {reg.name!r}", "returned None")
    return obj


def run_plugin_manager(
    catalog: PluginCatalog,
    *,
    controller: tuple[str, object],
    channels: Sequence[tuple[str, object]],
    kernel: Sequence[tuple[str, object]] = (),
) -> pluggy.PluginManager:
    """A plugin manager for one run: the kernel's defaults (``trylast``), the controller, the
    channels, the kernel's own runtime plugins (``kernel``, such as the rate control) and every
    globally installed plugin that implements run-time hooks.  Nothing of one run is ever
    registered where another run could see it."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    plugins: list[tuple[str, object]] = [
        ("swarm:defaults", KernelDefaults()),
        (f"controller:{controller[0]}", controller[1]),
    ]
    plugins.extend((f"channel:{name}", channel) for name, channel in channels)
    plugins.extend(kernel)
    plugins.extend(catalog.runtime_plugins())
    for name, plugin in plugins:
        try:
            pm.register(plugin, name=name)
        except pluggy.PluginValidationError as ex:
            raise PluginError(name, "<register>", str(ex)) from ex
    return pm
