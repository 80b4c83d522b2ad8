"""Value tests of the fan-out rubric's record readers, pinned at their boundaries: the strict field
readers (``_fields``), the parsers of the store records (``_parse``, ``_readlog``) and the typed
entries (``_records``).  Model-free: every test calls the code on hand-built records, so a
mutation run can afford them once per mutant."""

from __future__ import annotations

import math
from typing import Any

import pytest
from fanout_records import LEAD

from swarm.plugins.scorers.fanout import (
    ARTIFACT_KEY,
    MESSAGES_KEY,
    SPAWNS_KEY,
    STORE_KEYS,
    Artifact,
    MemberRun,
    MemberUsage,
    MessageEntry,
    RecordReport,
    Seen,
    SpawnEntry,
)
from swarm.plugins.scorers.fanout._fields import (
    Malformed,
    mapping,
    number,
    optional_number,
    optional_text,
    text,
    whole,
)
from swarm.plugins.scorers.fanout._parse import (
    PROBLEMS_KEPT,
    parse_artifact,
    parse_ledger,
    parse_messages,
    parse_metrics,
    parse_result,
    parse_spawns,
)
from swarm.plugins.scorers.fanout._readlog import FileRead, Reads, parse_reads

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


# -- the records' keys and the typed entries (_records) ---------------------------------------


def test_the_store_keys_are_the_seven_records_in_order() -> None:
    assert STORE_KEYS == (
        "inspect_swarm:spawns",
        "inspect_swarm:messages",
        "inspect_swarm:result",
        "inspect_swarm:ledger",
        "inspect_swarm:metrics",
        "swarm_fanout:artifact",
        "inspect_swarm:reads",
    )
    assert (SPAWNS_KEY, MESSAGES_KEY, ARTIFACT_KEY) == (
        "inspect_swarm:spawns",
        "inspect_swarm:messages",
        "swarm_fanout:artifact",
    )


def test_a_report_is_usable_when_present_and_without_a_problem() -> None:
    report = RecordReport(key="k", present=True)
    assert (report.problem, report.malformed, report.unknown, report.problems) == (None, 0, 0, ())
    assert report.usable is True
    assert RecordReport(key="k", present=False).usable is False
    assert RecordReport(key="k", present=True, problem="bad").usable is False
    assert RecordReport(key="k", present=True, malformed=3).usable is True


def test_turns_are_calls_and_cache_replays() -> None:
    usage = MemberUsage(name="m", tokens=0, cost=0.0, calls=3, cache_replays=2, errored=7)
    assert usage.turns == 5


# -- the strict field readers (_fields) -------------------------------------------------------


def test_whole_takes_integers_at_and_above_low_and_nothing_else() -> None:
    assert whole({"k": 0}, "k", low=0) == 0
    assert whole({"k": 1}, "k", low=1) == 1
    assert whole({"k": -5}, "k") == -5  # no low: any integer
    assert refusal(whole, {"k": -1}, "k", low=0) == "k: expected an integer >= 0, got -1"
    assert refusal(whole, {"k": 0}, "k", low=1) == "k: expected an integer >= 1, got 0"
    assert refusal(whole, {"k": True}, "k") == "k: expected an integer, got True"
    assert refusal(whole, {"k": False}, "k", low=0) == "k: expected an integer, got False"
    assert refusal(whole, {"k": 1.0}, "k") == "k: expected an integer, got 1.0"
    assert refusal(whole, {"k": "1"}, "k") == "k: expected an integer, got '1'"
    assert refusal(whole, {"k": None}, "k") == "k: expected an integer, got None"
    assert refusal(whole, {}, "k") == "k: missing"


def test_number_takes_finite_integers_and_floats_as_floats() -> None:
    found = number({"k": 2}, "k")
    assert (type(found), found) == (float, 2.0)
    assert number({"k": -0.5}, "k") == -0.5
    assert refusal(number, {"k": True}, "k") == "k: expected a number, got True"
    assert refusal(number, {"k": "1"}, "k") == "k: expected a number, got '1'"
    assert refusal(number, {"k": None}, "k") == "k: expected a number, got None"
    assert refusal(number, {"k": math.inf}, "k") == "k: expected a finite number, got inf"
    assert refusal(number, {"k": -math.inf}, "k") == "k: expected a finite number, got -inf"
    assert refusal(number, {"k": math.nan}, "k") == "k: expected a finite number, got nan"
    assert refusal(number, {}, "k") == "k: missing"


def test_optional_fields_take_null_but_must_be_there() -> None:
    assert optional_number({"k": None}, "k") is None
    found = optional_number({"k": 3}, "k")
    assert (type(found), found) == (float, 3.0)
    assert refusal(optional_number, {}, "k") == "k: missing"
    assert refusal(optional_number, {"k": "3"}, "k") == "k: expected a number, got '3'"
    assert optional_text({"k": None}, "k") is None
    assert optional_text({"k": ""}, "k") == ""
    assert optional_text({"k": "x"}, "k") == "x"
    assert refusal(optional_text, {}, "k") == "k: missing"
    assert refusal(optional_text, {"k": 3}, "k") == "k: expected a string, got 3"


def test_text_and_mapping_take_only_their_type() -> None:
    assert text({"k": ""}, "k") == ""
    assert refusal(text, {"k": None}, "k") == "k: expected a string, got None"
    assert refusal(text, {"k": b"x"}, "k") == "k: expected a string, got b'x'"
    assert refusal(text, {}, "k") == "k: missing"
    assert mapping({}, "it") == {}
    assert refusal(mapping, [], "the entry") == "the entry: expected an object, got []"
    assert refusal(mapping, None, "seen") == "seen: expected an object, got None"


def test_a_refusal_shows_a_value_of_up_to_80_characters_whole() -> None:
    # repr of 78 x's is 80 characters: shown whole; of 79, 81: cut to 77 and "..."
    assert refusal(whole, {"k": "x" * 78}, "k") == "k: expected an integer, got '" + "x" * 78 + "'"
    assert (
        refusal(whole, {"k": "x" * 79}, "k") == "k: expected an integer, got '" + "x" * 76 + "..."
    )
    assert refusal(mapping, "y" * 200, "w") == "w: expected an object, got '" + "y" * 76 + "..."


# -- the spawn ledger (_parse) ----------------------------------------------------------------


def spawns(*entries: Any) -> tuple[tuple[SpawnEntry, ...], RecordReport]:
    return parse_spawns({"version": 1, "entries": list(entries)})


def test_a_spawn_entry_reads_every_field() -> None:
    [entry], report = spawns(spawn())
    assert entry == SpawnEntry(
        seq=1,
        time=2.0,
        op="spawn",
        member="worker-a~2",
        requested="worker-a",
        parent=LEAD,
        depth=1,
        template="worker",
        task="Answer the question.",
        status=None,
        reason=None,
    )
    assert type(entry.time) is float
    assert report == RecordReport(key=SPAWNS_KEY, present=True)


def test_each_op_reads_with_the_fields_it_needs() -> None:
    entries = [
        spawn(seq=1, status="odd", reason="why", template=None, task=None),
        spawn(seq=2, op="refused", member=None, reason="live_name"),
        spawn(seq=3, op="refused", member="worker-a", reason="limit"),
        spawn(seq=4, op="end", status="submitted", reason=None),
        spawn(seq=5, op="end", status="errored", reason="boom"),
        spawn(seq=6, op="delete", reason="parent_ended", status=None),
        spawn(seq=7, op="delete", reason="cancelled", status="ended"),
    ]
    found, report = spawns(*entries)
    assert [(e.seq, e.op, e.member, e.status, e.reason, e.template, e.task) for e in found] == [
        (1, "spawn", "worker-a~2", "odd", "why", None, None),
        (2, "refused", None, None, "live_name", "worker", "Answer the question."),
        (3, "refused", "worker-a", None, "limit", "worker", "Answer the question."),
        (4, "end", "worker-a~2", "submitted", None, "worker", "Answer the question."),
        (5, "end", "worker-a~2", "errored", "boom", "worker", "Answer the question."),
        (6, "delete", "worker-a~2", None, "parent_ended", "worker", "Answer the question."),
        (7, "delete", "worker-a~2", "ended", "cancelled", "worker", "Answer the question."),
    ]
    assert (report.malformed, report.unknown, report.problems) == (0, 0, ())


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (spawn(seq=0), "seq: expected an integer >= 1, got 0"),
        ({k: v for k, v in spawn().items() if k != "seq"}, "seq: missing"),
        ({k: v for k, v in spawn().items() if k != "time"}, "time: missing"),
        (spawn(time=math.inf), "time: expected a finite number, got inf"),
        ({k: v for k, v in spawn().items() if k != "op"}, "op: missing"),
        (spawn(op=None), "op: expected a string, got None"),
        (spawn(member=None), "member: expected a string, got None"),
        ({k: v for k, v in spawn().items() if k != "member"}, "member: missing"),
        (spawn(op="end", member=None, status="x"), "member: expected a string, got None"),
        (spawn(op="delete", member=None, reason="x"), "member: expected a string, got None"),
        (
            {k: v for k, v in spawn(op="refused", reason="x").items() if k != "member"},
            "member: missing",
        ),
        (spawn(op="refused", member=3, reason="x"), "member: expected a string, got 3"),
        (spawn(op="refused", reason=None), "reason: expected a string, got None"),
        (spawn(op="delete", reason=None), "reason: expected a string, got None"),
        (spawn(op="delete", reason=4), "reason: expected a string, got 4"),
        (spawn(op="end", status=None), "status: expected a string, got None"),
        (spawn(status=5), "status: expected a string, got 5"),
        ({k: v for k, v in spawn().items() if k != "status"}, "status: missing"),
        (spawn(reason=6), "reason: expected a string, got 6"),
        ({k: v for k, v in spawn().items() if k != "reason"}, "reason: missing"),
        (spawn(requested=None), "requested: expected a string, got None"),
        (spawn(parent=None), "parent: expected a string, got None"),
        (spawn(depth=0), "depth: expected an integer >= 1, got 0"),
        ({k: v for k, v in spawn().items() if k != "depth"}, "depth: missing"),
        (spawn(template=1), "template: expected a string, got 1"),
        ({k: v for k, v in spawn().items() if k != "template"}, "template: missing"),
        (spawn(task=2), "task: expected a string, got 2"),
        ({k: v for k, v in spawn().items() if k != "task"}, "task: missing"),
        # a bad time comes before an unknown op: not a valid envelope, so malformed
        (spawn(op="rename", time="now"), "time: expected a number, got 'now'"),
        (7, "the entry: expected an object, got 7"),
    ],
)
def test_a_spawn_entry_with_a_bad_field_is_malformed(entry: Any, problem: str) -> None:
    found, report = spawns(spawn(seq=9), entry)
    assert [e.seq for e in found] == [9]
    assert report == RecordReport(
        key=SPAWNS_KEY, present=True, malformed=1, problems=(f"entries[1]: {problem}",)
    )


def test_an_unknown_op_is_unknown_even_with_its_other_fields_missing() -> None:
    found, report = spawns({"seq": 4, "time": 1.5, "op": "rename"}, spawn(seq=5, op="Spawn"))
    assert found == ()
    assert report == RecordReport(
        key=SPAWNS_KEY,
        present=True,
        unknown=2,
        problems=(
            "entries[0]: skipped: unknown op 'rename'",
            "entries[1]: skipped: unknown op 'Spawn'",
        ),
    )


def test_spawn_entries_are_sorted_by_seq_and_a_repeated_seq_keeps_the_first() -> None:
    found, report = spawns(
        spawn(seq=3, member="c"),
        spawn(seq=1, member="a"),
        spawn(seq=3, member="d"),
        spawn(seq=2, member="b"),
    )
    assert [(e.seq, e.member) for e in found] == [(1, "a"), (2, "b"), (3, "c")]
    assert report == RecordReport(
        key=SPAWNS_KEY,
        present=True,
        malformed=1,
        problems=("seq: 3 appears twice; the later entry is skipped",),
    )


def test_a_report_spells_out_20_problems_and_counts_them_all() -> None:
    assert PROBLEMS_KEPT == 20
    bad = [spawn(seq=i + 1, depth=0) for i in range(21)]
    _, report = spawns(*bad)
    assert report.malformed == 21
    assert report.problems == tuple(
        f"entries[{i}]: depth: expected an integer >= 1, got 0" for i in range(20)
    )
    _, report = spawns(*bad[:20])
    assert (report.malformed, len(report.problems)) == (20, 20)
    # repeats and unknown ops share the 20
    entries = [spawn(seq=1)] * 22 + [spawn(seq=2, op="x")]
    _, report = spawns(*entries)
    assert (report.malformed, report.unknown) == (21, 1)
    assert (
        report.problems
        == ("entries[22]: skipped: unknown op 'x'",)
        + ("seq: 1 appears twice; the later entry is skipped",) * 19
    )


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (5, "the record: expected an object, got 5"),
        ({"entries": []}, "version: missing"),
        ({"version": 0, "entries": []}, "version: expected 1, got 0"),
        ({"version": 2, "entries": []}, "version: expected 1, got 2"),
        ({"version": True, "entries": []}, "version: expected an integer, got True"),
        ({"version": "1", "entries": []}, "version: expected an integer, got '1'"),
        ({"version": 1}, "entries: expected a list, got None"),
        ({"version": 1, "entries": ("a",)}, "entries: expected a list, got ('a',)"),
        ({"version": 1, "entries": "z" * 100}, "entries: expected a list, got '" + "z" * 79),
    ],
)
def test_an_unusable_spawn_ledger_gives_nothing_and_says_why(record: Any, problem: str) -> None:
    assert parse_spawns(record) == ((), RecordReport(key=SPAWNS_KEY, present=True, problem=problem))


def test_a_missing_record_is_not_present_and_has_no_problem() -> None:
    assert parse_spawns(None) == ((), RecordReport(key=SPAWNS_KEY, present=False))
    assert parse_messages(None) == ((), RecordReport(key=MESSAGES_KEY, present=False))
    assert parse_result(None) == ((), RecordReport(key=RESULT_KEY, present=False))
    assert parse_ledger(None) == ((), RecordReport(key=LEDGER_KEY, present=False))
    assert parse_metrics(None) == (None, RecordReport(key=METRICS_KEY, present=False))
    assert parse_artifact(None) == (None, RecordReport(key=ARTIFACT_KEY, present=False))
    assert parse_reads(None) == (None, RecordReport(key=READS_KEY, present=False))
    # an empty list of entries is a usable record
    assert parse_spawns({"version": 1, "entries": []}) == (
        (),
        RecordReport(key=SPAWNS_KEY, present=True),
    )


# -- the message log (_parse) -----------------------------------------------------------------


def messages(*entries: Any) -> tuple[tuple[MessageEntry, ...], RecordReport]:
    return parse_messages({"version": 1, "messages": list(entries)})


def test_a_message_entry_reads_every_field() -> None:
    [entry], report = messages(message())
    assert entry == MessageEntry(
        seq=1,
        time=3.0,
        kind="message",
        sender="worker-a",
        recipient=LEAD,
        relationship="child",
        text="16",
        about=None,
        status=None,
        seen=Seen(time=4.0, via="wait"),
    )
    assert (type(entry.time), type(entry.seen.time)) == (float, float)  # type: ignore[union-attr]
    assert report == RecordReport(key=MESSAGES_KEY, present=True)


def test_receipts_need_about_and_messages_may_have_one() -> None:
    found, report = messages(
        message(seq=1, kind="receipt", about="worker-a", status="errored", seen=None, size=0),
        message(seq=2, about="worker-b", status="delivered"),
        message(seq=3, kind="receipt", about="", text=""),
    )
    assert [(m.seq, m.kind, m.about, m.status, m.seen) for m in found] == [
        (1, "receipt", "worker-a", "errored", None),
        (2, "message", "worker-b", "delivered", Seen(time=4.0, via="wait")),
        (3, "receipt", "", None, Seen(time=4.0, via="wait")),
    ]
    assert report.problems == ()


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (message(seq=0), "seq: expected an integer >= 1, got 0"),
        (message(time=None), "time: expected a number, got None"),
        (message(kind=1), "kind: expected a string, got 1"),
        ({k: v for k, v in message().items() if k != "size"}, "size: missing"),
        (message(size=-1), "size: expected an integer >= 0, got -1"),
        (message(size="2"), "size: expected an integer, got '2'"),
        (message(kind="receipt", about=None), "about: expected a string, got None"),
        ({k: v for k, v in message().items() if k != "about"}, "about: missing"),
        (message(about=3), "about: expected a string, got 3"),
        (message(sender=None), "sender: expected a string, got None"),
        (message(recipient=None), "recipient: expected a string, got None"),
        ({k: v for k, v in message().items() if k != "relationship"}, "relationship: missing"),
        (message(text=None), "text: expected a string, got None"),
        (message(status=1), "status: expected a string, got 1"),
        ({k: v for k, v in message().items() if k != "status"}, "status: missing"),
        ({k: v for k, v in message().items() if k != "seen"}, "seen: missing"),
        (message(seen=[]), "seen: expected an object, got []"),
        (message(seen={"via": "read"}), "seen.time: missing"),
        (
            message(seen={"time": math.nan, "via": "read"}),
            "seen.time: expected a finite number, got nan",
        ),
        (message(seen={"time": 1, "via": None}), "seen.via: expected a string, got None"),
    ],
)
def test_a_message_entry_with_a_bad_field_is_malformed(entry: Any, problem: str) -> None:
    found, report = messages(message(seq=9), entry)
    assert [m.seq for m in found] == [9]
    assert report == RecordReport(
        key=MESSAGES_KEY, present=True, malformed=1, problems=(f"messages[1]: {problem}",)
    )


def test_message_entries_are_sorted_by_seq_and_unknown_kinds_skipped() -> None:
    found, report = messages(
        message(seq=2, text="b"),
        message(seq=1, text="a"),
        message(seq=2, text="c"),
        {"seq": 3, "time": 1, "kind": "notice"},
    )
    assert [(m.seq, m.text) for m in found] == [(1, "a"), (2, "b")]
    assert report == RecordReport(
        key=MESSAGES_KEY,
        present=True,
        malformed=1,
        unknown=1,
        problems=(
            "messages[3]: skipped: unknown kind 'notice'",
            "seq: 2 appears twice; the later entry is skipped",
        ),
    )
    _, report = parse_messages({"version": 1, "entries": []})
    assert report.problem == "messages: expected a list, got None"


# -- the result record and the ledger (_parse) ------------------------------------------------


def test_a_result_member_reads_every_field() -> None:
    found, report = parse_result(
        {
            "version": 1,
            "members": [
                member(),
                member(
                    name=LEAD,
                    depth=0,
                    parent=None,
                    status=None,
                    started=None,
                    time=None,
                    state="pending",
                ),
            ],
        }
    )
    assert found == (
        MemberRun(
            name="worker-a",
            state="ended",
            status="submitted",
            started=1.0,
            ended=5.0,
            parent=LEAD,
            depth=1,
        ),
        MemberRun(
            name=LEAD, state="pending", status=None, started=None, ended=None, parent=None, depth=0
        ),
    )
    assert (type(found[0].started), type(found[0].ended)) == (float, float)
    assert report == RecordReport(key=RESULT_KEY, present=True)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (member(name=None), "name: expected a string, got None"),
        (member(state=None), "state: expected a string, got None"),
        (member(status=1), "status: expected a string, got 1"),
        ({k: v for k, v in member().items() if k != "started"}, "started: missing"),
        (member(started="1"), "started: expected a number, got '1'"),
        ({k: v for k, v in member().items() if k != "time"}, "time: missing"),
        (member(time=math.inf), "time: expected a finite number, got inf"),
        ({k: v for k, v in member().items() if k != "parent"}, "parent: missing"),
        (member(depth=-1), "depth: expected an integer >= 0, got -1"),
        (member(depth=None), "depth: expected an integer, got None"),
        ("lead", "the entry: expected an object, got 'lead'"),
    ],
)
def test_a_bad_result_member_is_malformed(entry: Any, problem: str) -> None:
    found, report = parse_result({"version": 1, "members": [member(name="ok"), entry]})
    assert [m.name for m in found] == ["ok"]
    assert report == RecordReport(
        key=RESULT_KEY, present=True, malformed=1, problems=(f"members[1]: {problem}",)
    )


def test_result_members_keep_the_records_order_and_the_first_of_a_name() -> None:
    found, report = parse_result(
        {"version": 1, "members": [member(name="z"), member(name="a"), member(name="z", depth=3)]}
    )
    assert [(m.name, m.depth) for m in found] == [("z", 1), ("a", 1)]
    assert report.problems == ("name: 'z' appears twice; the later entry is skipped",)
    assert report.malformed == 1
    assert parse_result({"version": 1, "entries": []})[1].problem == (
        "members: expected a list, got None"
    )


def test_a_ledger_member_reads_its_tokens_cost_and_calls() -> None:
    zero = usage(
        name="z",
        meter={"usage": {"total_tokens": 0}, "cost": 0},
        calls={"calls": 0, "cache_replays": 0, "errored": 0},
    )
    found, report = parse_ledger({"version": 1, "members": [usage(), zero]})
    assert found == (
        MemberUsage(name="worker-a", tokens=120, cost=0.25, calls=2, cache_replays=1, errored=3),
        MemberUsage(name="z", tokens=0, cost=0.0, calls=0, cache_replays=0, errored=0),
    )
    assert type(found[1].cost) is float
    assert report == RecordReport(key=LEDGER_KEY, present=True)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (usage(name=1, meter=None), "name: expected a string, got 1"),
        (usage(meter=None), "meter: missing"),
        ({k: v for k, v in usage().items() if k != "meter"}, "meter: missing"),
        (usage(meter=5), "meter: expected an object, got 5"),
        (usage(meter={"cost": 1.0}), "meter.usage: missing"),
        (usage(meter={"usage": None, "cost": 1.0}), "meter.usage: missing"),
        (usage(meter={"usage": [], "cost": 1.0}), "meter.usage: expected an object, got []"),
        (usage(meter={"usage": {}, "cost": 1.0}), "meter.total_tokens: missing"),
        (
            usage(meter={"usage": {"total_tokens": -1}, "cost": 1.0}),
            "meter.total_tokens: expected an integer >= 0, got -1",
        ),
        (
            usage(meter={"usage": {"total_tokens": 1.5}, "cost": 1.0}),
            "meter.total_tokens: expected an integer, got 1.5",
        ),
        (usage(meter={"usage": {"total_tokens": 1}}), "meter.cost: missing"),
        (
            usage(meter={"usage": {"total_tokens": 1}, "cost": "0.1"}),
            "meter.cost: expected a number, got '0.1'",
        ),
        (usage(calls=None), "calls: missing"),
        (usage(calls=2), "calls: expected an object, got 2"),
        (usage(calls={"calls": 1, "cache_replays": 0}), "calls.errored: missing"),
        (
            usage(calls={"calls": -1, "cache_replays": 0, "errored": 0}),
            "calls.calls: expected an integer >= 0, got -1",
        ),
        (
            usage(calls={"calls": 1, "cache_replays": -1, "errored": 0}),
            "calls.cache_replays: expected an integer >= 0, got -1",
        ),
        (
            usage(calls={"calls": 1, "cache_replays": 0, "errored": True}),
            "calls.errored: expected an integer, got True",
        ),
    ],
)
def test_a_bad_ledger_member_is_malformed(entry: Any, problem: str) -> None:
    found, report = parse_ledger({"version": 1, "members": [usage(name="ok"), entry]})
    assert [u.name for u in found] == ["ok"]
    assert report == RecordReport(
        key=LEDGER_KEY, present=True, malformed=1, problems=(f"members[1]: {problem}",)
    )


def test_ledger_members_keep_the_records_order_and_the_first_of_a_name() -> None:
    found, report = parse_ledger(
        {"version": 1, "members": [usage(name="z"), usage(name="a"), usage(name="z")]}
    )
    assert [u.name for u in found] == ["z", "a"]
    assert report.problems == ("name: 'z' appears twice; the later entry is skipped",)
    assert parse_ledger({"version": 2, "members": []})[1].problem == "version: expected 1, got 2"


# -- the metrics record and the artifact (_parse) ---------------------------------------------


@pytest.mark.parametrize(
    ("record", "wall_clock", "problem"),
    [
        ({"version": 1, "wall_clock": 12}, 12.0, None),
        ({"version": 1, "wall_clock": 0.5, "other": 1}, 0.5, None),
        ([1], None, "the record: expected an object, got [1]"),
        ({"wall_clock": 1.0}, None, "version: missing"),
        ({"version": 2, "wall_clock": 1.0}, None, "version: expected 1, got 2"),
        ({"version": 0, "wall_clock": 1.0}, None, "version: expected 1, got 0"),
        ({"version": 1.0, "wall_clock": 1.0}, None, "version: expected an integer, got 1.0"),
        ({"version": 1}, None, "wall_clock: missing"),
        ({"version": 1, "wall_clock": None}, None, "wall_clock: expected a number, got None"),
        (
            {"version": 1, "wall_clock": math.inf},
            None,
            "wall_clock: expected a finite number, got inf",
        ),
    ],
)
def test_the_metrics_record_gives_its_wall_clock(
    record: Any, wall_clock: float | None, problem: str | None
) -> None:
    found, report = parse_metrics(record)
    assert (found, type(found)) == (wall_clock, type(wall_clock))
    assert report == RecordReport(key=METRICS_KEY, present=True, problem=problem)


@pytest.mark.parametrize(
    ("record", "artifact", "problem"),
    [
        ({"path": "a.md", "text": "- x: 1\n"}, Artifact(path="a.md", text="- x: 1\n"), None),
        ({"path": "a.md", "text": None}, Artifact(path="a.md", text=None), None),
        ("text", None, "the record: expected an object, got 'text'"),
        ({"text": "x"}, None, "path: missing"),
        ({"path": None, "text": "x"}, None, "path: expected a string, got None"),
        ({"path": "a.md"}, None, "text: missing"),
        ({"path": "a.md", "text": 12}, None, "text: expected a string, got 12"),
    ],
)
def test_the_artifact_record_gives_its_path_and_text(
    record: Any, artifact: Artifact | None, problem: str | None
) -> None:
    assert parse_artifact(record) == (
        artifact,
        RecordReport(key=ARTIFACT_KEY, present=True, problem=problem),
    )


# -- the reads record (_readlog) --------------------------------------------------------------


def read(**fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "seq": 0,
        "time": 1.5,
        "member": "worker-a",
        "sandbox": "sb-a",
        "path": "shards/a.jsonl",
        "op": "read",
    }
    entry.update(fields)
    return entry


def reads_record(*entries: Any, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "version": 1,
        "provider": "bwrap",
        "watched": True,
        "members": {"worker-a": {"sandbox": "sb-a", "files": []}},
        "entries": list(entries),
    }
    record.update(fields)
    return record


def test_the_reads_record_reads_its_provider_members_and_entries_in_seq_order() -> None:
    found, report = parse_reads(
        reads_record(read(seq=2, time=3), read(seq=1, op="write"), read(seq=0, member="lead"))
    )
    assert found == Reads(
        provider="bwrap",
        watched=True,
        members={"worker-a": {"sandbox": "sb-a", "files": []}},
        entries=(
            FileRead(
                seq=0, time=1.5, member="lead", sandbox="sb-a", path="shards/a.jsonl", op="read"
            ),
            FileRead(
                seq=1,
                time=1.5,
                member="worker-a",
                sandbox="sb-a",
                path="shards/a.jsonl",
                op="write",
            ),
            FileRead(
                seq=2, time=3, member="worker-a", sandbox="sb-a", path="shards/a.jsonl", op="read"
            ),
        ),
    )
    assert report == RecordReport(key=READS_KEY, present=True)


@pytest.mark.parametrize(
    ("fields", "provider", "watched", "members"),
    [
        ({"provider": None, "watched": False}, None, False, {}),
        ({"provider": 3, "watched": 1}, None, False, {}),
        ({"provider": "local", "watched": "yes"}, "local", False, {}),
        ({"watched": True}, "bwrap", True, {}),
        (
            {"members": {"a": {"sandbox": "x"}, "b": "x", 7: {}}},
            "bwrap",
            True,
            {"a": {"sandbox": "x"}, "7": {}},
        ),
    ],
)
def test_the_reads_records_provider_and_watched_are_strict(
    fields: dict[str, Any], provider: str | None, watched: bool, members: dict[str, Any]
) -> None:
    record = reads_record(**({"members": {}} | fields))
    found, _ = parse_reads(record)
    assert found is not None
    assert (found.provider, found.watched, dict(found.members)) == (provider, watched, members)


@pytest.mark.parametrize(
    "record",
    [
        [],
        {"provider": "bwrap", "members": {}, "entries": []},
        reads_record(version=2),
        reads_record(version="1"),
        reads_record(version=True),  # a bool is never a number (True == 1 in Python)
        reads_record(version=1.0),
    ],
)
def test_a_reads_record_not_of_version_1_is_unusable(record: Any) -> None:
    assert parse_reads(record) == (
        None,
        RecordReport(key=READS_KEY, present=True, problem="not a version 1 reads record"),
    )


@pytest.mark.parametrize(
    "fields",
    [{"members": None}, {"members": []}, {"entries": None}, {"entries": {}}, {"entries": ()}],
)
def test_a_reads_record_without_members_or_entries_is_unusable(fields: dict[str, Any]) -> None:
    assert parse_reads(reads_record(**fields)) == (
        None,
        RecordReport(key=READS_KEY, present=True, problem="members or entries missing"),
    )


@pytest.mark.parametrize(
    "entry",
    [
        "read",
        read(seq="0"),
        read(seq=True),
        read(seq=1.0),
        read(time=False),
        read(time="1"),
        read(member=None),
        read(sandbox=1),
        read(path=None),
        read(op=None),
        {k: v for k, v in read().items() if k != "op"},
    ],
)
def test_a_bad_read_entry_is_skipped_and_counted(entry: Any) -> None:
    found, report = parse_reads(reads_record(read(seq=5), entry, read(seq=6, time=2)))
    assert found is not None
    assert [(e.seq, e.time) for e in found.entries] == [(5, 1.5), (6, 2)]
    assert report == RecordReport(
        key=READS_KEY,
        present=True,
        malformed=1,
        problems=("entries[1]: a field is missing or of the wrong type",),
    )


def test_a_first_read_is_the_members_earliest_read_of_the_path_in_its_own_sandbox() -> None:
    found, _ = parse_reads(
        reads_record(
            read(seq=1, op="write"),
            read(seq=2, sandbox="sb-b"),  # in another sandbox
            read(seq=3, path="shards/b.jsonl"),
            read(seq=4, member="worker-b"),
            read(seq=6, time=9),
            read(seq=5, time=7),
        )
    )
    assert found is not None
    assert found.first_read("worker-a", "shards/a.jsonl") == FileRead(
        seq=5, time=7, member="worker-a", sandbox="sb-a", path="shards/a.jsonl", op="read"
    )
    assert found.first_read("worker-a", "shards/c.jsonl") is None
    # a member with no sandbox in the record has no read in its own sandbox
    assert found.first_read("worker-b", "shards/a.jsonl") is None
