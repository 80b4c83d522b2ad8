"""The failure checks: each a deterministic rule over a run's ``Trace``, named after the MAST
failure mode it decides (Cemri et al., "Why Do Multi-Agent LLM Systems Fail?"), each finding
with its member, its time, why, and the ids it rests on (rules in docs/diagnosis.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarm.diagnosis._figures import deliveries, referred
from swarm.diagnosis._trace import Tool, Trace

__all__ = ["CHECKS", "REPEAT_AT", "STOP_SLACK", "WAITING_TOOLS", "Finding", "run_checks"]

REPEAT_AT = 3
"""Step repetition: this many consecutive identical tool calls make a finding."""
WAITING_TOOLS = frozenset({"swarm_wait", "wait_for_children", "read_messages", "list_children"})
"""The swarm's tools a member waits with (and ``shared_memory`` with ``command`` ``view``):
calling one again and again is waiting, not step repetition."""
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


def waiting(tool: Tool) -> bool:
    """Whether ``tool`` is a wait: a ``WAITING_TOOLS`` call, or a ``shared_memory`` view."""
    return tool.function in WAITING_TOOLS or (
        tool.function == "shared_memory" and tool.arguments.get("command") == "view"
    )


def _longest_run(tools: Sequence[Tool]) -> list[Tool]:
    """The first longest run of identical calls (function and arguments) among ``tools``."""
    best: list[Tool] = []
    run: list[Tool] = []
    for t in tools:
        run = [*run, t] if run and run[-1].key == t.key else [t]
        if len(run) > len(best):
            best = run
    return best


def step_repetition(trace: Trace) -> Iterable[Finding]:
    """A member that made ``REPEAT_AT`` or more identical tool calls (same function, same
    arguments) in a row, waits skipped: a wait (``waiting``) neither counts in a run nor
    breaks one, so polling for a message or a file is not repetition, and the same work done
    again with only waiting between is.  A member whose metrics record no
    ``longest_identical_tool_run`` (a bridged member: its tools may leave no event) is not
    judged.  The evidence is the member's first longest run."""
    unjudged = {
        str(m.get("name"))
        for m in trace.metrics.get("members") or []
        if isinstance(m, Mapping) and m.get("longest_identical_tool_run", 0) is None
    }
    by_member: dict[str, list[Tool]] = {}
    for t in trace.tools:
        if not waiting(t):
            by_member.setdefault(t.member, []).append(t)
    for m in trace.members:
        name = str(m.get("name"))
        found = _longest_run(by_member.get(name, []))
        if name in unjudged or len(found) < REPEAT_AT:
            continue
        yield Finding(
            check="step_repetition",
            mode="FM-1.3 Step repetition",
            member=name,
            time=trace.run_time(name, found[0].start),
            why=f"{name} made the same tool call {len(found)} times in a row "
            f"({found[0].function}; waits between them skipped)",
            evidence=(f"member:{name}", *_tool_ids(found)),
        )


def _member(trace: Trace, name: str) -> Mapping[str, Any]:
    members: dict[str, Mapping[str, Any]] = trace.cache.setdefault("member_records", {})
    if not members:
        members.update((str(m.get("name")), m) for m in trace.members)
    return members.get(name, {})


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _requests(trace: Trace) -> Iterable[tuple[str, str, str, float, str]]:
    """(asker, asked, ref, time, text) of every request: a spawn (the parent asks its child
    for its task), and a message whose text has a question mark that its recipient read."""
    for e in trace.spawns:
        if e.op == "spawn" and e.member:
            yield e.parent, e.member, f"spawn:{e.seq}", e.time, e.task or ""
    for m in trace.messages:
        if m.kind == "message" and "?" in m.text and m.seq in trace.message_read:
            yield m.sender, m.recipient, f"message:{m.seq}", m.time, m.text


def _last_given(trace: Trace) -> tuple[dict[tuple[str, str], float], dict[str, float]]:
    """The records' time of the last message from one member to another (by (sender,
    recipient)), and of each member's last committed write on the board."""
    messages: dict[tuple[str, str], float] = {}
    for m in trace.messages:
        if m.kind == "message":
            key = (m.sender, m.recipient)
            messages[key] = max(messages.get(key, m.time), m.time)
    board: dict[str, float] = {}
    for e in trace.evidence:
        if e.get("kind") == "delivered" and e.get("channel") == "shared_memory":
            writer, time = str(e.get("member")), _number(e.get("time")) or 0.0
            board[writer] = max(board.get(writer, time), time)
    return messages, board


def information_withholding(trace: Trace) -> Iterable[Finding]:
    """A member that was asked for something (a spawn's task, or a question: a message with
    a ``?`` that it read), had an answer (it submitted) and gave the asker nothing from the
    request on (no message to it, no board write), though the asker was still running when
    it ended.  One finding per request, for the member asked: it held what was asked for."""
    messages, board = _last_given(trace)
    for asker, asked, ref, since, text in _requests(trace):
        record, theirs = _member(trace, asked), _member(trace, asker)
        ended, asker_ended = _number(record.get("time")), _number(theirs.get("time"))
        if not record.get("submitted") or ended is None:
            continue
        if asker_ended is not None and asker_ended <= ended:
            continue  # nobody left to tell
        # anything given from the request on: a message to the asker, a write on the board
        never = float("-inf")
        if max(messages.get((asked, asker), never), board.get(asked, never)) >= since:
            continue
        what = "spawned it to" if ref.startswith("spawn:") else "asked it"
        yield Finding(
            check="information_withholding",
            mode="FM-2.4 Information withholding",
            member=asked,
            time=ended,
            why=f"{asker} {what} {text[:80]!r} ({ref}); {asked} submitted an answer and "
            f"never sent {asker} a message nor wrote to the board after it",
            evidence=(ref, f"member:{asked}"),
        )


def unread_message(trace: Trace) -> Iterable[Finding]:
    """A message (not a receipt) its recipient never read (no ``read_messages`` listed it),
    for the recipient, whatever the time it arrived (in its last model call too): the sender
    gave it, the recipient ended without taking it in.  A recipient that completed no model
    call is left to ``never_acted``."""
    acted = {c.member for c in trace.done()}
    for m in trace.messages:
        if m.kind != "message" or m.seq in trace.message_read or m.recipient not in acted:
            continue
        status = _member(trace, m.recipient).get("status")
        yield Finding(
            check="unread_message",
            mode="FM-2.5 Ignored other agent's input",
            member=m.recipient,
            time=m.time,
            why=f"{m.recipient} never read {m.sender}'s message:{m.seq} (it ended {status})",
            evidence=(f"message:{m.seq}", f"member:{m.recipient}"),
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


def _stopper(trace: Trace) -> str | None:
    """The member whose submission stopped the swarm: with stop reason ``submitted``, the last
    submission at or before the stop; with ``verified``, the last verified one.  ``None`` for
    any other stop (no member's submission made it)."""
    reason = trace.result.get("stop_reason")
    if trace.stop is None or reason not in ("submitted", "verified"):
        return None
    found = None
    for s in trace.result.get("submissions") or []:
        time = _number(s.get("time")) if isinstance(s, Mapping) else None
        if time is None or time > trace.stop:
            continue
        if reason == "submitted" or s.get("verified") is True:
            found = s.get("member")
    return str(found) if found is not None else None


def premature_termination(trace: Trace) -> Iterable[Finding]:
    """A member's submission stopped the swarm (stop reason ``submitted`` or ``verified``)
    while another member that had started was still working: its recorded end is after the
    stop, or it has none.  One finding per member cut short, for the member that stopped
    the swarm."""
    stopper = _stopper(trace)
    if stopper is None or trace.stop is None:
        return
    spawned: dict[str, list[int]] = {}
    for e in trace.spawns:
        if e.op == "spawn" and e.member:
            spawned.setdefault(e.member, []).append(e.seq)
    for m in trace.members:
        name = str(m.get("name"))
        ended = _number(m.get("time"))
        if name == stopper or m.get("started") is None:
            continue
        if ended is not None and ended <= trace.stop:
            continue
        yield Finding(
            check="premature_termination",
            mode="FM-3.1 Premature termination",
            member=stopper,
            time=trace.stop,
            why=f"{stopper}'s submission stopped the swarm ({trace.result.get('stop_reason')}) "
            f"while {name} was still working (it ended {m.get('status')})",
            evidence=(f"member:{name}", *(f"spawn:{s}" for s in spawned.get(name, []))),
        )


def work_after_stop(trace: Trace) -> Iterable[Finding]:
    """A member's completed model calls that ended more than ``STOP_SLACK`` seconds after the
    stop (no call starts after it; these were in flight and spent tokens no answer used).

    A call's end and the stop are read on one clock, the transcript's (the call's event and
    the stop's info event), never mapped through a member's start: on a loaded machine that
    mapping is off by more than the slack."""
    if trace.stop is None or trace.stopped_at is None:
        return
    late: dict[str, list[Any]] = {}
    for c in trace.done():
        after = (c.end - trace.stopped_at).total_seconds() if c.end is not None else None
        if after is not None and after > STOP_SLACK:
            late.setdefault(c.member, []).append((c, trace.stop + after))
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
    """A member that did nothing: the metrics list it under ``never_acted`` (no completed
    model call, or never started), or its completed model calls asked for no tool call and
    it gave no answer (it did not submit)."""
    listed = {str(n) for n in trace.metrics.get("never_acted") or []}
    names = [str(m.get("name")) for m in trace.members]
    for name in [*names, *sorted(listed - set(names))]:
        m = _member(trace, name)
        done = [c for c in trace.calls_of(name) if c.completed]
        if name in listed:
            calls = trace.calls_of(name)
            why = f"{name} completed no model call (it ended {m.get('status')}" + (
                f": {m.get('error')}" if m.get("error") else ""
            )
        elif done and not any(c.issued for c in done) and not m.get("submitted"):
            calls = done
            why = (
                f"{name} made {len(done)} model call(s) but made no tool call and gave no "
                f"answer (it ended {m.get('status')}"
            )
        else:
            continue
        yield Finding(
            check="never_acted",
            mode="FM-1.2 Disobey role specification",
            member=name,
            time=_number(m.get("started")),
            why=why + ")",
            evidence=(f"member:{name}", *(f"event:{c.uuid}" for c in calls)),
        )


CHECKS: Mapping[str, Callable[[Trace], Iterable[Finding]]] = {
    "step_repetition": step_repetition,
    "information_withholding": information_withholding,
    "unread_message": unread_message,
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
