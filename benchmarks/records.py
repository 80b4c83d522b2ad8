"""What building the stored records costs: the ledger, the spawn ledger and the message log,
each built many times from fixed inputs, best of several rounds (a benchmark, not a timed test).

    python benchmarks/records.py                 # 1,000 builds each, members = 2 and 32
    python benchmarks/records.py --builds 5000 --rounds 7

The inputs are the record builders' own (an ``Accounts`` with metered members, ``SpawnEntry``s,
the ``messages`` channel's mailbox), so the figures are the builders' cost alone, without a run
around them: compare two checkouts by running this script in each.  The message log is timed as
the channel gives it and as the kernel writes it (through its schema, ``MessageLog``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ModelUsage

from swarm import Budget, MemberLimits
from swarm._accounts.accounts import Accounts
from swarm._report.events import CallCounts, RunEvents
from swarm._report.ledger import build_ledger
from swarm._report.outcome import MemberEnd
from swarm._report.spawns import SpawnEntry, build_spawns
from swarm.plugins.channels._mailbox import Mailbox
from swarm.records import MemberInfo


def _ledger_inputs(members: int) -> Callable[[], Any]:
    names = [f"m{i}" for i in range(members)]
    accounts = Accounts(Budget(tokens=10**9))
    events = RunEvents()
    for name in names:
        accounts.add_member(name, MemberLimits())
        accounts.charge(name, ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110))
        events.calls[name] = CallCounts(calls=1)
    ends = [
        MemberEnd(
            info=MemberInfo(name=name),
            state="ended",
            status="submitted",
            started=0.0,
            ended=1.0,
            error=None,
            span_id="span",
            delivery="notify",
            own_loop=None,
            continue_wired=False,
        )
        for name in names
    ]

    def build() -> Any:
        return build_ledger(
            accounts=accounts,
            events=events,
            members=ends,
            stop_reason="all_done",
            ended_by=None,
            interrupted=False,
            final_cancelled=False,
            wall_clock=1.0,
        )

    return build


def _spawn_inputs(entries: int) -> Callable[[], Any]:
    found = [
        SpawnEntry(
            seq=i + 1,
            time=float(i),
            op="spawn",
            member=f"c{i}",
            requested=f"c{i}",
            parent="lead",
            depth=1,
            template="worker",
            task="t",
            status=None,
            reason=None,
        )
        for i in range(entries)
    ]
    return lambda: build_spawns(found)


def _message_inputs(entries: int, *, schema: bool) -> Callable[[], Any]:
    """The message log as the channel gives it, or as the kernel writes it (``schema``: through
    ``MessageLog``)."""
    mailbox = Mailbox()
    for i in range(entries):
        mailbox.deliver(
            time=float(i),
            kind="message",
            sender=f"c{i}",
            recipient="lead",
            relationship="child",
            text="42",
        )
    if not schema:
        return lambda: {"version": 1, "messages": [e.as_dict() for e in mailbox.log]}
    from swarm._schemas import MessageLog

    def build() -> Any:
        record = {"version": 1, "messages": [e.as_dict() for e in mailbox.log]}
        return MessageLog.model_validate(record).model_dump()

    return build


def best(build: Callable[[], Any], builds: int, rounds: int) -> float:
    """Microseconds of CPU time per build, best of ``rounds`` (CPU time: another process on the
    machine does not count)."""
    times = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(builds):
            build()
        times.append(time.process_time() - start)
    return min(times) / builds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builds", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'record':<24}{'size':>6}{'us per build':>16}")
    for size in (2, 32):
        cases = [
            ("ledger (members)", _ledger_inputs(size)),
            ("spawn ledger (entries)", _spawn_inputs(size)),
            ("message log, as given", _message_inputs(size, schema=False)),
            ("message log, written", _message_inputs(size, schema=True)),
        ]
        for what, build in cases:
            print(f"{what:<24}{size:>6}{best(build, args.builds, args.rounds):>16.1f}")


if __name__ == "__main__":
    main()
