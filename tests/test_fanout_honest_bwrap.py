"""The honest variants resolve under ``bwrap`` on both shipped fixtures (the real
``swarm/fanout`` topology on the scripted model): the plain fan-out, a retry, out-of-order
replies and a lead that ends while its children still run; and a child that maps its shard
with ``mmap`` (an open, no read event) proves its read."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalSample
from inspect_ai.model import get_model

from swarm.plugins.scorers.fanout import (
    fanout_rubric,
    fanout_sample,
    fanout_topology,
    honest_scripts,
    load_fixture,
)

FIXTURES = ("json-events", "csv-metrics")
Scripts = dict[str, list[dict[str, Any]]]


def step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def run(name: str, scripts: Scripts) -> EvalSample:
    fixture = load_fixture(name)
    task = Task(
        dataset=[fanout_sample(fixture)],
        solver=fanout_topology(fixture),
        scorer=fanout_rubric(fixture=name),
        sandbox="bwrap",
    )
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = eval(task, model=model, display="none", log_dir=None)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def retry(name: str, scripts: Scripts) -> None:
    """The third child ends without replying (a receipt), and is spawned again."""
    worker = load_fixture(name).shards[2].worker
    lead = scripts["lead"]
    again = next(s for s in lead if s.get("args", {}).get("name") == worker)
    at = lead.index(next(s for s in lead if s.get("tool") == "read_messages"))
    lead[at:at] = [copy.deepcopy(again), step("wait_for_children")]
    scripts[f"{worker}~2"] = scripts[worker]
    scripts[worker] = [{"submit": "gave up"}]


def out_of_order(name: str, scripts: Scripts) -> None:
    """The first child works 3 s before it replies, so its reply comes last."""
    first = load_fixture(name).shards[0]
    scripts[first.worker][0] = step("bash", command=f"sleep 3; wc -l shards/{first.file}")


def lead_ends_first(name: str, scripts: Scripts) -> None:
    """The children reply and work on (6 s); the lead gives them 3 s, writes and submits."""
    lead = scripts["lead"]
    waited = next(s for s in lead if s.get("tool") == "wait_for_children")
    lead[lead.index(waited)] = step("bash", command="sleep 3")
    for shard in load_fixture(name).shards:
        scripts[shard.worker].insert(2, step("bash", command="sleep 6"))


def plain(name: str, scripts: Scripts) -> None:
    return None


@pytest.mark.parametrize("variant", [plain, retry, out_of_order, lead_ends_first])
@pytest.mark.parametrize("name", FIXTURES)
def test_an_honest_variant_resolves_under_bwrap(name: str, variant: Any) -> None:
    scripts = copy.deepcopy(honest_scripts(load_fixture(name)))
    variant(name, scripts)
    [found] = (run(name, scripts).scores or {}).values()
    assert found.value == {
        "coverage": True,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": True,
        "resolved": True,
        "unverified": False,
    }
    assert found.metadata is not None
    assert found.metadata["isolation"]["problems"] == []


def test_a_child_that_maps_its_shard_proves_its_read() -> None:
    """``mmap`` gives the kernel's open and no read event: before an open counted as a read,
    this child 'never read' its shard."""
    fixture = load_fixture("json-events")
    first = fixture.shards[0]
    scripts = copy.deepcopy(honest_scripts(fixture))
    program = (
        "import mmap; f = open('shards/" + first.file + "', 'rb'); "
        "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); print(m[:].count(b'\\n'))"
    )
    scripts[first.worker][0] = step("python", code=program)
    sample = run("json-events", scripts)
    entries = sample.store["inspect_swarm:reads"]["entries"]
    ops = {e["op"] for e in entries if e["member"] == first.worker and e["path"].endswith(".jsonl")}
    assert ops == {"open"}
    [found] = (sample.scores or {}).values()
    assert found.value["proof_of_work"] is True
    assert found.value["resolved"] is True
