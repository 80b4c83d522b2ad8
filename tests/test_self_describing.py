"""A log says what ran: the resolved topology in the plan, a digest that tells topologies apart,
and ``inspect eval-set`` rerunning when a topology file changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval_set, task
from inspect_ai.dataset import Sample
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.scorer import includes
from inspect_ai.solver import SolverSpec

from swarm import Budget, channel, controller, member, swarm
from swarm.testing import run_eval, scripted_model

from helpers import worker


def plan_step(log: Any) -> Any:
    [step] = log.plan.steps
    return step


def test_a_swarm_built_in_python_logs_its_resolved_topology(log_dir: Path) -> None:
    solver = swarm(
        members=[member(worker, count=2, role="checker"), member("react", name="solo")],
        controller=controller("leaderless", stop_on_submission=False, final="last"),
        channels=[channel("shared_memory", rate=None)],
        budget=Budget(tokens=50_000, grace=3),
    )
    log = run_eval(solver, model=scripted_model(answer="42"), log_dir=log_dir)
    step = plan_step(read_eval_log(log.location))
    text = json.dumps(step.params)
    assert "MemberSpec" not in text and "PluginCatalog" not in text and "Budget(" not in text
    topology = step.params["topology"]
    agents = [m["agent"] for m in topology["members"]]
    assert agents[0]["registry"].endswith("worker") and agents[1] == "react"
    assert [(m["count"], m["role"], m["name"]) for m in topology["members"]] == [
        (2, "checker", None),
        (1, None, "solo"),
    ]
    assert topology["controller"] == {
        "name": "leaderless",
        "plugin": "leaderless",
        "distribution": "swarm-eval",
        "version": "0.1.0",
        "params": {
            "stop_on_submission": False,
            "final": "last",
            "verifier": None,
            "normalize": None,
            "synthesize_model": None,
            "synthesize_prompt": None,
        },
    }
    # every parameter the channel runs with: the given one and the defaults
    assert topology["channels"] == [
        {
            "name": "shared_memory",
            "plugin": "shared_memory",
            "distribution": "swarm-eval",
            "version": "0.1.0",
            "params": {
                "max_files": 100,
                "max_file_bytes": 16000,
                "max_file_lines": 1000,
                "max_board_bytes": 400000,
                "rate": None,
                "max_wait": 600,
            },
        }
    ]
    assert [m["names"] for m in topology["members"]] == [["worker-1", "worker-2"], ["solo"]]
    assert topology["budget"]["tokens"] == 50_000 and topology["budget"]["grace"] == 3.0
    assert topology["plugins"]["leaderless"]["distribution"] == "swarm-eval"
    assert topology["plugins"]["shared_memory"]["version"] is not None
    assert step.params_passed["topology_sha256"] == topology["topology_sha256"]


@task
def sums() -> Task:
    return Task(dataset=[Sample(input="What is 6 * 7?", target="42")], scorer=includes())


def run_set(topology: Path, log_dir: Path) -> None:
    ok, _ = eval_set(
        sums(),
        log_dir=str(log_dir),
        solver=SolverSpec("swarm/swarm", args_passed={"config": str(topology)}),
        model=scripted_model(answer="42"),
        display="none",
        log_dir_allow_dirty=True,  # the edited topology is a new task: its log joins the set
    )
    assert ok


def test_logs_of_two_topology_files_differ_and_eval_set_reruns_after_an_edit(
    tmp_path: Path,
) -> None:
    topology = tmp_path / "topology.yaml"
    topology.write_text("members: [{factory: react, count: 2}]\n")
    logs = tmp_path / "logs"
    run_set(topology, logs)
    run_set(topology, logs)  # unchanged: eval-set finds the log done and runs nothing
    assert len(list_eval_logs(str(logs))) == 1
    topology.write_text("members: [{factory: react, count: 3}]\n")
    run_set(topology, logs)  # edited: a different task, run again
    found = [read_eval_log(i) for i in list_eval_logs(str(logs))]
    assert len(found) == 2
    digests = {plan_step(log).params_passed["topology_sha256"] for log in found}
    counts = sorted(plan_step(log).params["topology"]["members"][0]["count"] for log in found)
    assert len(digests) == 2 and counts == [2, 3]


def test_no_inspect_banner_in_evals_with_or_without_a_swarm(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "plain.py").write_text(
        "from inspect_ai import Task, task\n"
        "from inspect_ai.dataset import Sample\n"
        "from inspect_ai.solver import generate\n\n"
        "@task\n"
        "def plain():\n"
        "    return Task(dataset=[Sample(input='hi')], solver=generate())\n"
    )
    bin_dir = Path(sys.executable).parent
    for extra in ([], ["--solver", "swarm/swarm", "-S", "members={factory: react, count: 2}"]):
        done = subprocess.run(
            [str(bin_dir / "inspect"), "eval", "plain.py", "--model", "swarm/scripted", *extra],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "hooks enabled" not in done.stdout + done.stderr
