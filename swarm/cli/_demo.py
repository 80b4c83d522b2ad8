"""``swarm demo``: a small swarm eval, on the scripted model unless told otherwise."""

from __future__ import annotations

import sys
from typing import Any

import click

from swarm._inspect.private import PrerequisiteError
from swarm.errors import SwarmError

__all__ = ["demo"]


def _scripted_demo_model(model: str) -> Any:
    """``swarm/scripted`` with the demo's scripts and a nominal price, so that its ledger is
    priced and complete."""
    from inspect_ai.model import ModelCost, ModelInfo, get_model, set_model_info

    from swarm.demo import DEMO_SCRIPTS

    # $1 and $2 per million input and output tokens
    set_model_info(
        model,
        ModelInfo(
            cost=ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)
        ),
    )
    return get_model(model, scripts=DEMO_SCRIPTS, memoize=False)


def _summarise(sample: Any) -> None:
    result = sample.store.get("inspect_swarm:result", {})
    click.echo(f"sample {sample.id}: stop reason {result.get('stop_reason')}")
    for m in result.get("members", []):
        took = "" if m["time"] is None else f"  ended at {m['time']:.2f}s"
        why = f"  ({m['error']})" if m.get("error") else ""
        click.echo(f"  {m['name']:<12} {m['status'] or m['state']:<12}{took}{why}")
    if sample.error is not None:
        click.echo(f"  sample error: {sample.error.message}")
    final = result.get("final", {})
    click.echo(f"  answer: {final.get('member')} ({final.get('mode')})")
    click.echo(f"  output: {sample.output.completion.strip()!r}")
    scores = {k: v.value for k, v in (sample.scores or {}).items()}
    click.echo(f"  scores: {scores}")
    usage = sum(u.total_tokens for u in sample.model_usage.values())
    click.echo(f"  tokens: {usage}")
    ledger = sample.store.get("inspect_swarm:ledger")
    metrics = sample.store.get("inspect_swarm:metrics")
    if ledger:
        calls = ledger["calls"]
        click.echo(
            f"  cost: ${ledger['swarm']['cost']:.6f}; model calls: {calls['calls']} "
            f"completed, {calls['errored']} errored, {calls['cache_replays']} from cache; "
            f"accounting complete: {ledger['attribution_complete']}"
        )
    if metrics:
        click.echo(
            f"  steps to answer: {metrics['steps_to_answer']}; longest member: "
            f"{metrics['longest_member_steps']} steps; wall clock {metrics['wall_clock']:.2f}s"
        )
    click.echo(
        "  records: inspect_swarm:result, inspect_swarm:ledger, inspect_swarm:metrics "
        "in the sample store"
    )


@click.command(short_help="Run a small swarm eval and summarise it (no key needed).")
@click.option("--model", default="swarm/scripted", show_default=True, help="Inspect model.")
@click.option(
    "--members",
    type=click.IntRange(1, 10_000),
    default=3,
    show_default=True,
    help="How many members (1 to 10,000).",
)
@click.option("--log-dir", default="logs", show_default=True, help="Where the log goes.")
@click.option(
    "--stop-on-submission/--all-finish", default=False, help="Stop at the first submission."
)
def demo(model: str, members: int, log_dir: str, stop_on_submission: bool) -> None:
    """Run the demo task ("What is 6 * 7?") with a swarm of calculator workers, write its log
    and print a summary: each member's status, the answer, the score, tokens, cost and the
    swarm's records.

    On the scripted model (the default) it needs no key and no network.  With another model
    the provider's package and key are needed; if they are missing, or the eval fails, the
    command says why and exits with status 1.

    \b
    Examples:
      swarm demo
      swarm demo --members 5 --stop-on-submission
      swarm demo --model openai/gpt-4o --log-dir my-logs
    """
    from inspect_ai import eval as inspect_eval

    from swarm.demo import swarm_demo

    chosen: Any = _scripted_demo_model(model) if model == "swarm/scripted" else model
    try:
        log = inspect_eval(
            swarm_demo(members=members, stop_on_submission=stop_on_submission),
            model=chosen,
            log_dir=log_dir,
            display="none",
        )[0]
    except (SwarmError, PrerequisiteError):
        raise  # the swarm command prints these as they are
    except Exception as ex:  # Inspect refused the eval (an unknown provider...): say why
        click.echo(f"error: the demo could not run: {type(ex).__name__}: {ex}", err=True)
        sys.exit(1)
    click.echo(f"log: {log.location}")
    click.echo(f"status: {log.status}")
    if log.error is not None:
        click.echo(f"error: {log.error.message}", err=True)
        sys.exit(1)
    for sample in log.samples or []:
        _summarise(sample)
