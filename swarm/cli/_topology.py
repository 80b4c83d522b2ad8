"""``swarm topology check``: validate a topology file and print it resolved, without running it;
``swarm topology example``: print an example topology file to start from."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import click
import yaml

__all__ = ["topology"]


def _plain(value: Any) -> Any:
    """``value`` as JSON data: tuples become lists, other objects their ``repr``."""
    return json.loads(json.dumps(value, default=repr))


@click.group(short_help="Check topology files.")
def topology() -> None:
    """Work with topology files (YAML or TOML: members, controller, channels, budget,
    templates, spawning; see docs/topologies.md).

    \b
    Examples:
      swarm topology example > topology.yaml
      swarm topology check topology.yaml
    """


@topology.command(short_help="Print an example topology file to start from.")
def example() -> None:
    """Print an example topology file: two react workers and a reviewer, a leaderless
    controller that lets every member finish and answers with the last submission, and a
    budget with a grace period.  It ships with swarm-eval, so it works in
    any directory; it is the same file as the repository's docs/examples/topology.yaml.

    \b
    Example:
      swarm topology example > topology.yaml
      inspect eval swarm/arithmetic --solver swarm/swarm -S config=topology.yaml \\
          --model swarm/scripted -M answer=42
    """
    click.echo(files("swarm").joinpath("example_topology.yaml").read_text(), nl=False)


@topology.command(short_help="Validate a topology file and print it resolved.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
def check(file: str, as_json: bool) -> None:
    """Check the topology FILE as a swarm would (every key, value and plugin parameter, with
    the plugins installed here) and print the topology it resolves to: members with their
    agent, arguments and names, the controller and channels with the plugin providing them
    and every parameter (given or default), the budget, templates and spawning limits.

    Nothing runs and no model is called.  An invalid file prints the error, which starts
    with the file's name and names the field, and exits with status 1.

    \b
    Examples:
      swarm topology check topology.yaml
      swarm topology check topology.toml --json
    """
    from swarm._hooks.catalog import plugin_catalog
    from swarm._spec.describe import describe_topology
    from swarm._spec.topology import swarm_spec

    catalog = plugin_catalog()
    spec = swarm_spec(catalog, config=file)
    described = _plain(describe_topology(spec, catalog))
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    names = [name for m in described["members"] for name in m["names"]]
    click.echo(f"# {file}: valid; {len(names)} member(s): {', '.join(names)}")
    click.echo(yaml.safe_dump(described, sort_keys=False, allow_unicode=True).rstrip())
