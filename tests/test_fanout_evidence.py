"""Reading a sample's store as evidence: strict parsing, what is skipped and counted, and a
store with records missing still scoring.  Model-free."""

from __future__ import annotations

from typing import Any

import pytest
from fanout_records import LEAD, Run, honest, index_text

from swarm import PluginCatalog
from swarm.plugins.scorers.fanout import (
    STORE_KEYS,
    Seen,
    judge_store,
    load_fixture,
    read_evidence,
)

FIXTURE = load_fixture("json-events")
W = [s.worker for s in FIXTURE.shards]
CATALOG = PluginCatalog.load(load_entrypoints=False)
SPAWNS, MESSAGES, RESULT, LEDGER = STORE_KEYS[:4]


def test_an_honest_store_reads_whole() -> None:
    run = honest(FIXTURE)
    evidence = read_evidence(run.store())
    assert evidence.lead == LEAD
    assert evidence.lead_end == run.members[LEAD]["time"]
    assert [c.member for c in evidence.children] == W
    child = evidence.children[0]
    assert (child.requested, child.seq, child.status, child.turns, child.ran) == (
        (W[0],),
        1,
        "submitted",
        2,
        True,
    )
    assert (
        child.task
        == f"Read shards/{FIXTURE.shards[0].file} and answer: {FIXTURE.shards[0].question}"
    )
    assert evidence.messages[0].seen == Seen(time=evidence.messages[0].time + 0.5, via="read")
    assert len(evidence.spawns) == 16
    assert [(r.key, r.present, r.problem, r.malformed, r.unknown) for r in evidence.reports] == [
        (SPAWNS, True, None, 0, 0),
        (MESSAGES, True, None, 0, 0),
        (RESULT, True, None, 0, 0),
        (LEDGER, True, None, 0, 0),
        ("inspect_swarm:metrics", False, None, 0, 0),
        ("swarm_fanout:artifact", True, None, 0, 0),
        ("inspect_swarm:reads", True, None, 0, 0),
    ]


def test_an_empty_store_scores_and_fails_what_needs_records() -> None:
    verdict = judge_store(FIXTURE, {}, catalog=CATALOG)
    assert verdict.value() == {
        "coverage": False,
        "delegation": False,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": False,
        "resolved": False,
        "unverified": False,
    }
    assert verdict.evidence.lead is None
    reasons = {f["reason"] for f in verdict.metadata()["rules"]["delegation"]["failures"]}
    assert reasons == {"no lead: the records name no roster member"}
    assert not any(r.present for r in verdict.evidence.reports)


def test_no_spawn_ledger_at_all_still_scores() -> None:
    store = honest(FIXTURE).store()
    del store[SPAWNS]
    verdict = judge_store(FIXTURE, store, catalog=CATALOG)
    assert verdict.value()["delegation"] is False
    assert verdict.value()["coverage"] is True
    assert verdict.evidence.children == ()


def spawn(**fields: Any) -> dict[str, Any]:
    entry = {
        "seq": 1,
        "time": 0.5,
        "op": "spawn",
        "member": W[0],
        "requested": W[0],
        "parent": LEAD,
        "depth": 1,
        "template": "worker",
        "task": "t",
        "status": None,
        "reason": None,
    }
    entry.update(fields)
    return entry


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (spawn(depth=True), "entries[0]: depth: expected an integer, got True"),
        (spawn(depth="1"), "entries[0]: depth: expected an integer, got '1'"),
        (spawn(depth=1.0), "entries[0]: depth: expected an integer, got 1.0"),
        (spawn(depth=0), "entries[0]: depth: expected an integer >= 1, got 0"),
        (spawn(seq=False), "entries[0]: seq: expected an integer, got False"),
        (spawn(time="soon"), "entries[0]: time: expected a number, got 'soon'"),
        (spawn(time=float("nan")), "entries[0]: time: expected a finite number, got nan"),
        ({k: v for k, v in spawn().items() if k != "parent"}, "entries[0]: parent: missing"),
        (spawn(member=None), "entries[0]: member: expected a string, got None"),
        (spawn(op="end", status=None), "entries[0]: status: expected a string, got None"),
        (spawn(op="delete"), "entries[0]: reason: expected a string, got None"),
        (spawn(op=7), "entries[0]: op: expected a string, got 7"),
        ("spawn", "entries[0]: the entry: expected an object, got 'spawn'"),
    ],
)
def test_a_type_invalid_spawn_entry_is_malformed_and_never_evidence(
    entry: Any, problem: str
) -> None:
    evidence = read_evidence({SPAWNS: {"version": 1, "entries": [entry]}})
    report = evidence.report(SPAWNS)
    assert (report.malformed, report.unknown, report.problems) == (1, 0, (problem,))
    assert evidence.spawns == ()


def test_an_unknown_op_with_a_valid_envelope_is_skipped_as_unknown() -> None:
    entries = [
        spawn(),
        spawn(seq=2, op="rename", member=W[0], name="helper"),
        {"seq": "3", "time": 1.0, "op": "rename"},  # not a valid envelope: malformed
    ]
    evidence = read_evidence({SPAWNS: {"version": 1, "entries": entries}})
    report = evidence.report(SPAWNS)
    assert (report.malformed, report.unknown) == (1, 1)
    assert report.problems == (
        "entries[1]: skipped: unknown op 'rename'",
        "entries[2]: seq: expected an integer, got '3'",
    )
    assert [e.seq for e in evidence.spawns] == [1]


def test_entries_are_replayed_in_seq_order_and_a_repeated_seq_is_malformed() -> None:
    entries = [spawn(seq=3, member="c", requested="c"), spawn(seq=1), spawn(seq=3)]
    evidence = read_evidence({SPAWNS: {"version": 1, "entries": entries}})
    assert [(e.seq, e.member) for e in evidence.spawns] == [(1, W[0]), (3, "c")]
    assert evidence.report(SPAWNS).problems == ("seq: 3 appears twice; the later entry is skipped",)


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ([], "the record: expected an object, got []"),
        ({"version": 2, "entries": []}, "version: expected 1, got 2"),
        ({"version": 1, "entries": {}}, "entries: expected a list, got {}"),
        ({"entries": []}, "version: missing"),
    ],
)
def test_an_unusable_record_gives_no_entries(record: Any, problem: str) -> None:
    evidence = read_evidence({SPAWNS: record})
    assert evidence.report(SPAWNS).problem == problem
    assert not evidence.report(SPAWNS).usable
    assert evidence.spawns == ()


def message(**fields: Any) -> dict[str, Any]:
    entry = {
        "seq": 1,
        "time": 1.0,
        "kind": "message",
        "sender": W[0],
        "recipient": LEAD,
        "relationship": "child",
        "size": 2,
        "text": "10",
        "about": None,
        "status": None,
        "seen": {"time": 1.5, "via": "read"},
    }
    entry.update(fields)
    return entry


@pytest.mark.parametrize(
    ("entry", "problem", "unknown"),
    [
        (message(seen={"time": True, "via": "read"}), "seen.time: expected a number, got True", 0),
        (message(seen={"time": 1.0}), "seen.via: missing", 0),
        (message(seen="yes"), "seen: expected an object, got 'yes'", 0),
        ({k: v for k, v in message().items() if k != "seen"}, "seen: missing", 0),
        (message(kind="receipt"), "about: expected a string, got None", 0),
        (message(size=-1), "size: expected an integer >= 0, got -1", 0),
        (message(text=10), "text: expected a string, got 10", 0),
        (message(relationship=None), "relationship: expected a string, got None", 0),
        (message(kind="notice"), "skipped: unknown kind 'notice'", 1),
    ],
)
def test_a_bad_message_entry_is_skipped_and_counted(entry: Any, problem: str, unknown: int) -> None:
    evidence = read_evidence({MESSAGES: {"version": 1, "messages": [message(seq=2), entry]}})
    report = evidence.report(MESSAGES)
    assert (report.malformed, report.unknown) == (1 - unknown, unknown)
    assert report.problems == (f"messages[1]: {problem}",)
    assert [m.seq for m in evidence.messages] == [2]


def test_a_bad_ledger_entry_does_not_make_a_child_have_run() -> None:
    run = honest(FIXTURE)
    run.usage[W[0]]["calls"]["calls"] = True
    store = run.store()
    verdict = judge_store(FIXTURE, store, catalog=CATALOG)
    assert verdict.evidence.report(LEDGER).problems == (
        "members[1]: calls.calls: expected an integer, got True",
    )
    assert verdict.evidence.children[0].turns == 0
    assert verdict.rule("delegation").result.details["unverified_workers"] == [W[0]]


def test_a_bad_result_member_does_not_make_a_child_have_started() -> None:
    run = honest(FIXTURE)
    run.members[W[0]]["depth"] = "1"
    verdict = judge_store(FIXTURE, run.store(), catalog=CATALOG)
    assert verdict.evidence.report(RESULT).malformed == 1
    assert verdict.evidence.children[0].started is False
    assert not verdict.rule("delegation").passed


def test_the_artifact_record_is_checked() -> None:
    run = honest(FIXTURE)
    run.artifact = {"path": "combined-index.md", "text": 12}
    verdict = judge_store(FIXTURE, run.store(), catalog=CATALOG)
    assert verdict.evidence.artifact is None
    assert verdict.evidence.report("swarm_fanout:artifact").problem == (
        "text: expected a string, got 12"
    )
    assert not verdict.rule("coverage").passed


def test_the_lead_is_the_roster_member_with_the_depth_1_spawns() -> None:
    run = Run()
    run.add_member("observer", parent=None, depth=0)
    run.spawn(W[0])
    run.spawn(W[1])
    run.spawn("side", parent="observer")
    evidence = read_evidence(run.store())
    assert evidence.lead == LEAD
    assert [c.member for c in evidence.children] == [W[0], W[1]]
    # the other roster member's usage is neither the lead's nor a child's
    verdict = judge_store(FIXTURE, run.store(), catalog=CATALOG)
    assert verdict.efficiency.details["others"]["members"] == 1
    # with no result record, the parent of the depth-1 spawns
    store = run.store()
    del store[RESULT]
    assert read_evidence(store).lead == LEAD


def test_judging_never_reads_other_store_keys() -> None:
    run = Run()
    run.write(index_text(FIXTURE))
    store = run.store()
    # text an agent could write elsewhere in the store is never evidence
    store["lead:notes"] = {"replies": {w: "ok" for w in W}}
    store["inspect_swarm:messages_copy"] = honest(FIXTURE).store()[MESSAGES]
    verdict = judge_store(FIXTURE, store, catalog=CATALOG)
    assert verdict.value()["delegation"] is False
    assert verdict.value()["provenance"] is False
