"""A budget-matched experiment from Python, keyless: the single agent, 2 attempts at half the
budget and a swarm of 2, on the ``swarm/noisy`` model; run twice (the second run reuses every
arm), read back, and drawn.  See docs/experiments.md."""

from __future__ import annotations

import tempfile
from pathlib import Path

from swarm.analysis import arm_table, write_comparison
from swarm.experiments import Experiment, run_arms

experiment = Experiment(
    task="swarm/arms_demo",
    task_args={"samples": 4},
    model="swarm/noisy",
    model_args={"seed": 1},
    budget=200,
    k=[1, 2],
)
with tempfile.TemporaryDirectory() as tmp:
    logs = Path(tmp) / "logs"
    print("ran:", ", ".join(run_arms(experiment, logs).ran))
    print("ran again:", ", ".join(run_arms(experiment, logs).ran) or "none")
    table = arm_table(logs)
    for row in table.rows:
        print(
            f"{row.arm:<11} chosen {row.chosen:.2f}  tokens/sample {row.tokens:.0f}  "
            f"within budget {row.within_budget}"
        )
    page = write_comparison(table, Path(tmp) / "report")
    print("wrote", page.name, "and", ", ".join(sorted(p.name for p in page.parent.glob("*.png"))))
