"""Children sharing one sandbox (``sandboxes.share``) get their reads credited to the member
whose command made them: members take turns in a shared environment (``swarm._run.turns``).

Without turns, an event in a shared directory went to whichever member's call ended first: a
child that read its shard at once and then worked on had its read credited to a sibling whose
call ended sooner, so an honest run failed proof_of_work.  The end-to-end tests run with the
turns as ``MemberSandboxes._use`` hooks them up (each call of a member's ``WatchedSandbox`` in
its turn), and check that the run with the turns off fails.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from inspect_ai.log import EvalSample

from swarm._run.turns import RUNTIME, Turns, turns_for
from swarm.plugins.scorers.fanout import fanout_topology, honest_scripts, load_fixture
from swarm.plugins.scorers.fanout._task import shard_files
from tests.fanout_records import run_fixture_task, score

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
FIRST, SECOND = SHARDS[0], SHARDS[1]

# -- the turns ---------------------------------------------------------------------------------


async def _in_turn(turns: Turns, member: str, log: list[str], hold: anyio.Event) -> None:
    async with turns.turn(member):
        log.append(f"{member} in")
        await hold.wait()
        log.append(f"{member} out")


@pytest.mark.anyio
async def test_members_take_turns_first_come_first_served_and_a_members_calls_overlap() -> None:
    turns = Turns()
    log: list[str] = []
    a1, a2, b, a3 = (anyio.Event() for _ in range(4))
    async with anyio.create_task_group() as tg:
        tg.start_soon(_in_turn, turns, "a", log, a1)
        await anyio.sleep(0.01)
        tg.start_soon(_in_turn, turns, "a", log, a2)  # a's own calls overlap
        await anyio.sleep(0.01)
        tg.start_soon(_in_turn, turns, "b", log, b)  # b waits for a
        await anyio.sleep(0.01)
        tg.start_soon(_in_turn, turns, "a", log, a3)  # b asked first: a waits for b
        await anyio.sleep(0.01)
        assert (log, turns.holder) == (["a in", "a in"], "a")
        a1.set()
        a2.set()
        await anyio.sleep(0.01)
        assert (log[2:], turns.holder) == (["a out", "a out", "b in"], "b")
        b.set()
        await anyio.sleep(0.01)
        assert log[5:] == ["b out", "a in"]
        a3.set()
    assert (log[-1], turns.holder) == ("a out", None)


@pytest.mark.anyio
async def test_a_waiter_cancelled_leaves_the_line_and_the_turn_passes_on() -> None:
    turns = Turns()
    log: list[str] = []
    a, b, c = anyio.Event(), anyio.Event(), anyio.Event()
    scopes: list[anyio.CancelScope] = []

    async def cancelled_b() -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await _in_turn(turns, "b", log, b)

    async with anyio.create_task_group() as tg:
        tg.start_soon(_in_turn, turns, "a", log, a)
        await anyio.sleep(0.01)
        tg.start_soon(cancelled_b)  # b waits first, then c
        await anyio.sleep(0.01)
        tg.start_soon(_in_turn, turns, "c", log, c)
        await anyio.sleep(0.01)
        scopes[0].cancel()  # b leaves the line
        await anyio.sleep(0.01)
        a.set()
        await anyio.sleep(0.01)
        assert turns.holder == "c"
        c.set()
    assert log == ["a in", "a out", "c in", "c out"]
    assert turns.holder is None


def test_each_environment_has_its_turns() -> None:
    class Environment:
        pass

    one, other = Environment(), Environment()
    assert turns_for(one) is turns_for(one)
    assert turns_for(one) is not turns_for(other)
    assert RUNTIME == ""


# -- an honest fan-out with two children in one sandbox ----------------------------------------


def _racing_scripts() -> dict[str, list[dict[str, Any]]]:
    """The second child reads its shard at once and works on for 4 s; the first sleeps 2 s and
    then reads its own: the first's call ends while the second's runs."""
    scripts = copy.deepcopy(honest_scripts(FIXTURE))
    scripts[FIRST.worker][0] = {
        "tool": "bash",
        "args": {"command": f"sleep 2; wc -l shards/{FIRST.file}"},
    }
    scripts[SECOND.worker][0] = {
        "tool": "bash",
        "args": {"command": f"wc -l shards/{SECOND.file}; sleep 4"},
    }
    return scripts


def _run_shared() -> EvalSample:
    sandboxes = {
        "per_member": True,
        "share": [[FIRST.worker, SECOND.worker]],
        "files": shard_files(FIXTURE),
    }
    return run_fixture_task(fanout_topology(FIXTURE, sandboxes=sandboxes), _racing_scripts())


def _reads(sample: EvalSample) -> set[tuple[str, str]]:
    entries = sample.store["inspect_swarm:reads"]["entries"]
    return {
        (e["member"], e["path"])
        for e in entries
        if e["op"] in ("open", "read") and e["path"].startswith("shards/")
    }


def test_shared_sandbox_reads_go_to_the_member_whose_command_made_them() -> None:
    sample = _run_shared()
    assert _reads(sample) == {(s.worker, f"shards/{s.file}") for s in SHARDS}
    found = score(sample)
    assert found.value == {
        "coverage": True,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": True,
        "resolved": False,  # two shards' children in one sandbox: not isolated
        "unverified": True,
    }
    assert found.metadata["isolation"]["problems"] == [
        f"environment '{FIRST.worker}' is shared by {FIRST.worker}, {SECOND.worker}"
    ]


def test_without_turns_the_first_call_to_end_takes_the_others_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the turns fix: with them off, the second child's read, made while the first child's
    call ran, is credited to the first, whose call ended first."""

    @asynccontextmanager
    async def anyone(self: Turns, member: str) -> AsyncIterator[None]:
        yield

    monkeypatch.setattr(Turns, "turn", anyone)
    sample = _run_shared()
    reads = _reads(sample)
    assert (FIRST.worker, f"shards/{SECOND.file}") in reads
    assert (SECOND.worker, f"shards/{SECOND.file}") not in reads
    assert score(sample).value["proof_of_work"] is False
