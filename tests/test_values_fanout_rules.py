"""Values of the fan-out rubric's rules, each pinned at its boundary: the time comparisons at the
exact instant of a deletion, of the lead's end and of a child's first read (equal times, and
one tick either side); the spawn budget at exactly ``spawn_factor`` x the shards and one past
it; every reason text of every rule; the efficiency figures with cache replays and
grandchildren.  Model-free: the records are built by ``fanout_records``.  The verdict and the
scorer are in ``test_values_fanout_scoring.py``.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from fanout_records import LEAD, Run, honest

from swarm import (
    PluginCatalog,
    RuleFailure,
)
from swarm.plugins.scorers.fanout import (
    Verdict,
    dedup,
    judge,
    judge_store,
    load_fixture,
    read_evidence,
)
from swarm.plugins.scorers.fanout._proof import integers, isolation
from swarm.plugins.scorers.fanout._readlog import Reads

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
W = [s.worker for s in SHARDS]
F = [s.file for s in SHARDS]
E = [s.expected for s in SHARDS]
TICK = 0.5
"""The synthetic clock's step (``Run.tick``)."""
OWN_RULES = ["coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work"]

CLOCKS = "clocks (the log's records carry no model-call stamps)"
"""proof_of_work's order in records written without model-call stamps (the synthetic ones)."""


def catalog() -> PluginCatalog:
    return PluginCatalog.load(load_entrypoints=False)


def judged(run: Run | dict[str, Any], **options: Any) -> Verdict:
    store = run.store() if isinstance(run, Run) else run
    options.setdefault("catalog", catalog())
    return judge_store(FIXTURE, store, **options)


def outcome(verdict: Verdict, rule: str) -> tuple[bool, list[RuleFailure | str], dict[str, Any]]:
    """A rule's verdict, failures and details."""
    result = verdict.rule(rule).result
    return result.passed, list(result.failures), dict(result.details)


def spawned_none(*shards: int) -> list[RuleFailure]:
    """Delegation's failures for shards the lead spawned no child for."""
    return [
        RuleFailure(reason=f"the lead ({LEAD}) spawned no child named {W[i]}", shard=F[i])
        for i in shards
    ]


# -- the instant of a deletion -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("deleted_after_reply", "kept"),
    [(TICK, True), (0.0, True), (-TICK, False)],
    ids=["deleted a tick after the reply", "deleted as it replied", "deleted a tick before"],
)
def test_a_deleted_child_counts_with_a_reply_sent_by_the_instant_of_its_deletion(
    deleted_after_reply: float, kept: bool
) -> None:
    run = Run()
    run.spawn(W[0])
    reply = run.reply(W[0], str(E[0]))
    run.delete(W[0], reason="parent_ended")
    run.spawns[-1]["time"] = reply["time"] + deleted_after_reply
    verdict = judged(run)
    passed, failures, details = outcome(verdict, "delegation")
    assert passed is False
    if kept:
        assert failures == spawned_none(1, 2, 3, 4, 5, 6, 7)
        assert details["verified_workers"] == {W[0]: W[0]}
    else:
        why = f"{W[0]} was deleted (parent_ended) before a reply reached the lead"
        assert failures == [RuleFailure(reason=why, shard=F[0]), *spawned_none(1, 2, 3, 4, 5, 6, 7)]
        assert details["verified_workers"] == {}
    # the reply reached the lead either way: receipts does not look at the deletion
    assert outcome(verdict, "receipts") == (
        True,
        [],
        {
            "children": 1,
            "received": {W[0]: "message"},
            "missing": [],
            "late": [],
            "not_as_child": [],
        },
    )


# -- the instant of the lead's end -------------------------------------------------------------


def one_child(*, seen: bool | None) -> tuple[Run, dict[str, Any]]:
    """The lead spawns worker-events-01, which replies its answer (read by the lead, or never
    with ``seen=None``) and ends; the lead ends.  Returns the run and the reply."""
    run = Run()
    run.spawn(W[0])
    reply = run.reply(W[0], str(E[0]), seen=seen)
    run.end(W[0])
    run.finish()
    return run, reply


@pytest.mark.parametrize(
    ("lead_end_after_seen", "reached"),
    [(TICK, True), (0.0, True), (-TICK, False)],
    ids=[
        "the lead ends a tick after",
        "the lead ends as it is seen",
        "the lead ends a tick before",
    ],
)
def test_a_reply_seen_at_the_instant_the_lead_ends_reached_it(
    lead_end_after_seen: float, reached: bool
) -> None:
    run, reply = one_child(seen=True)
    run.members[LEAD]["time"] = reply["seen"]["time"] + lead_end_after_seen
    verdict = judged(run)
    passed, failures, details = outcome(verdict, "receipts")
    delegation = outcome(verdict, "delegation")
    if reached:
        assert (passed, failures) == (True, [])
        assert (details["received"], details["missing"], details["late"]) == (
            {W[0]: "message"},
            [],
            [],
        )
        assert delegation[1] == spawned_none(1, 2, 3, 4, 5, 6, 7)
    else:
        why = "its reply or receipt was sent after the lead ended and never reached it"
        assert (passed, failures) == (False, [RuleFailure(reason=why, member=W[0])])
        assert (details["received"], details["missing"], details["late"]) == ({}, [W[0]], [W[0]])
        dropped = f"{W[0]} ended (submitted) without a reply reaching the lead"
        assert delegation[1] == [
            RuleFailure(reason=dropped, shard=F[0]),
            *spawned_none(1, 2, 3, 4, 5, 6, 7),
        ]


@pytest.mark.parametrize(
    ("lead_end_after_sent", "late"),
    [(TICK, False), (0.0, True), (-TICK, True)],
    ids=["sent a tick before the end", "sent as the lead ends", "sent a tick after the end"],
)
def test_an_unseen_reply_sent_at_the_instant_the_lead_ends_is_late(
    lead_end_after_sent: float, late: bool
) -> None:
    run, reply = one_child(seen=None)
    run.members[LEAD]["time"] = reply["time"] + lead_end_after_sent
    passed, failures, details = outcome(judged(run), "receipts")
    why = (
        "its reply or receipt was sent after the lead ended and never reached it"
        if late
        else "its reply or receipt never reached the lead's conversation"
    )
    assert (passed, failures) == (False, [RuleFailure(reason=why, member=W[0])])
    assert (details["missing"], details["late"]) == ([W[0]], [W[0]] if late else [])


def test_an_unseen_reply_to_a_lead_that_never_ended_is_not_late() -> None:
    run = Run()
    run.spawn(W[0])
    run.reply(W[0], str(E[0]), seen=None)
    why = "its reply or receipt never reached the lead's conversation"
    passed, failures, details = outcome(judged(run), "receipts")
    assert (passed, failures) == (False, [RuleFailure(reason=why, member=W[0])])
    assert (details["missing"], details["late"]) == ([W[0]], [])


# -- the instant of a child's first read (proof of work) ---------------------------------------


def reply_of(run: Run, sender: str) -> dict[str, Any]:
    return next(m for m in run.messages if m["sender"] == sender and m["recipient"] == LEAD)


@pytest.mark.parametrize(
    ("read_after_reply", "proved"),
    [(-TICK, True), (0.0, False), (TICK, False)],
    ids=["read a tick before the reply", "read as it replied", "read a tick after"],
)
def test_a_reply_counts_only_when_sent_after_the_first_read_of_the_shard(
    read_after_reply: float, proved: bool
) -> None:
    run = honest(FIXTURE)
    read = next(r for r in run.reads or [] if r["member"] == W[0])
    read["time"] = reply_of(run, W[0])["time"] + read_after_reply
    passed, failures, details = outcome(judged(run), "proof_of_work")
    if proved:
        assert (passed, failures, details["proved"]) == (True, [], F)
    else:
        why = f"{W[0]} sent no reply with the answer after reading its shard"
        assert (passed, failures) == (False, [RuleFailure(reason=why, shard=F[0], member=W[0])])
        assert details["proved"] == F[1:]


@pytest.mark.parametrize(
    ("sent_after_reply", "leak"),
    [(-TICK, True), (0.0, False), (TICK, False)],
    ids=["sent a tick before the reply", "sent as it replied", "sent a tick after"],
)
def test_a_message_holding_the_answer_leaks_only_when_sent_before_the_reply(
    sent_after_reply: float, leak: bool
) -> None:
    run = honest(FIXTURE)
    told = run.reply(LEAD, f"It is {E[0]}.", recipient=W[0], relationship="parent", seen=None)
    told["time"] = reply_of(run, W[0])["time"] + sent_after_reply
    passed, failures, details = outcome(judged(run), "proof_of_work")
    if leak:
        why = (
            f"{W[0]}: the answer reached it from elsewhere: message {told['seq']} from {LEAD} "
            "holds the answer"
        )
        assert (passed, failures) == (False, [RuleFailure(reason=why, shard=F[0], member=W[0])])
        assert details["proved"] == F[1:]
    else:
        assert (passed, failures, details["proved"]) == (True, [], F)


# -- the spawn budget --------------------------------------------------------------------------


def spawning(total: int) -> Run:
    """An honest run (8 children, one per shard) with helpers spawned after the children ended,
    ``total`` depth-1 spawns in all; plus a refused request and a depth-2 spawn, neither of
    which is a spawn that counts."""
    run = honest(FIXTURE, finish=False)
    for index in range(total - len(SHARDS)):
        run.spawn(f"helper-{index + 1}")
    run.refused("helper-x", reason="max_children")
    run.spawn("deep", parent=W[0], depth=2)
    run.finish()
    return run


def over_budget(total: int, factor: int) -> RuleFailure:
    return RuleFailure(
        reason=f"{total} depth-1 spawns, more than the budget of {factor * 8} ({factor} x 8 shards)"
    )


@pytest.mark.parametrize(
    ("factor", "total", "passed"),
    [
        (None, 16, True),
        (None, 17, False),
        (1, 8, True),
        (1, 9, False),
        (3, 24, True),
        (3, 25, False),
    ],
)
def test_the_spawn_budget_is_spawn_factor_times_the_shards_exactly(
    factor: int | None, total: int, passed: bool
) -> None:
    options = {} if factor is None else {"spawn_factor": factor}
    budget = (factor or 2) * 8
    expected = (
        passed,
        [] if passed else [over_budget(total, factor or 2)],
        {
            "duplicate_spawns": [],
            "total_spawns": total,
            "spawn_budget": budget,
            "max_concurrent_children": max(8, total - 8),
            "refused": {"max_children": 1},
        },
    )
    run = spawning(total)
    # through judge_store, judge and the rule itself, each with its own default
    assert outcome(judged(run, **options), "dedup") == expected
    evidence = read_evidence(run.store())
    assert outcome(judge(FIXTURE, evidence, **options), "dedup") == expected
    result = dedup(FIXTURE, evidence, **options)
    assert (result.passed, list(result.failures), dict(result.details)) == expected


# -- dedup's replay of the spawn ledger --------------------------------------------------------


def test_dedup_replays_the_ledger_a_retry_after_an_end_is_no_duplicate_one_while_live_is() -> None:
    run = Run()
    run.spawn(W[0])  # seq 1
    run.spawn(W[0], member="deep", parent=W[1], depth=2)  # seq 2: a grandchild, skipped
    run.end(W[0])  # seq 3
    run.spawn(W[0], member=f"{W[0]}~2")  # seq 4: the first ended, a retry
    run.spawn(W[0], member=f"{W[0]}~3")  # seq 5: ~2 is live
    run.spawn(W[0], member=f"{W[0]}~4")  # seq 6: ~2 and ~3 are live
    run.spawn("helper")  # seq 7
    run.spawn("helper", member="helper~2")  # seq 8: a helper name is no shard's
    run.spawn(W[1])  # seq 9
    run.spawn(W[1], member=W[1], record_member=False)  # seq 10: the same run again
    run.refused(W[2], reason="max_children")  # seq 11
    run.refused(W[3], reason="live_name")  # seq 12
    run.refused(W[4], reason="live_name")  # seq 13
    run.refused(W[5], reason="")  # seq 14
    run.spawn(W[1], member="deep~2", parent=W[1], depth=2)  # seq 15
    run.delete("helper")  # seq 16: a deletion is no spawn (nor an end)
    run.end("helper~2")  # seq 17
    run.end("helper~2")  # seq 18: the end of a child no longer live
    passed, failures, details = outcome(judged(run), "dedup")
    assert passed is False
    assert failures == [
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 5) while {W[0]}~2, spawned under that name, was live",
            shard=F[0],
            member=f"{W[0]}~3",
        ),
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 6) while {W[0]}~2, {W[0]}~3, spawned under that "
            "name, was live",
            shard=F[0],
            member=f"{W[0]}~4",
        ),
    ]
    assert details == {
        "duplicate_spawns": [
            {"requested": W[0], "member": f"{W[0]}~3", "seq": 5, "live": [f"{W[0]}~2"]},
            {
                "requested": W[0],
                "member": f"{W[0]}~4",
                "seq": 6,
                "live": [f"{W[0]}~2", f"{W[0]}~3"],
            },
        ],
        "total_spawns": 8,
        "spawn_budget": 16,
        "max_concurrent_children": 6,
        "refused": {"": 1, "live_name": 2, "max_children": 1},
    }
    # refusals by reason, sorted by reason (not in the order they came)
    assert list(details["refused"]) == ["", "live_name", "max_children"]


def test_a_name_spawned_again_under_another_name_stays_assigned_to_the_first() -> None:
    run = Run()
    run.spawn(W[0], member="m")  # seq 1: m is W0's
    run.spawn(W[1], member="m", record_member=False)  # seq 2: the same run claimed for W1
    run.spawn(W[1], member="n")  # seq 3: no other child was spawned as W1
    run.spawn(W[0], member="o")  # seq 4: m, spawned as W0, is live
    passed, failures, details = outcome(judged(run), "dedup")
    assert passed is False
    assert failures == [
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 4) while m, spawned under that name, was live",
            shard=F[0],
            member="o",
        )
    ]
    assert (details["total_spawns"], details["max_concurrent_children"]) == (4, 3)


# -- delegation's reasons ----------------------------------------------------------------------


def test_delegation_gives_each_shard_its_reason() -> None:
    run = Run()
    run.spawn("helper")  # first: a helper is skipped, the children after it still judged
    run.spawn(W[0], started=False)  # never started ...
    run.spawn(W[0], member=f"{W[0]}~2")  # ... and its retry ended without a reply
    run.end(W[0])
    run.end(f"{W[0]}~2")
    run.spawn(W[1], calls=0)  # ran no model call (live)
    run.spawn(W[2])  # deleted before it replied
    run.delete(W[2], reason="parent_ended")
    run.reply(W[2], str(E[2]))
    # W[3]: no child
    run.spawn(W[4])  # live at the end, never replied: kept
    run.spawn(W[5])  # replied and ended: verified ...
    run.reply(W[5], str(E[5]))
    run.end(W[5])
    run.spawn(W[5], member=f"{W[5]}~2")  # ... and a second one, live: the first stands
    run.spawn(W[6], member=W[7])  # one run, claimed by W[6] (its name) and W[7] (its member)
    run.reply(W[7], str(E[6]))
    passed, failures, details = outcome(judged(run), "delegation")
    assert passed is False
    claimed = f"{W[7]} is claimed by 2 shards ({W[6]}, {W[7]})"
    assert failures == [
        RuleFailure(
            reason=f"{W[0]} never started; {W[0]}~2 ended (submitted) without a reply reaching "
            "the lead",
            shard=F[0],
        ),
        RuleFailure(reason=f"{W[1]} made no model call", shard=F[1]),
        RuleFailure(
            reason=f"{W[2]} was deleted (parent_ended) before a reply reached the lead",
            shard=F[2],
        ),
        *spawned_none(3),
        RuleFailure(reason=claimed, shard=F[6]),
        RuleFailure(reason=claimed, shard=F[7]),
    ]
    assert details == {
        "lead": LEAD,
        "children": 9,
        "verified_workers": {W[4]: W[4], W[5]: W[5]},
        "unverified_workers": [W[0], W[1], W[2], W[3], W[6], W[7]],
        "helper_children": ["helper"],
        "shared_claims": [W[7]],
    }


def test_delegation_with_no_lead_says_so_for_every_shard() -> None:
    verdict = judged({})
    assert outcome(verdict, "delegation") == (
        False,
        [RuleFailure(reason="no lead: the records name no roster member", shard=f) for f in F],
        {
            "lead": None,
            "children": 0,
            "verified_workers": {},
            "unverified_workers": W,
            "helper_children": [],
            "shared_claims": [],
        },
    )


def test_an_honest_run_delegates_every_shard() -> None:
    assert outcome(judged(honest(FIXTURE)), "delegation") == (
        True,
        [],
        {
            "lead": LEAD,
            "children": 8,
            "verified_workers": {w: w for w in W},
            "unverified_workers": [],
            "helper_children": [],
            "shared_claims": [],
        },
    )


# -- receipts' reasons -------------------------------------------------------------------------


def test_receipts_gives_each_child_its_reason() -> None:
    run = Run()
    for worker in W[:7]:
        run.spawn(worker)
    run.reply(W[0], str(E[0]))  # a reply and a receipt, both read: the reply is named
    run.receipt(W[0])
    run.receipt(W[1], status="cancelled")  # only a receipt
    run.reply(W[2], str(E[2]), seen=None)  # sent before the lead ended, never read
    run.reply(W[3], "hello", recipient=W[4], relationship="sibling")  # W[3]: none to the lead
    run.reply(W[4], str(E[4]), relationship="sibling")  # to the lead, but not as its child
    run.reply(W[1], "a word", recipient=W[2], relationship="sibling")  # to a sibling, read
    run.finish()
    run.reply(W[5], str(E[5]), seen=None)  # sent after the lead ended
    run.reply(W[6], str(E[6]))  # seen after the lead ended
    passed, failures, details = outcome(judged(run), "receipts")
    never = "its reply or receipt never reached the lead's conversation"
    none = "no reply or receipt to the lead"
    late = "its reply or receipt was sent after the lead ended and never reached it"
    assert passed is False
    assert failures == [
        RuleFailure(reason=never, member=W[2]),
        RuleFailure(reason=none, member=W[3]),
        RuleFailure(reason=none, member=W[4]),
        RuleFailure(reason=late, member=W[5]),
        RuleFailure(reason=late, member=W[6]),
    ]
    assert details == {
        "children": 7,
        "received": {W[0]: "message", W[1]: "receipt"},
        "missing": [W[2], W[3], W[4], W[5], W[6]],
        "late": [W[5], W[6]],
        "not_as_child": [W[4]],
    }


def test_a_receipt_read_before_a_reply_still_names_the_reply() -> None:
    run = Run()
    run.spawn(W[0])
    run.receipt(W[0])
    run.reply(W[0], str(E[0]))
    assert outcome(judged(run), "receipts")[2]["received"] == {W[0]: "message"}


# -- proof of work's reasons -------------------------------------------------------------------


def test_proof_of_work_gives_each_shard_its_reason() -> None:
    run = Run(auto_read=False)
    # shard 0: the first child replied without reading, its retry read and replied: proved
    run.spawn(W[0])
    run.reply(W[0], str(E[0]))
    run.end(W[0])
    run.spawn(W[0], member=f"{W[0]}~2")
    run.read(f"{W[0]}~2", f"shards/{F[0]}")
    run.reply(f"{W[0]}~2", str(E[0]))
    # shard 1: read, and replied a wrong answer
    run.spawn(W[1])
    run.read(W[1], f"shards/{F[1]}")
    run.reply(W[1], str(E[1] + 1))
    # shard 2: told the answer in its task and in a message before its reply
    run.spawn(W[2], task=f"Answer {E[2]}.")
    told = run.reply(LEAD, f"Say {E[2]:,}", recipient=W[2], relationship="parent", seen=None)
    run.read(W[2], f"shards/{F[2]}")
    run.reply(W[2], str(E[2]))
    # shard 3: also read two other shards' files
    run.spawn(W[3])
    run.read(W[3], f"shards/{F[5]}")
    run.read(W[3], f"shards/{F[3]}")
    run.read(W[3], f"shards/{F[4]}")
    run.reply(W[3], str(E[3]))
    # shard 4: no child; shard 5: two children, neither read it
    run.spawn(W[5])
    run.reply(W[5], str(E[5]))
    run.end(W[5])
    run.spawn(W[5], member=f"{W[5]}~2")
    run.reply(f"{W[5]}~2", str(E[5]))
    # shard 6: a child with no task at all: proved
    run.spawn(W[6])
    run.spawns[-1]["task"] = None
    run.read(W[6], f"shards/{F[6]}")
    run.reply(W[6], str(E[6]))
    # shard 7: the first child read and replied a wrong answer, its retry the right one: proved
    run.spawn(W[7])
    run.read(W[7], f"shards/{F[7]}")
    run.reply(W[7], str(E[7] + 1))
    run.end(W[7])
    run.spawn(W[7], member=f"{W[7]}~2")
    run.read(f"{W[7]}~2", f"shards/{F[7]}")
    run.reply(f"{W[7]}~2", str(E[7]))
    assert run.reads is not None
    run.reads.append({**run.reads[-1], "seq": len(run.reads), "op": "overflow", "path": ""})
    passed, failures, details = outcome(judged(run), "proof_of_work")
    assert passed is False
    elsewhere = "the answer reached it from elsewhere"
    assert failures == [
        RuleFailure(
            reason=f"{W[1]} sent no reply with the answer after reading its shard",
            shard=F[1],
            member=W[1],
        ),
        RuleFailure(
            reason=f"{W[2]}: {elsewhere}: its spawn task holds the answer; message "
            f"{told['seq']} from {LEAD} holds the answer",
            shard=F[2],
            member=W[2],
        ),
        RuleFailure(
            reason=f"{W[3]}: {elsewhere}: it read another shard's file (shards/{F[4]}, "
            f"shards/{F[5]})",
            shard=F[3],
            member=W[3],
        ),
        RuleFailure(reason=f"no child was spawned as {W[4]}", shard=F[4]),
        RuleFailure(
            # its children never read it, and another shard's child did
            reason=f"shards/{F[5]} was read by {W[3]}, not a child spawned as its worker: the "
            "answer may have come from there",
            shard=F[5],
            member=W[3],
        ),
    ]
    assert details == {
        "proved": [F[0], F[6], F[7]],
        "provider": "bwrap",
        "overflow": True,
        "order": CLOCKS,
    }


def test_an_honest_run_proves_every_shard() -> None:
    assert outcome(judged(honest(FIXTURE)), "proof_of_work") == (
        True,
        [],
        {"proved": F, "provider": "bwrap", "overflow": False, "order": CLOCKS},
    )


def test_a_task_or_message_naming_other_shards_files_is_no_leak() -> None:
    """events-06.jsonl holds a 6, worker-events-03's answer: a name of the fixture's is no
    number."""
    assert E[2] == 6
    run = honest(FIXTURE)
    spawn = next(e for e in run.spawns if e["member"] == W[2])
    spawn["task"] = f"Read shards/{F[2]}, not {F[5]}, and answer: {SHARDS[2].question}"
    note = run.reply(LEAD, f"Leave {F[5]} alone.", recipient=W[2], relationship="parent")
    note["time"] = reply_of(run, W[2])["time"] - TICK
    assert outcome(judged(run), "proof_of_work") == (
        True,
        [],
        {"proved": F, "provider": "bwrap", "overflow": False, "order": CLOCKS},
    )


def test_without_a_reads_record_or_with_unwatched_reads_no_shard_is_proved() -> None:
    run = honest(FIXTURE)
    run.reads = None
    why = "the run has no reads record (its members had no sandboxes of their own)"
    assert outcome(judged(run), "proof_of_work") == (
        False,
        [RuleFailure(reason=why, shard=f) for f in F],
        {"proved": [], "provider": None},
    )
    store = honest(FIXTURE).store()
    store["inspect_swarm:reads"] |= {"watched": False, "provider": "docker"}
    why = "the run's file reads could not be watched (provider 'docker')"
    assert outcome(judged(store), "proof_of_work") == (
        False,
        [RuleFailure(reason=why, shard=f) for f in F],
        {"proved": [], "provider": "docker"},
    )


def test_integers_are_runs_of_digits_with_thousands_separators_joined() -> None:
    text = "x1,482,368 and 7\u00a0000, 1\u202f234 and 5\u20096780 or 1,2345 and 12,34"
    assert integers(text) == {1482368, 7000, 1234, 5, 6780, 1, 2345, 12, 34}
    # the fixture's file names and questions hold no leak
    question = SHARDS[5].question  # "... greater than 500?"
    assert integers(f"{F[2]}: {question} 16") == {3, 500, 16}
    assert integers(f"{F[2]}: {question} 16", FIXTURE) == {16}
    assert integers(f"7{F[2]}8", FIXTURE) == {7, 8}


def reads_of(provider: str | None) -> Reads:
    return Reads(provider=provider, watched=True, members={}, entries=())


UNKNOWN_PROVIDER = "a provider this rubric does not know: its isolation is not vouched for"
NO_SANDBOXES = "the members had no sandboxes of their own: nothing was isolated or watched"


@pytest.mark.parametrize(
    ("reads", "expected"),
    [
        (
            None,
            {"provider": None, "isolated": False, "note": NO_SANDBOXES, "problems": [NO_SANDBOXES]},
        ),
        (
            reads_of("bwrap"),
            {
                "provider": "bwrap",
                "isolated": True,
                "note": "each member's tools run in its own bubblewrap sandbox: only its own "
                "files and /usr (read-only) are visible, no network, no host process; it cannot "
                "protect what a member is told (its task, its messages) or what /usr holds",
                "problems": [],
            },
        ),
        (
            reads_of("local"),
            {
                "provider": "local",
                "isolated": False,
                "note": "not isolated: every member's tools run on the host as the evaluating "
                "user in a directory of its own, and can read or change anything that user can "
                "(other members' directories, the fixture, the logs); reads outside the watched "
                "directories are not recorded",
                "problems": ["the provider local does not isolate"],
            },
        ),
        (
            reads_of("docker"),
            {
                "provider": "docker",
                "isolated": True,
                "note": "each member's tools run in a Docker container of its own: its own "
                "volume as /workspace, the staging container's image and network (the fan-out's "
                "compose file: none), no other member's files, no host file; its reads are "
                "recorded by a watcher in a container beside it that it cannot see, stop or "
                "write to; it cannot protect what a member is told (its task, its messages) or "
                "what the image holds",
                "problems": [],
            },
        ),
        (
            reads_of("podman"),
            {
                "provider": "podman",
                "isolated": False,
                "note": UNKNOWN_PROVIDER,
                "problems": ["the provider podman does not isolate"],
            },
        ),
        (
            reads_of(None),
            {
                "provider": None,
                "isolated": False,
                "note": UNKNOWN_PROVIDER,
                "problems": ["the provider unknown does not isolate"],
            },
        ),
    ],
    ids=["no reads record", "bwrap", "local", "docker", "unknown provider", "no provider"],
)
def test_isolation_says_what_the_provider_isolates(
    reads: Reads | None, expected: dict[str, Any]
) -> None:
    evidence = attrs.evolve(read_evidence(honest(FIXTURE).store()), reads=reads)
    assert isolation(FIXTURE, evidence) == expected


# -- efficiency --------------------------------------------------------------------------------


def ledger(run: Run, name: str, *, calls: int, replays: int, errored: int, cost: float) -> None:
    """Set ``name``'s ledger entry: its completed calls, cache replays, errored calls, cost."""
    entry = run.usage[name]
    entry["calls"] |= {"calls": calls, "cache_replays": replays, "errored": errored}
    entry["meter"]["cost"] = cost


def test_efficiency_counts_turns_with_cache_replays_and_children_with_grandchildren() -> None:
    run = Run()
    run.spawn(W[0], tokens=400)
    run.spawn(W[1], tokens=300)
    run.spawn("grandchild", parent=W[0], depth=2, tokens=50)
    run.spawn("ghost", record_member=False)  # a spawn with no run: spawned, with no figures
    run.add_member("adopted", parent=LEAD, depth=1, tokens=20)  # in the result record only
    run.add_member("peer", parent=None, depth=0, tokens=7)  # another roster member
    # an end entry for the peer, which was never spawned: it is not a child for that
    ending = {**run.spawns[0], "seq": len(run.spawns) + 1, "op": "end", "status": "cancelled"}
    run.spawns.append(ending | {"member": "peer", "requested": "peer"})
    ledger(run, LEAD, calls=3, replays=2, errored=1, cost=0.01)
    ledger(run, W[0], calls=2, replays=1, errored=0, cost=0.004)
    ledger(run, W[1], calls=4, replays=0, errored=2, cost=0.003)
    ledger(run, "grandchild", calls=1, replays=3, errored=0, cost=0.0005)
    ledger(run, "adopted", calls=0, replays=1, errored=1, cost=0.0002)
    ledger(run, "peer", calls=1, replays=0, errored=0, cost=0.000001234567890123)
    run.end(W[1])
    run.end_member(W[0])
    run.end_member("grandchild")
    for name, ended in ((W[0], 3.0), (W[1], 4.5), ("grandchild", 2.0)):  # the lead never ends
        run.members[name]["time"] = ended
    figures = judged(run).efficiency
    assert figures.passed is True
    assert figures.failures == ()
    assert dict(figures.details) == {
        "lead": {
            "members": 1,
            "tokens": 1000,
            "cost": 0.01,
            "model_calls": 3,
            "turns": 5,
            "errored_calls": 1,
        },
        "children": {
            "members": 4,
            "tokens": 770,
            "cost": 0.0077,
            "model_calls": 7,
            "turns": 12,
            "errored_calls": 3,
            "spawned": 5,
            "lead_children": 3,
        },
        "others": {
            "members": 1,
            "tokens": 7,
            "cost": 0.0000012346,
            "model_calls": 1,
            "turns": 1,
            "errored_calls": 0,
        },
        "total": {
            "members": 6,
            "tokens": 1777,
            "cost": 0.0177012346,
            "model_calls": 11,
            "turns": 18,
            "errored_calls": 4,
        },
        "wall_time": 4.5,
        "wall_time_source": "result",
    }


def test_efficiency_takes_the_metrics_wall_clock_even_when_zero() -> None:
    run = honest(FIXTURE)
    run.wall_clock = 0.0
    figures = judged(run).efficiency.details
    assert (figures["wall_time"], figures["wall_time_source"]) == (0.0, "metrics")
    empty = judged({}).efficiency.details
    assert (empty["wall_time"], empty["wall_time_source"]) == (None, None)
    assert empty["total"] == {
        "members": 0,
        "tokens": 0,
        "cost": 0.0,
        "model_calls": 0,
        "turns": 0,
        "errored_calls": 0,
    }
