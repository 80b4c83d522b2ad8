"""The arms of a budget-matched experiment, from one description.

An ``Experiment`` is a task, a model, a budget ``B`` in tokens per sample and a list of ``k``.
Its arms: the single agent at ``B``; for each ``k`` > 1, ``k`` independent attempts at ``B / k``
each (``k`` epochs of one agent), for each topology a swarm of ``k`` at ``B``, and optionally a
deepagent at ``B`` with ``k`` background subagents.  Each arm is
one call of the ``swarm/swarm_arm`` task (``_task.py``) with JSON arguments, so the same arm is
the same Inspect task in an eval set, in a Flow spec and in a log.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from swarm.errors import ConfigError

__all__ = ["ARM_KINDS", "Arm", "Experiment", "topology_name"]

ArmKind = Literal["single", "attempts", "swarm", "subagents"]
ARM_KINDS: tuple[ArmKind, ...] = ("single", "attempts", "swarm", "subagents")


def topology_name(path: str | None) -> str:
    """The name a topology file gives its arms: the file's stem (``default`` for none)."""
    if path is None:
        return "default"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(path).stem) or "topology"


def _digest(path: str | None) -> str | None:
    """The topology file's content digest: an edited file makes its arms new tasks."""
    if path is None:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError as ex:
        raise ConfigError(f"topology: cannot read {path!r}: {ex.strerror or ex}") from None


@attrs.frozen(kw_only=True)
class Arm:
    """One arm: its ``kind``, ``k`` (1 for the single agent), the whole arm's ``budget`` in
    tokens per sample, and for a swarm its ``topology`` file (``None``: the default one)."""

    kind: ArmKind
    k: int
    budget: int
    topology: str | None = None

    @property
    def name(self) -> str:
        """``single``, ``attempts-4``, ``swarm-4`` (default topology), ``swarm-ring-4`` or
        ``subagents-4``."""
        if self.kind == "single":
            return "single"
        if self.kind in ("attempts", "subagents"):
            return f"{self.kind}-{self.k}"
        named = topology_name(self.topology)
        return f"swarm-{self.k}" if named == "default" else f"swarm-{named}-{self.k}"

    @property
    def epochs(self) -> int:
        """Epochs per sample: ``k`` independent attempts, else one."""
        return self.k if self.kind == "attempts" else 1

    @property
    def token_limit(self) -> int:
        """The token limit of one epoch of a sample: ``budget / k`` for attempts, else all."""
        return self.budget // self.k if self.kind == "attempts" else self.budget


def _positive_whole(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: expected a whole number >= 1, got {value!r}")
    return value


def _budget(value: object) -> int:
    return _positive_whole(value, "budget")


def _paths(value: Iterable[str | Path]) -> tuple[str, ...]:
    return tuple(str(v) for v in value)


def _ks(value: Sequence[int]) -> tuple[int, ...]:
    ks = tuple(_positive_whole(k, f"k[{i}]") for i, k in enumerate(value))
    if not ks:
        raise ConfigError("k: give at least one number of agents, such as 1,2,4")
    return tuple(sorted(set(ks)))


@attrs.frozen(kw_only=True)
class Experiment:
    """A budget-matched comparison: ``task`` (an Inspect task name, ``file.py`` or
    ``file.py@name``, with ``task_args``), ``model`` (with ``model_args``), ``budget`` (tokens
    per sample), the numbers of agents ``k``, the member ``agent`` (an ``@agent`` name) of the
    single agent, the attempts and the default swarm, and the swarm ``topologies`` (files; none:
    ``k`` ``agent`` members under the ``leaderless`` controller, every member finishing, the
    budget split equally).  With ``subagents``, each ``k`` also gets one ``swarm/deepagent``
    member at ``B`` that may run ``k`` background subagents at once."""

    task: str
    model: str
    budget: int = attrs.field(converter=_budget)
    k: tuple[int, ...] = attrs.field(converter=_ks)
    task_args: Mapping[str, Any] = attrs.field(factory=dict)
    model_args: Mapping[str, Any] = attrs.field(factory=dict)
    agent: str = "react"
    topologies: tuple[str, ...] = attrs.field(default=(), converter=_paths)
    reserve: float = 0.05
    subagents: bool = False

    def __attrs_post_init__(self) -> None:
        for k in self.k:
            if k > 1 and self.budget // k < 1:
                raise ConfigError(f"budget: {self.budget} tokens cannot be split {k} ways")
        names = [topology_name(t) for t in self.topologies]
        if len(set(names)) != len(names):
            raise ConfigError(f"topologies: two files share a name ({names}); rename one")

    def arms(self) -> list[Arm]:
        """Every arm: the single agent, then attempts and swarms by ``k``."""
        found = [Arm(kind="single", k=1, budget=self.budget)]
        for k in self.k:
            if k == 1:
                continue
            found.append(Arm(kind="attempts", k=k, budget=self.budget))
            for topology in self.topologies or (None,):
                found.append(Arm(kind="swarm", k=k, budget=self.budget, topology=topology))
            if self.subagents:
                found.append(Arm(kind="subagents", k=k, budget=self.budget))
        return found

    def task_args_of(self, arm: Arm) -> dict[str, Any]:
        """The ``swarm/swarm_arm`` arguments of ``arm`` (JSON values; a swarm's topology by
        path and content digest, so an edited file reruns only its arms)."""
        args: dict[str, Any] = {
            "task": self.task,
            "task_args": dict(self.task_args),
            "arm": arm.kind,
            "k": arm.k,
            "budget": arm.budget,
            "agent": self.agent,
            "reserve": self.reserve,
        }
        if arm.kind == "swarm" and arm.topology is not None:
            args["topology"] = str(arm.topology)
            args["topology_digest"] = _digest(arm.topology)
        return args
