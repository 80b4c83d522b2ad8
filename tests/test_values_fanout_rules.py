"""Values of the fan-out rubric's rules, each pinned at its boundary: the time comparisons at the
exact instant of a deletion, of the lead's end and of a child's first read (equal times, and
one tick either side); the spawn budget at exactly ``spawn_factor`` x the shards and one past
it; every reason text of every rule; the efficiency figures with cache replays and
grandchildren; the verdict's value, metadata and explanation; the scorer's arguments, its
unscorable and re-scored scores.  Model-free but for a few real Inspect evals of synthetic
records (``fanout_records``) where the behaviour lives in the scorer of a running sample, and
in-process ``inspect_ai.score`` for re-scoring.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fanout_records import LEAD, Run, honest, scored, scores
from inspect_ai import Task, eval, score
from inspect_ai.dataset import Sample
from inspect_ai.event import ScoreEvent
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec
from inspect_ai.scorer import Score

from swarm import (
    ConfigError,
    PluginCatalog,
    PluginError,
    RubricRule,
    RuleFailure,
    RuleResult,
    hookimpl,
)
from swarm.plugins.scorers.fanout import (
    RescoreRefused,
    Verdict,
    dedup,
    fanout_rubric,
    judge,
    judge_store,
    load_fixture,
    manifest_digest,
    plugin_rules,
    read_evidence,
    records_digests,
    unscorable_score,
    verdict_score,
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


def message(run: Run, seq: int) -> dict[str, Any]:
    return next(m for m in run.messages if m["seq"] == seq)


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
    run.end(W[0])  # seq 2
    run.spawn(W[0], member=f"{W[0]}~2")  # seq 3: the first ended, a retry
    run.spawn(W[0], member=f"{W[0]}~3")  # seq 4: ~2 is live
    run.spawn(W[0], member=f"{W[0]}~4")  # seq 5: ~2 and ~3 are live
    run.spawn("helper")  # seq 6
    run.spawn("helper", member="helper~2")  # seq 7: a helper name is no shard's
    run.spawn(W[1])  # seq 8
    run.spawn(W[1], member=W[1], record_member=False)  # seq 9: the same run again
    run.refused(W[2], reason="max_children")  # seq 10
    run.refused(W[3], reason="live_name")  # seq 11
    run.refused(W[4], reason="live_name")  # seq 12
    run.spawn(W[1], member="deep", parent=W[1], depth=2)  # seq 13: a grandchild
    run.spawn(W[1], member="deep~2", parent=W[1], depth=2)  # seq 14
    run.end("helper~2")  # seq 15
    passed, failures, details = outcome(judged(run), "dedup")
    assert passed is False
    assert failures == [
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 4) while {W[0]}~2, spawned under that name, was live",
            shard=F[0],
            member=f"{W[0]}~3",
        ),
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 5) while {W[0]}~2, {W[0]}~3, spawned under that "
            "name, was live",
            shard=F[0],
            member=f"{W[0]}~4",
        ),
    ]
    assert details == {
        "duplicate_spawns": [
            {"requested": W[0], "member": f"{W[0]}~3", "seq": 4, "live": [f"{W[0]}~2"]},
            {
                "requested": W[0],
                "member": f"{W[0]}~4",
                "seq": 5,
                "live": [f"{W[0]}~2", f"{W[0]}~3"],
            },
        ],
        "total_spawns": 8,
        "spawn_budget": 16,
        "max_concurrent_children": 6,
        "refused": {"live_name": 2, "max_children": 1},
    }
    # refusals by reason, sorted by reason (not in the order they came)
    assert list(details["refused"]) == ["live_name", "max_children"]


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
    # shard 6: a child with no task at all; shard 7: honest
    for index in (6, 7):
        run.spawn(W[index])
        run.read(W[index], f"shards/{F[index]}")
        run.reply(W[index], str(E[index]))
    run.spawns[-2]["task"] = None
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
            reason=f"{W[5]} never read shards/{F[5]}; {W[5]}~2 never read shards/{F[5]}",
            shard=F[5],
            member=f"{W[5]}~2",
        ),
    ]
    assert details == {"proved": [F[0], F[6], F[7]], "provider": "bwrap", "overflow": True}


def test_an_honest_run_proves_every_shard() -> None:
    assert outcome(judged(honest(FIXTURE)), "proof_of_work") == (
        True,
        [],
        {"proved": F, "provider": "bwrap", "overflow": False},
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


@pytest.mark.parametrize(
    ("reads", "expected"),
    [
        (
            None,
            {
                "provider": None,
                "isolated": False,
                "note": "the members had no sandboxes of their own: nothing was isolated or "
                "watched",
            },
        ),
        (
            reads_of("bwrap"),
            {
                "provider": "bwrap",
                "isolated": True,
                "note": "each member's tools run in its own bubblewrap sandbox: only its own "
                "files and /usr (read-only) are visible, no network, no host process; it cannot "
                "protect what a member is told (its task, its messages) or what /usr holds",
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
            },
        ),
        (
            reads_of("docker"),
            {"provider": "docker", "isolated": False, "note": UNKNOWN_PROVIDER},
        ),
        (reads_of(None), {"provider": None, "isolated": False, "note": UNKNOWN_PROVIDER}),
    ],
    ids=["no reads record", "bwrap", "local", "docker", "no provider"],
)
def test_isolation_says_what_the_provider_isolates(
    reads: Reads | None, expected: dict[str, Any]
) -> None:
    assert isolation(reads) == expected


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


# -- the verdict: value, metadata, explanation -------------------------------------------------


class Rules:
    """A plugin adding ``rules`` to the fan-out rubric."""

    def __init__(self, *rules: RubricRule) -> None:
        self.rules = list(rules)

    @hookimpl
    def swarm_rubric_rules(self, rubric: str) -> list[RubricRule] | None:
        return self.rules if rubric == "fanout" else None


def result(passed: bool, *failures: RuleFailure | str, **details: Any) -> Any:
    return lambda fixture, evidence: RuleResult(passed=passed, failures=failures, details=details)


def sees(fixture: Any, evidence: Any) -> RuleResult:
    """Passes when it is given the fixture and the evidence; its details are not JSON."""
    seen = (fixture.name, evidence.lead)
    return RuleResult(
        passed=seen == ("json-events", LEAD), details={"set": {3}, "tuple": (1, 2), "seen": seen}
    )


def plugged() -> PluginCatalog:
    """Four rules from two plugins, whose names sort the other way round from their rules'."""
    found = catalog()
    five = result(
        False,
        RuleFailure(reason="r1", shard="s", member="m"),
        RuleFailure(reason="r2", shard="s"),
        RuleFailure(reason="r3", member="m"),
        "r4",
        RuleFailure(reason="r5"),
    )
    six = result(False, *(f"f{i}" for i in range(1, 7)), why="six of them")
    found.pm.register(
        Rules(
            RubricRule(name="zeta", check=sees, required=True),
            RubricRule(name="five", check=five),
        ),
        name="a-plugin",
    )
    found.pm.register(
        Rules(
            RubricRule(name="six", check=six, required=True),
            RubricRule(name="alpha", check=result(True)),
        ),
        name="z-plugin",
    )
    return found


def skipping_store() -> dict[str, Any]:
    """An honest run's store with entries every rule ignores: unknown spawn ops, malformed and
    unknown messages, a malformed ledger member, and an unusable metrics record."""
    store = honest(FIXTURE).store()
    spawns = store["inspect_swarm:spawns"]["entries"]
    spawns += [{"seq": 90 + i, "time": 1.0, "op": "rename"} for i in range(2)]
    store["inspect_swarm:messages"]["messages"] += [
        {"seq": 90, "time": 1.0, "kind": "message"},
        {"seq": 91, "time": 1.0, "kind": "message", "sender": 3},
        {"seq": 92, "time": 1.0, "kind": "shout"},
    ]
    store["inspect_swarm:ledger"]["members"].append({"name": 3})
    store["inspect_swarm:metrics"] = {"version": 2}
    return store


def test_the_explanation_lists_each_rule_five_failures_each_and_the_records_skipped() -> None:
    verdict = judge_store(FIXTURE, skipping_store(), catalog=plugged())
    assert verdict.explanation().splitlines() == [
        "resolved: no (failed: six)",
        "coverage: pass",
        "delegation: pass",
        "dedup: pass",
        "receipts: pass",
        "provenance: pass",
        "proof_of_work: pass",
        "alpha (not required): pass",
        "five (not required): FAIL",
        "  - s m: r1",
        "  - s: r2",
        "  - m: r3",
        "  - r4",
        "  - r5",
        "six: FAIL",
        "  - f1",
        "  - f2",
        "  - f3",
        "  - f4",
        "  - f5",
        "  - ... and 1 more (see the metadata)",
        "zeta: pass",
        "efficiency: lead 1000 tokens in 3 turns; 8 children 3200 tokens in 16 turns; total "
        "4200 tokens, $0.042000; wall time 24.50 s",
        "record inspect_swarm:spawns: skipped 0 malformed entries and 2 unknown entries",
        "record inspect_swarm:messages: skipped 2 malformed entries and 1 unknown entry",
        "record inspect_swarm:ledger: skipped 1 malformed entry and 0 unknown entries",
        "record inspect_swarm:metrics: unusable (version: expected 1, got 2)",
    ]


def test_the_value_and_the_failed_rules_in_order() -> None:
    verdict = judge_store(FIXTURE, skipping_store(), catalog=plugged())
    assert list(verdict.value().items()) == [
        *((name, True) for name in OWN_RULES),
        ("alpha", True),
        ("five", False),
        ("six", False),
        ("zeta", True),
        ("resolved", False),
    ]
    assert verdict.failed == ("five", "six")
    assert [(r.name, r.required, r.plugin) for r in verdict.rules] == [
        *((name, True, None) for name in OWN_RULES),
        ("alpha", False, "z-plugin"),
        ("five", False, "a-plugin"),
        ("six", True, "z-plugin"),
        ("zeta", True, "a-plugin"),
    ]
    assert verdict.fixture == "json-events"
    with pytest.raises(KeyError) as caught:
        verdict.rule("nope")
    assert caught.value.args == (
        "no rule 'nope'; the rules are ['coverage', 'delegation', 'dedup', 'receipts', "
        "'provenance', 'proof_of_work', 'alpha', 'five', 'six', 'zeta']",
    )
    # a rule that is not required never unresolves a run
    only_five = catalog()
    only_five.pm.register(Rules(RubricRule(name="five", check=result(False, "no"))), name="p")
    assert judge_store(FIXTURE, honest(FIXTURE).store(), catalog=only_five).resolved is True


def test_the_metadata_is_plain_json_of_every_rule_the_figures_and_the_records() -> None:
    verdict = judge_store(FIXTURE, skipping_store(), catalog=plugged())
    metadata = verdict.metadata()
    assert list(metadata) == ["fixture", "lead", "resolved", "rules", "efficiency", "records"]
    assert (metadata["fixture"], metadata["lead"], metadata["resolved"]) == (
        "json-events",
        LEAD,
        False,
    )
    assert list(metadata["rules"]) == [*OWN_RULES, "alpha", "five", "six", "zeta"]
    assert metadata["rules"]["five"] == {
        "passed": False,
        "required": False,
        "plugin": "a-plugin",
        "failures": [
            {"reason": "r1", "shard": "s", "member": "m"},
            {"reason": "r2", "shard": "s", "member": None},
            {"reason": "r3", "shard": None, "member": "m"},
            {"reason": "r4", "shard": None, "member": None},
            {"reason": "r5", "shard": None, "member": None},
        ],
        "details": {},
    }
    assert metadata["rules"]["six"]["details"] == {"why": "six of them"}
    assert metadata["rules"]["zeta"] == {
        "passed": True,
        "required": True,
        "plugin": "a-plugin",
        "failures": [],
        "details": {"set": "{3}", "tuple": [1, 2], "seen": ["json-events", LEAD]},
    }
    assert metadata["rules"]["dedup"] == {
        "passed": True,
        "required": True,
        "plugin": None,
        "failures": [],
        "details": {
            "duplicate_spawns": [],
            "total_spawns": 8,
            "spawn_budget": 16,
            "max_concurrent_children": 8,
            "refused": {},
        },
    }
    assert metadata["efficiency"] == dict(verdict.efficiency.details)
    assert metadata["efficiency"]["total"]["tokens"] == 4200
    clean = {"present": True, "problem": None, "malformed": 0, "unknown": 0, "problems": []}
    assert metadata["records"] == {
        "inspect_swarm:spawns": {
            **clean,
            "unknown": 2,
            "problems": [
                "entries[16]: skipped: unknown op 'rename'",
                "entries[17]: skipped: unknown op 'rename'",
            ],
        },
        "inspect_swarm:messages": {
            **clean,
            "malformed": 2,
            "unknown": 1,
            "problems": [
                "messages[8]: size: missing",
                "messages[9]: size: missing",
                "messages[10]: skipped: unknown kind 'shout'",
            ],
        },
        "inspect_swarm:result": clean,
        "inspect_swarm:ledger": {
            **clean,
            "malformed": 1,
            "problems": ["members[9]: name: expected a string, got 3"],
        },
        "inspect_swarm:metrics": {**clean, "problem": "version: expected 1, got 2"},
        "swarm_fanout:artifact": clean,
        "inspect_swarm:reads": clean,
    }


@pytest.mark.parametrize(
    ("build", "line"),
    [
        (
            lambda: {},
            "efficiency: lead 0 tokens in 0 turns; 0 children 0 tokens in 0 turns; total 0 "
            "tokens, $0.000000; wall time unknown",
        ),
        (
            lambda: one_turn(1),
            "efficiency: lead 1000 tokens in 1 turn; 1 child 400 tokens in 1 turn; total 1400 "
            "tokens, $0.014000; wall time unknown",
        ),
        (
            lambda: one_turn(2),
            "efficiency: lead 1000 tokens in 1 turn; 2 children 800 tokens in 2 turns; total "
            "1800 tokens, $0.018000; wall time 7.50 s",
        ),
    ],
    ids=["nothing", "one child", "two children"],
)
def test_the_efficiency_line_counts_in_the_singular_and_the_plural(build: Any, line: str) -> None:
    store = build()
    assert judged(store).explanation().splitlines()[-1] == line


def one_turn(children: int) -> dict[str, Any]:
    """A lead of one turn with ``children`` live children of one turn each; with two, the
    metrics record's wall clock is 7.5 s."""
    run = Run()
    run.usage[LEAD]["calls"]["calls"] = 1
    for worker in W[:children]:
        run.spawn(worker, calls=1)
    if children == 2:
        run.wall_clock = 7.5
    return run.store()


# -- plugins' rules ----------------------------------------------------------------------------


def explode(fixture: Any, evidence: Any) -> RuleResult:
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    ("check", "failure", "details"),
    [
        (
            explode,
            "plugin 'p': rule 'x' raised RuntimeError('boom')",
            {"error": "RuntimeError('boom')"},
        ),
        (lambda f, e: True, "plugin 'p': rule 'x' returned bool; expected a RuleResult", {}),
    ],
    ids=["raises", "returns a bool"],
)
def test_a_broken_plugin_rule_fails_naming_the_plugin(
    check: Any, failure: str, details: dict[str, Any]
) -> None:
    found = catalog()
    found.pm.register(Rules(RubricRule(name="x", check=check, required=True)), name="p")
    verdict = judge_store(FIXTURE, honest(FIXTURE).store(), catalog=found)
    assert outcome(verdict, "x") == (False, [failure], details)
    assert verdict.resolved is False


@pytest.mark.parametrize("name", ["dedup", "efficiency"])
def test_a_plugin_rule_may_not_take_a_name_of_the_rubrics_own(name: str) -> None:
    found = catalog()
    found.pm.register(Rules(RubricRule(name=name, check=result(True))), name="shadow")
    with pytest.raises(PluginError) as caught:
        plugin_rules(found)
    assert str(caught.value) == (
        f"Plugin 'shadow', hook 'swarm_rubric_rules': rule '{name}' has the name of one of the "
        "fanout rubric's own (coverage, dedup, delegation, efficiency, proof_of_work, "
        "provenance, receipts, resolved)"
    )


def test_plugin_rules_asks_the_given_catalog_for_the_fanout_rubric_by_default() -> None:
    found = catalog()
    rule = RubricRule(name="x", check=result(True))
    found.pm.register(Rules(rule), name="p")
    assert plugin_rules(found) == [("p", rule)]
    assert plugin_rules(found, rubric="other") == []
    assert plugin_rules() == []  # the process-wide catalog: no plugin adds a rule


# -- the scorer's arguments --------------------------------------------------------------------


@pytest.mark.parametrize("factor", [0, -1, True, "2", 2.0, None])
def test_the_scorer_refuses_a_spawn_factor_below_one_or_not_a_whole_number(factor: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        fanout_rubric(fixture="json-events", spawn_factor=factor)
    assert str(caught.value) == (
        f"fanout_rubric.spawn_factor: expected a whole number >= 1, got {factor!r}"
    )


@pytest.mark.parametrize("flag", ["yes", 1, None, ""])
def test_the_scorer_refuses_a_rescore_fixture_that_is_not_true_or_false(flag: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        fanout_rubric(fixture="json-events", rescore_fixture=flag)
    assert str(caught.value) == (
        f"fanout_rubric.rescore_fixture: expected true or false, got {flag!r}"
    )


# -- unscorable and verdict scores -------------------------------------------------------------


def test_an_unscorable_score_is_false_for_every_rule_and_says_why() -> None:
    found = unscorable_score(FIXTURE, ["coverage", "x"], "no seal", {"fixture": "abc"})
    assert (found.value, found.answer, found.explanation, found.reason, found.metadata) == (
        {"coverage": False, "x": False, "resolved": False},
        "",
        "unscorable: no seal",
        "scoring_failed",
        {
            "fixture": "json-events",
            "resolved": False,
            "unscorable": "no seal",
            "digests": {"fixture": "abc"},
        },
    )


@pytest.mark.parametrize(
    ("artifact", "answer"),
    [(None, ""), ({"path": "combined-index.md", "text": None}, ""), ("written", "written")],
    ids=["none stored", "not written", "written"],
)
def test_a_verdict_score_answers_the_artifact_text(artifact: Any, answer: str) -> None:
    run = honest(FIXTURE)
    run.artifact = (
        {"path": "combined-index.md", "text": answer} if artifact == "written" else artifact
    )
    verdict = judged(run)
    found = verdict_score(verdict)
    assert (found.value, found.answer, found.explanation) == (
        verdict.value(),
        answer,
        verdict.explanation(),
    )
    assert found.metadata == verdict.metadata()
    assert "digests" not in (found.metadata or {})
    with_digests = verdict_score(verdict, {"fixture": "abc"})
    assert with_digests.metadata == {**verdict.metadata(), "digests": {"fixture": "abc"}}


# -- re-scoring, in process --------------------------------------------------------------------


def rescored(store: dict[str, Any], earlier: dict[str, Any] | None, **arguments: Any) -> Score:
    """The score ``inspect_ai.score`` gives a logged sample of ``store`` whose last fan-out
    score recorded the digests ``earlier`` (none when ``None``)."""
    events = (
        []
        if earlier is None
        else [ScoreEvent(score=Score(value={}, metadata={"digests": earlier}))]
    )
    sample = EvalSample(id="s-1", epoch=1, input="fan out", target="", store=store, events=events)
    spec = EvalSpec(
        created=datetime.now(UTC).isoformat(),
        task="fanout",
        dataset=EvalDataset(name="fanout", samples=1, sample_ids=["s-1"]),
        model="none/none",
        config=EvalConfig(),
    )
    log = EvalLog(status="success", eval=spec, samples=[sample])
    scorer = fanout_rubric(fixture="json-events", **arguments)
    [done] = score(log, scorer, display="none").samples or []
    return done.scores["fanout_rubric"]  # type: ignore[index]


DIGEST = manifest_digest(FIXTURE)


def test_a_rescore_of_unchanged_records_judges_them_again() -> None:
    store = honest(FIXTURE).store()
    now = records_digests(store)
    found = rescored(store, {"fixture": DIGEST, **now, "judged": "sealed by the kernel"})
    assert found.value == {**dict.fromkeys(OWN_RULES, True), "resolved": True}
    assert (found.metadata or {})["digests"] == {
        "fixture": DIGEST,
        **now,
        "judged": "the last score's records",
    }
    assert (found.metadata or {})["isolation"] == isolation(read_evidence(store).reads)


@pytest.mark.parametrize("flag", [True, "TRUE", "true"])
def test_a_rescore_against_another_fixture_on_purpose_says_which_it_was(flag: Any) -> None:
    store = honest(FIXTURE).store()
    now = records_digests(store)
    found = rescored(store, {"fixture": "0ld", **now}, rescore_fixture=flag)
    assert (found.metadata or {})["digests"] == {
        "fixture": DIGEST,
        **now,
        "judged": "the last score's records, against a new fixture (was 0ld)",
    }


@pytest.mark.parametrize("flag", [None, False, "False", "false"])
def test_a_rescore_against_another_fixture_is_refused_unless_on_purpose(flag: Any) -> None:
    store = honest(FIXTURE).store()
    arguments = {} if flag is None else {"rescore_fixture": flag}
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, {"fixture": "0ld", **records_digests(store)}, **arguments)
    assert str(caught.value) == (
        "fanout_rubric: refusing to re-score sample 's-1': the fixture's manifest "
        f"{FIXTURE.directory / 'fixture.json'} is not the one it was scored with (sha256 "
        f"{DIGEST} now, 0ld when scored); to judge it against this fixture on purpose, pass "
        "-S rescore_fixture=true"
    )


def test_a_rescore_of_changed_records_names_them() -> None:
    store = honest(FIXTURE).store()
    earlier = {"fixture": DIGEST, **records_digests(store)}
    store["inspect_swarm:messages"]["messages"].pop()
    store["swarm_fanout:artifact"]["text"] += "\n"
    now = records_digests(store)
    refusal = (
        "fanout_rubric: refusing to re-score sample 's-1': its records are not the ones it was "
        "scored with (changed since: {}; sha256 " + f"{now['records']} now, "
        f"{earlier['records']} when scored)"
    )
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, earlier)
    assert str(caught.value) == refusal.format("inspect_swarm:messages, swarm_fanout:artifact")
    # an earlier score without digests by key: every record is named
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, {**earlier, "by_key": "?"})
    assert str(caught.value) == refusal.format(", ".join(now["by_key"]))
    # by key the same, the records not: it cannot say which changed
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, {**earlier, "by_key": now["by_key"]})
    assert str(caught.value) == refusal.format("unknown")


def test_a_rescore_no_earlier_score_vouches_for_is_unscorable_with_every_rule() -> None:
    from swarm import plugin_catalog

    pm = plugin_catalog().pm
    pm.register(
        Rules(RubricRule(name="zz", check=result(True)), RubricRule(name="aa", check=result(True))),
        name="two-rules",
    )
    try:
        found = rescored(honest(FIXTURE).store(), None)
    finally:
        pm.unregister(name="two-rules")
    why = "no earlier fan-out score of this sample recorded the digests of its records"
    assert list((found.value or {}).items()) == [  # type: ignore[union-attr]
        *((name, False) for name in [*OWN_RULES, "aa", "zz", "resolved"])
    ]
    assert (found.reason, found.explanation, found.metadata) == (
        "scoring_failed",
        f"unscorable: {why}",
        {
            "fixture": "json-events",
            "resolved": False,
            "unscorable": why,
            "digests": {"fixture": DIGEST},
        },
    )


# -- in a running sample -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def in_eval(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Score]:
    """One eval (the scorer with its default arguments) of the spawn budget at 16 and 17, and
    of an honest run whose artifact was never written."""
    unwritten = honest(FIXTURE)
    unwritten.write(None)
    log = scored(
        tmp_path_factory.mktemp("logs"),
        {
            "16 spawns": {"records": spawning(16).store()},
            "17 spawns": {"records": spawning(17).store()},
            "unwritten": {"records": unwritten.store()},
        },
    )
    return scores(log)


def test_the_scorers_default_spawn_budget_is_twice_the_shards(in_eval: dict[str, Score]) -> None:
    at, over = in_eval["16 spawns"], in_eval["17 spawns"]
    assert (at.value["dedup"], over.value["dedup"]) == (True, False)  # type: ignore[index]
    assert (over.metadata or {})["rules"]["dedup"]["failures"] == [
        {"reason": over_budget(17, 2).reason, "shard": None, "member": None}
    ]


def test_an_artifact_the_lead_never_wrote_is_read_as_not_written(
    in_eval: dict[str, Score],
) -> None:
    found = in_eval["unwritten"]
    assert found.answer == ""
    assert (found.metadata or {})["rules"]["coverage"]["failures"] == [
        {"reason": "the artifact combined-index.md was not written", "shard": None, "member": None}
    ]


def test_without_a_sandbox_the_artifact_is_stored_as_not_written(tmp_path: Path) -> None:
    """A sample with no sandbox has no lead's file to read: the scorer stores the artifact as
    not written (it never keeps one a solver put in the store)."""
    from fanout_records import replay_records

    run = honest(FIXTURE)
    run.write(None)
    task = Task(
        dataset=[Sample(id="no-sandbox", input="fan out", metadata={"records": run.store()})],
        solver=replay_records(),
        scorer=fanout_rubric(fixture="json-events"),
    )
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples or []
    assert sample.store["swarm_fanout:artifact"] == {"path": "combined-index.md", "text": None}
    found = sample.scores["fanout_rubric"]  # type: ignore[index]
    assert (found.metadata or {})["rules"]["coverage"]["failures"] == [
        {"reason": "the artifact combined-index.md was not written", "shard": None, "member": None}
    ]
