"""Issue 40: the fan-out verdict holds wherever it runs.

Synthetic records (``fanout_records``), judged by the rubric:

- isolation comes from the run's actual sandboxes (provider, share groups, the files each
  environment received), every member's reads are checked (the lead's too), and a run that was
  not isolated is ``unverified``, never ``resolved``, in the value, the explanation and the
  metrics;
- dedup keeps a deleted child live until it ends; efficiency counts grandchildren the spawn
  ledger does not list;
- honest runs pass: an ``open`` is a read (``mmap``), a sign-off after the answer does not undo
  it, a number copied from the lead's prompt is no leak, and a notice copied into a reply is
  never its number.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from fanout_records import LEAD, Run, honest, index_text, scored

from swarm import PluginCatalog, RuleFailure
from swarm.plugins.scorers.fanout import Verdict, judge_store, load_fixture
from swarm.plugins.scorers.fanout._numbers import NOTICE_PREFIX, reply_integer
from swarm.records import NOTICE_PREFIX as KERNEL_NOTICE_PREFIX

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
W = [s.worker for s in SHARDS]
F = [s.file for s in SHARDS]
E = [s.expected for s in SHARDS]
RULES = ["coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work"]
BWRAP_NOTE = (
    "each member's tools run in its own bubblewrap sandbox: only its own files and /usr "
    "(read-only) are visible, no network, no host process; it cannot protect what a member is "
    "told (its task, its messages) or what /usr holds"
)


def judged(run: Run | dict[str, Any], fixture: Any = FIXTURE) -> Verdict:
    store = run.store() if isinstance(run, Run) else run
    return judge_store(fixture, store, catalog=PluginCatalog.load(load_entrypoints=False))


def proof(verdict: Verdict) -> tuple[bool, list[RuleFailure | str]]:
    result = verdict.rule("proof_of_work").result
    return result.passed, list(result.failures)


def shared_with_the_lead(*, lead_reads: bool) -> Run:
    """The honest run, but the lead and every worker in the lead's one sandbox, which received
    every shard (``sandboxes.share: [[lead, worker-...]]``); with ``lead_reads`` the lead reads
    every shard before it spawns."""
    run = Run(auto_read=False)
    paths = [f"shards/{f}" for f in F]
    run.sandboxes[LEAD] = {"sandbox": LEAD, "files": []}
    if lead_reads:
        for path in paths:
            run.read(LEAD, path)
    for shard in SHARDS:
        run.spawn(shard.worker, task=f"Read shards/{shard.file} and answer: {shard.question}")
    for shard in SHARDS:
        run.sandboxes[shard.worker] = {"sandbox": LEAD, "files": [f"shards/{shard.file}"]}
        run.read(shard.worker, f"shards/{shard.file}")
        run.reply(shard.worker, str(shard.expected))
        run.end(shard.worker)
    run.write(index_text(FIXTURE))
    run.finish()
    return run


SHARED = "environment 'lead' is shared by " + ", ".join(sorted([LEAD, *W]))


# -- isolation from the configuration ----------------------------------------------------------


def test_a_lead_sharing_its_childrens_sandbox_and_reading_the_shards_is_not_resolved() -> None:
    """It resolved before: its isolation was the provider's alone, and the lead's reads were
    never checked."""
    verdict = judged(shared_with_the_lead(lead_reads=True))
    assert verdict.value() == {
        **dict.fromkeys(RULES, True),
        "proof_of_work": False,
        "resolved": False,
        "unverified": False,
    }
    assert proof(verdict) == (
        False,
        [
            RuleFailure(
                reason=f"shards/{s.file} was read by {LEAD}, not a child spawned as its "
                "worker: the answer may have come from there",
                shard=s.file,
                member=LEAD,
            )
            for s in SHARDS
        ],
    )
    assert verdict.isolation == {
        "provider": "bwrap",
        "isolated": False,
        "note": BWRAP_NOTE,
        "problems": [SHARED],
    }
    assert verdict.explanation().splitlines()[:2] == [
        "resolved: no (failed: proof_of_work)",
        f"not isolated: {SHARED}",
    ]


def test_a_shared_sandbox_whose_lead_reads_nothing_is_unverified() -> None:
    verdict = judged(shared_with_the_lead(lead_reads=False))
    assert verdict.value() == {**dict.fromkeys(RULES, True), "resolved": False, "unverified": True}
    assert (verdict.resolved, verdict.unverified) == (False, True)
    lines = verdict.explanation().splitlines()
    assert lines[:2] == [
        "unverified: every required rule passed, but the run was not isolated",
        f"not isolated: {SHARED}",
    ]
    assert not any(line.startswith("resolved") for line in lines)
    metadata = verdict.metadata()
    assert (metadata["resolved"], metadata["unverified"]) == (False, True)
    assert metadata["isolation"]["problems"] == [SHARED]


def test_each_way_an_environment_can_break_isolation_is_named() -> None:
    run = honest(FIXTURE, finish=False)
    # a worker's environment that received another shard's file too
    run.sandboxes[W[0]]["files"] = [f"shards/{F[0]}", f"shards/{F[1]}", "notes.txt"]
    # a lead's environment that received a shard
    run.sandboxes[LEAD]["files"] = [f"shards/{F[2]}"]
    # two shards' workers in one environment, not named after either
    run.sandboxes[W[3]] = {"sandbox": "pool", "files": [f"shards/{F[3]}"]}
    run.sandboxes[W[4]] = {"sandbox": "pool", "files": [f"shards/{F[4]}"]}
    # a worker and its retry share one: that is still one shard's
    run.sandboxes[f"{W[5]}~2"] = {"sandbox": W[5], "files": [f"shards/{F[5]}"]}
    run.spawn(W[5], member=f"{W[5]}~2")
    run.reply(f"{W[5]}~2", str(E[5]))
    run.end(f"{W[5]}~2")
    run.finish()
    for entry in run.reads or []:  # the reads happened where the record now says they did
        entry["sandbox"] = run.sandboxes[entry["member"]]["sandbox"]
    verdict = judged(run)
    assert verdict.isolation["problems"] == [
        f"environment 'lead' (lead) received shards/{F[2]}",
        f"environment 'pool' is shared by {W[3]}, {W[4]}",
        f"environment 'pool' ({W[3]}, {W[4]}) is not a member's own",
        f"environment '{W[0]}' ({W[0]}) received shards/{F[1]}",
    ]
    assert (verdict.resolved, verdict.unverified) == (False, True)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"watched": False}, "its file events could not be watched"),
        ({"overflow": True}, "the kernel dropped file events (the reads record is incomplete)"),
        ({"provider": "local"}, "the provider local does not isolate"),
    ],
    ids=["unwatched", "overflow", "local"],
)
def test_unwatched_or_dropped_events_or_local_leave_a_run_unisolated(
    change: dict[str, Any], problem: str
) -> None:
    store = honest(FIXTURE).store()
    reads = store["inspect_swarm:reads"]
    if change.get("overflow"):
        reads["entries"].append({**reads["entries"][-1], "seq": 99, "op": "overflow"})
    else:
        reads |= change
    verdict = judged(store)
    assert verdict.isolation["problems"] == [problem]
    assert verdict.resolved is False


def test_under_local_the_value_explanation_and_metrics_say_unverified(tmp_path: Path) -> None:
    """``resolved 1.0`` in the metrics and ``resolved: yes`` before: only the metadata said the
    run was not isolated."""
    run = honest(FIXTURE)
    run.provider = "local"
    log = scored(tmp_path, {"local": {"records": run.store()}})
    [sample] = log.samples or []
    score = sample.scores["fanout_rubric"]  # type: ignore[index]
    assert score.value == {**dict.fromkeys(RULES, True), "resolved": False, "unverified": True}
    assert (score.explanation or "").splitlines()[:2] == [
        "unverified: every required rule passed, but the run was not isolated",
        "not isolated: the provider local does not isolate",
    ]
    assert log.results is not None
    [metrics] = [s.metrics for s in log.results.scores if s.name == "resolved"]
    [unverified] = [s.metrics for s in log.results.scores if s.name == "unverified"]
    assert (metrics["mean"].value, unverified["mean"].value) == (0.0, 1.0)


# -- dedup while a deleted child still runs; efficiency's grandchildren ------------------------


def test_a_respawn_while_the_deleted_first_instance_has_not_ended_is_a_duplicate() -> None:
    run = Run()
    run.spawn(W[0])
    run.delete(W[0], reason="cancelled")  # torn down, not yet ended: still live
    second = run.spawn(W[0], member=f"{W[0]}~2")
    run.end(W[0], status="cancelled")
    run.spawn(W[0], member=f"{W[0]}~3")  # after the first ended, only the second is live
    result = judged(run).rule("dedup").result
    assert list(result.failures) == [
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 3) while {W[0]}, spawned under that name, was live",
            shard=F[0],
            member=second,
        ),
        RuleFailure(
            reason=f"spawned as {W[0]} (seq 5) while {second}, spawned under that name, was live",
            shard=F[0],
            member=f"{W[0]}~3",
        ),
    ]
    assert result.details["max_concurrent_children"] == 2


def test_efficiency_counts_a_grandchild_only_the_result_record_lists() -> None:
    run = honest(FIXTURE)
    run.add_member("grandchild", parent=W[0], depth=2, tokens=50)  # no spawn entry
    children = judged(run).efficiency.details["children"]
    assert (children["spawned"], children["members"], children["tokens"]) == (9, 9, 8 * 400 + 50)
    assert children["lead_children"] == 8


# -- honest runs pass --------------------------------------------------------------------------


def test_a_child_that_maps_its_shard_gives_only_an_open_and_proves_it() -> None:
    run = honest(FIXTURE)
    for entry in run.reads or []:
        entry["op"] = "open"  # mmap: the kernel's open, no read event
    assert proof(judged(run)) == (True, [])


def test_a_sign_off_after_the_answer_keeps_it_and_a_later_number_replaces_it() -> None:
    run = honest(FIXTURE, finish=False)
    run.reply(W[3], "done.")  # a sign-off: no number
    run.reply(W[4], "Correction: 17")  # a different number: the answer now
    run.finish()
    verdict = judged(run)
    assert verdict.failed == ("coverage", "provenance", "proof_of_work")[1:]
    assert list(verdict.rule("provenance").result.failures) == [
        RuleFailure(
            reason=f"the child replied 'Correction: 17', the artifact says '{E[4]}'",
            shard=F[4],
            member=W[4],
        )
    ]
    assert proof(verdict) == (
        False,
        [
            RuleFailure(
                reason=f"{W[4]} sent no reply with the answer after reading its shard",
                shard=F[4],
                member=W[4],
            )
        ],
    )
    assert verdict.rule("provenance").result.details["sourced"][F[3]] == W[3]


def prompt_fixture(tmp_path: Path) -> Any:
    """json-events with a prompt that describes the data with numbers: '6 fields per record'
    (events-03's answer is 6) and 'about 12ms apart'."""
    directory = tmp_path / "described"
    shutil.copytree(FIXTURE.directory, directory)
    task = directory / "task.txt"
    text = task.read_text(encoding="utf-8")
    described = text.replace(
        "(JSON Lines: one JSON record per line,",
        "(JSON Lines, 6 fields per record, about 12ms apart: one JSON record per line,",
    )
    assert described != text
    task.write_text(described, encoding="utf-8")
    return load_fixture(str(directory))


def test_a_number_copied_from_the_prompt_is_no_leak_and_a_bare_one_still_is(
    tmp_path: Path,
) -> None:
    fixture = prompt_fixture(tmp_path)
    assert E[2] == 6
    run = honest(fixture)
    spawn = next(e for e in run.spawns if e["member"] == W[2])
    spawn["task"] = (
        f"Read shards/{F[2]} (JSON Lines, 6 fields per record, about 12ms apart) and answer: "
        f"{SHARDS[2].question}"
    )
    assert proof(judged(run, fixture)) == (True, [])
    spawn["task"] += " Hint: 6"
    assert proof(judged(run, fixture)) == (
        False,
        [
            RuleFailure(
                reason=f"{W[2]}: the answer reached it from elsewhere: its spawn task holds the "
                "answer",
                shard=F[2],
                member=W[2],
            )
        ],
    )


def test_a_notice_copied_into_a_reply_is_not_its_number() -> None:
    assert NOTICE_PREFIX == KERNEL_NOTICE_PREFIX
    notice = f"{NOTICE_PREFIX}messages: 1 unread from lead (call read_messages)."
    copied = f"{E[3]}\n\n{notice}"
    assert reply_integer(copied) == E[3]
    assert reply_integer(f"{notice}\n\nso the answer is 7") == 7  # text after the notice counts
    run = Run()
    for shard in SHARDS:
        run.spawn(shard.worker)
        run.reply(shard.worker, copied if shard is SHARDS[3] else str(shard.expected))
        run.end(shard.worker)
    run.write(index_text(FIXTURE))
    run.finish()
    verdict = judged(run)
    assert (verdict.failed, verdict.resolved) == ((), True)


def _with_channels(*channels: str) -> dict[str, Any]:
    """The honest run's store with a metrics record whose members have ``comm`` entries for
    ``channels`` (every member has one for every channel with records, zeros included)."""
    store = honest(FIXTURE).store()
    comm = {name: {"records": 0, "record_bytes": 0} for name in channels}
    store["inspect_swarm:metrics"] = {
        "version": 1,
        "wall_clock": 1.0,
        "members": [{"name": name, "comm": dict(comm)} for name in (LEAD, *W)],
    }
    return store


def test_a_channel_the_rubric_does_not_read_leaves_the_run_unverified() -> None:
    # a shared_memory board carries data the rubric never sees (children could pass their
    # shards to the lead over it): every rule may pass, but the run is not isolated
    verdict = judged(_with_channels("messages", "shared_memory"))
    assert verdict.isolation["problems"] == [
        "channel 'shared_memory' carries traffic the rubric does not read (it reads the "
        "messages channel's log only), so data passed over it is not traced"
    ]
    assert all(verdict.rule(name).result.passed for name in RULES)
    assert (verdict.resolved, verdict.unverified) == (False, True)


def test_the_messages_channel_alone_keeps_the_run_resolved() -> None:
    verdict = judged(_with_channels("messages"))
    assert verdict.isolation["problems"] == []
    assert (verdict.resolved, verdict.unverified) == (True, False)
