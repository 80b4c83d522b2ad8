"""The end of a run: the answer made final and the three records written.

``inspect_swarm:result``, ``inspect_swarm:ledger`` and ``inspect_swarm:metrics`` go to the
sample store and to the transcript as ``InfoEvent``s (source ``inspect_swarm``).  Called from
the run's ``finally`` path, synchronously, so it completes even when the sample is cancelled.
"""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from inspect_ai.agent import AgentState
from inspect_ai.log import transcript
from inspect_ai.scorer import value_to_float
from inspect_ai.util import store

from swarm._events import RunEvents, index_events
from swarm._ledger import LEDGER_KEY, MemberOutcome, ledger_record
from swarm._metrics import METRICS_KEY, MemberFacts, metrics_record
from swarm.errors import PluginError
from swarm.records import INFO_SOURCE, FinalRecord, MemberResult, SwarmResult
from swarm.serialization import unstructure

if TYPE_CHECKING:
    from swarm._run import RunMember, SwarmRun

__all__ = ["RESULT_KEY", "result_record", "write_records"]

logger = logging.getLogger("swarm")

RESULT_KEY = "inspect_swarm:result"


Gates = tuple[int, int, float | None]


def result_record(
    run: SwarmRun, *, provisional: bool, gates: dict[str, Gates] | None = None
) -> SwarmResult:
    """The ``inspect_swarm:result`` record as of now.

    ``gates`` (checks, passes, first pass time by member) default to the runtime's own checks.
    """
    gates = gates or {}
    return SwarmResult(
        members=tuple(
            MemberResult(
                name=m.info.name,
                role=m.info.role,
                state=m.state,
                status=m.status,
                submitted=m.status == "submitted",
                started=m.started,
                time=m.ended,
                parent=m.info.parent,
                depth=m.info.depth,
                error=m.error,
                gate_checks=gates.get(m.info.name, _own(m))[0],
                gate_passes=gates.get(m.info.name, _own(m))[1],
                first_pass_time=gates.get(m.info.name, _own(m))[2],
            )
            for m in run.members
        ),
        final=FinalRecord(
            mode=run.answer.mode,
            member=run.answer.member,
            reason=run.answer.reason,
            provisional=provisional,
        ),
        stop_reason=run.stop_reason,
    )


def _own(m: RunMember) -> Gates:
    return m.gate_checks, m.gate_passes, m.first_pass_time


def _final_conversation(run: SwarmRun, state: AgentState) -> None:
    chosen = run.by_name.get(run.answer.member) if run.answer.member else None
    if chosen is None or chosen.agent_state is None or not chosen.agent_state.output.choices:
        return
    last = chosen.agent_state.output.message
    final = {"mode": run.answer.mode, "member": chosen.info.name}
    last = last.model_copy(
        update={"metadata": {**(last.metadata or {}), INFO_SOURCE: {"final": final}}}
    )
    state.messages = [*run.input_messages, last]


def write_records(run: SwarmRun, state: AgentState) -> None:
    """Make the answer final (unless interrupted) and write every record.

    Each record is built and written on its own, so whatever a plugin (or a bug) does to one,
    the others are written; a plugin's fault is also reported to the run, which fails the
    sample with it once the records are written.
    """
    try:
        run.refresh_answer()
    except PluginError:
        logger.exception("answer selection failed while the swarm ended")
    final = not run.interrupted
    state.output = run.output
    if final:
        _final_conversation(run, state)
    events = index_events(
        transcript().events, run.root_span, {m.span_id: m.info.name for m in run.members}
    )
    _count_malformed_calls(run, events)
    gates = {m.info.name: _member_gates(run, events, m) for m in run.members}
    result = result_record(run, provisional=not final, gates=gates)
    _write(RESULT_KEY, "result", lambda: unstructure(result))
    _write(LEDGER_KEY, "ledger", lambda: _ledger(run, events))
    _write(METRICS_KEY, "metrics", lambda: _metrics(run, events, gates))
    run.hooks.run_ended(run.view(), result)


def _write(key: str, kind: str, build: Callable[[], dict[str, Any]]) -> None:
    try:
        data = build()
    except Exception as ex:  # a bug of ours must not cost the other records
        logger.exception("swarm: could not build the %s record", kind)
        data = {"version": 1, "error": f"the {kind} record could not be built: {ex!r}"}
    store().set(key, data)
    transcript().info({"type": kind, **data}, source=INFO_SOURCE)


def _count_malformed_calls(run: SwarmRun, events: RunEvents) -> None:
    """Count each channel tool call Inspect refused before it ran (arguments that do not fit the
    tool's schema: an unknown command, a wrong type, an extra argument) as a rejection of that
    member's request by the control ``invalid``: the call never reached the channel, but the
    model made it."""
    channels = run.tool_channels
    if not channels:
        return
    for member, tools in events.tools.items():
        for event in tools:
            channel = channels.get(event.function)
            if channel is None or event.error is None or event.error.type != "parsing":
                continue
            rejections = run.bus.counts_for(member, channel).rejections
            rejections["invalid"] = rejections.get("invalid", 0) + 1


def _ledger(run: SwarmRun, events: RunEvents) -> dict[str, Any]:
    return ledger_record(
        accounts=run.accounts,
        events=events,
        members=[
            MemberOutcome(name=m.info.name, status=m.status, cancelled=m.status == "cancelled")
            for m in run.members
        ],
        stop_reason=run.stop_reason,
        ended_by=run.ended_by,
        interrupted=run.interrupted,
        final_cancelled=False,
        wall_clock=run.wall_clock,
    )


def _member_gates(run: SwarmRun, events: RunEvents, m: RunMember) -> Gates:
    """The kernel's own checks plus the member's in-loop checks (intermediate scores of the
    first scorer it used)."""
    scores = events.gate_scores.get(m.info.name, [])
    first = scores[0].scorer if scores else None
    checks = [s for s in scores if s.scorer == first]
    to_float = value_to_float()
    passes = [s for s in checks if to_float(s.score.value) == 1.0]
    times = [(s.timestamp - run.started_at).total_seconds() for s in passes]
    if m.first_pass_time is not None:
        times.append(m.first_pass_time)
    return (
        len(checks) + m.gate_checks,
        len(passes) + m.gate_passes,
        min(times) if times else None,
    )


def _news_to(run: SwarmRun, m: RunMember, times: list[float]) -> bool:
    """Whether another loop committed a record while ``m`` ran (commits are in time order,
    so this starts at the first commit after ``m`` started instead of scanning them all)."""
    if m.started is None:
        return False
    own = run.own_loop(m.info.name)
    end = m.ended if m.ended is not None else float("inf")
    commits = run.bus.commits
    for i in range(bisect.bisect_left(times, m.started), len(commits)):
        t, loop = commits[i]
        if t > end:
            return False
        if loop != own:
            return True
    return False


def _metrics(run: SwarmRun, events: RunEvents, gates: dict[str, Gates]) -> dict[str, Any]:
    facts = []
    times = [t for t, _ in run.bus.commits]
    for m in run.members:
        checks, passes, first_pass = gates[m.info.name]
        facts.append(
            MemberFacts(
                name=m.info.name,
                started=m.started,
                ended=m.ended,
                delivery=m.delivery or m.info.delivery or "notify",
                own_loop_bound=run.own_loop(m.info.name) is not None,
                continue_wired=m.info.name in run.continue_wired,
                news_to_own_loop=_news_to(run, m, times),
                gate_checks=checks,
                gate_passes=passes,
                first_pass_time=first_pass,
            )
        )
    record = metrics_record(
        swarm=run.accounts.swarm,
        meters=run.accounts.members,
        members=facts,
        events=events,
        comm=run.bus.counts,
        channels=run.bus.recording_channels,
        waits=None if run.waits is None else run.waits.counts,
        channel_tools=run.has_channel_tools(),
        answer=run.answer.member,
        wall_clock=run.wall_clock,
    )
    for plugin, extra in run.hooks.extra_metrics(run.view()):
        key = plugin.split(":", 1)[-1]
        if key in record:
            fault = PluginError(
                plugin, "swarm_extra_metrics", f"metrics key {key!r} is the record's own"
            )
            run.hooks.fault(fault)
            logger.error("%s", fault)
            continue
        if not isinstance(extra, PluginError):
            extra = _json_ready(plugin, extra)
        if isinstance(extra, PluginError):
            run.hooks.fault(extra)
            record[key] = {"error": extra.message}
        else:
            record[key] = extra
    return record


def _json_ready(plugin: str, extra: dict[str, Any]) -> dict[str, Any] | PluginError:
    """The plugin's figures if they are plain JSON (no NaN or infinity), else its fault."""
    try:
        json.dumps(extra, allow_nan=False)
    except (TypeError, ValueError) as ex:
        return PluginError(
            plugin, "swarm_extra_metrics", f"returned figures that are not plain JSON: {ex}"
        )
    return extra
