"""The fan-out rubric's dedup, receipts and provenance rules, and the cheats they catch (named
``test_cheat_*``): double spawn, spawn budget, silent drop, deleting a child to hide a drop,
forged relationships, late receipts, and the provenance cheat.  Model-free."""

from __future__ import annotations

from typing import Any

import pytest
from fanout_records import Run, honest, index_text

from swarm import PluginCatalog, RuleFailure
from swarm.plugins.scorers.fanout import Verdict, judge_store, load_fixture

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
W = [s.worker for s in SHARDS]
F = [s.file for s in SHARDS]
CATALOG = PluginCatalog.load(load_entrypoints=False)


def judged(run: Run, **options: Any) -> Verdict:
    return judge_store(FIXTURE, run.store(), catalog=CATALOG, **options)


def failing(verdict: Verdict) -> set[str]:
    value = verdict.value()
    return {name for name, passed in value.items() if not passed} - {"resolved", "unverified"}


def details(verdict: Verdict, rule: str) -> dict[str, Any]:
    return dict(verdict.rule(rule).result.details)


def failures(verdict: Verdict, rule: str) -> list[RuleFailure | str]:
    return list(verdict.rule(rule).result.failures)


def shards_run(*skip: int) -> Run:
    """Every shard's child spawned, replying its answer and ending, except the ``skip`` ones
    (by index)."""
    run = Run()
    for index, shard in enumerate(SHARDS):
        if index not in skip:
            run.spawn(shard.worker)
            run.reply(shard.worker, str(shard.expected))
            run.end(shard.worker)
    return run


# -- dedup -------------------------------------------------------------------------------------


def test_cheat_double_spawn_fails_dedup_only() -> None:
    run = honest(FIXTURE, finish=False)
    run.spawns = []  # rebuild: two live children under worker-events-01 at once
    run.messages = []
    run.members = {k: v for k, v in run.members.items() if k == "lead"}
    run.usage = {k: v for k, v in run.usage.items() if k == "lead"}
    for shard in SHARDS:
        run.spawn(shard.worker)
    second = run.spawn(W[0], member=f"{W[0]}~2")
    for shard in SHARDS:
        run.reply(shard.worker, str(shard.expected))
        run.end(shard.worker)
    run.reply(second, str(SHARDS[0].expected))
    run.end(second)
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"dedup"}
    assert details(verdict, "dedup")["total_spawns"] == 9
    assert details(verdict, "dedup")["max_concurrent_children"] == 9
    assert details(verdict, "dedup")["duplicate_spawns"] == [
        {"requested": W[0], "member": second, "seq": 9, "live": [W[0]]}
    ]
    assert failures(verdict, "dedup") == [
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 9) while {W[0]}, spawned under that name, was live",
            shard=F[0],
            member=second,
        )
    ]


def test_legit_retry_resolves() -> None:
    """The first child ends without replying, its receipt reaches the lead, the lead spawns the
    same name again (the runtime gives the run a new member name), and the retry replies."""
    run = shards_run(0)
    run.spawn(W[0])
    run.end(W[0], status="errored")
    run.receipt(W[0], status="errored")
    retry = run.spawn(W[0], member=f"{W[0]}~2")
    run.reply(retry, str(SHARDS[0].expected))
    run.end(retry)
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert verdict.resolved, verdict.explanation()
    assert details(verdict, "dedup")["total_spawns"] == 9
    assert details(verdict, "delegation")["verified_workers"][W[0]] == retry
    assert details(verdict, "receipts")["received"][W[0]] == "receipt"
    assert details(verdict, "provenance")["sourced"][F[0]] == retry


def test_cheat_spawn_budget_exceeded_by_helper_spawns() -> None:
    run = shards_run()
    for index in range(9):
        helper = run.spawn(f"helper-{index}")
        run.end(helper)
        run.receipt(helper, status="submitted")
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"dedup"}
    assert details(verdict, "dedup")["duplicate_spawns"] == []
    assert failures(verdict, "dedup") == [
        RuleFailure(reason="17 depth-1 spawns, more than the budget of 16 (2 x 8 shards)")
    ]
    assert judged(run, spawn_factor=3).resolved


def test_refused_spawns_are_not_spawns_and_are_reported_by_reason() -> None:
    run = shards_run()
    run.refused(W[0], reason="live_name")
    run.refused(W[0], reason="retries")
    run.refused("deep", reason="max_depth", depth=2)
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert verdict.resolved
    assert details(verdict, "dedup")["total_spawns"] == 8
    assert details(verdict, "dedup")["refused"] == {"live_name": 1, "retries": 1}
    # spawned and ended one at a time
    assert details(verdict, "dedup")["max_concurrent_children"] == 1


# -- receipts ----------------------------------------------------------------------------------


def test_cheat_silent_drop() -> None:
    run = shards_run(7)
    run.spawn(W[7])
    run.end(W[7], status="errored")  # no reply, no receipt
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"delegation", "receipts", "provenance", "proof_of_work"}
    assert details(verdict, "receipts")["missing"] == [W[7]]
    assert details(verdict, "receipts")["late"] == []
    assert failures(verdict, "receipts") == [
        RuleFailure(reason="no reply or receipt to the lead", member=W[7])
    ]


def test_cheat_deleting_a_child_hides_no_drop() -> None:
    run = shards_run(7)
    run.spawn(W[7])
    run.delete(W[7], reason="cancelled")
    run.end(W[7], status="cancelled")
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert {"delegation", "receipts"} <= failing(verdict)
    assert failures(verdict, "delegation") == [
        RuleFailure(
            reason=f"{W[7]} was deleted (cancelled) before a reply reached the lead", shard=F[7]
        )
    ]
    assert details(verdict, "receipts")["missing"] == [W[7]]


def test_deleting_a_child_after_its_reply_reached_the_lead_is_cleanup() -> None:
    run = shards_run(7)
    run.spawn(W[7])
    run.reply(W[7], str(SHARDS[7].expected))
    run.delete(W[7], reason="parent_ended")
    run.end(W[7], status="cancelled")
    run.write(index_text(FIXTURE))
    run.finish()
    assert judged(run).resolved


def test_receipts_of_every_kind_count() -> None:
    run = shards_run(7)
    run.spawn(W[7])
    run.end(W[7], status="submitted")
    run.receipt(W[7], status="submitted")  # completed without reply
    helper = run.spawn("helper")
    run.end(helper, status="errored")
    run.receipt(helper, status="errored")
    run.finish()
    verdict = judged(run)
    assert verdict.rule("receipts").passed
    assert details(verdict, "receipts")["received"][W[7]] == "receipt"
    assert details(verdict, "receipts")["received"]["helper"] == "receipt"
    # a receipt is not a reply: the shard is not delegated
    assert details(verdict, "delegation")["unverified_workers"] == [W[7]]


@pytest.mark.parametrize("relationship", ["sibling", "other", "parent", "missing"])
def test_cheat_forged_relationship(relationship: str) -> None:
    run = shards_run(7)
    run.spawn(W[7])
    reply = run.reply(W[7], str(SHARDS[7].expected), relationship=relationship)
    if relationship == "missing":
        del reply["relationship"]
    run.end(W[7])
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"delegation", "receipts", "provenance", "proof_of_work"}
    assert details(verdict, "receipts")["missing"] == [W[7]]
    # a wrong relationship is named; a missing one makes the entry malformed (never evidence)
    forged = [] if relationship == "missing" else [W[7]]
    assert details(verdict, "receipts")["not_as_child"] == forged
    malformed = verdict.evidence.report("inspect_swarm:messages").malformed
    assert malformed == (1 if relationship == "missing" else 0)


def test_a_reply_or_receipt_to_another_member_does_not_count() -> None:
    run = shards_run(7)
    run.spawn(W[7])
    run.reply(W[7], str(SHARDS[7].expected), recipient=W[0])
    receipt = run.receipt(W[7])
    receipt["recipient"] = W[0]
    run.end(W[7])
    run.finish()
    assert details(judged(run), "receipts")["missing"] == [W[7]]


def test_an_unread_reply_is_missing_not_late() -> None:
    run = shards_run(7)
    run.spawn(W[7])
    run.reply(W[7], str(SHARDS[7].expected), seen=None)
    run.end(W[7])
    run.finish()
    verdict = judged(run)
    assert details(verdict, "receipts")["late"] == []
    assert failures(verdict, "receipts") == [
        RuleFailure(
            reason="its reply or receipt never reached the lead's conversation", member=W[7]
        )
    ]


def test_late_receipts_are_reported_late_and_fail() -> None:
    """Sent after the lead ended: the runtime could not deliver them, so they never reached
    the lead; reported as late, and counted as missing."""
    run = shards_run(6, 7)
    run.spawn(W[6])
    run.spawn(W[7])
    run.write(index_text(FIXTURE))
    lead_end = run.finish()
    run.reply(W[6], str(SHARDS[6].expected), seen=None)
    run.end(W[6])
    run.end(W[7], status="stopped")
    run.receipt(W[7], status="stopped", seen=None)
    verdict = judged(run)
    assert verdict.evidence.lead_end == lead_end
    assert details(verdict, "receipts")["late"] == [W[6], W[7]]
    assert details(verdict, "receipts")["missing"] == [W[6], W[7]]
    assert not verdict.rule("receipts").passed
    assert failures(verdict, "receipts")[0] == RuleFailure(
        reason="its reply or receipt was sent after the lead ended and never reached it",
        member=W[6],
    )


def test_a_reply_seen_after_the_lead_ended_is_late() -> None:
    run = shards_run(7)
    run.spawn(W[7])
    reply = run.reply(W[7], str(SHARDS[7].expected), seen=None)
    run.end(W[7])
    lead_end = run.finish()
    reply["seen"] = {"time": lead_end + 1.0, "via": "read"}
    verdict = judged(run)
    assert details(verdict, "receipts")["late"] == [W[7]]
    assert details(verdict, "delegation")["unverified_workers"] == [W[7]]


# -- provenance --------------------------------------------------------------------------------


def test_cheat_provenance_lead_answers_behind_decoy_children() -> None:
    """The lead writes the right answers itself; its children, spawned and replying as they
    should, reply junk.  Only provenance catches it."""
    run = Run()
    for shard in SHARDS:
        run.spawn(shard.worker)
        run.reply(shard.worker, "done")
        run.end(shard.worker)
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"provenance", "proof_of_work"}
    assert not verdict.resolved
    assert details(verdict, "provenance")["mismatched"][0] == {
        "shard": F[0],
        "member": W[0],
        "reply": "done",
        "reply_value": None,
        "artifact": [str(SHARDS[0].expected)],
        "artifact_values": [SHARDS[0].expected],
    }
    assert len(failures(verdict, "provenance")) == 8


@pytest.mark.parametrize(("replies", "passed"), [(["1", "{x}"], True), (["{x}", "1"], False)])
def test_provenance_takes_the_last_reply(replies: list[str], passed: bool) -> None:
    run = shards_run(0)
    run.spawn(W[0])
    for text in replies:
        run.reply(W[0], f"  {text.format(x=SHARDS[0].expected)}\n")
    run.end(W[0])
    run.write(index_text(FIXTURE))
    run.finish()
    assert judged(run).rule("provenance").passed is passed


def test_provenance_ignores_replies_that_never_reached_the_lead() -> None:
    run = shards_run(0)
    run.spawn(W[0])
    run.reply(W[0], str(SHARDS[0].expected))
    run.reply(W[0], "12345", seen=None)
    run.end(W[0])
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert verdict.resolved
    assert details(verdict, "provenance")["sourced"][F[0]] == W[0]
