"""``swarm/swarm_arm``: one arm of an experiment as an ordinary Inspect task.

It loads the experiment's task (its dataset and scorer), and replaces the solver with the arm's
swarm and the limits with the arm's budget: the sample's token limit is the budget (``B / k``
per epoch for ``k`` attempts, with ``k`` epochs), and the swarm's token cap is derived from
it (Inspect's limit less the ``reserve``), so the swarm stops itself, and writes its ledger,
before Inspect's own limit would end the sample.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from inspect_ai import Task, task, task_with
from inspect_ai.util import registry_create, registry_info

from swarm import load_topology, swarm
from swarm.analysis import member_scores
from swarm.errors import ConfigError, SwarmError
from swarm.experiments._arms import ARM_KINDS, Arm

__all__ = ["arm_topology", "load_task", "swarm_arm"]


def load_task(spec: str, args: Mapping[str, Any] | None = None) -> Task:
    """The Inspect task ``spec`` names, built with ``args``: a registered task
    (``swarm/arms_demo``), a file (``tasks.py``, whose one ``@task``) or ``file.py@name``."""
    args = dict(args or {})
    file, _, name = spec.partition("@")
    if file.endswith(".py"):
        path = Path(file)
        if not path.is_file():
            raise ConfigError(f"task: no such file {file!r}")
        module_name = f"_swarm_arm_task_{abs(hash(str(path.resolve())))}"
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise ConfigError(f"task: cannot load {file!r}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
        tasks = [
            n
            for n, obj in vars(module).items()
            if callable(obj) and getattr(obj, "__module__", None) == module_name and _is_task(obj)
        ]
        if not name:
            if len(tasks) != 1:
                raise ConfigError(
                    f"task: {file!r} has {len(tasks)} @task functions ({', '.join(tasks)}); "
                    f"name one as {file}@NAME"
                )
            name = tasks[0]
        if name not in tasks:
            raise ConfigError(f"task: {file!r} has no @task named {name!r}")
        built = _made(spec, args, lambda: getattr(module, name)(**args))
    else:
        built = _made(spec, args, lambda: registry_create("task", spec, **args))
    if not isinstance(built, Task):
        raise ConfigError(f"task: {spec!r} did not make an Inspect Task")
    return built


def _made(spec: str, args: Mapping[str, Any], make: Callable[[], object]) -> object:
    """``make()``, the task ``spec`` built with ``args``; what it raises (no such task, an
    argument the task does not take, a value it cannot use) as a ``ConfigError`` naming the
    task and its arguments."""
    try:
        return make()
    except SwarmError:
        raise
    except LookupError as ex:
        if str(ex) != f"{spec} was not found in the registry":  # Inspect's words for a name
            raise _refused(spec, args, ex) from None
        raise ConfigError(f"task: no Inspect task named {spec!r}") from None
    except Exception as ex:  # the task's own code refused its arguments: say which and why
        raise _refused(spec, args, ex) from None


def _refused(spec: str, args: Mapping[str, Any], ex: Exception) -> ConfigError:
    given = f"task_args {dict(args)!r}" if args else "no task_args"
    return ConfigError(f"task: {spec!r} could not be made with {given}: {type(ex).__name__}: {ex}")


def _is_task(obj: object) -> bool:
    try:
        return registry_info(obj).type == "task"
    except (ValueError, AttributeError):
        return False


def arm_topology(
    arm: Arm, agent: str, reserve: float, topology: str | None = None
) -> dict[str, Any]:
    """The swarm configuration of ``arm``: one ``agent`` member for the single agent and the
    attempts; one ``swarm/deepagent`` member running at most ``k`` background subagents for
    ``subagents``; for a swarm, the ``topology`` file with ``k`` members (its one member entry's
    ``count`` set to ``k``, or entries whose counts add up to ``k``), else ``k`` ``agent``
    members, every one finishing, the budget split equally.  The token and cost caps are the
    arm's: a file that sets ``budget.tokens`` or ``budget.cost`` is refused."""
    if arm.kind == "subagents":
        return {
            "members": {
                "factory": "swarm/deepagent",
                "name": "lead",
                "args": {"background": arm.k},
            },
            "budget": {"reserve": reserve},
        }
    if arm.kind != "swarm":
        return {
            "members": {"factory": agent, "name": "worker"},
            "budget": {"reserve": reserve},
        }
    if topology is None:
        return {
            "members": {"factory": agent, "name": "worker", "count": arm.k},
            "controller": {"name": "leaderless", "stop_on_submission": False},
            "budget": {"reserve": reserve, "split": "equal"},
        }
    # read as swarm(config=FILE) reads a file: its errors start with the file's name
    config = load_topology(topology)
    members = config.get("members")
    if isinstance(members, Mapping | str):
        members = [members]
    if not isinstance(members, list) or not members:
        raise ConfigError(f"{topology}: members: expected a member entry or a list of them")
    entries: list[dict[str, Any]] = []
    for i, m in enumerate(members):
        if not isinstance(m, Mapping | str):
            raise ConfigError(
                f"{topology}: members[{i}]: expected a member entry (a mapping, or an agent's "
                f"name), got {m!r}"
            )
        entries.append({"factory": m} if isinstance(m, str) else dict(m))
    if len(entries) == 1:
        entries[0]["count"] = arm.k
    else:
        total = 0
        for i, entry in enumerate(entries):
            count = entry.get("count", 1)
            if isinstance(count, bool) or not isinstance(count, int):
                raise ConfigError(
                    f"{topology}: members[{i}].count: expected a whole number, got {count!r}"
                )
            total += count
        if total != arm.k:
            raise ConfigError(
                f"{topology}: members: {len(entries)} entries make {total} member(s), not "
                f"k = {arm.k}; give one entry (its count is set to k) or one file per k"
            )
    config["members"] = entries
    budget = config.get("budget") or {}
    if not isinstance(budget, Mapping):
        raise ConfigError(f"{topology}: budget: expected a mapping of budget keys, got {budget!r}")
    budget = dict(budget)
    for key in ("tokens", "cost"):
        if key in budget:
            raise ConfigError(
                f"{topology}: budget.{key}: the arm sets the budget (every arm of the "
                "experiment gets the same); remove it from the file"
            )
    budget.setdefault("reserve", reserve)
    config["budget"] = budget
    return config


@task
def swarm_arm(
    task: str,
    arm: str,
    k: int,
    budget: int,
    agent: str = "react",
    reserve: float = 0.05,
    topology: str | None = None,
    topology_digest: str | None = None,
    task_args: dict[str, Any] | None = None,
) -> Task:
    """One arm of a budget-matched experiment on ``task``: ``arm`` is ``single`` (one
    ``agent`` at ``budget`` tokens per sample), ``attempts`` (``k`` epochs of one agent at
    ``budget / k``), ``swarm`` (``k`` members at ``budget``, from ``topology``)
    or ``subagents`` (one deepagent at ``budget`` with at most ``k`` background subagents).
    ``topology_digest`` is the file's content digest: it only makes an edited file a new
    task."""
    if arm not in ARM_KINDS:
        raise ConfigError(f"arm: expected one of {', '.join(ARM_KINDS)}, got {arm!r}")
    the_arm = Arm(kind=arm, k=int(k), budget=int(budget), topology=topology)
    config = arm_topology(the_arm, agent, reserve, topology)
    try:
        solver = swarm(config=config)
    except ConfigError as ex:
        if topology is None:
            raise
        raise ConfigError(f"{topology}: {ex}") from None  # as swarm(config=FILE) names it
    loaded = load_task(task, task_args)
    scorers = list(loaded.scorer or [])
    if arm == "swarm" and scorers:  # every member's answer scored too: best@k, mean member
        scorers.append(member_scores(scorers[0]))
    return task_with(
        loaded,
        solver=solver,
        scorer=scorers or None,
        epochs=the_arm.epochs,
        token_limit=the_arm.token_limit,
        name=the_arm.name,
        metadata={
            **(loaded.metadata or {}),
            "swarm_arm": {"arm": arm, "k": int(k), "budget": int(budget)},
        },
    )
