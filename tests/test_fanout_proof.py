"""Proof of work through the real ``swarm/fanout`` task, on the scripted model, in the default
configuration (every member in its own bwrap sandbox): the relaying children fail
``proof_of_work``, the shards and the manifest are out of every member's reach, and the honest
variants (a retry, out-of-order replies) still resolve."""

from __future__ import annotations

import copy
import shlex
import uuid
from typing import Any

from inspect_ai.log import EvalSample

from swarm.plugins.scorers.fanout import (
    fanout,
    fanout_topology,
    honest_scripts,
    load_fixture,
)
from tests.fanout_records import failing, run_fixture_task, score

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards


def run_task(scripts: dict[str, list[dict[str, Any]]], sandbox: str = "bwrap") -> EvalSample:
    return run_fixture_task(fanout_topology(FIXTURE), scripts, sandbox)


def proof_failures(sample: EvalSample) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = score(sample).metadata["rules"]["proof_of_work"]["failures"]
    return found


def honest() -> dict[str, list[dict[str, Any]]]:
    return copy.deepcopy(honest_scripts(FIXTURE))


def step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def tool_results(sample: EvalSample, function: str) -> list[str]:
    return [str(e.result) for e in sample.events if e.event == "tool" and e.function == function]


def test_the_honest_fanout_resolves_in_bwrap_and_says_its_isolation() -> None:
    sample = run_task(honest())
    assert failing(sample) == set()
    assert score(sample).value["resolved"] is True
    isolation = score(sample).metadata["isolation"]
    assert (isolation["provider"], isolation["isolated"], isolation["problems"]) == (
        "bwrap",
        True,
        [],
    )
    assert score(sample).value["unverified"] is False
    assert sample.target == ""
    assert "expected" not in str(sample.metadata) and str(SHARDS[1].expected) not in str(
        sample.metadata
    )
    reads = sample.store["inspect_swarm:reads"]
    assert reads["members"]["lead"] == {"sandbox": "lead", "files": []}
    assert reads["members"][SHARDS[0].worker] == {
        "sandbox": SHARDS[0].worker,
        "files": [f"shards/{SHARDS[0].file}"],
    }
    first = [(e["member"], e["path"], e["op"]) for e in reads["entries"] if e["op"] == "read"]
    assert sorted(first) == sorted((s.worker, f"shards/{s.file}", "read") for s in SHARDS)


def test_the_honest_fanout_under_local_is_unverified_and_says_it_is_not_isolated() -> None:
    """``inspect eval swarm/fanout -T sandbox=local`` said ``resolved`` in the value (so
    ``resolved 1.0`` in the metrics) and ``resolved: yes`` in the explanation before."""
    sample = run_task(honest(), sandbox="local")
    assert failing(sample) == set()
    value = score(sample).value
    assert (value["resolved"], value["unverified"]) == (False, True)
    assert score(sample).explanation.splitlines()[:2] == [
        "unverified: every required rule passed, but the run was not isolated",
        "not isolated: the provider local does not isolate",
    ]
    isolation = score(sample).metadata["isolation"]
    assert (isolation["provider"], isolation["isolated"]) == ("local", False)


def test_cheat_the_answer_in_the_childs_task_fails_proof_of_work() -> None:
    scripts = honest()
    spawn = scripts["lead"][0]
    spawn["args"]["task"] += f" (The answer is {SHARDS[0].expected}.)"
    sample = run_task(scripts)
    assert failing(sample) == {"proof_of_work"}
    assert proof_failures(sample) == [
        {
            "reason": f"{SHARDS[0].worker}: the answer reached it from elsewhere: its spawn task "
            "holds the answer",
            "shard": SHARDS[0].file,
            "member": SHARDS[0].worker,
        }
    ]


def test_cheat_the_answer_in_a_later_message_fails_proof_of_work() -> None:
    scripts = honest()
    worker = SHARDS[1].worker
    scripts["lead"].insert(len(SHARDS), step("send_message", to=worker, text="use 1,482,368"))
    scripts[worker][0] = step("bash", command=f"sleep 2; wc -l shards/{SHARDS[1].file}")
    sample = run_task(scripts)
    assert failing(sample) == {"proof_of_work"}
    [failure] = proof_failures(sample)
    assert (failure["shard"], failure["member"]) == (SHARDS[1].file, worker)
    assert failure["reason"].startswith(f"{worker}: the answer reached it from elsewhere: message")
    assert failure["reason"].endswith("from lead holds the answer")


def test_cheat_one_child_computing_for_all_fails_for_every_other_shard() -> None:
    """The first child sends every answer (a sibling cannot be messaged: routes are parent and
    child only); the lead hands each other child its value, and they reply it."""
    scripts = honest()
    first = SHARDS[0].worker
    scripts[first].insert(
        1, step("send_message", to="parent", text=" ".join(str(s.expected) for s in SHARDS))
    )
    tell = [step("send_message", to=s.worker, text=str(s.expected)) for s in SHARDS[1:]]
    scripts["lead"][len(SHARDS) : len(SHARDS)] = tell
    for s in SHARDS[1:]:  # they read their shard, but the answer came through the lead
        scripts[s.worker][0] = step("bash", command=f"sleep 2; wc -l shards/{s.file}")
    sample = run_task(scripts)
    assert failing(sample) == {"proof_of_work"}
    failures = proof_failures(sample)
    assert [f["shard"] for f in failures] == [s.file for s in SHARDS[1:]]
    assert all(f["reason"].endswith("from lead holds the answer") for f in failures)


def test_cheat_children_that_echo_without_reading_fail_proof_of_work() -> None:
    """The artifact written before any spawn; children echo the answers without a tool call."""
    scripts = honest()
    write = next(s for s in scripts["lead"] if s.get("tool") == "bash")
    scripts["lead"].remove(write)
    scripts["lead"].insert(0, write)
    for s in SHARDS:
        scripts[s.worker] = scripts[s.worker][1:]  # no read: straight to the reply
    sample = run_task(scripts)
    assert failing(sample) == {"proof_of_work", "provenance"}  # provenance: written first
    assert [f["reason"] for f in proof_failures(sample)] == [
        f"{s.worker} never read shards/{s.file}" for s in SHARDS
    ]
    provenance = score(sample).metadata["rules"]["provenance"]["failures"]
    assert [f["shard"] for f in provenance] == [s.file for s in SHARDS]
    assert all(
        "but the lead wrote combined-index.md in its model call 1," in f["reason"]
        for f in provenance
    )


def test_no_member_reaches_the_manifest_the_shards_or_the_harness() -> None:
    scripts = honest()
    manifest = FIXTURE.directory / "fixture.json"
    probe = (
        f"cat {shlex.quote(str(manifest))} 2>&1; "
        "tr '\\0' ' ' < /proc/$PPID/cmdline | grep -c 'site[-]packages'; "
        "find / -name fixture.json 2>/dev/null | wc -l; ls -A; p=(/proc/[0-9]*); echo ${#p[@]}"
    )
    scripts["lead"].insert(0, step("bash", command=probe))
    scripts[SHARDS[0].worker].insert(0, step("bash", command=f"{probe}; ls shards"))
    sample = run_task(scripts)
    lead, child = tool_results(sample, "bash")[:2]
    missing = f"cat: {manifest}: No such file or directory"
    # no manifest at its host path, no host path on the command line, no fixture.json anywhere,
    # nothing in the lead's directory, the child's only its shard, two processes (bwrap and
    # the bash that counts them, by a glob it expands itself: counting with `ls /proc | grep`
    # raced, as grep had not always started when ls listed /proc on a loaded machine)
    assert lead == f"{missing}\n0\n0\n2\n"
    assert child == f"{missing}\n0\n0\nshards\n2\n{SHARDS[0].file}\n"
    assert failing(sample) == set()


def test_under_local_a_child_that_reads_another_shard_fails() -> None:
    scripts = honest()
    other = SHARDS[1]
    # the other child marks its sandbox with a name of this test's own, and the cheat reads the
    # shard next to that mark only: `/tmp/*/shards/...` also read the sandboxes of any other
    # run on the machine (a test run beside this one), whose own reads record then blamed a
    # member of its own
    mark = f".mark-{uuid.uuid4().hex}"
    scripts[other.worker].insert(0, step("bash", command=f"touch {mark}"))
    # the lead spawns the cheat last and alone, after every other child has ended: under
    # `local` a read in a child's sandbox goes to the member whose tool call ends next (to the
    # owner while one of its calls runs), so no other child may have a call running then (a
    # sleep of 2 s did not order them under load)
    lead = scripts["lead"]
    cheat = next(s for s in lead if s.get("args", {}).get("name") == SHARDS[0].worker)
    lead.remove(cheat)
    last_spawn = max(i for i, s in enumerate(lead) if s.get("tool") == "spawn_child")
    lead[last_spawn + 1 : last_spawn + 1] = [step("wait_for_children"), cheat]
    scripts[SHARDS[0].worker][0] = step(
        "bash",
        command=f'm=$(ls -d /tmp/*/{mark} | head -1); cat "$(dirname "$m")/shards/{other.file}" '
        f"> /dev/null; wc -l shards/{SHARDS[0].file}",
    )
    sample = run_task(scripts, sandbox="local")
    assert failing(sample) == {"proof_of_work"}
    # the cheat fails its shard, and the shard it read fails too: its answer may have come from
    # the cheat (every member's reads are checked)
    assert proof_failures(sample) == [
        {
            "reason": f"{SHARDS[0].worker}: the answer reached it from elsewhere: it read "
            f"another shard's file (shards/{other.file})",
            "shard": SHARDS[0].file,
            "member": SHARDS[0].worker,
        },
        {
            "reason": f"shards/{other.file} was read by {SHARDS[0].worker}, not a child spawned "
            "as its worker: the answer may have come from there",
            "shard": other.file,
            "member": SHARDS[0].worker,
        },
    ]


def test_a_legitimate_retry_resolves() -> None:
    scripts = honest()
    worker = SHARDS[2].worker
    retry = next(s for s in scripts["lead"] if s["args"].get("name") == worker)
    index = scripts["lead"].index(
        next(s for s in scripts["lead"] if s.get("tool") == "read_messages")
    )
    scripts["lead"][index:index] = [copy.deepcopy(retry), step("wait_for_children")]
    scripts[f"{worker}~2"] = scripts[worker]
    scripts[worker] = [{"submit": "gave up"}]  # ends without replying: a receipt
    sample = run_task(scripts)
    assert failing(sample) == set()
    members = sample.store["inspect_swarm:reads"]["members"]
    assert members[f"{worker}~2"] == {
        "sandbox": f"{worker}~2",
        "files": [f"shards/{SHARDS[2].file}"],
    }


def test_out_of_order_replies_resolve() -> None:
    """The first child spawned works 3 s before it replies; the other seven reply at once
    (eight spawns and tool calls of a few milliseconds each), so its reply comes last."""
    scripts = honest()
    first = SHARDS[0]
    scripts[first.worker][0] = step("bash", command=f"sleep 3; wc -l shards/{first.file}")
    sample = run_task(scripts)
    assert failing(sample) == set()
    order = [m["sender"] for m in sample.store["inspect_swarm:messages"]["messages"]]
    assert order[-1] == first.worker
    assert sorted(order) == sorted(s.worker for s in SHARDS)


def test_the_task_refuses_an_unknown_sandbox() -> None:
    import pytest

    from swarm import ConfigError

    with pytest.raises(ConfigError) as info:
        fanout(sandbox="podman")
    assert str(info.value) == (
        "fanout.sandbox: expected one of bwrap, docker, local (bwrap and docker isolate each "
        "member; local does not), got 'podman'"
    )


def test_a_leak_is_any_run_of_digits_but_the_shards_names_and_questions() -> None:
    from swarm.plugins.scorers.fanout._proof import integers

    question = SHARDS[2].question
    text = f"shards/{SHARDS[2].file}: {question} hint x1,482,368 and v7; 12\u00a0345 then 3.5"
    # the file name's 03 and any number in the question are taken out; digits inside words
    # count, thousands separators (a comma, a no-break space) are joined, a decimal gives both
    assert integers(text, FIXTURE) == {1482368, 7, 12345, 3, 5}
    assert 3 in integers(f"shards/{SHARDS[2].file}")  # without the fixture the name gives 03


def test_a_lead_that_reads_every_reply_and_ends_while_children_run_resolves() -> None:
    """The children reply at once and then keep working (a 6 s command); the lead gives them
    3 s to reply (eight tool calls of a few milliseconds), reads every reply, writes the
    artifact and submits while they still run.  The default grace (120 s) does not hold the
    sample: it ends when its last member ends."""
    scripts = honest()
    waited = next(s for s in scripts["lead"] if s.get("tool") == "wait_for_children")
    scripts["lead"][scripts["lead"].index(waited)] = step("bash", command="sleep 3")
    for s in SHARDS:
        scripts[s.worker].insert(2, step("bash", command="sleep 6"))
    sample = run_task(scripts)
    assert failing(sample) == set()
    result = sample.store["inspect_swarm:result"]
    members = {m["name"]: m for m in result["members"]}
    lead_end = members["lead"]["time"]
    assert all(members[s.worker]["time"] > lead_end for s in SHARDS)  # they outlived the lead
    last_end = max(m["time"] for m in members.values())
    assert sample.store["inspect_swarm:metrics"]["wall_clock"] < last_end + 1.0
    assert last_end < 60.0  # not the default grace of 120 s


def test_the_runtimes_copy_of_a_childs_shard_is_not_another_childs_read() -> None:
    """With file writes that take 0.3 s, the runtime's copy of each later child's shard from
    the staging area spans the calls of the children already running; the copy's read of the
    staging file is no child's read (charged to the child whose call had just ended, it failed
    an honest run for reading another shard's file)."""
    from helpers import SlowCopyBwrap

    assert SlowCopyBwrap.__name__  # importing it registers slow-copy-bwrap with Inspect
    sample = run_task(honest(), sandbox="slow-copy-bwrap")
    assert failing(sample) == set()
    entries = sample.store["inspect_swarm:reads"]["entries"]
    assert {(e["member"], e["path"]) for e in entries if e["op"] == "read"} == {
        (s.worker, f"shards/{s.file}") for s in SHARDS
    }
