"""The spec's own analysis examples run unchanged (with swarm.analysis) against our logs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelCost, ModelInfo, set_model_info
from inspect_ai.scorer import match

from swarm import member, swarm
from swarm.testing import call, scripted_model, submit

from helpers import worker

SPEC_COLUMNS_EXAMPLE = """
from inspect_ai.analysis import SampleSummary, samples_df
from inspect_ai.scorer import value_to_float

from swarm.analysis import SwarmColumns

df = samples_df("logs", columns=SampleSummary + SwarmColumns)
df = df[~df["swarm_resumed"]]
df["score"] = df["score_match"].map(value_to_float(), na_action="ignore")
df.groupby("log")[["score", "swarm_cost"]].mean()
"""

SPEC_LEDGER_EXAMPLE = """
from inspect_ai.log import read_eval_log

from swarm.analysis import swarm_ledger

log = read_eval_log("logs/my-eval.eval")
for sample in log.samples or []:
    ledger = swarm_ledger(sample)
    if ledger is not None:
        for m in ledger.members:
            print(sample.id, sample.epoch, m.name, m.meter.cost)
"""

CHECK = """
print(df.groupby("log")[["score", "swarm_cost"]].mean().to_json())
row = df.iloc[0]
print({k: (None if row[k] is None else str(row[k])) for k in [c for c in df.columns if c.startswith("swarm_")]})
"""


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[Path]:
    set_model_info(
        "swarm/scripted",
        ModelInfo(cost=ModelCost(input=1.0, output=2.0, input_cache_write=0, input_cache_read=0)),
    )
    model = scripted_model({"*": [call("noop", i=1), submit("42")]})
    task = Task(
        dataset=[Sample(id=i, input="What is 6 * 7?", target="42") for i in (1, 2)],
        solver=swarm(members=member(worker, count=2)),
        scorer=match(),
        epochs=2,
    )
    [log] = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success"
    shutil.move(log.location, tmp_path / "logs" / "my-eval.eval")
    yield tmp_path
    set_model_info("swarm/scripted", ModelInfo())


def run_script(cwd: Path, code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_spec_columns_example_runs_unchanged(logs: Path) -> None:
    out = run_script(logs, SPEC_COLUMNS_EXAMPLE + CHECK).splitlines()
    assert '"score":{' in out[-2] and '"swarm_cost":{' in out[-2]
    row = eval_dict(out[-1])
    assert set(row) == {
        "swarm_cost",
        "swarm_complete",
        "swarm_members",
        "swarm_resumed",
        "swarm_cost_cap",
        "swarm_token_cap",
        "swarm_time_cap",
        "swarm_errored",
        "swarm_no_usage",
        "swarm_unpriced",
        "swarm_unpriced_models",
    }
    assert row["swarm_members"] == "2"
    assert row["swarm_complete"] == "True"
    assert row["swarm_resumed"] == "False"
    assert row["swarm_errored"] == "0"
    assert row["swarm_unpriced_models"] == "[]"
    assert float(row["swarm_cost"]) > 0
    assert row["swarm_cost_cap"] in ("None", "<NA>", "nan")


def eval_dict(text: str) -> dict[str, str]:
    import ast

    value = ast.literal_eval(text)
    assert isinstance(value, dict)
    return value


def test_spec_ledger_example_runs_unchanged(logs: Path) -> None:
    lines = run_script(logs, SPEC_LEDGER_EXAMPLE).splitlines()
    assert len(lines) == 8  # 2 samples x 2 epochs x 2 members
    ids = {tuple(line.split()[:3]) for line in lines}
    assert ("1", "1", "worker-1") in ids and ("2", "2", "worker-2") in ids
    assert all(float(line.split()[3]) > 0 for line in lines)
