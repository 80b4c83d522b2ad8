"""Budget-matched experiments: does a swarm of k agents beat one agent, or k independent
attempts, at the same cost?

- ``Experiment(task=..., model=..., budget=B, k=[1, 2, 4])``: the description; ``arms()``
  lists its arms (``Arm``): the single agent at B, k attempts at B / k each, a swarm of k at B
  for each topology file;
- ``swarm_arm``: the ``swarm/swarm_arm`` Inspect task, one arm (``arm_tasks`` builds them all);
- ``run_arms(experiment, log_dir)``: the arms as one resumable Inspect eval set (a ``Sweep``;
  a log there that cannot be read is renamed ``<name>.corrupt``, a ``SetAside``, and its arm
  runs again);
- ``flow_spec`` / ``write_flow_spec``: the same arms as an Inspect Flow spec (``flow_installed()``:
  whether inspect-flow, the ``flow`` extra, is there);
- ``arms_demo``: the keyless experiment's task, for the ``swarm/noisy`` model.

``swarm.analysis.arm_table`` reads the logs back.
"""

from __future__ import annotations

from swarm.experiments._arms import ARM_KINDS, Arm, Experiment, topology_name
from swarm.experiments._demo import arms_demo
from swarm.experiments._sweep import (
    ARM_TASK,
    SetAside,
    Sweep,
    arm_tasks,
    experiment_identity,
    flow_installed,
    flow_spec,
    other_experiments,
    run_arms,
    write_flow_spec,
)
from swarm.experiments._task import arm_topology, load_task, swarm_arm

__all__ = [
    "ARM_KINDS",
    "ARM_TASK",
    "Arm",
    "Experiment",
    "SetAside",
    "Sweep",
    "arm_tasks",
    "arm_topology",
    "arms_demo",
    "experiment_identity",
    "flow_spec",
    "other_experiments",
    "load_task",
    "run_arms",
    "swarm_arm",
    "topology_name",
    "flow_installed",
    "write_flow_spec",
]
