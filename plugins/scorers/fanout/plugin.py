"""``fanout``: the fan-out rubric, registered with swarm-eval (the ``swarm`` entry point)."""

from __future__ import annotations

from typing import Any

from swarm import Register, hookimpl

from ._scorer import fanout_rubric


@hookimpl
def swarm_register_rubrics(register: Register) -> None:
    """Register the ``fanout`` rubric: ``fanout(fixture=..., spawn_factor=2)`` is an Inspect
    scorer."""
    register("fanout", fanout_rubric)


@hookimpl
def swarm_register_commands(cli: Any) -> None:
    """Add ``swarm fanout``: run the fan-out eval on one fixture and print the outcome."""
    from ._runner import fanout_command

    cli.add_command(fanout_command)
