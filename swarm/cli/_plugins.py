"""``swarm plugins``: the installed plugins, what they provide, and the broken ones."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from swarm._hooks.catalog import PluginCatalog, plugin_catalog, strict_from_environment

__all__ = ["plugin_rows", "plugins"]


def plugin_rows(catalog: PluginCatalog) -> list[dict[str, Any]]:
    """One row per plugin, broken ones included: its source, hooks, what it registers, and
    ``error`` (``None``, or why it is not used)."""
    rows = []
    for _, source in sorted(catalog.sources.items()):
        provides = {
            kind: [r.name for r in catalog.registrations(kind) if r.plugin == source.name]
            for kind in ("controller", "channel", "rubric", "normalizer")
        }
        rows.append(
            {
                "name": source.name,
                "distribution": source.distribution,
                "version": source.version,
                "builtin": source.builtin,
                "entry_point": source.entry_point,
                "hooks": [] if source.broken else catalog.hooks_of(source.name),
                "controllers": provides["controller"],
                "channels": provides["channel"],
                "rubrics": provides["rubric"],
                "normalizers": provides["normalizer"],
                "error": source.error,
            }
        )
    return rows


def _echo_row(row: dict[str, Any]) -> None:
    kind = "built-in" if row["builtin"] else "third-party"
    mark = "  BROKEN" if row["error"] else ""
    click.echo(f"{row['name']}  ({row['distribution']} {row['version']}, {kind}){mark}")
    if row["error"]:
        click.echo(f"  entry point: {row['entry_point']}")
        click.echo(f"  error: {row['error']}")
        return
    for key in ("controllers", "channels", "rubrics", "normalizers"):
        if row[key]:
            click.echo(f"  {key}: {', '.join(row[key])}")
    click.echo(f"  hooks: {', '.join(row['hooks'])}")


@click.command(short_help="List the plugins, and the broken ones with the reason.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--third-party", is_flag=True, help="Hide swarm-eval's built-in plugins.")
@click.option(
    "--strict",
    is_flag=True,
    help="Exit with status 1 when a plugin is broken (also: SWARM_STRICT_PLUGINS=1).",
)
def plugins(as_json: bool, third_party: bool, strict: bool) -> None:
    """List every plugin: its distribution and version, whether it is built in, what it
    registers (controllers, channels, rubrics, normalizers) and which hooks it implements.

    A plugin that cannot be used is marked BROKEN, with its distribution and why: its entry
    point fails to import, it implements a hook that does not exist (with the closest hook
    that does), or its registration hook raises.  A broken plugin is left out: only a
    topology that names what it provides fails.  With --strict (or SWARM_STRICT_PLUGINS=1),
    the listing ends with an error and exit status 1 when any plugin is broken.

    \b
    Examples:
      swarm plugins
      swarm plugins --third-party --json
      swarm plugins --strict      # in CI: fail when an installed plugin is broken
    """
    catalog = plugin_catalog(strict=False, warn=False)  # the listing says it all
    rows = [r for r in plugin_rows(catalog) if not (third_party and r["builtin"])]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        click.echo("No plugins.")
    for row in [] if as_json else rows:
        _echo_row(row)
    broken = catalog.broken
    if broken and (strict or strict_from_environment()):
        names = ", ".join(s.describe() for s in broken)
        click.echo(f"error: {len(broken)} broken plugin(s): {names}", err=True)
        sys.exit(1)
