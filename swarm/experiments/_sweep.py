"""Running the arms: locally as one Inspect eval set, or anywhere as an Inspect Flow spec.

The eval set makes the sweep resumable for free: run again in the same log directory, Inspect
pairs each arm with its log by the task's identity (name, arguments, model, limits) and runs
only the arms without a complete log.  An interrupted sweep therefore continues where it
stopped, and an edited topology file (whose content digest is one of its arms' arguments) makes
only its own arms new tasks.  The log directory may keep the logs of a file's earlier versions
(``log_dir_allow_dirty``); ``swarm.analysis`` reads the newest log of each arm.

Inspect reads the header of every log in the directory before it runs anything, and one log it
cannot read (truncated by a full disk or a copy cut short) ends the eval set with
``ValueError: EOCD not found``.  ``run_arms`` therefore reads each header first and renames a
log that does not read to ``<name>.corrupt`` (Inspect lists only ``.eval`` and ``.json``
files): the file is kept for a person to look at, and its arm, now without a log, runs again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import attrs
import yaml

from swarm.analysis import ExperimentId, experiment_id, identity_of_log
from swarm.errors import ConfigError, MissingExtra, UsageError
from swarm.experiments._arms import Arm, Experiment
from swarm.experiments._task import swarm_arm

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog
    from inspect_flow import FlowSpec

__all__ = [
    "ARM_TASK",
    "SetAside",
    "Sweep",
    "arm_tasks",
    "experiment_identity",
    "flow_installed",
    "other_experiments",
    "flow_spec",
    "run_arms",
    "write_flow_spec",
]

_NEEDS_FLOW = "a Flow spec needs inspect-flow: pip install 'swarm-eval[flow]'"

ARM_TASK = "swarm/swarm_arm"
"""The registered name of the arm task, as a Flow spec names it."""


@attrs.frozen(kw_only=True)
class SetAside:
    """A log in the sweep's directory that Inspect could not read: ``path``, where it was;
    ``moved_to``, its new name (``path`` + ``.corrupt``, or ``.corrupt-2``...);
    ``problem``, what reading it raised."""

    path: str
    moved_to: str
    problem: str


@attrs.frozen(kw_only=True)
class Sweep:
    """What ``run_arms`` did: ``success`` (every arm has a complete log), the ``logs`` of
    the eval set (every arm's, headers only), ``ran``: the arms run this time (not
    reused from an earlier run), and ``set_aside``: the logs that could not be read, each
    renamed to ``<name>.corrupt`` (its path before, its path now, and why it did not read)."""

    success: bool
    logs: tuple[EvalLog, ...]
    ran: tuple[str, ...]
    set_aside: tuple[SetAside, ...] = ()
    replaced: tuple[str, ...] = ()
    """The logs of another experiment moved out of the directory (``replace=True``), each
    ``<path> -> <new path>``."""


def experiment_identity(experiment: Experiment) -> ExperimentId:
    """The identity its arms' logs will carry (``swarm.analysis.identity_of_log``)."""
    topologies = [
        (arm.name.rsplit("-", 1)[0], experiment.task_args_of(arm).get("topology_digest"))
        for arm in experiment.arms()
        if arm.kind == "swarm" and arm.topology is not None
    ]
    return experiment_id(
        task=experiment.task,
        task_args=experiment.task_args,
        agent=experiment.agent,
        reserve=experiment.reserve,
        budget=experiment.budget,
        model=experiment.model,
        model_args=experiment.model_args,
        topologies=sorted(set(topologies)),
    )


def other_experiments(experiment: Experiment, log_dir: str | Path) -> dict[str, str]:
    """The arm logs in ``log_dir`` (not its subfolders) of an experiment other than
    ``experiment``: each log's path and how it differs (``budget (240 vs 120)``).  A log that
    does not read is not counted (``run_arms`` sets it aside), nor is an earlier version of
    one of ``experiment``'s swarm arms whose topology file has been edited since (the arm runs
    again, and its newest log is the one read)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    mine = experiment_identity(experiment)
    arms = {arm.name for arm in experiment.arms()}
    found: dict[str, str] = {}
    if not Path(log_dir).is_dir():
        return found
    for info in list_eval_logs(str(log_dir), recursive=False):
        try:
            header = read_eval_log(info, header_only=True)
        except Exception:  # unreadable: set aside, not judged
            continue
        args = header.eval.task_args or {}
        if "arm" not in args or "budget" not in args:
            continue
        theirs = identity_of_log(header)
        differ = theirs.differences(mine)
        if header.eval.task in arms and _only_topology_differs(theirs, mine):
            continue  # an earlier version of an arm this run makes new: newest wins, as ever
        if differ:
            found[str(_local_path(info.name, Path(log_dir)))] = (
                f"{header.eval.task}: {'; '.join(differ)}"
            )
    return found


def _only_topology_differs(theirs: ExperimentId, mine: ExperimentId) -> bool:
    return attrs.evolve(theirs, topologies=()) == attrs.evolve(mine, topologies=())


def _refuse_or_replace(experiment: Experiment, where: Path, replace: bool) -> list[str]:
    """Refuse a directory holding another experiment's arms, or, with ``replace``, move their
    logs into ``<dir>-replaced-<time>`` beside it; the moves made."""
    others = other_experiments(experiment, where)
    if not others:
        return []
    if not replace:
        said = "; ".join(sorted(others.values()))
        raise ConfigError(
            f"log_dir: {where} holds the arms of another experiment ({said}, as logged vs "
            "this one): write this experiment into a directory of its own, or replace the "
            "other (replace=True, `swarm arms --replace`), which moves its logs aside"
        )
    from datetime import datetime

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    aside = where.parent / f"{where.name}-replaced-{stamp}"
    aside.mkdir(parents=True, exist_ok=True)
    moved = []
    for path in others:
        source = Path(path)
        target = aside / source.name
        source.rename(target)
        moved.append(f"{source} -> {target}")
    return moved


def _local_path(location: str, log_dir: Path) -> Path:
    """A log's ``file://`` location as a path under ``log_dir`` as the directory was given."""
    local = location.startswith("file://")
    path = Path(url2pathname(urlparse(location).path)) if local else Path(location)
    with contextlib.suppress(ValueError):
        path = log_dir / path.relative_to(log_dir.absolute())
    return path


def _set_aside_unreadable(log_dir: Path) -> list[SetAside]:
    """Rename every log under ``log_dir`` (as Inspect's eval set lists them: recursively)
    whose header does not read, so that the eval set runs its arm again instead of ending."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    found: list[SetAside] = []
    for info in list_eval_logs(str(log_dir), recursive=True):
        try:
            read_eval_log(info, header_only=True)
        except Exception as ex:  # whatever a truncated or damaged file makes the reader raise
            problem = f"{type(ex).__name__}: {ex}" if str(ex) else type(ex).__name__
            if not info.name.startswith("file://"):  # a remote log is not ours to rename
                raise ConfigError(
                    f"{info.name}: not a readable Inspect log ({problem}); move it out of the "
                    "log directory and run again"
                ) from None
            path = _local_path(info.name, log_dir)
            target = path.with_name(f"{path.name}.corrupt")
            n = 1
            while target.exists():
                n += 1
                target = path.with_name(f"{path.name}.corrupt-{n}")
            path.rename(target)
            found.append(SetAside(path=str(path), moved_to=str(target), problem=problem))
    return found


def arm_tasks(experiment: Experiment) -> list[Task]:
    """Every arm as an Inspect task (``swarm/swarm_arm`` called with the arm's arguments)."""
    return [swarm_arm(**experiment.task_args_of(arm)) for arm in experiment.arms()]


def _log_files(log_dir: Path) -> set[str]:
    return {p.name for p in log_dir.glob("*.eval")}


def run_arms(
    experiment: Experiment,
    log_dir: str | Path,
    *,
    retry_attempts: int = 0,
    display: str = "none",
    replace: bool = False,
    **eval_set_args: Any,
) -> Sweep:
    """Run every arm of ``experiment`` as one Inspect eval set in ``log_dir`` (resumable:
    arms with a complete log there are not run again; a log there that cannot be read is
    renamed ``<name>.corrupt`` first, and its arm runs again: ``Sweep.set_aside``).
    ``eval_set_args`` go to ``inspect_ai.eval_set`` (``max_tasks``, ``max_samples``...).

    Raises:
        ConfigError: ``log_dir`` holds arm logs of another experiment (another budget, task,
            model or model arg, agent, reserve or topology content), and not ``replace``;
            with ``replace`` their logs are moved to ``<log_dir>-replaced-<time>`` beside it
            (``Sweep.replaced``)."""
    from inspect_ai import eval_set
    from inspect_ai.log import read_eval_log

    where = Path(log_dir)
    where.mkdir(parents=True, exist_ok=True)
    set_aside = _set_aside_unreadable(where)
    replaced = _refuse_or_replace(experiment, where, replace)
    before = _log_files(where)
    success, logs = eval_set(
        arm_tasks(experiment),
        log_dir=str(where),
        model=experiment.model,
        model_args=dict(experiment.model_args),
        retry_attempts=retry_attempts,
        # with no retries, Inspect warns that an immediate retry has no effect
        retry_immediate=retry_attempts > 0,
        log_dir_allow_dirty=True,
        display=display,  # type: ignore[arg-type]
        **eval_set_args,
    )
    ran = sorted(
        read_eval_log(str(where / name), header_only=True).eval.task
        for name in _log_files(where) - before
    )
    return Sweep(
        success=success,
        logs=tuple(logs),
        ran=tuple(ran),
        set_aside=tuple(set_aside),
        replaced=tuple(replaced),
    )


def flow_installed() -> bool:
    """Whether inspect-flow (the ``swarm-eval[flow]`` extra) can be imported."""
    import importlib.util

    return importlib.util.find_spec("inspect_flow") is not None


def flow_spec(experiment: Experiment, log_dir: str, arms: Sequence[str] | None = None) -> FlowSpec:
    """The arms of ``experiment`` (or those named in ``arms``) as an Inspect Flow spec that
    runs them in ``log_dir`` (needs ``inspect-flow``: the ``swarm-eval[flow]`` extra)."""
    try:
        from inspect_flow import FlowModel, FlowOptions, FlowSpec, FlowTask
    except ImportError:
        raise MissingExtra(_NEEDS_FLOW) from None
    chosen: list[Arm] = experiment.arms()
    if arms is not None:
        known = {a.name for a in chosen}
        missing = sorted(set(arms) - known)
        if missing:
            raise UsageError(f"arms: no arm named {missing}; the arms are {sorted(known)}")
        chosen = [a for a in chosen if a.name in arms]
    model = FlowModel(name=experiment.model, model_args=dict(experiment.model_args) or None)
    return FlowSpec(
        log_dir=log_dir,
        log_dir_create_unique=False,
        execution_type="inproc",
        options=FlowOptions(log_dir_allow_dirty=True, display="none"),
        tasks=[
            # the factory makes the task and the name keeps the arm's, so that a log Flow
            # writes is the eval set's log of the same arm (Flow renames a task to `name`)
            FlowTask(
                name=arm.name,
                factory=ARM_TASK,
                args=experiment.task_args_of(arm),
                model=model,
            )
            for arm in chosen
        ],
    )


def write_flow_spec(
    experiment: Experiment, path: str | Path, log_dir: str, arms: Sequence[str] | None = None
) -> Path:
    """Write ``flow_spec(...)`` to ``path`` as YAML (Flow's own ``dump_spec`` form), for
    ``flow run`` from the directory the task and topology paths are relative to; the log
    directory is written relative to the spec's folder, as Flow reads it; the spec's folder is
    made if it is missing.  Return the path."""
    try:
        from inspect_flow.api import dump_spec
    except ImportError:
        raise MissingExtra(_NEEDS_FLOW) from None

    out = Path(path)
    where = os.path.relpath(Path(log_dir).resolve(), out.resolve().parent)
    spec: Mapping[str, Any] = dump_spec(flow_spec(experiment, where, arms))
    if not out.parent.exists():
        out.parent.mkdir(parents=True)
    out.write_text(yaml.safe_dump(dict(spec), sort_keys=False))
    return out
