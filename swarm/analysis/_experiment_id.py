"""Which experiment an arm's log belongs to, so that two experiments never share a table.

An experiment is what every one of its arms holds fixed: the task and its args, the member
agent and the reserve, the budget per sample, the model and its args (a ``seed`` among them,
as ``swarm/noisy`` takes it), the generate config's ``seed``, and the content of each topology
file by name.  The arms' ``k`` is not in it: arms at other ``k`` are more of the same
experiment (``swarm arms --k 8`` after ``--k 1,2,4`` extends it).

Two arm logs with a different identity are two experiments: ``arm_table`` refuses to put them
in one table or fit (``MixedExperiments``), and ``swarm arms`` refuses to write one into a
directory that holds another unless told to replace it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from swarm.errors import ConfigError

__all__ = [
    "ExperimentId",
    "MixedExperiments",
    "experiment_id",
    "group_by_experiment",
    "identity_of_log",
]


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


@attrs.frozen(kw_only=True)
class ExperimentId:
    """What every arm of one experiment holds fixed (``topologies``: each topology file's
    name and content digest; ``seed``: the generate config's)."""

    task: str
    task_args: str
    agent: str
    reserve: float
    budget: int
    model: str
    model_args: str
    seed: int | None = None
    topologies: tuple[tuple[str, str | None], ...] = ()

    def differences(self, other: ExperimentId) -> list[str]:
        """The fields in which ``other`` differs, each as ``field (mine vs other's)``; for
        topologies only a name both have with another content counts."""
        found = [
            f"{f.name} ({getattr(self, f.name)} vs {getattr(other, f.name)})"
            for f in attrs.fields(ExperimentId)
            if f.name != "topologies" and getattr(self, f.name) != getattr(other, f.name)
        ]
        theirs = dict(other.topologies)
        for name, digest in self.topologies:
            if name in theirs and theirs[name] != digest:
                found.append(f"topology {name!r} (content {digest} vs {theirs[name]})")
        return found

    def same_experiment(self, other: ExperimentId) -> bool:
        return not self.differences(other)


def experiment_id(
    *,
    task: str,
    task_args: Mapping[str, Any],
    agent: str,
    reserve: float,
    budget: int,
    model: str,
    model_args: Mapping[str, Any],
    seed: int | None = None,
    topologies: Sequence[tuple[str, str | None]] = (),
) -> ExperimentId:
    """The identity of an experiment from its parts (JSON values)."""
    return ExperimentId(
        task=task,
        task_args=_canonical(dict(task_args)),
        agent=agent,
        reserve=float(reserve),
        budget=budget,
        model=model,
        model_args=_canonical(dict(model_args)),
        seed=seed,
        topologies=tuple(sorted(topologies)),
    )


def identity_of_log(log: Any) -> ExperimentId:
    """The identity of the experiment an arm's log (an ``EvalLog``, its header is enough)
    belongs to, from the ``swarm/swarm_arm`` task's args and the eval's model."""
    args = log.eval.task_args or {}
    topologies: tuple[tuple[str, str | None], ...] = ()
    if args.get("topology") is not None:  # the arm's name less its k names the topology
        named = str(log.eval.task).rsplit("-", 1)[0]
        topologies = ((named, args.get("topology_digest")),)
    config = getattr(log.eval, "model_generate_config", None)
    return experiment_id(
        task=str(args.get("task")),
        task_args=args.get("task_args") or {},
        agent=str(args.get("agent", "react")),
        reserve=float(args.get("reserve", 0.05)),
        budget=int(args.get("budget", 0)),
        model=str(log.eval.model),
        model_args=log.eval.model_args or {},
        seed=None if config is None else config.seed,
        topologies=topologies,
    )


class MixedExperiments(ConfigError):
    """A log directory whose arm logs belong to more than one experiment."""

    def __init__(
        self, where: str, groups: Sequence[tuple[ExperimentId, Mapping[str, str]]]
    ) -> None:
        """``groups``: each experiment's identity and its arms (name: log file)."""

        def shown(arms: Mapping[str, str]) -> str:
            return ", ".join(f"{arm} ({log})" for arm, log in arms.items())

        (first, first_arms), *others = groups
        parts = [
            f"{shown(first_arms)} and {shown(arms)} differ in {'; '.join(first.differences(o))}"
            for o, arms in others
        ]
        #: each experiment's arms (name: log file), in the order found
        self.groups = [dict(arms) for _, arms in groups]
        super().__init__(
            f"{where}: its arm logs are {len(groups)} experiments, not one: "
            f"{'; and '.join(parts)}. Compare one at a time: move one experiment's logs into a "
            "folder of their own, or run `swarm arms ... --replace` to set the others aside"
        )


def group_by_experiment(
    logs: Mapping[str, Any], shown: Mapping[str, str]
) -> list[tuple[ExperimentId, dict[str, str]]]:
    """The arm logs (by arm name) grouped by experiment, the one with the most arms first: each
    group's identity (its topologies those of all its arms) and its arms by name (name:
    ``shown[name]``)."""
    groups: list[tuple[ExperimentId, dict[str, str]]] = []
    for name, log in logs.items():
        mine = identity_of_log(log)
        for at, (theirs, arms) in enumerate(groups):
            if theirs.same_experiment(mine):
                merged = dict(theirs.topologies) | dict(mine.topologies)
                groups[at] = (attrs.evolve(theirs, topologies=tuple(sorted(merged.items()))), arms)
                arms[name] = shown[name]
                break
        else:
            groups.append((mine, {name: shown[name]}))
    # the experiment with the most arms first, each one's arms by name
    groups.sort(key=lambda g: (-len(g[1]), sorted(g[1])))
    return [(identity, dict(sorted(arms.items()))) for identity, arms in groups]
