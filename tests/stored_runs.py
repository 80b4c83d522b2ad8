"""Real runs of the scripted model whose stored records ``test_record_schemas.py`` pins byte for
byte, each read back from its log file.

Every step's usage is given, and the swarm's clock is the test's (``Clock``: ``SwarmRun.now``
reads it, only the ``set_clock`` tool moves it), so every value in the ledger, the spawn ledger,
the message log and the result record is the same on every run, whatever the machine's load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
from inspect_ai.log import read_eval_log

from swarm import Budget, channel, member, swarm
from swarm.testing import Step, call, fail, run_eval, scripted_model, submit

from helpers import Clock, clocked, worker

__all__ = ["RECORDS", "RUNS", "Clock", "dumped", "stored"]

RECORDS = (
    "inspect_swarm:result",
    "inspect_swarm:ledger",
    "inspect_swarm:spawns",
    "inspect_swarm:messages",
)
"""The records pinned: the three with readers, and the result record."""


def used(step: Step, tokens: int = 100) -> Step:
    """``step`` with its usage given: ``tokens`` in, a tenth of them out."""
    return attrs.evolve(step, usage=(tokens, tokens // 10))


def at(t: float) -> Step:
    return used(call("set_clock", t=t))


def stored(log: Any) -> dict[str, Any]:
    """The pinned records of the log's one sample, as its log file holds them."""
    [sample] = read_eval_log(log.location).samples or []
    return {key: sample.store[key] for key in RECORDS if key in sample.store}


def dumped(record: Any) -> str:
    """A record's JSON text: every key in order, every number as written (``600`` is not
    ``600.0``)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


def spec_ledger(log_dir: Path) -> dict[str, Any]:
    """Two members, a cost cap of $1 and a time cap of 600 seconds (the spec's example), priced."""
    model = scripted_model({"*": [used(call("noop", i=1), 1000), used(submit("42"), 200)]})
    solver = swarm(members=member(worker, count=2), budget=Budget(cost=1.0, time=600))
    return stored(run_eval(solver, model=model, log_dir=log_dir))


def whole_numbers(log_dir: Path) -> dict[str, Any]:
    """Numbers the ledger writes as they were given, whole ones included: the sample's limits
    (``time_limit=600``, ``cost_limit=5``), a split weight of ``2`` and a token overshoot of
    99; priced."""
    model = scripted_model({"*": [used(call("noop", i=i)) for i in range(10)]})
    solver = swarm(members=member(worker), budget=Budget(tokens=301, time=500, split=[2]))
    limits = {
        "token_limit": 20_000,
        "message_limit": 50,
        "time_limit": 600,
        "working_limit": 300,
        "cost_limit": 5,
    }
    return stored(run_eval(solver, model=model, log_dir=log_dir, **limits))


def family(log_dir: Path) -> dict[str, Any]:
    """The lead spawns a, a spawns g; g messages the lead, is refused a child (too deep) and ends
    without replying to a; a replies to the lead and errors; the receipts, the notices and the
    reads give every kind of entry and ``seen``."""
    scripts = {
        "lead": [
            used(call("spawn_child", name="a", task="t")),
            used(call("wait_for_children")),
            at(7.0),
            used(call("swarm_wait", timeout=5)),
            used(call("read_messages")),
            at(9.0),
            used(submit("done")),
        ],
        "a": [
            used(call("spawn_child", name="g", task="t")),
            used(call("wait_for_children")),
            at(4.0),
            used(call("send_message", to="parent", text="a: 答え 42 🎉")),
            at(5.0),
            used(fail("boom")),
        ],
        "g": [
            at(2.0),
            used(call("send_message", to="lead", text="g: 見た 😀")),
            at(3.0),
            used(call("spawn_child", name="h", task="deeper")),
            used(submit("ok")),
        ],
    }
    solver = swarm(
        members=[member(clocked, name="lead", can_spawn=["worker"])],
        templates={"worker": member(clocked, can_spawn=["worker"])},
        channels=[channel("messages", routes="all", max_wait=2)],
    )
    return stored(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))


RUNS = {"spec_ledger": spec_ledger, "whole_numbers": whole_numbers, "family": family}
"""Each run by name, as ``tests/data/stored_records.json`` holds its records; the first two are
priced (the ``priced`` fixture), the last is not."""
