"""Value tests of what the fan-out rubric builds from its records, pinned at their boundaries:
the evidence (``_evidence``), the integers of replies and bullets (``_numbers``), the artifact's
bullets and the answer rules (``_answers``), the digests a score records and the seal check
(``_digests``) and the fixture loader (``_fixture``).  Model-free: every test calls the code on
hand-built records or fixtures, so a mutation run can afford them once per mutant."""

from __future__ import annotations

import contextvars
import hashlib
import json
import locale
from pathlib import Path
from typing import Any

import pytest
from fanout_records import LEAD, Run
from inspect_ai.event import InfoEvent, ScoreEvent
from inspect_ai.log import Transcript
from inspect_ai.log._transcript import init_transcript
from inspect_ai.scorer import Score

from swarm import ConfigError, RuleFailure, RuleResult
from swarm.plugins.scorers.fanout import (
    ARTIFACT_KEY,
    MESSAGES_KEY,
    SPAWNS_KEY,
    STORE_KEYS,
    Artifact,
    Child,
    Fixture,
    MemberRun,
    MemberUsage,
    Shard,
    artifact_bullets,
    coverage,
    fixture_names,
    load_fixture,
    manifest_digest,
    provenance,
    read_evidence,
    records_digests,
)
from swarm.plugins.scorers.fanout import _fixture as fixture_module
from swarm.plugins.scorers.fanout._digests import earlier_digests, seal_problem
from swarm.plugins.scorers.fanout._fields import (
    Malformed,
)
from swarm.plugins.scorers.fanout._fixture import FIXTURES_DIR
from swarm.plugins.scorers.fanout._numbers import answer_integer, numbers, reply_integer

from raw_records import member, message, spawn, usage

RESULT_KEY = "inspect_swarm:result"
LEDGER_KEY = "inspect_swarm:ledger"
METRICS_KEY = "inspect_swarm:metrics"
READS_KEY = "inspect_swarm:reads"


def refusal(call: Any, *args: Any, **kwargs: Any) -> str:
    """The message of the ``Malformed`` that ``call(*args, **kwargs)`` raises."""
    with pytest.raises(Malformed) as caught:
        call(*args, **kwargs)
    return str(caught.value)


# -- the evidence (_evidence) -----------------------------------------------------------------


def roster(*names: str) -> dict[str, Any]:
    """A result record of depth-0 members."""
    return {"version": 1, "members": [member(name=n, depth=0, parent=None) for n in names]}


def spawned(*parents: str) -> dict[str, Any]:
    """A spawn ledger with one depth-1 spawn per parent, in order."""
    return {
        "version": 1,
        "entries": [
            spawn(seq=i + 1, parent=p, member=f"c{i + 1}", requested=f"c{i + 1}")
            for i, p in enumerate(parents)
        ],
    }


@pytest.mark.parametrize(
    ("store", "lead"),
    [
        ({}, None),
        ({RESULT_KEY: roster("solo")}, "solo"),
        # the only roster member, even if someone else spawned
        ({RESULT_KEY: roster("solo"), SPAWNS_KEY: spawned("x", "x")}, "solo"),
        # the roster member with the most depth-1 spawns
        ({RESULT_KEY: roster("a", "b"), SPAWNS_KEY: spawned("a", "b", "b")}, "b"),
        # on a tie, the one that spawned first
        ({RESULT_KEY: roster("a", "b"), SPAWNS_KEY: spawned("b", "a", "a", "b")}, "b"),
        # spawns by a member off the roster do not count
        ({RESULT_KEY: roster("a", "b"), SPAWNS_KEY: spawned("x", "x", "b")}, "b"),
        # no spawn by a roster member: the first roster member
        ({RESULT_KEY: roster("a", "b"), SPAWNS_KEY: spawned("x")}, "a"),
        ({RESULT_KEY: roster("a", "b")}, "a"),
        # no roster: the parent of the most depth-1 spawns
        ({SPAWNS_KEY: spawned("x", "y", "y")}, "y"),
    ],
)
def test_the_lead_is_the_roster_member_that_spawned_the_children(
    store: dict[str, Any], lead: str | None
) -> None:
    assert read_evidence(store).lead == lead


def test_only_depth_1_spawns_make_the_lead() -> None:
    entries = [
        spawn(seq=1, parent="a", member="c1"),
        spawn(seq=2, parent="b", member="c2", depth=2),
        spawn(seq=3, parent="b", member="c3", depth=2),
        spawn(seq=4, parent="b", op="refused", member=None, reason="x"),
        spawn(seq=5, parent="b", op="refused", member=None, reason="x"),
        spawn(seq=6, parent="b", op="end", member="c4", status="submitted"),
        spawn(seq=7, parent="b", op="delete", member="c5", reason="cancelled"),
    ]
    store = {RESULT_KEY: roster("b", "a"), SPAWNS_KEY: {"version": 1, "entries": entries}}
    assert read_evidence(store).lead == "a"


def test_the_leads_end_is_its_result_records_end() -> None:
    result = {
        "version": 1,
        "members": [
            member(name="a", depth=0, parent=None, time=7.5),
            member(name="b", depth=0, parent=None, time=2.5),
        ],
    }
    store = {RESULT_KEY: result, SPAWNS_KEY: spawned("b")}
    assert (read_evidence(store).lead, read_evidence(store).lead_end) == ("b", 2.5)
    result["members"][1]["time"] = None
    assert read_evidence(store).lead_end is None
    # a lead known only from the spawn ledger has no end
    assert read_evidence({SPAWNS_KEY: spawned("b")}).lead_end is None


def test_a_child_gathers_its_spawns_end_delete_run_and_turns() -> None:
    entries = [
        spawn(seq=1, member="m", requested="worker-a", time=1, task="first task"),
        spawn(seq=2, member="m", requested="worker-b", time=2, task="second task"),
        spawn(seq=3, member="m", requested="worker-a", time=3),
        spawn(seq=4, op="end", member="m", status="errored", time=4),
        spawn(seq=5, op="end", member="m", status="submitted", time=5),
        spawn(seq=6, op="delete", member="m", reason="parent_ended", time=6),
        spawn(seq=7, op="delete", member="m", reason="cancelled", time=7),
        spawn(seq=8, member="n", requested="worker-c", time=8, task=None),
    ]
    result = {
        "version": 1,
        "members": [
            member(name=LEAD, depth=0, parent=None),
            member(name="m", started=1.5),
            member(name="n", started=None),
        ],
    }
    ledger = {
        "version": 1,
        "members": [usage(name="m", calls={"calls": 0, "cache_replays": 1, "errored": 4})],
    }
    store = {SPAWNS_KEY: {"version": 1, "entries": entries}, RESULT_KEY: result, LEDGER_KEY: ledger}
    evidence = read_evidence(store)
    assert evidence.children == (
        Child(
            member="m",
            requested=("worker-a", "worker-b"),
            seq=1,
            spawned=1.0,
            ended=4.0,
            status="errored",
            deleted=6.0,
            delete_reason="parent_ended",
            started=True,
            turns=1,
            task="first task",
        ),
        Child(
            member="n",
            requested=("worker-c",),
            seq=8,
            spawned=8.0,
            ended=None,
            status=None,
            deleted=None,
            delete_reason=None,
            started=False,
            turns=0,
            task=None,
        ),
    )
    assert [(c.ran, c.live) for c in evidence.children] == [(True, False), (False, True)]


def test_children_are_the_leads_depth_1_spawns_only() -> None:
    entries = [
        spawn(seq=1, member="mine"),
        spawn(seq=2, member="deep", depth=2),
        spawn(seq=3, member="theirs", parent="other"),
        spawn(seq=4, op="refused", member=None, reason="limit"),
        spawn(seq=5, op="end", member="ghost", status="submitted"),  # an end with no spawn
        spawn(seq=6, op="end", member="deep", depth=2, status="submitted"),
        spawn(seq=7, op="end", member="mine", parent="other", status="submitted"),
        spawn(seq=8, op="delete", member="mine", depth=2, reason="cancelled"),
        spawn(seq=9, op="end", member="mine", status="errored", time=9.5),
    ]
    store = {RESULT_KEY: roster(LEAD), SPAWNS_KEY: {"version": 1, "entries": entries}}
    [child] = read_evidence(store).children
    assert (child.member, child.ended, child.status, child.deleted, child.started) == (
        "mine",
        9.5,
        "errored",
        None,
        False,
    )
    assert (child.turns, child.live) == (0, False)


@pytest.mark.parametrize(
    ("started", "turns", "ran"),
    [(True, 1, True), (True, 0, False), (False, 1, False), (True, 5, True)],
)
def test_a_child_ran_when_it_started_and_made_a_call(started: bool, turns: int, ran: bool) -> None:
    child = Child(
        member="m",
        requested=("m",),
        seq=1,
        spawned=0.0,
        ended=None,
        status=None,
        deleted=None,
        delete_reason=None,
        started=started,
        turns=turns,
        task=None,
    )
    assert child.ran is ran


@pytest.mark.parametrize(
    ("ended", "deleted", "live"),
    [(None, None, True), (1.0, None, False), (None, 2.0, False), (0.0, 0.0, False)],
)
def test_a_child_is_live_until_it_ends_or_is_deleted(
    ended: float | None, deleted: float | None, live: bool
) -> None:
    child = Child(
        member="m",
        requested=("m",),
        seq=1,
        spawned=0.0,
        ended=ended,
        status=None,
        deleted=deleted,
        delete_reason=None,
        started=True,
        turns=1,
        task=None,
    )
    assert child.live is live


def lead_evidence(lead_end: float | None, *entries: dict[str, Any]) -> Any:
    result = {"version": 1, "members": [member(name=LEAD, depth=0, parent=None, time=lead_end)]}
    return read_evidence(
        {RESULT_KEY: result, MESSAGES_KEY: {"version": 1, "messages": list(entries)}}
    )


@pytest.mark.parametrize(
    ("lead_end", "fields", "reached", "late"),
    [
        (None, {"time": 3, "seen": {"time": 99, "via": "read"}}, True, False),
        (None, {"time": 3, "seen": None}, False, False),
        (5.0, {"time": 3, "seen": {"time": 5, "via": "read"}}, True, False),  # at the end
        (5.0, {"time": 3, "seen": {"time": 5.25, "via": "read"}}, False, True),
        (5.0, {"time": 4.75, "seen": None}, False, False),
        (5.0, {"time": 5, "seen": None}, False, True),  # sent at the end
        (5.0, {"time": 6, "seen": None}, False, True),
        (5.0, {"time": 6, "seen": {"time": 4, "via": "read"}}, True, False),
        # to someone else: never the lead's
        (5.0, {"recipient": "other", "time": 3, "seen": {"time": 4, "via": "read"}}, False, False),
        (5.0, {"recipient": "other", "time": 6, "seen": None}, False, False),
        (5.0, {"recipient": "other", "time": 6, "seen": {"time": 7, "via": "r"}}, False, False),
    ],
)
def test_a_message_reached_the_lead_when_seen_by_its_end_and_late_after(
    lead_end: float | None, fields: dict[str, Any], reached: bool, late: bool
) -> None:
    evidence = lead_evidence(lead_end, message(**fields))
    [entry] = evidence.messages
    assert (evidence.reached_lead(entry), evidence.late(entry)) == (reached, late)


def test_replies_and_receipts_are_the_leads_from_and_about_a_child() -> None:
    evidence = lead_evidence(
        None,
        message(seq=1, sender="a", text="1"),
        message(seq=2, sender="a", relationship="sibling", text="2"),
        message(seq=3, sender="a", recipient="b", text="3"),
        message(seq=4, sender="b", text="4"),
        message(seq=5, sender="a", kind="receipt", about="a", text="5"),
        message(seq=6, sender="b", kind="receipt", about="a", text="6"),
        message(seq=7, sender="a", kind="receipt", about="b", text="7"),
        message(seq=8, sender="a", kind="receipt", about="a", recipient="b", text="8"),
        message(seq=9, sender="a", text="9"),
        message(seq=10, sender="a", relationship="child ", text="10"),
    )
    assert [m.text for m in evidence.replies("a")] == ["1", "9"]
    assert [m.text for m in evidence.replies("b")] == ["4"]
    assert [m.text for m in evidence.receipts("a")] == ["5", "6"]
    assert [m.text for m in evidence.receipts("b")] == ["7"]
    assert [evidence.is_reply(m) for m in evidence.messages] == [
        True, False, False, True, False, False, False, False, True, False,
    ]  # fmt: skip


def test_the_evidence_looks_members_usage_and_reports_up_by_name() -> None:
    run = Run()
    run.spawn("worker-a")
    store = run.store()
    evidence = read_evidence(store)
    assert evidence.member("worker-a") == MemberRun(
        name="worker-a",
        state="running",
        status=None,
        started=0.5,
        ended=None,
        parent=LEAD,
        depth=1,
    )
    assert evidence.member("nobody") is None
    assert evidence.usage_of("worker-a") == MemberUsage(
        name="worker-a", tokens=400, cost=0.004, calls=2, cache_replays=0, errored=0
    )
    assert evidence.usage_of("nobody") is None
    assert [r.key for r in evidence.reports] == list(STORE_KEYS)
    assert [evidence.report(k).key for k in STORE_KEYS] == list(STORE_KEYS)
    assert evidence.report(READS_KEY).present is True
    assert evidence.report(METRICS_KEY).present is False
    assert (evidence.wall_clock, evidence.artifact) == (None, None)
    assert evidence.reads is not None and evidence.reads.provider == "bwrap"
    run.wall_clock = 42
    run.write("- a: 1\n", path="out.md")
    evidence = read_evidence(run.store())
    assert (evidence.wall_clock, evidence.artifact) == (
        42.0,
        Artifact(path="out.md", text="- a: 1\n"),
    )
    assert [e.seq for e in evidence.spawns] == [1]
    assert [u.name for u in evidence.usage] == [LEAD, "worker-a"]


# -- the integers of replies and bullets (_numbers) -------------------------------------------


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        # the marks around a word that are trimmed, and letters that are not
        ("_16_", 16),
        ("<16>", 16),
        ("{16}", 16),
        ("[16]", 16),
        ("'16'", 16),
        ("16!", 16),
        ("16?", 16),
        ("16;", 16),
        ("16,", 16),
        ("(`**16**`).", 16),
        ("X16", None),
        ("16X", None),
        ("16(", None),
        (".16", None),
        ("16)x", None),
        # signs
        ("+16", 16),
        ("-16", -16),
        ("\u221216", -16),
        ("--16", None),
        ("+-16", None),
        ("16 -", 16),  # a sign alone is no number
        ("-0", 0),
        # cuts: whitespace, ':' and '='
        ("a:16", 16),
        ("x=16", 16),
        ("16:17", 17),
        ("16=17", 17),
        ("16\t17", 17),
        ("16\n\n17 ", 17),
        ("1 2 3", 3),
        # thousands
        ("1,234,567", 1234567),
        ("1\u00a0234\u00a0567", 1234567),
        ("1\u202f234", 1234),
        ("1\u2009234", 1234),
        ("999,999", 999999),
        ("1234,567", None),  # a first group of four
        ("1,23", None),
        ("1,234,56", None),
        (",123", None),
        ("1,234\u00a0567", None),  # two separators in one number
        ("1\u00a02345", 2345),  # not three digits after the space: two numbers
        ("12\u00a034", 34),
        ("\u00a0474", 474),
        ("-\u00a0123", 123),  # no digit before the space: a sign alone, then 123
        ("12 \u00a0345", 345),
        ("1\u00a0\u00a0234", 234),
        # private-use characters are neither spaces nor separators
        ("59\ue000474", None),
        ("59\ue001474", None),
        ("59\ue002474", None),
        ("16\ue000", None),
    ],
)
def test_the_integer_of_a_reply_at_its_boundaries(reply: str, value: int | None) -> None:
    assert reply_integer(reply) == value


def test_numbers_keeps_every_number_in_order_and_leaves_names_out() -> None:
    assert numbers("") == []
    assert numbers("done, v2 and 16th") == []
    assert numbers("16.5 v2 done") == [None]
    assert numbers("1 -2 +3 4,000 5.5 6") == [1, -2, 3, 4000, None, 6]
    assert numbers("x\ue00012") == []  # a letter: a name


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("0", 0),
        ("16", 16),
        ("016", 16),
        ("+16", 16),
        ("\u221216", -16),
        ("1,234", 1234),
        ("1\u202f234", 1234),
        ("\t 1234 \n", 1234),
        ("+", None),
        ("-", None),
        ("X5", None),
        ("5X", None),
        ("**16**", None),
        ("(16)", None),
        ("16,", None),
        ("1234,567", None),
        ("- 16", None),
        ("16 17", None),
        ("1\u00a02345", None),
        ("1X234", None),  # only a comma and the three spaces separate thousands
        ("1.234", None),
        ("1_234", None),
    ],
)
def test_an_artifacts_answer_is_one_integer_at_its_boundaries(
    answer: str, value: int | None
) -> None:
    assert answer_integer(answer) == value


# -- the artifact's bullets and the answer rules (_answers) -----------------------------------


@pytest.mark.parametrize(
    ("artifact", "bullets"),
    [
        ("", {}),
        ("- a: 1", {"a": ["1"]}),
        ("Answers:\n\n- a: 1\n", {"a": ["1"]}),  # lines that are no bullet are passed over
        ("* a: 1", {"a": ["1"]}),
        ("\ufeff* a: 1", {"a": ["1"]}),
        ("\ufeff\ufeff- a: 1", {}),  # one mark is dropped, not two
        ("- a: 1\n\ufeff- b: 2", {"a": ["1"]}),  # only at the start of the text
        ("  - a: 1  \n", {"a": ["1"]}),
        ("- a:1", {"a": ["1"]}),
        ("- a :  1 ", {"a": ["1"]}),
        ("- a:", {"a": [""]}),
        ("- a: b: c", {"a": ["b: c"]}),
        ("- : 5\n-  : 6", {}),  # no key
        ("-- a: 1", {}),
        ("+ a: 1", {}),
        ("x - a: 1", {}),
        ("- a 1", {}),
        ("-a: 1", {}),
        ("- a: 1\r\n- a: 2\r\n- b: 3\n- a: 1", {"a": ["1", "2", "1"], "b": ["3"]}),
        ("- shards/a: 1\n- a: 2", {"shards/a": ["1"], "a": ["2"]}),
    ],
)
def test_the_bullets_of_an_artifact(artifact: str, bullets: dict[str, list[str]]) -> None:
    assert artifact_bullets(artifact) == bullets


TWO = Fixture(
    name="two",
    artifact="out.md",
    shards=(
        Shard(file="a.jsonl", worker="worker-a", question="How many?", expected=16),
        Shard(file="b.jsonl", worker="worker-b", question="How much?", expected=1234),
    ),
    task="",
    directory=Path("two"),
)


def two_run(artifact: str | None, *replies: tuple[str, str]) -> Any:
    """The evidence of a run of ``TWO``: both children spawned, ``replies`` (sender, text)
    sent and seen, the artifact written (``None``: the file was not)."""
    run = Run(auto_read=False)
    run.spawn("worker-a")
    run.spawn("worker-b")
    for sender, reply in replies:
        run.reply(sender, reply)
    run.write(artifact, path="out.md")
    return read_evidence(run.store())


def rule_result(passed: bool, failures: list[RuleFailure], details: dict[str, Any]) -> RuleResult:
    return RuleResult(passed=passed, failures=tuple(failures), details=details)


def test_coverage_without_an_artifact_fails_every_shard() -> None:
    stored = read_evidence({})
    unwritten = two_run(None)
    details = {
        "artifact": None,
        "missing_shards": ["a.jsonl", "b.jsonl"],
        "wrong_answers": [],
        "unknown_bullets": [],
    }
    assert coverage(TWO, stored) == rule_result(
        False, [RuleFailure(reason="no artifact was stored")], details
    )
    assert coverage(TWO, unwritten) == rule_result(
        False, [RuleFailure(reason="the artifact out.md was not written")], details
    )


def test_coverage_passes_every_right_bullet_and_lists_the_unknown_ones() -> None:
    evidence = two_run("- b.jsonl: 1,234\n- a.jsonl: 16\n- a.jsonl: 016\n- z: 1\n- c.jsonl: 3\n")
    assert coverage(TWO, evidence) == rule_result(
        True,
        [],
        {
            "artifact": "out.md",
            "missing_shards": [],
            "wrong_answers": [],
            "unknown_bullets": ["c.jsonl", "z"],
        },
    )


def test_coverage_fails_a_missing_shard_and_a_wrong_bullet_beside_a_right_one() -> None:
    evidence = two_run("- a.jsonl: 16\n- a.jsonl: 17\n- shards/b.jsonl: 1234\n")
    assert coverage(TWO, evidence) == rule_result(
        False,
        [
            RuleFailure(reason="expected '16', the artifact says '16', '17'", shard="a.jsonl"),
            RuleFailure(reason="no bullet in the artifact", shard="b.jsonl"),
        ],
        {
            "artifact": "out.md",
            "missing_shards": ["b.jsonl"],
            "wrong_answers": [{"shard": "a.jsonl", "expected": "16", "found": ["16", "17"]}],
            "unknown_bullets": ["shards/b.jsonl"],
        },
    )
    evidence = two_run("- a.jsonl: 16 \n- b.jsonl: 1 234\n- b.jsonl:\n")
    assert coverage(TWO, evidence).failures == (
        RuleFailure(reason="expected '1234', the artifact says '1 234', ''", shard="b.jsonl"),
    )


def test_provenance_sources_each_bullet_from_the_assigned_childs_last_reply() -> None:
    evidence = two_run(
        "- a.jsonl: 16\n- a.jsonl: +16\n- b.jsonl: 1234\n",
        ("worker-a", "15"),
        ("worker-a", "  It is 16.\n"),
        ("worker-b", "1,234"),
    )
    assert (
        provenance(TWO, evidence)
        == rule_result(
            True,
            [],
            {
                "sourced": {"a.jsonl": "worker-a", "b.jsonl": "worker-b"},
                "unsourced": [],
                "mismatched": [],
                "not_in_artifact": [],
                "written_in_call": None,
                "order": "not checked: the reads record carries no model-call stamps",  # an old log: no stamps
            },
        )
    )


def test_provenance_leaves_a_shard_without_a_bullet_to_coverage() -> None:
    for evidence in (read_evidence({}), two_run(None), two_run("- c.jsonl: 1\n")):
        assert provenance(TWO, evidence) == rule_result(
            True,
            [],
            {
                "sourced": {},
                "unsourced": [],
                "mismatched": [],
                "not_in_artifact": ["a.jsonl", "b.jsonl"],
                "written_in_call": None,
                "order": "not checked: no watched reads record"
                if evidence.reads is None
                else "not checked: the reads record carries no model-call stamps",
            },
        )


def test_provenance_fails_a_bullet_no_assigned_childs_reply_reached_the_lead() -> None:
    run = Run(auto_read=False)
    run.spawn("worker-a")
    run.spawn("helper", member="worker-b")  # its member name is the worker name, not its request
    run.reply("worker-a", "16", seen=None)  # never seen
    run.reply("worker-a", "16", relationship="sibling")
    run.reply("worker-a", "16", recipient="someone")
    run.reply("worker-b", "1234")
    run.reply("stranger", "16")
    run.write("- a.jsonl: 16\n- b.jsonl: 1234\n", path="out.md")
    result = provenance(TWO, read_evidence(run.store()))
    assert (
        result
        == rule_result(
            False,
            [
                RuleFailure(
                    reason="no reply from a child named worker-a reached the lead, yet the artifact "
                    "has an answer",
                    shard="a.jsonl",
                ),
                RuleFailure(
                    reason="no reply from a child named worker-b reached the lead, yet the artifact "
                    "has an answer",
                    shard="b.jsonl",
                ),
            ],
            {
                "sourced": {},
                "unsourced": ["a.jsonl", "b.jsonl"],
                "mismatched": [],
                "not_in_artifact": [],
                "written_in_call": None,
                "order": "not checked: the reads record carries no model-call stamps",  # an old log: no stamps
            },
        )
    )
    # a reply seen after the lead ended did not reach it
    run = Run(auto_read=False)
    run.spawn("worker-a")
    run.reply("worker-a", "16", seen=99.0)
    run.write("- a.jsonl: 16\n", path="out.md")
    run.finish()
    result = provenance(TWO, read_evidence(run.store()))
    assert result.details["unsourced"] == ["a.jsonl"]


def test_provenance_fails_a_bullet_that_is_not_the_childs_integer() -> None:
    run = Run(auto_read=False)
    run.spawn("worker-a", member="worker-a~1")
    run.spawn("worker-b")
    run.reply("worker-a~1", " 16.5 ")
    run.reply("worker-b", "1234")
    run.write("- a.jsonl: 16\n- b.jsonl: 1234\n- b.jsonl: many\n", path="out.md")
    result = provenance(TWO, read_evidence(run.store()))
    assert (
        result
        == rule_result(
            False,
            [
                RuleFailure(
                    reason="the child replied '16.5' (its last number is not an integer), the "
                    "artifact says '16'",
                    shard="a.jsonl",
                    member="worker-a~1",
                ),
                RuleFailure(
                    reason="the child replied '1234', the artifact says '1234', 'many'",
                    shard="b.jsonl",
                    member="worker-b",
                ),
            ],
            {
                "sourced": {},
                "unsourced": [],
                "mismatched": [
                    {
                        "shard": "a.jsonl",
                        "member": "worker-a~1",
                        "reply": "16.5",
                        "reply_value": None,
                        "artifact": ["16"],
                        "artifact_values": [16],
                    },
                    {
                        "shard": "b.jsonl",
                        "member": "worker-b",
                        "reply": "1234",
                        "reply_value": 1234,
                        "artifact": ["1234", "many"],
                        "artifact_values": [1234, None],
                    },
                ],
                "not_in_artifact": [],
                "written_in_call": None,
                "order": "not checked: the reads record carries no model-call stamps",  # an old log: no stamps
            },
        )
    )
    evidence = two_run("- a.jsonl: 16\n- b.jsonl: 17\n", ("worker-a", "done"), ("worker-b", "16"))
    assert [f.reason for f in provenance(TWO, evidence).failures] == [
        "the child replied 'done' (no number in it), the artifact says '16'",
        "the child replied '16', the artifact says '17'",
    ]


def test_provenance_judges_the_shards_after_one_without_a_bullet_or_a_reply() -> None:
    evidence = two_run("- b.jsonl: 1234\n", ("worker-b", "1234"))
    assert (
        provenance(TWO, evidence)
        == rule_result(
            True,
            [],
            {
                "sourced": {"b.jsonl": "worker-b"},
                "unsourced": [],
                "mismatched": [],
                "not_in_artifact": ["a.jsonl"],
                "written_in_call": None,
                "order": "not checked: the reads record carries no model-call stamps",  # an old log: no stamps
            },
        )
    )
    evidence = two_run("- a.jsonl: 16\n- b.jsonl: 1234\n", ("worker-b", "1234"))
    result = provenance(TWO, evidence)
    assert (result.passed, result.details["sourced"], result.details["unsourced"]) == (
        False,
        {"b.jsonl": "worker-b"},
        ["a.jsonl"],
    )


# -- the digests a score records and the seal (_digests) --------------------------------------

NULL_DIGEST = "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"
"""The SHA-256 of ``null``."""


def sha256(canonical: str) -> str:
    return hashlib.sha256(canonical.encode()).hexdigest()


def test_the_manifest_digest_is_of_its_name_artifact_and_shards_canonical() -> None:
    canonical = (
        '{"artifact":"out.md","name":"two","shards":['
        '{"expected":16,"file":"a.jsonl","question":"How many?","worker":"worker-a"},'
        '{"expected":1234,"file":"b.jsonl","question":"How much?","worker":"worker-b"}]}'
    )
    assert manifest_digest(TWO) == sha256(canonical)
    assert manifest_digest(TWO) == (
        "d01d24befd704aeb925fe9cdb882853dee3e1e432e0b31980cb5f5ad7e76638c"
    )


def test_the_records_digests_are_of_the_seven_records_absent_ones_null() -> None:
    spawns = {"version": 1, "entries": []}
    store = {SPAWNS_KEY: spawns, "lead:notes": "not judged"}
    assert sha256("null") == NULL_DIGEST
    assert records_digests(store) == {
        "records": sha256(
            '{"inspect_swarm:ledger":null,"inspect_swarm:messages":null,'
            '"inspect_swarm:metrics":null,"inspect_swarm:reads":null,'
            '"inspect_swarm:result":null,"inspect_swarm:spawns":{"entries":[],"version":1},'
            '"swarm_fanout:artifact":null}'
        ),
        "by_key": {
            key: sha256('{"entries":[],"version":1}') if key == SPAWNS_KEY else NULL_DIGEST
            for key in STORE_KEYS
        },
    }
    assert list(records_digests(store)["by_key"]) == list(STORE_KEYS)
    assert records_digests(store)["records"] == (
        "158e6b79f9cff137947c27d81b982fd054c2767532586c514e932dc6454fc5cd"
    )


def sealed(store: dict[str, Any]) -> dict[str, str]:
    """The seal the kernel would keep for ``store``: every record but the artifact."""
    return {
        k: sha256(json.dumps(v, sort_keys=True, separators=(",", ":")))
        for k, v in store.items()
        if k != ARTIFACT_KEY
    }


def test_records_that_match_the_seal_have_no_problem() -> None:
    store = Run().store()
    store[ARTIFACT_KEY] = {"path": "combined-index.md", "text": "- a: 1\n"}
    assert seal_problem(store, sealed(store)) is None
    # the artifact is the scorer's own record: never sealed, never checked
    assert seal_problem(store, sealed(store) | {ARTIFACT_KEY: "0" * 64}) is None
    # a record neither written nor sealed, or stored as null without a seal, is fine
    assert METRICS_KEY not in store
    assert seal_problem(store | {METRICS_KEY: None}, sealed(store)) is None
    # a record the kernel sealed as null and the store holds as null
    seal = sealed(store) | {METRICS_KEY: NULL_DIGEST}
    assert seal_problem(store | {METRICS_KEY: None}, seal) is None


def test_a_store_with_no_seal_is_no_swarms() -> None:
    assert seal_problem({}, None) == (
        "no swarm wrote this sample's records in this eval (the kernel sealed none): a "
        "solver that is not a swarm, or records written by something else"
    )
    assert seal_problem({}, {}) is None


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda store, seal: store.update({METRICS_KEY: {"version": 1, "wall_clock": 1}}),
            "the record inspect_swarm:metrics was not written by the swarm's kernel",
        ),
        (
            lambda store, seal: store.pop(MESSAGES_KEY),
            "the record inspect_swarm:messages was changed after the swarm's kernel wrote it",
        ),
        (
            lambda store, seal: seal.update({METRICS_KEY: NULL_DIGEST}),
            "the record inspect_swarm:metrics was changed after the swarm's kernel wrote it",
        ),
        (
            lambda store, seal: store[READS_KEY].update(provider="local"),
            "the record inspect_swarm:reads was changed after the swarm's kernel wrote it",
        ),
        (
            lambda store, seal: store.update({READS_KEY: None}),
            "the record inspect_swarm:reads was changed after the swarm's kernel wrote it",
        ),
        (
            # the first record in STORE_KEYS order is the one named
            lambda store, seal: (store.pop(READS_KEY), store[SPAWNS_KEY].update(version=2)),
            "the record inspect_swarm:spawns was changed after the swarm's kernel wrote it",
        ),
        (
            lambda store, seal: (seal.pop(LEDGER_KEY), store[RESULT_KEY].update(x=1)),
            "the record inspect_swarm:result was changed after the swarm's kernel wrote it",
        ),
        (
            lambda store, seal: seal.pop(LEDGER_KEY),
            "the record inspect_swarm:ledger was not written by the swarm's kernel",
        ),
    ],
)
def test_a_record_that_is_not_the_kernels_is_named(change: Any, problem: str) -> None:
    store = Run().store()
    store[ARTIFACT_KEY] = {"path": "combined-index.md", "text": None}
    seal = sealed(store)
    change(store, seal)
    assert seal_problem(store, seal) == problem


def earlier(*events: Any) -> Any:
    """``earlier_digests()`` with ``events`` as the sample's transcript (in a context of its
    own, so no other test sees them)."""

    def run() -> Any:
        init_transcript(Transcript(events=list(events)))
        return earlier_digests()

    return contextvars.copy_context().run(run)


def score_event(metadata: dict[str, Any] | None, *, intermediate: bool = False) -> Any:

    return ScoreEvent(score=Score(value=1, metadata=metadata), intermediate=intermediate)


def test_the_earlier_digests_are_the_last_final_scores() -> None:

    first = {"records": "r1", "fixture": "f1"}
    second = {"records": "r2", "by_key": {}}
    assert earlier() is None
    assert earlier(score_event({"digests": first})) == first
    assert earlier(score_event({"digests": first}), score_event({"digests": second})) == second
    # events that are no final score are passed over, not the end of the search
    assert (
        earlier(
            InfoEvent(data="start"),
            score_event({"digests": first}, intermediate=True),
            score_event({"digests": second}),
        )
        == second
    )
    assert (
        earlier(
            score_event({"digests": first}),
            score_event({"digests": second}, intermediate=True),  # not a final score
            InfoEvent(data={"digests": second}),
            score_event(None),
            score_event({"other": 1}),
            score_event({"digests": {"records": 7}}),  # digests whose records are no digest
            score_event({"digests": "r3"}),
        )
        == first
    )


# -- the fixture loader (_fixture) ------------------------------------------------------------

TINY_TASK = "Write out.md, one bullet per shard.\n- shards/a.jsonl: How many?\n  - shards/b.csv: How much?  \n"


def tiny_manifest() -> dict[str, Any]:
    return {
        "name": "tiny",
        "artifact": "out.md",
        "shards": [
            {"file": "a.jsonl", "worker": "worker-a", "question": "How many?", "expected": 3},
            {"file": "b.csv", "worker": "worker-b", "question": "How much?", "expected": -2},
        ],
    }


def tiny(
    tmp_path: Path,
    manifest: Any = None,
    *,
    raw: bytes | None = None,
    task: str | bytes | None = TINY_TASK,
    files: tuple[str, ...] = ("a.jsonl", "b.csv"),
) -> Path:
    """A fixture directory of the shape, in ``tmp_path``: ``manifest`` (or ``raw`` bytes) as its
    ``fixture.json``, ``task`` as its ``task.txt`` (``None``: none), ``files`` in ``shards/``."""
    directory = tmp_path / "tiny"
    (directory / "shards").mkdir(parents=True)
    for file in files:
        (directory / "shards" / file).write_text("{}\n")
    text = raw if raw is not None else json.dumps(tiny_manifest() if manifest is None else manifest)
    (directory / "fixture.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    if isinstance(task, str):
        (directory / "task.txt").write_text(task)
    elif isinstance(task, bytes):
        (directory / "task.txt").write_bytes(task)
    return directory


def refused(directory: Path | str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_fixture(directory)
    return str(caught.value)


def test_a_fixture_of_the_shape_loads_whole(tmp_path: Path) -> None:
    directory = tiny(tmp_path)
    fixture = load_fixture(str(directory))
    assert fixture == Fixture(
        name="tiny",
        artifact="out.md",
        shards=(
            Shard(file="a.jsonl", worker="worker-a", question="How many?", expected=3),
            Shard(file="b.csv", worker="worker-b", question="How much?", expected=-2),
        ),
        task=TINY_TASK,
        directory=directory.resolve(),
    )
    assert fixture.shards_dir == directory.resolve() / "shards"
    assert fixture.shard_path(fixture.shards[1]) == directory.resolve() / "shards" / "b.csv"


def test_a_string_that_is_no_shipped_name_is_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tiny(tmp_path)
    monkeypatch.chdir(tmp_path)
    fixture = load_fixture("tiny")
    assert (fixture.name, fixture.directory) == ("tiny", directory.resolve())


def test_the_shipped_fixtures_are_found_by_name() -> None:
    assert fixture_names() == ("csv-metrics", "json-events")
    fixture = load_fixture("csv-metrics")
    assert fixture.directory == FIXTURES_DIR / "csv-metrics"
    assert FIXTURES_DIR == Path(fixture_module.__file__).resolve().parent / "fixtures"
    assert (fixture.name, fixture.artifact, len(fixture.shards)) == (
        "csv-metrics",
        "combined-index.md",
        8,
    )


def test_a_path_that_is_no_fixture_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    assert refused(tmp_path / "empty") == (
        f"{tmp_path / 'empty' / 'fixture.json'}: missing; a fixture directory holds "
        "fixture.json, task.txt and shards/"
    )
    for path in (tmp_path / "file", tmp_path / "nowhere", str(tmp_path / "nowhere")):
        assert refused(path) == (
            f"fixture '{path}': neither a shipped fixture (csv-metrics, json-events) nor a "
            "directory"
        )


def _with(change: Any) -> dict[str, Any]:
    manifest = tiny_manifest()
    change(manifest)
    return manifest


def _shard(index: int, **fields: Any) -> dict[str, Any]:
    return _with(lambda m: m["shards"][index].update(fields))


MANIFEST_REFUSALS: dict[str, tuple[Any, str]] = {
    "top-level-list": (
        [1],
        "(top level): expected an object with the keys name, artifact, shards, got [1]",
    ),
    "no-name": (_with(lambda m: m.pop("name")), "name: missing"),
    "no-shards": (_with(lambda m: m.pop("shards")), "shards: missing"),
    "extra-key": (
        _with(lambda m: m.update(expected=1)),
        "expected: unknown key; expected only name, artifact, shards",
    ),
    "name-empty": (_with(lambda m: m.update(name="")), "name: expected a non-empty string, got ''"),
    "name-blank": (
        _with(lambda m: m.update(name=" \t")),
        "name: expected a non-empty string, got ' \\t'",
    ),
    "name-none": (
        _with(lambda m: m.update(name=None)),
        "name: expected a non-empty string, got None",
    ),
    "name-newline": (
        _with(lambda m: m.update(name="a\nb")),
        "name: expected a single line, got 'a\\nb'",
    ),
    "name-return": (
        _with(lambda m: m.update(name="a\rb")),
        "name: expected a single line, got 'a\\rb'",
    ),
    "artifact-folder": (
        _with(lambda m: m.update(artifact="a/out.md")),
        "artifact: expected a bare file name (no folders), got 'a/out.md'",
    ),
    "artifact-backslash": (
        _with(lambda m: m.update(artifact="a\\out.md")),
        "artifact: expected a bare file name (no folders), got 'a\\\\out.md'",
    ),
    "artifact-dot": (
        _with(lambda m: m.update(artifact=".")),
        "artifact: expected a bare file name (no folders), got '.'",
    ),
    "artifact-dotdot": (
        _with(lambda m: m.update(artifact="..")),
        "artifact: expected a bare file name (no folders), got '..'",
    ),
    "shards-empty": (
        _with(lambda m: m.update(shards=[])),
        "shards: expected a non-empty list of shards, got []",
    ),
    "shards-object": (
        _with(lambda m: m.update(shards={"a": 1})),
        "shards: expected a non-empty list of shards, got {'a': 1}",
    ),
    "shard-string": (
        _with(lambda m: m["shards"].__setitem__(1, "b.csv")),
        "shards[1]: expected an object with the keys file, worker, question, expected, got 'b.csv'",
    ),
    "shard-no-question": (
        _with(lambda m: m["shards"][1].pop("question")),
        "shards[1].question: missing",
    ),
    "shard-no-file": (_with(lambda m: m["shards"][0].pop("file")), "shards[0].file: missing"),
    "shard-extra": (
        _shard(0, extra=1),
        "shards[0].extra: unknown key; expected only file, worker, question, expected",
    ),
    "file-empty": (_shard(0, file=""), "shards[0].file: expected a non-empty string, got ''"),
    "file-folder": (
        _shard(1, file="shards/b.csv"),
        "shards[1].file: expected a bare file name (no folders), got 'shards/b.csv'",
    ),
    "file-absent": (
        _shard(1, file="c.csv", worker="worker-c"),
        "shards[1].file: no such file shards/c.csv next to the manifest",
    ),
    "worker-number": (_shard(0, worker=5), "shards[0].worker: expected a non-empty string, got 5"),
    "worker-misnamed": (
        _shard(1, worker="worker-b.csv"),
        "shards[1].worker: expected 'worker-b' (worker-<file stem>), got 'worker-b.csv'",
    ),
    "question-two-lines": (
        _shard(0, question="How\rmany?"),
        "shards[0].question: expected a single line, got 'How\\rmany?'",
    ),
    "expected-bool": (
        _shard(1, expected=False),
        "shards[1].expected: expected an integer, got False",
    ),
    "expected-float": (_shard(1, expected=3.0), "shards[1].expected: expected an integer, got 3.0"),
    "expected-none": (
        _shard(0, expected=None),
        "shards[0].expected: expected an integer, got None",
    ),
    "expected-string": (
        _shard(0, expected="3"),
        "shards[0].expected: expected an integer, got '3'",
    ),
    "file-twice": (
        _with(lambda m: m["shards"].append(dict(m["shards"][0]))),
        "shards[2].file: 'a.jsonl' is also shards[0].file; every shard needs its own file",
    ),
    "worker-twice": (
        _with(
            lambda m: m["shards"].append(
                {"file": "a.csv", "worker": "worker-a", "question": "How many?", "expected": 1}
            )
        ),
        "shards[2].worker: 'worker-a' is also shards[0].worker; every shard needs its own worker",
    ),
}


@pytest.mark.parametrize("case", sorted(MANIFEST_REFUSALS))
def test_a_manifest_out_of_shape_is_refused_naming_the_field(case: str, tmp_path: Path) -> None:
    manifest, message = MANIFEST_REFUSALS[case]
    directory = tiny(tmp_path, manifest, files=("a.jsonl", "b.csv", "a.csv"))
    assert refused(directory) == f"{directory.resolve() / 'fixture.json'}: {message}"


def test_a_fixture_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    question = "Combien d'\u00e9v\u00e9nements ?"
    manifest = _shard(0, question=question)
    task = TINY_TASK.replace("How many?", question)
    directory = tiny(
        tmp_path, raw=json.dumps(manifest, ensure_ascii=False).encode(), task=task.encode()
    )
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # an ASCII locale: its default encoding fails here
    try:
        fixture = load_fixture(directory)
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert (fixture.shards[0].question, fixture.task) == (question, task)


def test_a_shard_file_must_be_a_file(tmp_path: Path) -> None:
    directory = tiny(tmp_path, files=("a.jsonl",))
    (directory / "shards" / "b.csv").mkdir()
    assert refused(directory) == (
        f"{directory.resolve() / 'fixture.json'}: shards[1].file: no such file shards/b.csv next "
        "to the manifest"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        (
            b'{"name": "a", "name": "b"}',
            "not valid JSON: the key 'name' appears twice in one object",
        ),
        (
            b'{"shards": [{"file": 1, "file": 2}]}',
            "not valid JSON: the key 'file' appears twice in one object",
        ),
        (
            b"\xff{}",
            "not valid JSON: 'utf-8' codec can't decode byte 0xff in position 0: invalid start "
            "byte",
        ),
    ],
)
def test_a_manifest_that_is_not_json_is_refused(raw: bytes, message: str, tmp_path: Path) -> None:
    directory = tiny(tmp_path, raw=raw)
    assert refused(directory) == f"{directory.resolve() / 'fixture.json'}: {message}"


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (None, "missing; a fixture's task.txt is the lead's prompt"),
        (
            b"\xfe out.md",
            "not UTF-8 text: 'utf-8' codec can't decode byte 0xfe in position 0: invalid start "
            "byte",
        ),
        (
            "out.md\n- shards/a.jsonl: How many?\n",
            "shards[1]: the prompt has no line '- shards/b.csv: How much?'; it must list every "
            "shard with its question as in the manifest",
        ),
        (
            "out.md\n-  shards/a.jsonl: How many?\n- shards/b.csv: How much?\n",
            "shards[0]: the prompt has no line '- shards/a.jsonl: How many?'; it must list every "
            "shard with its question as in the manifest",
        ),
        (
            "out.md\n- shards/a.jsonl: How many? - shards/b.csv: How much?\n",
            "shards[0]: the prompt has no line '- shards/a.jsonl: How many?'; it must list every "
            "shard with its question as in the manifest",
        ),
        (
            "- shards/a.jsonl: How many?\n- shards/b.csv: How much?\nWrite out.txt.",
            "artifact: the prompt never names 'out.md'",
        ),
    ],
)
def test_a_task_that_does_not_list_the_manifest_is_refused(
    task: str | bytes | None, message: str, tmp_path: Path
) -> None:
    directory = tiny(tmp_path, task=task)
    assert refused(directory) == f"{directory.resolve() / 'task.txt'}: {message}"
