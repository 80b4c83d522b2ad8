"""The end of a run: its records written to the sample store and the transcript.

``inspect_swarm:result``, ``inspect_swarm:ledger``, ``inspect_swarm:metrics``, the spawn ledger
and the message log go to the sample store and to the transcript as ``InfoEvent``s (source
``inspect_swarm``).  Called from the run's ``finally`` path, synchronously, so it completes even
when the sample is cancelled.  Each record is built and written on its own: whatever a plugin
(or a bug) does to one, the others are written; a plugin's fault is reported to the run, which
fails the sample with it afterwards.

The records are the kernel's alone: a plugin's ``swarm_records`` may not give a protected key
(``is_protected_key``; the message log is taken from the built-in ``messages`` channel only and
written by the kernel, through its schema), a ``swarm_run_ended`` observer that changes one
through ``store()`` is a fault naming it and its change is undone, and after every plugin the
kernel puts back any of its records that differs from what it wrote and seals them (``seal``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from inspect_ai.log import transcript
from inspect_ai.util import Store, current_span_id, store
from pydantic import ValidationError

from swarm._accounts.accounts import Accounts
from swarm._hooks.calls import RunHooks
from swarm._report.counters import CommCounts
from swarm._report.events import RunEvents, index_events, with_malformed_calls
from swarm._report.ledger import ledger_from
from swarm._report.metrics import metrics_from
from swarm._report.outcome import MemberEnd, RunOutcome
from swarm._report.reads import ReadsTaken, build_reads
from swarm._report.result import Gates, build_result, member_gates
from swarm._report.spawns import SpawnEntry, build_spawns
from swarm._report.subagents import build_subagents, snapshot_registry
from swarm._run.bus import Bus
from swarm._run.members import Roster
from swarm._run.seal import canonical_json, record_digest, seal_records
from swarm._run.waits import Waits
from swarm._run.wiring import Wiring
from swarm._schemas import MessageLog, ResultRecord, schema_problem
from swarm.errors import PluginError
from swarm.records import (
    INFO_SOURCE,
    LEDGER_KEY,
    MESSAGES_KEY,
    METRICS_KEY,
    READS_KEY,
    RESULT_KEY,
    SPAWNS_KEY,
    SUBAGENTS_KEY,
    Answer,
    SwarmResult,
    SwarmView,
    is_protected_key,
)
from swarm.serialization import unstructure

__all__ = ["RunOrigin", "run_origin", "run_outcome", "write_records"]

logger = logging.getLogger("swarm")


class RunOrigin(NamedTuple):
    """Where a run begins: the span it runs in, and the index of its first event in the
    transcript (the events before it, a swarm run earlier in the same span, are not its)."""

    span: str | None
    first_event: int


def run_origin() -> RunOrigin:
    """Where the run that begins now begins."""
    return RunOrigin(current_span_id(), len(transcript().events))


def write_records(outcome: RunOutcome, hooks: RunHooks) -> SwarmResult:
    """Write the records of a finished run, the plugins' after the kernel's; put back and seal
    the kernel's after every plugin; return the result record."""
    events = index_events(
        transcript().events[outcome.first_event :],
        outcome.root_span,
        {m.span_id: m.name for m in outcome.members},
    )
    comm = with_malformed_calls(outcome.comm, events, outcome.tool_channels)
    gates = {m.name: member_gates(m, events, outcome.started_at) for m in outcome.members}
    result = build_result(outcome, gates)
    written: dict[str, str] = {}
    stored = lambda: ResultRecord.model_validate(unstructure(result)).model_dump()  # noqa: E731
    write_record(RESULT_KEY, "result", stored, written)
    write_record(LEDGER_KEY, "ledger", lambda: ledger_from(outcome, events), written)
    metrics = lambda: _metrics(outcome, events, gates, comm, hooks)  # noqa: E731
    write_record(METRICS_KEY, "metrics", metrics, written)
    if outcome.spawns is not None:
        spawns = outcome.spawns
        write_record(SPAWNS_KEY, "spawns", lambda: build_spawns(spawns), written)
    if outcome.reads is not None:
        reads = outcome.reads
        write_record(READS_KEY, "reads", lambda: build_reads(reads), written)
    try:
        subagents = build_subagents(
            transcript().events[outcome.first_event :],
            {m.span_id: m.name for m in outcome.members},
            outcome.background,
            outcome.started_at,
            outcome.wall_clock,
        )
    except Exception as ex:  # the other records are still written
        logger.warning("swarm: the subagents record could not be built: %r", ex)
        subagents = None
    if subagents is not None:
        write_record(SUBAGENTS_KEY, "subagents", _constant(subagents), written)
    _plugin_records(outcome, hooks, written)
    guard = _Guard(store(), hooks)
    hooks.run_ended(outcome.view, result, guard.check)
    _seal(guard.store, written)
    return result


MESSAGES_CHANNEL = "channel:messages"
"""The one plugin whose message log the kernel takes: the run's built-in ``messages`` channel
(a third-party channel is registered under its distribution's prefix, never this name)."""


def _plugin_records(outcome: RunOutcome, hooks: RunHooks, written: dict[str, str]) -> None:
    """Write the records plugins give (``swarm_records``), each on its own."""
    for plugin, records in hooks.records(outcome.view):
        if isinstance(records, PluginError):
            continue  # reported to the run already; the others are still written
        for key, record in records.items():
            problem: str | None
            kernel = key == MESSAGES_KEY and plugin == MESSAGES_CHANNEL and key not in written
            if (not kernel and is_protected_key(key)) or not isinstance(key, str):
                problem = f"wrote the store key {key!r}, which is not a plugin's to write"
            elif not isinstance(record, dict):
                problem = f"gave record {key!r} as {type(record).__name__}, not a mapping"
            else:
                problem = _json_problem(record)
            if kernel and problem is None:
                record, problem = _message_log(record)
            if problem is not None:
                hooks.fault(PluginError(plugin, "swarm_records", problem))
                continue
            write_record(
                key, key.rpartition(":")[2], _constant(record), written if kernel else None
            )


def _message_log(record: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The ``messages`` channel's log through its schema (``swarm._schemas.MessageLog``, which
    ``swarm.analysis`` reads it back with), or what the schema refuses in it."""
    try:
        return MessageLog.model_validate(record).model_dump(), None
    except ValidationError as ex:
        return record, f"gave a message log its schema refuses: {schema_problem(ex)}"


class _Guard:
    """Watches the protected records around each ``swarm_run_ended`` observer: one that
    writes, replaces, changes or deletes one is a fault naming it, and its change is undone."""

    def __init__(self, sample_store: Store, hooks: RunHooks) -> None:
        self.store = sample_store
        self.hooks = hooks
        self.kept = _protected(sample_store)

    def check(self, plugin: str) -> None:
        now = _protected(self.store)
        for key in sorted({*self.kept, *now}):
            if self.kept.get(key) == now.get(key):
                continue
            self.hooks.fault(
                PluginError(
                    plugin,
                    "swarm_run_ended",
                    f"wrote the store key {key!r}, which is not a plugin's to write; the "
                    "kernel's record stays",
                )
            )
            _put(self.store, key, self.kept.get(key))


def _protected(sample_store: Store) -> dict[str, str]:
    """Every protected record in the store, as canonical JSON."""
    return {k: canonical_json(v) for k, v in sample_store.items() if is_protected_key(k)}


def _put(sample_store: Store, key: str, text: str | None) -> None:
    if text is None:
        if key in sample_store:
            sample_store.delete(key)
    else:
        sample_store.set(key, json.loads(text))


def _seal(sample_store: Store, written: dict[str, str]) -> None:
    """After every plugin: put back any kernel record that differs from what the kernel wrote
    (a plugin changed it in place), then seal them all."""
    for key, text in written.items():
        if key not in sample_store or canonical_json(sample_store.get(key)) != text:
            logger.error(
                "swarm: the %s record was changed after the kernel wrote it; put back", key
            )
            _put(sample_store, key, text)
    seal_records(sample_store, {key: record_digest(json.loads(t)) for key, t in written.items()})


def write_record(
    key: str,
    kind: str,
    build: Callable[[], dict[str, Any]],
    written: dict[str, str] | None = None,
) -> None:
    """Build one record and write it to the store and the transcript, whatever the build does;
    a kernel record's canonical JSON is kept in ``written`` (to put back and seal)."""
    try:
        data = build()
    except Exception as ex:  # a bug of ours must not cost the other records
        logger.exception("swarm: could not build the %s record", kind)
        data = {"version": 1, "error": f"the {kind} record could not be built: {ex!r}"}
    store().set(key, data)
    if written is not None:
        written[key] = canonical_json(data)
    transcript().info({"type": kind, **data}, source=INFO_SOURCE)


def _metrics(
    outcome: RunOutcome,
    events: RunEvents,
    gates: Mapping[str, Gates],
    comm: Mapping[tuple[str, str], CommCounts],
    hooks: RunHooks,
) -> dict[str, Any]:
    record = metrics_from(outcome, events, gates, comm)
    _warn_unwired(record)
    for plugin, extra in hooks.extra_metrics(outcome.view):
        key = plugin.split(":", 1)[-1]
        if key in record:
            fault = PluginError(
                plugin, "swarm_extra_metrics", f"metrics key {key!r} is the record's own"
            )
            hooks.fault(fault)
            logger.error(str(fault))
            continue
        if not isinstance(extra, PluginError):
            problem = _json_problem(extra)
            if problem is not None:
                extra = PluginError(plugin, "swarm_extra_metrics", problem)
        if isinstance(extra, PluginError):
            hooks.fault(extra)
            record[key] = {"error": extra.message}
        else:
            record[key] = extra
    return record


def _warn_unwired(record: Mapping[str, Any]) -> None:
    """Say once per run, in the log and on the console (Inspect shows a warning in both), which
    members the metrics' wiring checks list: they ran without what the channels offer."""
    checks = [
        ("tools_unwired", "never resolved swarm_tools()"),
        ("notify_unwired", "in notify mode, never ran swarm_on_continue()"),
    ]
    parts = []
    for key, why in checks:
        names: list[str] = record[key]
        if names:
            more = f", and {len(names) - 10:,} more" if len(names) > 10 else ""
            parts.append(f"{key} ({why}): {', '.join(names[:10])}{more}")
    if parts:
        logger.warning(
            "swarm: members not wired to the channels ran a different experiment from the one "
            "configured (see the metrics' wiring checks): %s",
            "; ".join(parts),
        )


def _constant(record: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    return lambda: record


def _json_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with a plugin's data if it is not plain JSON (NaN or infinity included)."""
    try:
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as ex:
        return f"returned data that is not plain JSON: {ex}"
    return None


def run_outcome(
    roster: Roster,
    wiring: Wiring,
    bus: Bus,
    waits: Waits | None,
    accounts: Accounts,
    *,
    answer: Answer,
    answer_text: str | None,
    final_cancelled: bool,
    interrupted: bool,
    stop_reason: str | None,
    ended_by: str | None,
    wall_clock: float,
    started_at: datetime,
    origin: RunOrigin,
    view: SwarmView,
    spawns: tuple[SpawnEntry, ...] | None = None,
    reads: ReadsTaken | None = None,
) -> RunOutcome:
    """The run's services' state at its end, as one value for the record builders."""
    first = next(iter(roster), None)
    return RunOutcome(
        members=tuple(
            MemberEnd(
                info=m.info,
                state=m.state,
                status=m.status,
                started=m.started,
                ended=m.ended,
                error=m.error,
                span_id=m.span_id,
                delivery=m.delivery or m.info.delivery or ("poll" if m.bridged else "notify"),
                own_loop=wiring.own_loop(m.name),
                continue_wired=m.name in wiring.continue_wired,
                gate_checks=m.gate_checks,
                gate_passes=m.gate_passes,
                first_pass_time=m.first_pass_time,
                bridged=m.bridged is not None,
                cancelled=m.status == "cancelled" or m.work_cancelled,
                background_started=0 if m.background is None else m.background.started,
                background_cancelled=0 if m.background is None else m.background.cancelled,
                answer=m.answer,
                answer_chars=m.answer_chars,
                verified=m.verified,
            )
            for m in roster
        ),
        answer=answer,
        answer_text=answer_text,
        final_cancelled=final_cancelled,
        interrupted=interrupted,
        stop_reason=stop_reason,
        ended_by=ended_by,
        wall_clock=wall_clock,
        started_at=started_at,
        root_span=origin.span,
        first_event=origin.first_event,
        accounts=accounts,
        comm=dict(bus.counts),
        recording_channels=tuple(bus.recording_channels),
        commits=tuple(bus.commits),
        tool_channels=dict(wiring.tool_channels),
        waits=None if waits is None else dict(waits.counts),
        channel_tools=wiring.has_channel_tools(None if first is None else first.name),
        view=view,
        spawns=spawns,
        reads=reads,
        background={name: snapshot_registry(r) for name, r in wiring.background.items()},
    )
