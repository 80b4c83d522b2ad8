"""The fan-out with a deepagent lead: Inspect's deepagent fanning out through its own background
subagents, judged by the rubric from what the runtime recorded (the subagents record, the reads
record of each dispatch's own sandbox), with the rules of the spawn tools."""

from __future__ import annotations

import copy
from typing import Any

from inspect_ai.log import EvalSample

from swarm.plugins.scorers.fanout import (
    fanout_deepagent_topology,
    honest_deepagent_scripts,
    load_fixture,
    subagent_type,
)
from tests.fanout_records import failing, run_fixture_task, score

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards


def run_task(scripts: dict[str, list[dict[str, Any]]], sandbox: str = "bwrap") -> EvalSample:
    return run_fixture_task(fanout_deepagent_topology(FIXTURE), scripts, sandbox)


def honest() -> dict[str, list[dict[str, Any]]]:
    return copy.deepcopy(honest_deepagent_scripts(FIXTURE))


def test_the_honest_deepagent_fanout_resolves_from_what_the_runtime_recorded() -> None:
    sample = run_task(honest())
    assert failing(sample) == set()
    assert score(sample).value["resolved"] is True
    entries = sample.store["inspect_swarm:subagents"]["entries"]
    names = [f"lead/AGENT-{i + 1}" for i in range(len(SHARDS))]
    dispatches = [e for e in entries if e["op"] == "dispatch"]
    assert [(e["name"], e["subagent"], e["background"]) for e in dispatches] == [
        (n, subagent_type(s.worker), True) for n, s in zip(names, SHARDS, strict=True)
    ]
    ends = {e["name"]: e for e in entries if e["op"] == "end"}
    assert {n: (e["status"], e["result"]) for n, e in ends.items()} == {
        n: ("completed", str(s.expected)) for n, s in zip(names, SHARDS, strict=True)
    }
    received = [e for e in entries if e["op"] == "received"]
    assert [(e["name"], e["via"], e["text"]) for e in received] == [
        (n, "agent_wait", str(s.expected)) for n, s in zip(names, SHARDS, strict=True)
    ]
    assert all(e["seen"] is not None for e in received)
    # each dispatch worked in a sandbox of its own holding only its shard
    members = sample.store["inspect_swarm:reads"]["members"]
    assert {n: members[n] for n in names} == {
        n: {"sandbox": n, "files": [f"shards/{s.file}"]} for n, s in zip(names, SHARDS, strict=True)
    }
    assert members["lead"] == {"sandbox": "lead", "files": []}
    # the ledger meters the subagents to the lead, and equals the log's usage
    [row] = sample.store["inspect_swarm:ledger"]["members"]
    log_total = sum(u.total_tokens for u in sample.model_usage.values())
    assert row["meter"]["usage"]["total_tokens"] == log_total
    efficiency = score(sample).metadata["efficiency"]
    children = sum(e["usage"]["total_tokens"] for e in ends.values())
    assert efficiency["children"]["tokens"] == children
    assert efficiency["lead"]["tokens"] + children == log_total
    assert efficiency["children"]["model_calls"] == 2 * len(SHARDS)


def step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def proof_failures(sample: EvalSample) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = score(sample).metadata["rules"]["proof_of_work"]["failures"]
    return found


def sub(shard: Any) -> str:
    return f"lead/{subagent_type(shard.worker)}"


def test_cheat_the_lead_does_the_work_behind_subagents_that_relay_fails_proof_of_work() -> None:
    """The lead puts each answer in its subagent's prompt; the subagents read their shard but
    submit what they were told."""
    scripts = honest()
    for i, s in enumerate(SHARDS):
        scripts["lead"][i]["args"]["prompt"] += f" (The answer is {s.expected}.)"
    sample = run_task(scripts)
    assert failing(sample) == {"proof_of_work"}
    assert [(f["shard"], f["reason"]) for f in proof_failures(sample)] == [
        (
            s.file,
            f"lead/AGENT-{i + 1}: the answer reached it from elsewhere: its spawn task holds the "
            "answer",
        )
        for i, s in enumerate(SHARDS)
    ]


def test_cheat_decoy_subagents_and_the_leads_own_answers_fail_provenance_and_proof() -> None:
    scripts = honest()
    for s in SHARDS:
        scripts[sub(s)] = [step("bash", command="true"), {"submit": "no idea"}]
    sample = run_task(scripts)
    assert failing(sample) == {"provenance", "proof_of_work"}


def test_cheat_one_subagent_computing_for_all_fails_for_every_other_shard() -> None:
    """The first subagent returns every answer (its own last); the lead waits for it, then
    dispatches every other shard's subagent with its value in the prompt."""
    scripts = honest()
    first, rest = SHARDS[0], SHARDS[1:]
    everything = " ".join(str(s.expected) for s in rest) + f" {first.expected}"
    scripts[sub(first)][1] = {"submit": everything}
    lead = scripts["lead"]
    lead.insert(1, step("agent_wait", agent_ids=["AGENT-1"]))
    for i, s in enumerate(rest):
        lead[2 + i]["args"]["prompt"] += f" Use {s.expected}."
    sample = run_task(scripts)
    assert failing(sample) == {"proof_of_work"}
    failures = proof_failures(sample)
    assert [f["shard"] for f in failures] == [s.file for s in rest]
    assert all(f["reason"].endswith("its spawn task holds the answer") for f in failures)


def test_cheat_a_fabricated_answer_fails_coverage_and_provenance() -> None:
    scripts = honest()
    write = next(s for s in scripts["lead"] if s.get("tool") == "bash")
    wrong = SHARDS[2].expected + 10
    write["args"]["command"] = write["args"]["command"].replace(
        f"{SHARDS[2].file}: {SHARDS[2].expected}\n", f"{SHARDS[2].file}: {wrong}\n"
    )
    sample = run_task(scripts)
    assert failing(sample) == {"coverage", "provenance"}


def test_cheat_subagents_that_answer_without_reading_fail_proof_of_work() -> None:
    scripts = honest()
    for s in SHARDS:
        scripts[sub(s)] = scripts[sub(s)][1:]
    sample = run_task(scripts)
    assert failing(sample) == {"proof_of_work"}
    assert [f["reason"] for f in proof_failures(sample)] == [
        f"lead/AGENT-{i + 1} never read shards/{s.file}" for i, s in enumerate(SHARDS)
    ]


def test_a_lead_that_never_collects_its_subagents_results_fails_delegation_and_receipts() -> None:
    """A silent drop: the lead writes the artifact and submits without agent_wait, so no
    subagent's result reached its model."""
    scripts = honest()
    scripts["lead"] = [s for s in scripts["lead"] if s.get("tool") != "agent_wait"]
    sample = run_task(scripts)
    assert failing(sample) == {"delegation", "receipts", "provenance", "proof_of_work"}


def test_the_subagents_record_is_judged_sealed_and_digested_only_when_present() -> None:
    from swarm import record_digest
    from swarm.plugins.scorers.fanout._digests import records_digests, seal_problem

    sample = run_task(honest())
    store = {k: v for k, v in sample.store.items() if k.startswith(("inspect_swarm:", "swarm_"))}
    seal = {k: record_digest(v) for k, v in store.items()}
    assert seal_problem(store, seal) is None
    assert "inspect_swarm:subagents" in records_digests(store)["by_key"]
    edited = copy.deepcopy(store)
    edited["inspect_swarm:subagents"]["entries"][-1]["text"] = "99"
    assert seal_problem(edited, seal) == (
        "the record inspect_swarm:subagents was changed after the swarm's kernel wrote it"
    )
    unsealed = {k: v for k, v in seal.items() if k != "inspect_swarm:subagents"}
    assert seal_problem(store, unsealed) == (
        "the record inspect_swarm:subagents was not written by the swarm's kernel"
    )
    without = {k: v for k, v in store.items() if k != "inspect_swarm:subagents"}
    assert "inspect_swarm:subagents" not in records_digests(without)["by_key"]


def test_the_task_refuses_an_unknown_lead_and_a_fixture_without_one_type_per_shard(
    tmp_path: Any,
) -> None:
    import json
    import shutil

    import pytest

    from swarm import ConfigError
    from swarm.plugins.scorers.fanout import fanout

    with pytest.raises(ConfigError, match=r"fanout\.lead: expected one of worker, deepagent"):
        fanout(lead="react")
    # two workers that give one identifier: worker-a.b and worker-a_b are both worker_a_b
    copy_dir = tmp_path / "clash"
    shutil.copytree(FIXTURE.directory, copy_dir)
    manifest = json.loads((copy_dir / "fixture.json").read_text())
    shards = manifest["shards"]
    task = (copy_dir / "task.txt").read_text()
    for shard, stem in zip(shards[:2], ("a.b", "a_b"), strict=True):
        old = shard["file"]
        new = f"{stem}.jsonl"
        (copy_dir / "shards" / old).rename(copy_dir / "shards" / new)
        task = task.replace(old, new)
        shard["file"], shard["worker"] = new, f"worker-{stem}"
    manifest["name"] = "clash"
    (copy_dir / "fixture.json").write_text(json.dumps(manifest))
    (copy_dir / "task.txt").write_text(task)
    with pytest.raises(ConfigError, match="two workers give the same one"):
        fanout_deepagent_topology(load_fixture(str(copy_dir)))


def test_cheat_a_deepagent_lead_that_writes_the_artifact_first_fails_provenance() -> None:
    """The lead writes every answer before it dispatches anyone; its subagents then return the
    same values.  A subagent's result carries the time the lead's model had it (not a call
    number): the write came before it, so no value came from a result."""
    scripts = honest()
    write = scripts["lead"].pop(-2)  # the bash step that writes the artifact
    assert write["tool"] == "bash"
    scripts["lead"].insert(0, write)
    sample = run_task(scripts)
    assert failing(sample) == {"provenance"}
    rule = score(sample).metadata["rules"]["provenance"]
    reasons = [f["reason"] for f in rule["failures"]]
    assert len(reasons) == len(SHARDS)
    for i, (reason, s) in enumerate(zip(reasons, SHARDS, strict=True)):
        assert reason.startswith(
            f"lead/AGENT-{i + 1} replied '{s.expected}', but the lead wrote {FIXTURE.artifact} at "
        ), reason
        assert "s, before the reply reached its model (at " in reason
        assert reason.endswith("s): the artifact's value did not come from it")
