"""The fan-out rubric's rules on synthetic records: each passing and failing, and every cheat of
the reference harness (named in the test names: ``test_cheat_*``) plus the provenance cheat and
late receipts.  Model-free: the records are built by ``fanout_records``.

Each cheat pins the whole verdict (which rules fail and which pass), so a rule that stops
catching it, or starts failing an honest run, fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from fanout_records import LEAD, Run, honest, index_text

from swarm import PluginCatalog, RuleFailure
from swarm.plugins.scorers.fanout import Verdict, artifact_bullets, judge_store, load_fixture

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
W = [s.worker for s in SHARDS]
F = [s.file for s in SHARDS]
CATALOG = PluginCatalog.load(load_entrypoints=False)


def judged(run: Run | dict[str, Any], **options: Any) -> Verdict:
    store = run.store() if isinstance(run, Run) else run
    return judge_store(FIXTURE, store, catalog=CATALOG, **options)


def failing(verdict: Verdict) -> set[str]:
    value = verdict.value()
    return {name for name, passed in value.items() if not passed} - {"resolved", "unverified"}


def failures(verdict: Verdict, rule: str) -> list[RuleFailure | str]:
    return list(verdict.rule(rule).result.failures)


def details(verdict: Verdict, rule: str) -> dict[str, Any]:
    return dict(verdict.rule(rule).result.details)


# -- an honest run -----------------------------------------------------------------------------


def test_honest_run_resolves_with_every_rule() -> None:
    verdict = judged(honest(FIXTURE))
    assert verdict.value() == {
        "coverage": True,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": True,
        "resolved": True,
        "unverified": False,
    }
    assert details(verdict, "delegation")["verified_workers"] == {w: w for w in W}
    assert details(verdict, "dedup") == {
        "duplicate_spawns": [],
        "total_spawns": 8,
        "spawn_budget": 16,
        "max_concurrent_children": 8,
        "refused": {},
    }
    assert details(verdict, "receipts")["received"] == {w: "message" for w in W}
    assert details(verdict, "provenance")["sourced"] == dict(zip(F, W, strict=True))


def test_honest_run_efficiency_figures() -> None:
    figures = judged(honest(FIXTURE)).efficiency.details
    assert figures["lead"] == {
        "members": 1,
        "tokens": 1000,
        "cost": 0.01,
        "model_calls": 3,
        "turns": 3,
        "errored_calls": 0,
    }
    assert figures["children"] == {
        "members": 8,
        "tokens": 3200,
        "cost": 0.032,
        "model_calls": 16,
        "turns": 16,
        "errored_calls": 0,
        "spawned": 8,
        "lead_children": 8,
    }
    assert figures["total"]["tokens"] == 4200
    assert figures["total"]["turns"] == 19
    assert figures["others"]["members"] == 0
    # 8 spawns, 8 x (shard read + reply + seen + end), the lead's end: 49 steps of 0.5 s
    assert (figures["wall_time"], figures["wall_time_source"]) == (24.5, "result")


def test_efficiency_prefers_the_metrics_wall_clock_and_never_fails() -> None:
    run = honest(FIXTURE)
    run.wall_clock = 31.25
    verdict = judged(run)
    assert verdict.efficiency.details["wall_time"] == 31.25
    assert verdict.efficiency.details["wall_time_source"] == "metrics"
    empty = judged({})
    assert empty.efficiency.passed
    assert empty.efficiency.details["total"]["tokens"] == 0
    assert empty.efficiency.details["wall_time"] is None


# -- coverage ----------------------------------------------------------------------------------


def test_cheat_fabricated_answer_fails_coverage_and_provenance() -> None:
    run = honest(FIXTURE)
    run.write(index_text(FIXTURE, {F[2]: "999999"}))
    verdict = judged(run)
    assert failing(verdict) == {"coverage", "provenance"}
    expected = str(SHARDS[2].expected)
    assert failures(verdict, "coverage") == [
        RuleFailure(reason=f"expected {expected!r}, the artifact says '999999'", shard=F[2])
    ]
    assert details(verdict, "coverage")["wrong_answers"] == [
        {"shard": F[2], "expected": expected, "found": ["999999"]}
    ]


def test_cheat_missing_bullet_fails_coverage_only() -> None:
    run = honest(FIXTURE)
    run.write("".join(index_text(FIXTURE).splitlines(keepends=True)[:-1]))
    verdict = judged(run)
    assert failing(verdict) == {"coverage"}
    assert details(verdict, "coverage")["missing_shards"] == [F[7]]
    assert details(verdict, "provenance")["not_in_artifact"] == [F[7]]


@pytest.mark.parametrize("order", ["wrong after right", "right after wrong"])
def test_cheat_conflicting_duplicate_bullets_fail_in_either_order(order: str) -> None:
    right, wrong = f"- {F[0]}: {SHARDS[0].expected}", f"- {F[0]}: {SHARDS[0].expected + 1}"
    extra = [right, wrong] if order == "wrong after right" else [wrong, right]
    run = honest(FIXTURE)
    run.write("\n".join([*extra, *index_text(FIXTURE).splitlines()[1:]]))
    verdict = judged(run)
    assert failing(verdict) == {"coverage", "provenance"}
    found = details(verdict, "coverage")["wrong_answers"][0]["found"]
    assert found == [line.split(": ")[1] for line in extra]


def test_identical_duplicate_bullets_pass() -> None:
    run = honest(FIXTURE)
    run.write(index_text(FIXTURE) + f"* {F[0]}: {SHARDS[0].expected}\n")
    assert judged(run).resolved


def test_a_shards_prefixed_bullet_does_not_count_for_the_bare_file() -> None:
    run = honest(FIXTURE)
    run.write(index_text(FIXTURE).replace(f"- {F[0]}:", f"- shards/{F[0]}:"))
    verdict = judged(run)
    assert failing(verdict) == {"coverage"}
    assert details(verdict, "coverage")["missing_shards"] == [F[0]]
    assert details(verdict, "coverage")["unknown_bullets"] == [f"shards/{F[0]}"]


def test_bullet_parser_is_strict() -> None:
    text = (
        "# Index\n"
        "- a.jsonl: 1\n"
        "  *   b.jsonl :  2  \n"  # '* ' then the key, trimmed; surrounding space ignored
        "-c.jsonl: 3\n"  # no space after the dash
        "+ d.jsonl: 4\n"  # not a bullet
        "1. e.jsonl: 5\n"
        "- f.jsonl 6\n"  # no colon
        "- a.jsonl: 1: extra\n"  # the key ends at the first colon
        "- : 7\n"  # no key
    )
    assert artifact_bullets(text) == {"a.jsonl": ["1", "1: extra"], "b.jsonl": ["2"]}


@pytest.mark.parametrize(
    ("artifact", "reason"),
    [
        (None, "no artifact was stored"),
        (
            {"path": "combined-index.md", "text": None},
            "the artifact combined-index.md was not written",
        ),
    ],
)
def test_no_artifact_fails_coverage(artifact: dict[str, Any] | None, reason: str) -> None:
    run = honest(FIXTURE)
    run.artifact = artifact
    verdict = judged(run)
    assert failing(verdict) == {"coverage"}
    assert failures(verdict, "coverage") == [RuleFailure(reason=reason)]
    assert details(verdict, "coverage")["missing_shards"] == F


# -- delegation --------------------------------------------------------------------------------


def test_cheat_no_spawn_fails_delegation_and_provenance() -> None:
    run = Run()
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"delegation", "provenance", "proof_of_work"}
    assert failures(verdict, "delegation")[0] == RuleFailure(
        reason=f"the lead ({LEAD}) spawned no child named {W[0]}", shard=F[0]
    )
    assert details(verdict, "provenance")["unsourced"] == F


def test_cheat_helper_named_children_do_not_count() -> None:
    run = Run()
    for index, shard in enumerate(SHARDS):
        run.spawn(f"helper-{index + 1}")
        run.reply(f"helper-{index + 1}", str(shard.expected))
        run.end(f"helper-{index + 1}")
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"delegation", "provenance", "proof_of_work"}
    assert details(verdict, "delegation")["helper_children"] == [f"helper-{i}" for i in range(1, 9)]
    assert details(verdict, "delegation")["verified_workers"] == {}


def test_a_spawn_under_a_helper_name_does_not_stand_in_for_its_shard() -> None:
    """Our runtime has no rename: the reference's "all children renamed" cheat is a child
    spawned under another name, which then answers the shard."""
    run = Run()
    for shard in SHARDS:
        name = "helper" if shard is SHARDS[3] else shard.worker
        run.spawn(name)
        run.reply(name, str(shard.expected))
        run.end(name)
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert failing(verdict) == {"delegation", "provenance", "proof_of_work"}
    assert details(verdict, "delegation")["unverified_workers"] == [W[3]]


def test_cheat_one_run_claimed_by_many() -> None:
    run = honest(FIXTURE)
    # a second spawn entry names worker-events-01's run under worker-events-02's name
    run.spawns = [e for e in run.spawns if e["member"] != W[1]]
    run.spawn(W[1], member=W[0], record_member=False)
    for index, entry in enumerate(run.spawns):
        entry["seq"] = index + 1
    verdict = judged(run)
    assert "delegation" in failing(verdict)
    assert details(verdict, "delegation")["shared_claims"] == [W[0]]
    assert details(verdict, "delegation")["unverified_workers"] == [W[0], W[1]]
    why = f"{W[0]} is claimed by 2 shards ({W[0]}, {W[1]})"
    assert failures(verdict, "delegation")[0] == RuleFailure(reason=why, shard=F[0])


def test_a_member_named_after_another_shards_worker_is_claimed_by_both() -> None:
    run = Run()
    run.spawn(W[0], member=W[1])
    run.reply(W[1], str(SHARDS[0].expected))
    run.end(W[1])
    verdict = judged(run)
    assert details(verdict, "delegation")["shared_claims"] == [W[1]]
    assert details(verdict, "delegation")["verified_workers"] == {}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"calls": 0}, f"{W[0]} made no model call"),
        ({"started": False}, f"{W[0]} never started"),
        ({"record_member": False}, f"{W[0]} never started"),
    ],
)
def test_a_child_that_never_ran_does_not_count(change: dict[str, Any], why: str) -> None:
    run = Run()
    run.spawn(W[0], **change)
    run.reply(W[0], str(SHARDS[0].expected))
    run.end(W[0])
    verdict = judged(run)
    assert failures(verdict, "delegation")[0] == RuleFailure(reason=why, shard=F[0])


def test_depth_2_grandchild_under_a_worker_name_neither_counts_nor_flags_dedup() -> None:
    run = honest(FIXTURE, finish=False)
    # worker-events-01 is live again under its own name... as a grandchild of another worker
    run.spawn(W[0], member=f"{W[0]}-grandchild", parent=W[1], depth=2)
    verdict = judged(run)
    assert verdict.resolved
    assert details(verdict, "dedup")["total_spawns"] == 8
    # and a shard served only by a grandchild is not delegated
    run = Run()
    run.spawn(W[1])
    run.spawn(W[0], member="deep", parent=W[1], depth=2)
    run.reply("deep", str(SHARDS[0].expected), recipient=W[1])
    verdict = judged(run)
    assert W[0] in details(verdict, "delegation")["unverified_workers"]
    assert details(verdict, "dedup")["duplicate_spawns"] == []


def test_a_live_child_counts_and_an_ended_one_needs_a_reply_that_reached_the_lead() -> None:
    run = Run()
    run.spawn(W[0])  # live at the end, never replied
    run.spawn(W[1])
    run.reply(W[1], str(SHARDS[1].expected), seen=None)  # sent, never read
    run.end(W[1])
    run.finish()
    verdict = judged(run)
    assert details(verdict, "delegation")["verified_workers"] == {W[0]: W[0]}
    assert failures(verdict, "delegation")[0] == RuleFailure(
        reason=f"{W[1]} ended (submitted) without a reply reaching the lead", shard=F[1]
    )
