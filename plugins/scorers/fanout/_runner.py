"""``swarm fanout``: run the fan-out eval on one fixture and print the scored outcome as JSON.

    swarm fanout --fixture json-events                         # keyless: the scripted demo
    swarm fanout --fixture path/to/fixture --model openai/gpt-4o --timeout 1800

Exits 0 only when the run is resolved.  Without ``--model`` it runs the scripted demonstration
(``_demo``), which needs no key and says so in its output.  A fixture the loader refuses is one
``error:`` line and status 1, a wrong option (``--timeout`` under a second, a ``--log-dir``
that cannot be written) one line and status 2, before anything runs.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from swarm import ConfigError, UsageError, check_writable_directory

from ._demo import demo_model
from ._fixture import load_fixture

__all__ = ["fanout_command", "run_fanout", "timeout_problem"]


def timeout_problem(timeout: object) -> str | None:
    """Why ``timeout`` is not a run's time limit (a whole number of seconds >= 1), or ``None``."""
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        return f"expected a whole number of seconds >= 1, got {timeout!r}"
    return None


def run_fanout(
    fixture: str,
    model: str | None,
    timeout: int | None,
    log_dir: str,
    sandbox: str = "bwrap",
    lead: str = "worker",
    child: str = "worker",
) -> dict[str, Any]:
    """Run the eval once; the outcome the command prints.  ``sandbox`` is the task's provider:
    ``bwrap`` or ``docker`` (a sandbox of its own per member, isolated) or ``local`` (not
    isolated); ``lead``
    the task's lead (``worker``: the spawning tools; ``deepagent``: background subagents;
    ``codex``: Codex CLI's own sub-agents, under ``docker`` only); ``child`` the members a
    worker lead spawns (``worker``, or ``codex``: Codex CLI members, under ``docker`` only).

    Raises:
        ConfigError: the fixture is refused, or ``timeout`` is not ``None`` or a whole number
            of seconds >= 1.
    """
    from inspect_ai import eval as inspect_eval

    from ._task import fanout

    problem = None if timeout is None else timeout_problem(timeout)
    if problem is not None:
        raise ConfigError(f"timeout: {problem}")
    loaded = load_fixture(fixture)
    task = fanout(fixture=fixture, sandbox=sandbox, lead=lead, child=child)
    chosen: Any = model if model is not None else demo_model(loaded, lead, child)
    [log] = inspect_eval(
        task,
        model=chosen,
        log_dir=log_dir,
        display="none",
        time_limit=timeout,
    )
    outcome: dict[str, Any] = {
        "fixture": loaded.name,
        "lead": lead,
        "child": child,
        "model": model
        or "swarm/scripted (keyless demonstration: its scripts are built from the "
        "fixture's manifest, the only place the manifest reaches agents)",
        "log": log.location,
        "status": log.status,
    }
    sample = log.samples[0] if log.samples else None
    if sample is None or not sample.scores:
        error = log.error or (sample.error if sample is not None else None)
        outcome.update(resolved=False, error=error.message if error else "no score")
        return outcome
    score = next(iter(sample.scores.values()))
    value = dict(score.value) if isinstance(score.value, dict) else {"value": score.value}
    outcome.update(value)
    outcome["resolved"] = bool(value.get("resolved"))
    metadata = score.metadata or {}
    outcome["failures"] = {
        rule: found.get("failures", []) for rule, found in (metadata.get("rules") or {}).items()
    }
    outcome["efficiency"] = metadata.get("efficiency")
    outcome["isolation"] = metadata.get("isolation")
    outcome["timed_out"] = sample.limit is not None and sample.limit.type == "time"
    if sample.error is not None:
        outcome["error"] = sample.error.message
    return outcome


@click.command(name="fanout", short_help="Run the fan-out eval on one fixture (JSON outcome).")
@click.option("--fixture", required=True, help="A shipped fixture's name or a fixture directory.")
@click.option("--model", default=None, help="An Inspect model [default: the keyless demo].")
@click.option(
    "--timeout", type=int, default=1800, show_default=True, help="Seconds for the run (at least 1)."
)
@click.option("--log-dir", default="logs", show_default=True, help="Where the log goes.")
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "docker", "local"]),
    default="bwrap",
    show_default=True,
    help="bwrap: a sandbox of its own per member (Linux); docker: a container of its own per "
    "member (needs a Docker engine); local: not isolated.",
)
@click.option(
    "--lead",
    type=click.Choice(["worker", "deepagent", "codex"]),
    default="worker",
    show_default=True,
    help="worker: spawns members; deepagent: Inspect's deepagent, background subagents; "
    "codex: Codex CLI, its own sub-agents in its one container (needs --sandbox docker and "
    "the agent image: swarm agent-image).",
)
@click.option(
    "--child",
    type=click.Choice(["worker", "codex"]),
    default="worker",
    show_default=True,
    help="The members a worker lead spawns: worker (swarm/worker) or codex (Codex CLI, a "
    "container each; needs --sandbox docker and the agent image: swarm agent-image).",
)
def fanout_command(
    fixture: str,
    model: str | None,
    timeout: int,
    log_dir: str,
    sandbox: str,
    lead: str,
    child: str,
) -> None:
    """Run the fan-out eval on one fixture; print the scored outcome as JSON.

    Exits 0 only when the run is resolved (coverage, delegation, dedup, receipts,
    provenance and proof_of_work all hold).  Without --model it runs the keyless scripted
    demonstration.  Under --sandbox local nothing is isolated: the score says so.

    \b
    Examples:
      swarm fanout --fixture json-events
      swarm fanout --fixture path/to/fixture --model openai/gpt-4o --timeout 1800
      swarm fanout --fixture json-events --sandbox local
      swarm fanout --fixture json-events --sandbox docker
      swarm fanout --fixture json-events --lead deepagent
      swarm fanout --fixture json-events --lead codex --sandbox docker
      swarm fanout --fixture json-events --child codex --sandbox docker
    """
    problem = timeout_problem(timeout)
    if problem is not None:
        raise UsageError(f"--timeout: {problem}")
    load_fixture(fixture)  # a refused fixture (ConfigError: status 1) leaves no --log-dir behind
    check_writable_directory(log_dir, "--log-dir", "write logs")
    outcome = run_fanout(fixture, model, timeout, log_dir, sandbox, lead, child)
    click.echo(json.dumps(outcome, indent=2, default=str))
    sys.exit(0 if outcome["resolved"] else 1)
