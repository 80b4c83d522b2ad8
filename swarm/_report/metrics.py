"""The ``inspect_swarm:metrics`` record: how the swarm and each member acted, checked its work,
communicated and waited, field for field as the spec has it.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from inspect_ai.event import ToolEvent

from swarm._accounts.meter import UsageMeter
from swarm._report.counters import CommCounts, WaitCounts
from swarm._report.events import RunEvents
from swarm._report.outcome import MemberEnd, RunOutcome
from swarm._report.result import Gates

__all__ = ["MemberFacts", "build_metrics", "longest_identical_run", "metrics_from"]


@attrs.frozen(kw_only=True)
class MemberFacts:
    """What the metrics need to know of one member besides the events."""

    name: str
    started: float | None
    ended: float | None
    delivery: str
    bridged: bool = False
    own_loop_bound: bool = False
    continue_wired: bool = False
    news_to_own_loop: bool = False
    gate_checks: int = 0
    gate_passes: int = 0
    first_pass_time: float | None = None


def longest_identical_run(tools: Sequence[ToolEvent]) -> int:
    """The longest run of consecutive tool calls with the same function and arguments."""
    # the arguments are the model's, parsed from JSON
    keys = ((e.function, json.dumps(e.arguments, sort_keys=True)) for e in tools)
    return max((len(list(run)) for _, run in itertools.groupby(keys)), default=0)


def _comm(counts: CommCounts) -> dict[str, Any]:
    return {
        "records": counts.records,
        "record_bytes": counts.record_bytes,
        "rejections": dict(counts.rejections),
        "reads": counts.reads,
        "listings": counts.listings,
        "notices": counts.notices,
    }


def build_metrics(
    *,
    swarm: UsageMeter,
    meters: Mapping[str, UsageMeter],
    members: Sequence[MemberFacts],
    events: RunEvents,
    comm: Mapping[tuple[str, str], CommCounts],
    channels: Sequence[str],
    waits: Mapping[str, WaitCounts] | None,
    channel_tools: bool,
    answer: str | None,
    wall_clock: float,
) -> dict[str, Any]:
    """The metrics record as a JSON-ready dict (version 1).

    Args:
        channels: the channels with records the swarm opened (``comm`` has one entry each).
        waits: per-member wait counts, or ``None`` when the swarm offered no ``swarm_wait``.
        channel_tools: whether some channel gives members tools (for ``tools_unwired``).
        answer: the member whose output is the answer, if any.
    """
    steps = {m.name: events.calls_of(m.name).steps for m in members}
    rows = []
    for m in members:
        meter = meters[m.name]
        running = None
        if m.started is not None:
            running = (m.ended if m.ended is not None else wall_clock) - m.started
        wc = None if waits is None else waits.get(m.name, WaitCounts())
        rows.append(
            {
                "name": m.name,
                "tokens": meter.tokens,
                "cost": meter.cost,
                "running_time": running,
                "longest_identical_tool_run": None
                if m.bridged
                else longest_identical_run(events.tools.get(m.name, [])),
                "gate_checks": m.gate_checks,
                "gate_passes": m.gate_passes,
                "first_pass_time": m.first_pass_time,
                "delivery_effective": m.delivery,
                "comm": {ch: _comm(comm.get((m.name, ch)) or CommCounts()) for ch in channels},
                "waits": None if wc is None else wc.waits,
                "waits_by_outcome": None if wc is None else dict(wc.by_outcome),
                "wait_time": None if wc is None else wc.wait_time,
                "idle_time": None if wc is None else wc.idle_time,
            }
        )
    return {
        "version": 1,
        "tokens": swarm.tokens,
        "cost": swarm.cost,
        "wall_clock": wall_clock,
        "members": rows,
        "never_acted": [m.name for m in members if steps[m.name] == 0],
        "notify_unwired": [
            m.name
            for m in members
            if m.delivery == "notify"
            and events.own_calls[m.name] >= 2
            and m.news_to_own_loop
            and not m.continue_wired
        ],
        "tools_unwired": [
            m.name for m in members if channel_tools and steps[m.name] > 0 and not m.own_loop_bound
        ]
        if channels
        else [],
        "steps_to_answer": None if answer is None else steps.get(answer),
        "longest_member_steps": max(steps.values(), default=0),
    }


def _news_to(m: MemberEnd, commits: Sequence[tuple[float, str]], times: list[float]) -> bool:
    """Whether another loop committed a record while ``m`` ran (commits are in time order,
    so this starts at the first commit after ``m`` started instead of scanning them all)."""
    if m.started is None:
        return False
    end = m.ended if m.ended is not None else float("inf")
    for i in range(bisect.bisect_left(times, m.started), len(commits)):
        t, loop = commits[i]
        if t > end:
            return False
        if loop != m.own_loop:
            return True
    return False


def metrics_from(
    outcome: RunOutcome,
    events: RunEvents,
    gates: Mapping[str, Gates],
    comm: Mapping[tuple[str, str], CommCounts],
) -> dict[str, Any]:
    """The metrics of a finished run (``comm``: its channel counters, malformed calls
    counted)."""
    times = [t for t, _ in outcome.commits]
    facts = [
        MemberFacts(
            name=m.name,
            started=m.started,
            ended=m.ended,
            delivery=m.delivery,
            bridged=m.bridged,
            own_loop_bound=m.own_loop is not None,
            continue_wired=m.continue_wired,
            news_to_own_loop=_news_to(m, outcome.commits, times),
            gate_checks=gates[m.name][0],
            gate_passes=gates[m.name][1],
            first_pass_time=gates[m.name][2],
        )
        for m in outcome.members
    ]
    return build_metrics(
        swarm=outcome.accounts.swarm,
        meters=outcome.accounts.members,
        members=facts,
        events=events,
        comm=comm,
        channels=outcome.recording_channels,
        waits=outcome.waits,
        channel_tools=outcome.channel_tools,
        answer=outcome.answer.member,
        wall_clock=outcome.wall_clock,
    )
