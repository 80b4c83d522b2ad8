"""The failure checks: each a deterministic rule over a run's ``Trace``, named after the MAST
failure mode it decides (Cemri et al., "Why Do Multi-Agent LLM Systems Fail?"), each finding
with its member, its time, why, and the ids it rests on (rules in docs/diagnosis.md)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarm.diagnosis._figures import deliveries, referred
from swarm.diagnosis._trace import Tool, Trace

__all__ = ["CHECKS", "REPEAT_AT", "STOP_SLACK", "Finding", "run_checks"]

REPEAT_AT = 3
"""Step repetition: this many consecutive identical tool calls make a finding."""
STOP_SLACK = 0.05
"""Work after the stop: seconds past the stop a call must end by (more than the few ms between
a member's transcript times and the records' clock)."""


@attrs.frozen
class Finding:
    """One failure a check found.

    ``check`` is the check's name, ``mode`` the MAST failure mode, ``member`` who failed,
    ``time`` when (seconds since the swarm started; ``None`` when no record times it), ``why``
    a sentence, and ``evidence`` the ids it rests on: ``event:<uuid>`` (a transcript event),
    ``tool:<id>`` (a tool call), ``evidence:<n>`` (the n-th evidence entry), ``w-3`` (a board
    record), ``message:<seq>``, ``spawn:<seq>``, ``member:<name>`` (the result record's entry).
    """

    check: str
    mode: str
    member: str
    time: float | None
    why: str
    evidence: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values."""
        return attrs.asdict(self)


def _tool_ids(tools: Iterable[Tool]) -> list[str]:
    return [f"tool:{t.id}" for t in tools]


def step_repetition(trace: Trace) -> Iterable[Finding]:
    """A member whose recorded ``longest_identical_tool_run`` (metrics) is ``REPEAT_AT`` or
    more; the evidence is the first such run of its tool calls in the transcript."""
    by_member: dict[str, list[Tool]] | None = None
    for m in trace.metrics.get("members") or []:
        run = m.get("longest_identical_tool_run")
        if not isinstance(run, int) or run < REPEAT_AT:
            continue
        name = str(m.get("name"))
        if by_member is None:  # each member's tool calls, once
            by_member = {}
            for t in trace.tools:
                by_member.setdefault(t.member, []).append(t)
        tools = by_member.get(name, [])
        found: list[Tool] = []
        for t in tools:
            found = [*found, t] if found and found[-1].key == t.key else [t]
            if len(found) == run:
                break
        yield Finding(
            check="step_repetition",
            mode="FM-1.3 Step repetition",
            member=name,
            time=trace.run_time(name, found[0].start) if found else None,
            why=f"{name} made the same tool call {run} times in a row"
            + (f" ({found[0].function})" if found else ""),
            evidence=(f"member:{name}", *_tool_ids(found)),
        )


def information_withholding(trace: Trace) -> Iterable[Finding]:
    """A committed board write that no other member viewed afterwards (a view of its path), or a
    message its recipient never read (no ``read_messages`` listed it)."""
    for d in deliveries(trace):
        if d.reads:
            continue
        whom = "no other member viewed it" if d.channel == "shared_memory" else "never read"
        evidence = [d.ref] + ([f"evidence:{d.entry}"] if d.entry is not None else [])
        yield Finding(
            check="information_withholding",
            mode="FM-2.4 Information withholding",
            member=d.writer,
            time=d.time,
            why=f"{d.writer}'s {d.channel} {d.ref}: {whom}",
            evidence=tuple(evidence),
        )


def ignored_input(trace: Trace) -> Iterable[Finding]:
    """A read whose result reached the reader's model (a later call held it) and after which
    nothing the reader said (its calls' text and tool arguments, from that call on) shares a
    word with what was read (for the board: the texts the other members wrote to that path)."""
    for d in deliveries(trace):
        for reader, entry, held in d.reads:
            if held is None or referred(trace, reader, held, d.text) is not False:
                continue
            yield Finding(
                check="ignored_input",
                mode="FM-2.5 Ignored other agent's input",
                member=reader,
                time=float(trace.evidence[entry].get("time") or 0.0),
                why=f"{reader} read {d.writer}'s {d.ref} and nothing it did after referred to it",
                evidence=(d.ref, f"evidence:{entry}", f"event:{held.uuid}"),
            )


def _descendants(trace: Trace, root: str) -> list[str]:
    """The members under ``root``, breadth first, each parent's children in roster order."""
    children: dict[object, list[object]] = {}
    for m in trace.members:
        children.setdefault(m.get("parent"), []).append(m.get("name"))
    found: list[str] = []
    seen: set[object] = set()
    frontier = deque([root])
    while frontier:
        for name in children.get(frontier.popleft(), []):
            if name not in seen:
                seen.add(name)
                found.append(str(name))
                frontier.append(str(name))
    return found


def premature_termination(trace: Trace) -> Iterable[Finding]:
    """The run stopped while a member the answer member spawned (directly or through its
    children) had not ended: its recorded end is after the stop, or it has none."""
    if trace.stop is None or trace.answer is None:
        return
    members = {str(m.get("name")): m for m in trace.members}
    for name in _descendants(trace, trace.answer):
        m = members[name]
        ended = m.get("time")
        if isinstance(ended, int | float) and ended <= trace.stop:
            continue
        spawn = [e.seq for e in trace.spawns if e.op == "spawn" and e.member == name]
        yield Finding(
            check="premature_termination",
            mode="FM-3.1 Premature termination",
            member=name,
            time=trace.stop,
            why=f"the swarm stopped ({trace.result.get('stop_reason')}) while {name}, spawned "
            f"under the answer member {trace.answer}, was still working (it ended "
            f"{m.get('status')})",
            evidence=(f"member:{name}", *(f"spawn:{s}" for s in spawn)),
        )


def work_after_stop(trace: Trace) -> Iterable[Finding]:
    """A member's completed model calls that ended more than ``STOP_SLACK`` seconds after the
    stop (no call starts after it; these were in flight and spent tokens no answer used)."""
    if trace.stop is None:
        return
    late: dict[str, list[Any]] = {}
    for c in trace.done():
        end = trace.run_time(c.member, c.end) if c.end is not None else None
        if end is not None and end > trace.stop + STOP_SLACK:
            late.setdefault(c.member, []).append((c, end))
    for name, calls in late.items():
        tokens = sum(c.tokens for c, _ in calls)
        yield Finding(
            check="work_after_stop",
            mode="FM-1.5 Unaware of termination conditions",
            member=name,
            time=calls[0][1],
            why=f"{name} finished {len(calls)} model call(s) ({tokens} tokens) after the "
            f"swarm stopped ({trace.result.get('stop_reason')})",
            evidence=tuple(f"event:{c.uuid}" for c, _ in calls),
        )


def never_acted(trace: Trace) -> Iterable[Finding]:
    """A member the metrics list under ``never_acted`` (no completed model call)."""
    members = {str(m.get("name")): m for m in trace.members}
    for name in trace.metrics.get("never_acted") or []:
        m = members.get(str(name), {})
        failed = [f"event:{c.uuid}" for c in trace.calls_of(str(name))]
        yield Finding(
            check="never_acted",
            mode="FM-1.2 Disobey role specification",
            member=str(name),
            time=m.get("started") if isinstance(m.get("started"), int | float) else None,
            why=f"{name} completed no model call (it ended {m.get('status')}"
            + (f": {m.get('error')}" if m.get("error") else "")
            + ")",
            evidence=(f"member:{name}", *failed),
        )


CHECKS: Mapping[str, Callable[[Trace], Iterable[Finding]]] = {
    "step_repetition": step_repetition,
    "information_withholding": information_withholding,
    "ignored_input": ignored_input,
    "premature_termination": premature_termination,
    "work_after_stop": work_after_stop,
    "never_acted": never_acted,
}
"""Every check by name, in the order the findings are listed."""


def run_checks(trace: Trace, checks: Sequence[str] | None = None) -> list[Finding]:
    """The findings of ``checks`` (every check by default) on ``trace``."""
    found: list[Finding] = []
    for name in checks or list(CHECKS):
        found.extend(CHECKS[name](trace))
    return found
