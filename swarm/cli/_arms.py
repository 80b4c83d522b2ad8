"""``swarm arms`` (run an experiment's arms) and ``swarm compare`` (read them back)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import yaml

from swarm._checks import check_writable_directory
from swarm._inspect.private import PrerequisiteError
from swarm._spec.files import bound_problem
from swarm.errors import ConfigError, MissingExtra, SwarmError, UsageError

__all__ = ["arms", "compare"]


def _pairs(values: tuple[str, ...], option: str) -> dict[str, Any]:
    """``key=value`` options, each value read as YAML (``seed=1`` is a number)."""
    found: dict[str, Any] = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise UsageError(f"{option}: expected key=value, got {text!r}")
        try:
            found[key] = yaml.safe_load(value)
        except yaml.YAMLError as ex:
            why = getattr(ex, "problem", None) or ex
            raise UsageError(f"{option}: {key}: not a YAML value ({why}), got {value!r}") from None
        too_big = bound_problem(found[key])
        if too_big is not None:
            raise UsageError(f"{option}: {key}: {too_big}")
    return found


_WHOLE_KS = "expected whole numbers >= 1 separated by commas (such as 1,2,4)"


def _ks(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        ks = [int(part) for part in parts]
    except ValueError:
        raise UsageError(f"--k: {_WHOLE_KS}, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise UsageError(f"--k: {_WHOLE_KS}, got {text!r}")
    return ks


def _at_least(value: int | None, least: int, option: str) -> None:
    if value is not None and value < least:
        raise UsageError(f"{option}: expected a whole number >= {least}, got {value}")


def _check_model(model: str, model_args: Mapping[str, Any]) -> None:
    """Make the model as the eval set will, so that an unknown provider or model arg is one
    message before anything runs (a missing key or package is Inspect's own message)."""
    from inspect_ai.model import get_model

    try:
        get_model(model, **model_args)
    except (SwarmError, PrerequisiteError):
        raise
    except Exception as ex:  # Inspect or the provider refused the model: say which and why
        given = f" (model_args {dict(model_args)!r})" if model_args else ""
        raise ConfigError(
            f"model: {model!r}{given} could not be made: {type(ex).__name__}: {ex}"
        ) from None


def _warn_skipped(skipped: Mapping[str, str]) -> None:
    for path, problem in skipped.items():
        click.echo(f"warning: {path}: {problem}; left out of the table", err=True)


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
@click.option(
    "--retry-attempts", type=int, default=0, show_default=True, help="Retries of a failed arm."
)
@click.option("--max-tasks", type=int, help="Arms run at once (Inspect's max_tasks).")
@click.option(
    "--replace",
    is_flag=True,
    help="Move another experiment's arm logs out of LOG_DIR (to LOG_DIR-replaced-<time>).",
)
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
    replace: bool,
) -> None:
    """Run the arms of a budget-matched experiment on TASK (an Inspect task name, file.py or
    file.py@name): one agent at BUDGET tokens per sample; for each k > 1, k independent
    attempts at BUDGET / k each (k epochs) and a swarm of k at BUDGET (for each --topology
    file, else k --agent members), and with --subagents one swarm/deepagent at BUDGET that may
    run k background subagents.  They run as one Inspect eval set in LOG_DIR: run the
    command again and only the arms without a complete log run (an interrupted sweep goes on;
    an edited topology reruns its own arms; a log there that cannot be read is renamed
    <name>.corrupt, with a warning, and its arm runs again).  The same arms are written as an
    Inspect Flow spec, to run elsewhere with `flow run`.  Then the table of `swarm compare` is
    printed.  Before anything is written, every arm is made as the run makes it (the task with
    its -T args, each topology file) and, unless --no-run, the model with its -M args.
    LOG_DIR holds one experiment: if it holds arms of another (another budget, task, model or
    -M arg, agent or topology content) the command refuses, naming the difference, unless
    --replace moves that experiment's logs to LOG_DIR-replaced-<time> beside it.

    \b
    Examples:
      swarm arms swarm/arms_demo --model swarm/noisy --budget 240 --k 1,2,4
      swarm arms tasks.py@mine --model openai/gpt-4o --budget 200000 --k 1,2,4,8 \\
          --topology ring.yaml --log-dir logs/mine
    """
    from swarm.analysis import arm_table
    from swarm.experiments import (
        Experiment,
        arm_tasks,
        flow_installed,
        other_experiments,
        run_arms,
        topology_name,
        write_flow_spec,
    )

    # the options first: each wrong one is a usage error naming it (status 2)
    _at_least(budget, 1, "--budget")
    ks = _ks(k)
    for n in ks:
        if n > 1 and budget // n < 1:
            raise UsageError(f"--budget: {budget} tokens cannot be split {n} ways (--k {n})")
    names = [topology_name(t) for t in topology]
    if len(set(names)) != len(names):
        raise UsageError(f"--topology: two files share a name ({names}); rename one")
    _at_least(retry_attempts, 0, "--retry-attempts")
    _at_least(max_tasks, 1, "--max-tasks")
    experiment = Experiment(
        task=task,
        model=model,
        budget=budget,
        k=ks,
        task_args=_pairs(task_args, "-T"),
        model_args=_pairs(model_args, "-M"),
        agent=agent,
        topologies=topology,
        subagents=subagents,
    )
    # then every arm made as the run makes it: the task, its args and each topology file; the
    # model too when the arms run here (a Flow spec may be run where its key and package are)
    arm_tasks(experiment)
    wanted = flow_spec is not None or no_run
    if wanted and not flow_installed():  # said before anything is written
        raise MissingExtra("a Flow spec needs inspect-flow: pip install 'swarm-eval[flow]'")
    if not no_run:
        _check_model(experiment.model, experiment.model_args)
    check_writable_directory(log_dir, "--log-dir")
    others = other_experiments(experiment, log_dir)
    if others and not replace:
        raise UsageError(
            f"--log-dir: {log_dir} holds the arms of another experiment "
            f"({'; '.join(sorted(others.values()))}, as logged vs this one): give another "
            "--log-dir, "
            "or --replace to move those logs aside"
        )
    # the Flow spec is optional: without inspect-flow the arms still run, unless it was asked
    # for (--flow-spec, --no-run), which was refused above with what to install
    if wanted or flow_installed():
        spec_path = Path(flow_spec) if flow_spec is not None else Path(log_dir) / "flow.yaml"
        try:
            written = write_flow_spec(experiment, spec_path, log_dir)
        except OSError as ex:
            raise UsageError(
                f"--flow-spec: cannot write {spec_path}: {ex.strerror or ex}"
            ) from None
        said = str(written)
    else:
        said = "not written (it needs inspect-flow: pip install 'swarm-eval[flow]')"
    click.echo(f"arms: {', '.join(a.name for a in experiment.arms())}")
    click.echo(f"flow spec: {said}")
    if no_run:
        return
    extra: dict[str, Any] = {} if max_tasks is None else {"max_tasks": max_tasks}
    sweep = run_arms(experiment, log_dir, retry_attempts=retry_attempts, replace=replace, **extra)
    for moved in sweep.replaced:
        click.echo(f"replaced: {moved}")
    for aside in sweep.set_aside:
        click.echo(
            f"warning: {aside.path}: not a readable Inspect log ({aside.problem}); renamed "
            f"{aside.moved_to}, and its arm ran again",
            err=True,
        )
    reused = sorted({log.eval.task for log in sweep.logs} - set(sweep.ran))
    click.echo(f"ran: {', '.join(sweep.ran) or 'none'}")
    click.echo(f"reused: {', '.join(reused) or 'none'}")
    table = arm_table(log_dir)
    _warn_skipped(table.skipped)
    click.echo(table.to_text())
    if not sweep.success:
        click.echo("error: some arms did not complete; run the command again", err=True)
        raise SystemExit(1)


@click.command(short_help="Compare an experiment's arms: the table and the pictures.")
@click.argument("log_dir")
@click.option("-o", "--output", help="Where the page and PNGs go [default: LOG_DIR].")
@click.option("--scorer", help="The score to read (default: each sample's first).")
@click.option(
    "--fit-over-budget", is_flag=True, help="Let arms that overspent their budget into the fit."
)
def compare(log_dir: str, output: str | None, scorer: str | None, fit_over_budget: bool) -> None:
    """Read the arms in LOG_DIR (written by `swarm arms` or its Flow spec) and print one row
    per arm: the accuracy of the answer the arm chose (attempts: their majority answer) with
    its 95% interval, an oracle's pick (pass@k of attempts, a swarm's best member), the mean
    attempt or member, pass^k, realized tokens and cost per sample and tokens per success;
    arms that spent more than their budget in some sample come in a block of their own and
    stay out of the fit; then the scaling exponent lambda, on realized tokens.  Writes
    comparison.html and the PNGs comparison-frontier.png and comparison-by-k.png.  A log that
    cannot be read, or whose figures are not finite numbers, is named in a warning and left
    out (the arm's next newest log stands in).  LOG_DIR must hold one experiment: arms of
    two (another budget, model arg, seed...) are refused, naming the difference.

    \b
    Examples:
      swarm compare logs/arms
      swarm compare logs/arms -o report
    """
    from swarm.analysis import arm_table, write_comparison
    from swarm.analysis._arms import UnknownScorer

    try:
        table = arm_table(log_dir, scorer=scorer, over_budget=fit_over_budget)
    except UnknownScorer as ex:
        raise UsageError(f"--scorer: {ex.problem}") from None
    _warn_skipped(table.skipped)
    if not table.rows:
        if not Path(log_dir).is_dir():
            raise UsageError(f"{log_dir}: no such directory")
        raise UsageError(f"{log_dir}: no arm logs (run `swarm arms` first)")
    out = output or log_dir
    check_writable_directory(out, "--output")
    click.echo(table.to_text())
    try:
        page = write_comparison(table, out)
    except OSError as ex:
        raise UsageError(f"--output: cannot write in {out}: {ex.strerror or ex}") from None
    click.echo(f"wrote {page} and its PNGs")
