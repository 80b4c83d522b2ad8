"""One schema per stored record, written and read through the same classes (``swarm._schemas``).

- The readers are the writers' classes: ``swarm.analysis``'s models are ``swarm._schemas``'s,
  the runtime's spawn entries are ``SpawnLedgerEntry``s, the ledger is built as a
  ``SwarmLedger`` and the message log is passed through ``MessageLog``.
- What still feeds a record from elsewhere (the meters' and counters' dicts, the budget, the
  ``messages`` channel's entries) has the schema's fields one by one: names, order, whether a
  field may be null. A field added on one side only fails here.
- A writer cannot write a field its schema lacks, nor miss one: the build fails (the ledger, the
  spawn ledger) or the channel's record is a fault (the message log).
- Real runs' records are the same, byte for byte, as the code before the schemas wrote them:
  ``tests/data/stored_records.json`` holds them as that code (commit 33b903b) stored them for the
  runs of ``stored_runs.py``; never rewrite it to make this test pass.  Its result records
  have since gained the fields of answers (each member's ``answer``, ``answer_chars`` and
  ``verified``, the final's ``answer`` and ``answer_chars``, ``submissions``): regenerated from
  the same runs, after checking that without those fields every byte was the same.  Issue 41
  (a split budget's share is each member's own cap) changed the ``whole_numbers`` run, a lone
  member with ``split=[2]``: its member ends ``share`` at its share (the whole cap), not
  ``swarm_cap``, the swarm's ``stop_reason`` is ``all_done``, and the ledger's member has a
  ``share``; those five values were edited in by hand, every other byte is as stored.
- The ledger's fields are in the spec's order (``tests/data/spec_ledger_example.json``), the spawn
  ledger's and the message log's in their tables' order on ``docs/spawning.md``; every field has
  a description.  The one field the spec does not name is a member's ``share``, last in its
  entry and written only with a split budget (docs/ledger.md), so a pooled ledger has the
  spec's fields and no other.
"""

from __future__ import annotations

import copy
import json
import re
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from inspect_ai.model import ModelUsage
from pydantic import BaseModel, ValidationError

import swarm._schemas as schemas
import swarm.analysis
from swarm import (
    Budget,
    FinalRecord,
    MemberLimits,
    MemberResult,
    Submission,
    SwarmResult,
    channel,
    member,
)
from swarm import swarm as swarm_solver
from swarm._accounts.accounts import Accounts
from swarm._accounts.caps import SAMPLE_LIMIT_KINDS, SwarmCaps, shares
from swarm._accounts.meter import UsageMeter, usage_dict
from swarm._report.events import CallCounts, RunEvents
from swarm._report.ledger import build_ledger, native_compaction_classes
from swarm._report.spawns import SpawnEntry, build_spawns
from swarm._run.engine import SwarmRun
from swarm.plugins.channels._mailbox import Entry, Mailbox
from swarm.testing import call, run_eval, scripted_model, submit

import stored_runs
from helpers import ended_member

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
STORED: dict[str, dict[str, Any]] = json.loads((DATA / "stored_records.json").read_text())
SPEC_LEDGER: dict[str, Any] = json.loads((DATA / "spec_ledger_example.json").read_text())

Fields = list[tuple[str, bool]]
"""A side's fields in order, each with whether it may be null."""


def optional(annotation: Any) -> bool:
    """Whether a field of this (resolved) type may be null."""
    return type(None) in typing.get_args(annotation)


def model_fields(model: type[BaseModel]) -> Fields:
    """A schema's fields (the reader's side)."""
    return [(name, optional(f.annotation)) for name, f in model.model_fields.items()]


def attrs_fields(cls: type) -> Fields:
    """An attrs class's fields, their types resolved."""
    hints = typing.get_type_hints(cls)
    return [(f.name, optional(hints[f.name])) for f in attrs.fields(cls)]


def keyed_fields(record: dict[str, Any], optional_names: set[str]) -> Fields:
    """A dict a writer gives, as fields: its keys in order, ``optional_names`` the ones that may
    be null."""
    return [(name, name in optional_names) for name in record]


def differences(writer: Fields, reader: Fields) -> list[str]:
    """Every way the writer's fields and the reader's differ, as a sentence."""
    problems: list[str] = []
    w, r = dict(writer), dict(reader)
    problems += [f"{name}: the writer has it, the reader does not" for name in w if name not in r]
    problems += [f"{name}: the reader has it, the writer does not" for name in r if name not in w]
    both = [name for name in w if name in r]
    if both != [name for name in r if name in w]:
        problems.append(f"another order: the writer's {both}, the reader's {list(r)}")
    for name in both:
        if w[name] != r[name]:
            problems.append(
                f"{name}: {'optional' if w[name] else 'required'} in the writer, "
                f"{'optional' if r[name] else 'required'} in the reader"
            )
    return problems


# -- the readers are the writers' classes ---------------------------------------------------------

READ_BACK = [
    "ResultFinal",
    "ResultMember",
    "ResultRecord",
    "ResultSubmission",
    "Calls",
    "LedgerBudget",
    "LedgerCaps",
    "MemberLedger",
    "MessageLog",
    "MessageLogEntry",
    "Meter",
    "SampleLimits",
    "SpawnLedger",
    "SpawnLedgerEntry",
    "SwarmLedger",
    "Usage",
]


@pytest.mark.parametrize("name", READ_BACK)
def test_swarm_analysis_reads_with_the_class_the_record_is_written_through(name: str) -> None:
    assert getattr(swarm.analysis, name) is getattr(schemas, name)
    assert name in swarm.analysis.__all__


def test_the_runtimes_spawn_entries_are_the_spawn_ledgers_entries() -> None:
    assert SpawnEntry is swarm.analysis.SpawnLedgerEntry


def test_a_spawn_entry_has_every_field_and_no_other() -> None:
    given = dict(
        seq=1,
        time=0.5,
        op="spawn",
        member="a",
        requested="a",
        parent="lead",
        depth=1,
        template="worker",
        task="t",
        status=None,
        reason=None,
    )
    assert build_spawns([SpawnEntry(**given)]) == {"version": 1, "entries": [given]}
    with pytest.raises(ValidationError) as missing:
        SpawnEntry(**{k: v for k, v in given.items() if k != "reason"})
    assert schemas.schema_problem(missing.value) == "reason: Field required"
    with pytest.raises(ValidationError) as extra:
        SpawnEntry(**given, cause="x")
    assert schemas.schema_problem(extra.value) == "cause: Extra inputs are not permitted"


# -- what feeds a record from elsewhere has the schema's fields -----------------------------------


def usage_fields() -> Fields:
    """The usage as the ledger gives it (``usage_dict``), each field as Inspect types it."""
    hints = {name: f.annotation for name, f in ModelUsage.model_fields.items()}
    return [(name, optional(hints[name])) for name in usage_dict(ModelUsage())]


def meter_fields() -> Fields:
    return keyed_fields(UsageMeter().as_dict(), set())


def sample_limit_fields() -> Fields:
    return [(kind, True) for kind in SAMPLE_LIMIT_KINDS]  # each limit may be unset


def entry_fields() -> Fields:
    """The ``messages`` channel's entry as it gives it (``size`` is a property of the text)."""
    hints = typing.get_type_hints(Entry)
    entry = Entry(
        seq=1, time=0.0, kind="message", sender="a", recipient="b", relationship="child", text="x"
    )
    return [(name, name in hints and optional(hints[name])) for name in entry.as_dict()]


def seen_fields() -> Fields:
    entry = Entry(
        seq=1, time=0.0, kind="message", sender="a", recipient="b", relationship="child", text="x"
    )
    Mailbox.seen([entry], 1.0, "read", 2)
    assert entry.seen == {"time": 1.0, "via": "read", "call": 2}
    return keyed_fields(entry.seen, {"call"})  # null in a log written before calls were counted


FEEDS: dict[str, tuple[Callable[[], Fields], type[BaseModel]]] = {
    "usage_dict": (usage_fields, schemas.Usage),
    "UsageMeter.as_dict": (meter_fields, schemas.Meter),
    "CallCounts": (lambda: attrs_fields(CallCounts), schemas.Calls),
    "SwarmCaps": (lambda: attrs_fields(SwarmCaps), schemas.LedgerCaps),
    "Budget": (lambda: attrs_fields(Budget), schemas.LedgerBudget),
    "SAMPLE_LIMIT_KINDS": (sample_limit_fields, schemas.SampleLimits),
    "messages Entry.as_dict": (entry_fields, schemas.MessageLogEntry),
    "Mailbox.seen": (seen_fields, schemas.Seen),
    # the result record: the hook value swarm_run_ended gets, written through its schema
    "SwarmResult": (lambda: attrs_fields(SwarmResult), schemas.ResultRecord),
    "MemberResult": (lambda: attrs_fields(MemberResult), schemas.ResultMember),
    "FinalRecord": (lambda: attrs_fields(FinalRecord), schemas.ResultFinal),
    "Submission": (lambda: attrs_fields(Submission), schemas.ResultSubmission),
}


@pytest.mark.parametrize("feed", list(FEEDS))
def test_what_feeds_a_record_has_the_schemas_fields_one_by_one(feed: str) -> None:
    writer, model = FEEDS[feed]
    assert differences(writer(), model_fields(model)) == []


def test_swarm_caps_dict_is_its_fields() -> None:
    # the ledger writes SwarmCaps.as_dict(), whose keys are the class's fields in order
    caps = SwarmCaps(cost=1.0, tokens=2, time=3.0)
    assert list(caps.as_dict()) == [f.name for f in attrs.fields(SwarmCaps)]


def test_a_field_on_one_side_only_is_caught() -> None:
    # a copy of each side with one field more: the comparison names it
    @attrs.define
    class WiderCounts(CallCounts):
        retried: int | None = None

    assert differences(attrs_fields(WiderCounts), model_fields(schemas.Calls)) == [
        "retried: the writer has it, the reader does not"
    ]

    class WiderEntry(schemas.MessageLogEntry):
        forwarded: bool | None

    assert differences(entry_fields(), model_fields(WiderEntry)) == [
        "forwarded: the reader has it, the writer does not"
    ]
    # and a field moved, or made optional on one side
    assert differences([("a", False), ("b", False)], [("b", False), ("a", True)]) == [
        "another order: the writer's ['a', 'b'], the reader's ['b', 'a']",
        "a: required in the writer, optional in the reader",
    ]


# -- a writer cannot write a field its schema lacks, nor miss one ----------------------------------


def small_ledger() -> dict[str, Any]:
    accounts = Accounts(Budget())
    accounts.add_member("a", MemberLimits())
    accounts.charge("a", ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11))
    return build_ledger(
        accounts=accounts,
        events=RunEvents(),
        members=[ended_member("a", "submitted")],
        stop_reason="all_done",
        ended_by=None,
        interrupted=False,
        final_cancelled=False,
        wall_clock=1.0,
    )


def split_ledger() -> dict[str, Any]:
    """``small_ledger`` with 100 tokens split equally between ``a`` and ``b``, whom ``c``
    joined (spawned by ``b``)."""
    accounts = Accounts(Budget(tokens=100, split="equal"))
    accounts.add_member("a", MemberLimits())
    accounts.add_member("b", MemberLimits())
    accounts.caps = SwarmCaps(tokens=100)
    accounts.shares = shares(accounts.budget, accounts.caps, ["a", "b"])
    accounts.add_member("c", MemberLimits(), share_of="b")
    return build_ledger(
        accounts=accounts,
        events=RunEvents(),
        members=[ended_member(n, "submitted") for n in ("a", "b", "c")],
        stop_reason="all_done",
        ended_by=None,
        interrupted=False,
        final_cancelled=False,
        wall_clock=1.0,
    )


def test_the_ledger_is_written_with_the_schemas_fields_in_its_order() -> None:
    record = small_ledger()
    assert list(record) == list(schemas.SwarmLedger.model_fields)
    # a pooled budget: every field but the share, which only a split budget has
    assert [*record["members"][0], "share"] == list(schemas.MemberLedger.model_fields)
    assert schemas.SwarmLedger.model_validate(record).model_dump() == record
    record = split_ledger()
    assert list(record["members"][0]) == list(schemas.MemberLedger.model_fields)
    assert [m["share"] for m in record["members"]] == [
        {"owner": "a", "cost": None, "tokens": 50},
        {"owner": "b", "cost": None, "tokens": 50},
        {"owner": "b", "cost": None, "tokens": 50},
    ]
    assert schemas.SwarmLedger.model_validate(record).model_dump() == record


def test_a_meter_giving_a_field_the_ledger_lacks_fails_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    as_dict = UsageMeter.as_dict
    monkeypatch.setattr(UsageMeter, "as_dict", lambda self: {**as_dict(self), "refunded": 0.0})
    with pytest.raises(ValidationError) as failed:
        small_ledger()
    assert schemas.schema_problem(failed.value) == "refunded: Extra inputs are not permitted"


def test_counts_missing_a_field_of_the_ledger_fail_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    as_dict = CallCounts.as_dict
    monkeypatch.setattr(
        CallCounts,
        "as_dict",
        lambda self: {k: v for k, v in as_dict(self).items() if k != "unpriced"},
    )
    with pytest.raises(ValidationError) as failed:
        small_ledger()
    assert schemas.schema_problem(failed.value) == "unpriced: Field required"


def test_the_schema_problem_names_each_field_by_its_path() -> None:
    record = small_ledger()
    record["members"][0]["meter"]["usage"]["total_tokens"] = "11"
    del record["calls"]["errored"]
    record["resumed_from"] = None
    with pytest.raises(ValidationError) as failed:
        schemas.SwarmLedger.model_validate(record, strict=True)
    assert schemas.schema_problem(failed.value) == (
        "members[0].meter.usage.total_tokens: Input should be a valid integer; "
        "calls.errored: Field required; resumed_from: Extra inputs are not permitted"
    )


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    stored_runs.Clock.time = 0.0
    monkeypatch.setattr(SwarmRun, "now", lambda self: stored_runs.Clock.time)
    yield


def one_reply(log_dir: Path) -> Any:
    """The lead spawns a, which replies once and submits; the lead reads it and submits."""
    used = stored_runs.used
    scripts = {
        "lead": [
            used(call("spawn_child", name="a", task="t")),
            used(call("wait_for_children")),
            used(call("read_messages")),
            used(submit("done")),
        ],
        "a": [used(call("send_message", to="parent", text="42")), used(submit("42"))],
    }
    solver = swarm_solver(
        members=[member(stored_runs.clocked, name="lead", can_spawn=["worker"])],
        templates={"worker": member(stored_runs.clocked)},
        channels=[channel("messages")],
    )
    return run_eval(solver, model=scripted_model(scripts), log_dir=log_dir)


def test_the_message_log_is_written_through_its_schema(log_dir: Path, clock: None) -> None:
    log = one_reply(log_dir)
    assert log.status == "success"
    record = stored_runs.stored(log)["inspect_swarm:messages"]
    assert list(record["messages"][0]) == list(schemas.MessageLogEntry.model_fields)
    assert schemas.MessageLog.model_validate(record).model_dump() == record


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda d: {**d, "forwarded": False},
            "messages[0].forwarded: Extra inputs are not permitted",
        ),
        (lambda d: {k: v for k, v in d.items() if k != "size"}, "messages[0].size: Field required"),
    ],
)
def test_a_message_log_its_schema_refuses_is_the_channels_fault_and_not_written(
    log_dir: Path,
    clock: None,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[dict[str, Any]], dict[str, Any]],
    problem: str,
) -> None:
    as_dict = Entry.as_dict
    monkeypatch.setattr(Entry, "as_dict", lambda self: change(as_dict(self)))
    log = one_reply(log_dir)
    assert log.status == "error"
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "Plugin 'channel:messages', hook 'swarm_records': gave a message log its schema "
        f"refuses: {problem}"
    )
    assert "inspect_swarm:messages" not in sample.store
    assert "inspect_swarm:ledger" in sample.store  # the others are written


# -- real runs' records, byte for byte as before the schemas --------------------------------------


@pytest.mark.parametrize("run", list(stored_runs.RUNS))
def test_real_runs_store_their_records_byte_for_byte_as_before(
    run: str, log_dir: Path, clock: None, request: pytest.FixtureRequest
) -> None:
    if run != "family":
        request.getfixturevalue("priced")
    records = stored_runs.RUNS[run](log_dir)
    expected = copy.deepcopy(STORED[run])
    assert list(records) == list(expected)
    ledger = expected["inspect_swarm:ledger"]
    # the one value that depends on the process: which model classes were loaded when the
    # record was built (a class a test made in a function may be collected since, so it is
    # not read again now): taken from the record, checked to be sorted dotted names
    loaded = records["inspect_swarm:ledger"]["native_compaction_classes"]
    assert loaded == sorted(loaded) and all(c.count(".") >= 1 for c in loaded)
    assert set(native_compaction_classes()) <= set(loaded)
    ledger["native_compaction_classes"] = loaded
    for key, record in records.items():
        assert stored_runs.dumped(record) == stored_runs.dumped(expected[key]), key


def test_the_pinned_records_hold_numbers_as_they_were_given() -> None:
    # what the byte-for-byte comparison guards: a schema typed float would write 600.0
    ledger = STORED["whole_numbers"]["inspect_swarm:ledger"]
    assert stored_runs.dumped(ledger["sample_limits"]) == (
        '{"token": 20000, "cost": 5.0, "message": 50, "turn": null, "working": 300, "time": 600}'
    )
    assert stored_runs.dumped(ledger["budget"]["split"]) == "[2]"
    assert stored_runs.dumped(ledger["overshoot"]) == '{"tokens": 29}'
    assert stored_runs.dumped(
        schemas.SampleLimits.model_validate(ledger["sample_limits"]).model_dump()
    ) == (stored_runs.dumped(ledger["sample_limits"]))


@pytest.mark.parametrize("run", list(stored_runs.RUNS))
def test_the_pinned_records_read_back_and_dump_unchanged(run: str) -> None:
    readers = {
        "inspect_swarm:result": schemas.ResultRecord,
        "inspect_swarm:ledger": schemas.SwarmLedger,
        "inspect_swarm:spawns": schemas.SpawnLedger,
        "inspect_swarm:messages": schemas.MessageLog,
    }
    for key, record in STORED[run].items():
        if key in readers:
            dumped = readers[key].model_validate(record).model_dump()
            assert stored_runs.dumped(dumped) == stored_runs.dumped(record), key


# -- the schemas' order and descriptions ----------------------------------------------------------


def key_tree(model: type[BaseModel]) -> list[Any]:
    """A schema's field names in order, each model field (or list of them) with its own."""
    tree: list[Any] = []
    for name, f in model.model_fields.items():
        inner = [a for a in (f.annotation, *typing.get_args(f.annotation)) if _is_model(a)]
        tree.append((name, key_tree(inner[0])) if inner else name)
    return tree


def example_tree(value: dict[str, Any]) -> list[Any]:
    """The same for a record's example: its keys in order, an object's (or list's) with theirs."""
    tree: list[Any] = []
    for name, v in value.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            v = v[0]
        tree.append(
            (name, example_tree(v)) if isinstance(v, dict) and name != "overshoot" else name
        )
    return tree


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def test_the_ledger_schema_has_the_specs_fields_in_the_specs_order() -> None:
    # and a member's share (a split budget's; the spec's example is pooled), last in its entry
    spec = example_tree(SPEC_LEDGER)
    members = spec.index(("members", example_tree(SPEC_LEDGER["members"][0])))
    share = ("share", ["owner", "cost", "tokens"])
    spec[members] = ("members", [*spec[members][1], share])
    assert key_tree(schemas.SwarmLedger) == spec


def table_fields(page: str, heading: str) -> list[str]:
    """The backticked field names of the first column of the table after ``heading``."""
    text = (ROOT / "docs" / page).read_text()
    table = text[text.index(heading) :].split("\n\n")[1]
    rows = [line.split("|")[1] for line in table.splitlines()[2:]]
    return [name for row in rows for name in re.findall(r"`([a-z_]+)`", row)]


@pytest.mark.parametrize(
    ("heading", "model"),
    [
        ("**`inspect_swarm:spawns`**", schemas.SpawnLedgerEntry),
        ("**`inspect_swarm:messages`**", schemas.MessageLogEntry),
    ],
)
def test_the_entry_schemas_have_the_docs_fields_in_their_order(
    heading: str, model: type[BaseModel]
) -> None:
    assert table_fields("spawning.md", heading) == list(model.model_fields)


def all_models() -> list[type[BaseModel]]:
    return [
        v
        for v in vars(schemas).values()
        if isinstance(v, type)
        and issubclass(v, BaseModel)
        and v.__module__ == schemas.__name__
        and not v.__name__.startswith("_")
    ]


def test_every_field_of_every_schema_has_a_description() -> None:
    found = all_models()
    assert len(found) == 25  # the result 4, the ledger 9, spawns 2, messages 3, subagents 7
    missing = [
        f"{m.__name__}.{name}"
        for m in found
        for name, f in m.model_fields.items()
        if not f.description
    ]
    assert missing == []
    schema = schemas.SwarmLedger.model_json_schema()
    assert schema["properties"]["overshoot"]["description"] == "How far usage went past each cap."
    assert schema["$defs"]["SampleLimits"]["properties"]["time"] == {
        "anyOf": [{"type": "integer"}, {"type": "number"}, {"type": "null"}],
        "description": "Seconds.",
        "title": "Time",
    }


def test_every_schema_refuses_unknown_fields_and_is_frozen() -> None:
    for model in all_models():
        assert model.model_config.get("extra") == "forbid", model
        assert model.model_config.get("frozen") is True, model


def test_optional_means_the_type_admits_null() -> None:
    assert optional(int | None) and optional(typing.Optional[int])  # noqa: UP045
    assert optional(schemas.SampleLimits.model_fields["time"].annotation)
    assert not optional(int) and not optional(list[int | None])
