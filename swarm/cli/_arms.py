"""``swarm arms`` (run an experiment's arms) and ``swarm compare`` (read them back)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

from swarm.errors import UsageError

__all__ = ["arms", "compare"]


def _pairs(values: tuple[str, ...], option: str) -> dict[str, Any]:
    """``key=value`` options, each value read as YAML (``seed=1`` is a number)."""
    found: dict[str, Any] = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise UsageError(f"{option}: expected key=value, got {text!r}")
        found[key] = yaml.safe_load(value)
    return found


def _ks(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--k: expected numbers separated by commas, got {text!r}") from None


@click.command(short_help="Run a swarm, one agent and k attempts at one budget.")
@click.argument("task")
@click.option("--model", required=True, help="Inspect model (swarm/noisy needs no key).")
@click.option("--budget", type=int, required=True, help="Tokens per sample for every arm.")
@click.option("--k", "k", default="1,2,4", show_default=True, help="Numbers of agents.")
@click.option("--log-dir", default="logs/arms", show_default=True, help="The sweep's logs.")
@click.option("--topology", multiple=True, help="A swarm topology file (repeatable).")
@click.option("--agent", default="react", show_default=True, help="The member's @agent.")
@click.option("--subagents", is_flag=True, help="Add a deepagent with k background subagents.")
@click.option("-M", "model_args", multiple=True, help="A model arg, key=value.")
@click.option("-T", "task_args", multiple=True, help="A task arg, key=value.")
@click.option("--flow-spec", help="Where to write the Flow spec [default: LOG_DIR/flow.yaml].")
@click.option("--no-run", is_flag=True, help="Write the Flow spec only.")
@click.option("--retry-attempts", default=0, show_default=True, help="Retries of a failed arm.")
@click.option("--max-tasks", type=int, help="Arms run at once (Inspect's max_tasks).")
def arms(
    task: str,
    model: str,
    budget: int,
    k: str,
    log_dir: str,
    topology: tuple[str, ...],
    agent: str,
    subagents: bool,
    model_args: tuple[str, ...],
    task_args: tuple[str, ...],
    flow_spec: str | None,
    no_run: bool,
    retry_attempts: int,
    max_tasks: int | None,
) -> None:
    """Run the arms of a budget-matched experiment on TASK (an Inspect task name, file.py or
    file.py@name): one agent at BUDGET tokens per sample; for each k > 1, k independent
    attempts at BUDGET / k each (k epochs) and a swarm of k at BUDGET (for each --topology
    file, else k --agent members), and with --subagents one swarm/deepagent at BUDGET that may
    run k background subagents.  They run as one Inspect eval set in LOG_DIR: run the
    command again and only the arms without a complete log run (an interrupted sweep goes on;
    an edited topology reruns its own arms).  The same arms are written as an Inspect Flow
    spec, to run elsewhere with `flow run`.  Then the table of `swarm compare` is printed.

    \b
    Examples:
      swarm arms swarm/arms_demo --model swarm/noisy --budget 240 --k 1,2,4
      swarm arms tasks.py@mine --model openai/gpt-4o --budget 200000 --k 1,2,4,8 \\
          --topology ring.yaml --log-dir logs/mine
    """
    from swarm.analysis import arm_table
    from swarm.experiments import Experiment, flow_installed, run_arms, write_flow_spec

    experiment = Experiment(
        task=task,
        model=model,
        budget=budget,
        k=_ks(k),
        task_args=_pairs(task_args, "-T"),
        model_args=_pairs(model_args, "-M"),
        agent=agent,
        topologies=topology,
        subagents=subagents,
    )
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    # the Flow spec is optional: without inspect-flow the arms still run, unless it was asked
    # for (--flow-spec, --no-run), which is then refused with what to install
    wanted = flow_spec is not None or no_run
    if wanted or flow_installed():
        written = write_flow_spec(experiment, flow_spec or Path(log_dir) / "flow.yaml", log_dir)
        said = str(written)
    else:
        said = "not written (it needs inspect-flow: pip install 'swarm-eval[flow]')"
    click.echo(f"arms: {', '.join(a.name for a in experiment.arms())}")
    click.echo(f"flow spec: {said}")
    if no_run:
        return
    extra: dict[str, Any] = {} if max_tasks is None else {"max_tasks": max_tasks}
    sweep = run_arms(experiment, log_dir, retry_attempts=retry_attempts, **extra)
    reused = sorted({log.eval.task for log in sweep.logs} - set(sweep.ran))
    click.echo(f"ran: {', '.join(sweep.ran) or 'none'}")
    click.echo(f"reused: {', '.join(reused) or 'none'}")
    click.echo(arm_table(log_dir).to_text())
    if not sweep.success:
        click.echo("error: some arms did not complete; run the command again", err=True)
        raise SystemExit(1)


@click.command(short_help="Compare an experiment's arms: the table and the pictures.")
@click.argument("log_dir")
@click.option("-o", "--output", help="Where the page and PNGs go [default: LOG_DIR].")
@click.option("--scorer", help="The score to read (default: each sample's first).")
def compare(log_dir: str, output: str | None, scorer: str | None) -> None:
    """Read the arms in LOG_DIR (written by `swarm arms` or its Flow spec) and print one row
    per arm: realized tokens and cost per sample, accuracy with its 95% interval, the team's
    accuracy (pass@k for attempts), pass^k, best@k, tokens per success and whether the arm
    stayed within its budget; then the scaling exponent lambda.  Writes comparison.html and
    the PNGs comparison-frontier.png and comparison-by-k.png.

    \b
    Examples:
      swarm compare logs/arms
      swarm compare logs/arms -o report
    """
    from swarm.analysis import arm_table, write_comparison

    table = arm_table(log_dir, scorer=scorer)
    if not table.rows:
        raise UsageError(f"{log_dir}: no arm logs (run `swarm arms` first)")
    click.echo(table.to_text())
    page = write_comparison(table, output or log_dir)
    click.echo(f"wrote {page} and its PNGs")
