"""``swarm fanout``: run the fan-out eval on one fixture and print the scored outcome as JSON.

    swarm fanout --fixture json-events                         # keyless: the scripted demo
    swarm fanout --fixture path/to/fixture --model openai/gpt-4o --timeout 1800

Exits 0 only when the run is resolved.  Without ``--model`` it runs the scripted demonstration
(``_demo``), which needs no key and says so in its output.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from swarm import ConfigError

from ._demo import honest_scripts
from ._fixture import load_fixture

__all__ = ["fanout_command", "run_fanout"]


def run_fanout(
    fixture: str,
    model: str | None,
    timeout: int | None,
    log_dir: str,
    sandbox: str = "bwrap",
) -> dict[str, Any]:
    """Run the eval once; the outcome the command prints.  ``sandbox`` is the task's provider:
    ``bwrap`` (a sandbox of its own per member, isolated) or ``local`` (not isolated)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from ._task import fanout

    loaded = load_fixture(fixture)
    chosen: Any = model
    if model is None:
        chosen = get_model("swarm/scripted", scripts=honest_scripts(loaded), memoize=False)
    [log] = inspect_eval(
        fanout(fixture=fixture, sandbox=sandbox),
        model=chosen,
        log_dir=log_dir,
        display="none",
        time_limit=timeout,
    )
    outcome: dict[str, Any] = {
        "fixture": loaded.name,
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
@click.option("--timeout", type=int, default=1800, show_default=True, help="Seconds for the run.")
@click.option("--log-dir", default="logs", show_default=True, help="Where the log goes.")
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "local"]),
    default="bwrap",
    show_default=True,
    help="bwrap: a sandbox of its own per member (Linux); local: not isolated.",
)
def fanout_command(
    fixture: str, model: str | None, timeout: int, log_dir: str, sandbox: str
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
    """
    try:
        outcome = run_fanout(fixture, model, timeout, log_dir, sandbox)
    except ConfigError as ex:
        raise click.ClickException(str(ex)) from None
    click.echo(json.dumps(outcome, indent=2, default=str))
    sys.exit(0 if outcome["resolved"] else 1)
