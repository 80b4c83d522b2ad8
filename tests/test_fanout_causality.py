"""Causality from the log, not clocks, through the real ``swarm/fanout`` task on the scripted
model in ``bwrap`` sandboxes: a reply written in the same model turn as the shard's read fails
proof_of_work, and an artifact written before the replies reached the lead fails provenance
(both passed when the rubric compared clocks); the stamps of a small run are pinned."""

from __future__ import annotations

import copy
from typing import Any

from swarm.plugins.scorers.fanout import fanout_topology, honest_scripts, load_fixture
from tests.fanout_cases import TurnOfSeveralCalls
from tests.fanout_records import failing, run_fixture_task, score

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards


assert TurnOfSeveralCalls  # registers the model swarm/several


def run(scripts: dict[str, list[dict[str, Any]]]) -> Any:
    return run_fixture_task(fanout_topology(FIXTURE), scripts, model="swarm/several")


def step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def test_a_reply_in_the_same_turn_as_the_read_fails_proof_of_work() -> None:
    """The child's one turn reads its shard and sends the answer: the reply was written before
    the read's output existed (its send_message ran after the read, so its clock is later)."""
    scripts = copy.deepcopy(honest_scripts(FIXTURE))
    worker, read, reply, submit = SHARDS[0].worker, *scripts[SHARDS[0].worker]
    scripts[worker] = [
        step("several", calls=[[read["tool"], read["args"]], [reply["tool"], reply["args"]]]),
        submit,
    ]
    sample = run(scripts)
    reads = sample.store["inspect_swarm:reads"]["entries"]
    [first] = [e for e in reads if e["member"] == worker and e["op"] == "read"]
    [answer] = [
        m for m in sample.store["inspect_swarm:messages"]["messages"] if m["sender"] == worker
    ]
    assert (first["call"], answer["call"]) == (1, 1)
    assert answer["time"] > first["time"]  # what the clocks said
    assert failing(sample) == {"proof_of_work"}
    assert score(sample).metadata["rules"]["proof_of_work"]["failures"] == [
        {
            "reason": f"{worker} sent no reply with the answer after reading its shard",
            "shard": SHARDS[0].file,
            "member": worker,
        }
    ]


def test_an_artifact_written_before_the_replies_fails_provenance() -> None:
    """The lead writes the right values first; its children then reply the same values."""
    scripts = copy.deepcopy(honest_scripts(FIXTURE))
    lead = scripts["lead"]
    write = next(s for s in lead if s.get("tool") == "bash")
    lead.remove(write)
    lead.insert(len(SHARDS), write)  # after the spawns, before waiting and reading
    sample = run(scripts)
    rule = score(sample).metadata["rules"]["provenance"]
    assert failing(sample) == {"provenance"}
    assert rule["details"]["written_in_call"] == len(SHARDS) + 1
    messages = sample.store["inspect_swarm:messages"]["messages"]
    seen = {m["sender"]: m["seen"]["call"] for m in messages if m["recipient"] == "lead"}
    assert rule["failures"] == [
        {
            "reason": f"{s.worker} replied {str(s.expected)!r}, but the lead wrote "
            f"{FIXTURE.artifact} in its model call {len(SHARDS) + 1}, before the reply reached "
            f"its model (call {seen[s.worker]}): the artifact's value did not come from it",
            "shard": s.file,
            "member": s.worker,
        }
        for s in SHARDS
    ]


def test_the_honest_runs_stamps_are_its_model_calls() -> None:
    """Each child reads in its first call and replies in its second; the lead writes in the
    call after its read_messages, which is the call that carried every reply."""
    sample = run(copy.deepcopy(honest_scripts(FIXTURE)))
    assert failing(sample) == set()
    n = len(SHARDS)
    entries = sample.store["inspect_swarm:reads"]["entries"]
    shard_reads = {
        (e["member"], e["op"], e["call"]) for e in entries if e["path"].startswith("shards/")
    }
    assert shard_reads == {(s.worker, op, 1) for s in SHARDS for op in ("open", "read")}
    writes = [(e["op"], e["call"]) for e in entries if e["member"] == "lead"]
    # spawns 1..n, wait n+1, read_messages n+2, the bash write n+3
    assert writes == [("open", n + 3), ("write", n + 3)]
    messages = sample.store["inspect_swarm:messages"]["messages"]
    assert {(m["sender"], m["call"], m["seen"]["call"]) for m in messages} == {
        (s.worker, 2, n + 3) for s in SHARDS
    }
    assert score(sample).metadata["rules"]["provenance"]["details"]["order"] == "model calls"
    assert score(sample).metadata["rules"]["proof_of_work"]["details"]["order"] == "model calls"
