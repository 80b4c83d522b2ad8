"""The ``swarm`` command: ``swarm plugins``, ``swarm demo`` and ``swarm timeline``."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from swarm._hooks.catalog import PluginCatalog, plugin_catalog
from swarm.errors import SwarmError

__all__ = ["main"]


def plugin_rows(catalog: PluginCatalog) -> list[dict[str, Any]]:
    """One row per loaded plugin: its source, hooks, and what it registers."""
    rows = []
    for name, source in sorted(catalog.sources.items()):
        provides = {
            kind: [r.name for r in catalog.registrations(kind) if r.plugin == name]
            for kind in ("controller", "channel", "rubric")
        }
        rows.append(
            {
                "name": name,
                "distribution": source.distribution,
                "version": source.version,
                "builtin": source.builtin,
                "entry_point": source.entry_point,
                "hooks": catalog.hooks_of(name),
                "controllers": provides["controller"],
                "channels": provides["channel"],
                "rubrics": provides["rubric"],
            }
        )
    return rows


@click.group()
def cli() -> None:
    """swarm-eval: evaluate swarms of AI agents with Inspect AI."""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--third-party", is_flag=True, help="Hide swarm-eval's built-in plugins.")
def plugins(as_json: bool, third_party: bool) -> None:
    """List every plugin: distribution, version, hooks, and what it registers."""
    rows = [r for r in plugin_rows(plugin_catalog()) if not (third_party and r["builtin"])]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("No plugins.")
    for row in rows:
        kind = "built-in" if row["builtin"] else "third-party"
        click.echo(f"{row['name']}  ({row['distribution']} {row['version']}, {kind})")
        for key in ("controllers", "channels", "rubrics"):
            if row[key]:
                click.echo(f"  {key}: {', '.join(row[key])}")
        click.echo(f"  hooks: {', '.join(row['hooks'])}")


@cli.command()
@click.option("--model", default="swarm/scripted", show_default=True, help="Inspect model.")
@click.option("--members", default=3, show_default=True, help="How many members.")
@click.option("--log-dir", default="logs", show_default=True, help="Where the log goes.")
@click.option(
    "--stop-on-submission/--all-finish", default=False, help="Stop at the first submission."
)
def demo(model: str, members: int, log_dir: str, stop_on_submission: bool) -> None:
    """Run a small swarm eval (the scripted model by default) and summarise it."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from swarm.demo import DEMO_SCRIPTS, swarm_demo

    if model == "swarm/scripted":
        from inspect_ai.model import ModelCost, ModelInfo, set_model_info

        # a nominal price ($1 and $2 per million input and output tokens), so the demo's
        # ledger is priced and complete
        set_model_info(
            model,
            ModelInfo(
                cost=ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)
            ),
        )
        chosen: Any = get_model(model, scripts=DEMO_SCRIPTS, memoize=False)
    else:
        chosen = model
    log = inspect_eval(
        swarm_demo(members=members, stop_on_submission=stop_on_submission),
        model=chosen,
        log_dir=log_dir,
        display="none",
    )[0]
    click.echo(f"log: {log.location}")
    click.echo(f"status: {log.status}")
    if log.error is not None:
        click.echo(f"error: {log.error.message}")
        sys.exit(1)
    for sample in log.samples or []:
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


@cli.command()
@click.argument("log")
@click.option("--sample", "sample_id", help="The sample's id (default: the log's first).")
@click.option("--epoch", type=int, help="The sample's epoch (default: its first).")
@click.option(
    "-o", "--output", help="The file to write, .html or .svg [default: <log stem>-<sample>.html]."
)
def timeline(log: str, sample_id: str | None, epoch: int | None, output: str | None) -> None:
    """Draw one sample's swarm as a timeline: a self-contained HTML page or an SVG file.

    Example: swarm timeline logs/run.eval --sample 3 -o run.html
    """
    from swarm.timeline import write_timeline

    written = write_timeline(log, output, sample=sample_id, epoch=epoch)
    more = f"; the log has {written.samples} samples" if written.samples > 1 else ""
    click.echo(f"wrote {written.path} (sample {written.sample}, epoch {written.epoch}{more})")


def main() -> None:
    """Entry point of the ``swarm`` command."""
    try:
        plugin_catalog().register_commands(cli)
        cli(standalone_mode=True)
    except SwarmError as ex:
        click.echo(f"error: {ex}", err=True)
        sys.exit(2)
