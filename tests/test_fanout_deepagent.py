"""The fan-out with a deepagent lead: Inspect's deepagent fanning out through its own background
subagents, judged by the rubric from what the runtime recorded (the subagents record, the reads
record of each dispatch's own sandbox), with the rules of the spawn tools."""

from __future__ import annotations

import copy
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample
from inspect_ai.model import get_model

from swarm.plugins.scorers.fanout import (
    fanout_deepagent_topology,
    fanout_rubric,
    fanout_sample,
    honest_deepagent_scripts,
    load_fixture,
)

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
RULES = ("coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work")


def run_task(scripts: dict[str, list[dict[str, Any]]], sandbox: str = "bwrap") -> EvalSample:
    task = Task(
        dataset=[fanout_sample(FIXTURE)],
        solver=fanout_deepagent_topology(FIXTURE),
        scorer=fanout_rubric(fixture="json-events"),
        sandbox=sandbox,
    )
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = inspect_eval(task, model=model, display="none", log_dir=None)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def score(sample: EvalSample) -> Any:
    [found] = (sample.scores or {}).values()
    return found


def failing(sample: EvalSample) -> set[str]:
    value = score(sample).value
    assert isinstance(value, dict)
    return {rule for rule in RULES if value[rule] is not True}


def honest() -> dict[str, list[dict[str, Any]]]:
    return copy.deepcopy(honest_deepagent_scripts(FIXTURE))


def test_the_honest_deepagent_fanout_resolves() -> None:
    sample = run_task(honest())
    print(score(sample).explanation)
    assert failing(sample) == set()
