"""The ``swarm`` command: ``plugins``, ``demo``, ``arms``, ``compare``, ``scripted-server``,
``timeline``, ``topology check``, ``agent-image``, and the commands plugins add
(``swarm_register_commands``, such as ``fanout``).

Errors a person can act on (a bad topology, a broken plugin, a missing provider package) are
printed as one message on stderr with exit status 1, never as a traceback; wrong usage of the
command line exits with status 2.
"""

from __future__ import annotations

import sys

import click

from swarm._hooks.catalog import plugin_catalog
from swarm._inspect.private import PrerequisiteError
from swarm.cli._agent_image import agent_image
from swarm.cli._arms import arms, compare
from swarm.cli._demo import demo
from swarm.cli._errors import install_inspect_excepthook, show_error
from swarm.cli._plugins import plugin_rows, plugins
from swarm.cli._server import scripted_server
from swarm.cli._timeline import timeline
from swarm.cli._topology import topology
from swarm.errors import SwarmError, UsageError

__all__ = ["cli", "install_inspect_excepthook", "main", "plugin_rows"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="swarm-eval", prog_name="swarm-eval")
def cli() -> None:
    """swarm-eval: evaluate swarms of AI agents with Inspect AI.

    A swarm is many agents working on one sample at once; run it from Inspect with
    `inspect eval TASK --solver swarm/swarm -S ...`.  These commands run a keyless demo,
    check topology files, list plugins, draw a swarm's timeline from a log, serve scripts as
    an OpenAI-compatible API, and run and compare a swarm against one agent at the same
    budget.  Each command's --help has examples.

    \b
    Examples:
      swarm demo
      swarm arms swarm/arms_demo --model swarm/noisy --budget 240 --k 1,2,4
      swarm compare logs/arms
      swarm topology check topology.yaml
      swarm plugins
      swarm timeline logs/run.eval -o run.html
      swarm scripted-server --scripts scripts.yaml
      swarm agent-image
    """


for _command in (demo, arms, compare, plugins, scripted_server, timeline, topology, agent_image):
    cli.add_command(_command)


def main() -> None:
    """Entry point of the ``swarm`` command."""
    try:
        plugin_catalog(strict=False, warn=False).register_commands(cli)
        cli(standalone_mode=True)
    except UsageError as ex:
        show_error(ex)
        sys.exit(2)
    except (SwarmError, PrerequisiteError) as ex:
        show_error(ex)
        sys.exit(1)
