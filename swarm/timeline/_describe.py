"""The words of a timeline: hover text for marks and lanes, the header line, status classes."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from swarm.timeline._model import (
    ChannelWrite,
    Lane,
    Mark,
    ModelCall,
    Notice,
    RunTimeline,
    SpawnMark,
    ToolCall,
    Wait,
)

__all__ = ["describe", "header", "lane_title", "seconds", "status_class"]

_CLASS = re.compile(r"[^a-z0-9_-]")
_NOUNS = {
    "model": "model calls",
    "tool": "tool calls",
    "wait": "waits",
    "write": "writes",
    "rejected": "refused writes",
    "notice": "notices",
    "spawn": "spawns",
    "spawn-refused": "refused spawns",
}


def seconds(t: float | None) -> str:
    """A time for people: ``0.64 s``."""
    if t is None:
        return "-"
    return f"{t:.3f} s" if t < 10 else f"{t:.1f} s"


def _span(start: float, end: float) -> str:
    if end - start < 0.0005:
        return f"at {seconds(start)}"
    return f"from {seconds(start)} to {seconds(end)}"


def _cut(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_class(status: str) -> str:
    """The CSS class of a status: ``s-member_limit`` for ``member_limit:token``."""
    return "s-" + _CLASS.sub("_", status.split(":", 1)[0].lower())


def _one(mark: Mark) -> str:
    sub = " (subagent)" if getattr(mark, "nested", False) else ""
    match mark:
        case ModelCall():
            what = "model call (cache)" if mark.cached else "model call"
            tokens = f", {mark.tokens} tokens" if mark.tokens is not None else ""
            error = f": error {_cut(mark.error)}" if mark.error else ""
            until = "" if mark.end_recorded else " (its end not recorded: until its loop went on)"
            return f"{what}{sub} {_span(mark.start, mark.end)}{until}{tokens}{error}"
        case ToolCall():
            error = f": error {_cut(mark.error)}" if mark.error else ""
            return f"{mark.function}{sub} {_span(mark.start, mark.end)}{error}"
        case ChannelWrite():
            target = f" {mark.path}" if mark.path else ""
            when = _span(mark.start, mark.end)
            head = f"{mark.channel} {mark.kind} {mark.record}{target}{sub} {when}"
            if mark.rejected is not None:
                return f"refused {head}: {mark.rejected}: {_cut(mark.reason or '')}"
            return f"write {head}, {mark.size} bytes, seq {mark.seq}"
        case Wait():
            on = f" on {mark.path}" if mark.path else ""
            return f"wait {mark.wait}{on}{sub} {_span(mark.start, mark.end)}: {mark.outcome}"
        case Notice():
            return (
                f"notice {mark.notice} {_span(mark.start, mark.end)}: "
                f"{', '.join(mark.channels)} ({mark.ids} ids)"
            )
        case SpawnMark():
            if mark.refused is not None:
                return f"spawn of {mark.requested} refused at {seconds(mark.start)}: {mark.refused}"
            return f"spawned {mark.child} (asked for {mark.requested}) at {seconds(mark.start)}"
    raise TypeError(f"not a timeline mark: {mark!r}")


def _name_of(mark: Mark) -> str:
    match mark:
        case ToolCall():
            return mark.function
        case ChannelWrite():
            return mark.rejected or mark.kind
        case Wait():
            return mark.outcome
        case Notice():
            return ", ".join(mark.channels)
        case SpawnMark():
            return mark.requested
    return ""


def _before_model(marks: Sequence[Mark]) -> str:
    calls = [m for m in marks if isinstance(m, ModelCall)]
    why = "waiting for a connection slot, a retry's backoff or the run's first call's setup"
    if len(calls) == 1:
        c = calls[0]
        return f"before the model call's own time {_span(c.start, c.model_start)}: {why}"
    total = sum(c.model_start - c.start for c in calls)
    start, end = min(c.start for c in calls), max(c.model_start for c in calls)
    return (
        f"{len(calls)} model calls' time before the model's own, {total:.3f} s in all, "
        f"{_span(start, end)}: {why}"
    )


def describe(kind: str, marks: Sequence[Mark]) -> str:
    """Hover text for one drawn mark standing for ``marks`` (all of ``kind``)."""
    if kind == "setup":
        return _before_model(marks)
    if len(marks) == 1:
        return _one(marks[0])
    start, end = min(m.start for m in marks), max(m.end for m in marks)
    text = f"{len(marks)} {_NOUNS.get(kind, kind)} {_span(start, end)}"
    names = Counter(n for n in (_name_of(m) for m in marks) if n)
    if names:
        text += ": " + ", ".join(f"{n} x{c}" if c > 1 else n for n, c in names.most_common(6))
        if len(names) > 6:
            text += ", …"
    errors = sum(1 for m in marks if getattr(m, "error", None))
    if errors:
        text += f"; {errors} errored"
    return text


def lane_title(lane: Lane) -> str:
    """Hover text for a lane's name."""
    parts = [lane.name]
    if lane.role:
        parts.append(f"role: {lane.role}")
    if lane.parent:
        parts.append(f"child of {lane.parent} (depth {lane.depth})")
    if lane.task:
        parts.append(f"task: {_cut(lane.task, 300)}")
    parts.append(lane.label)
    if lane.started is not None:
        parts.append(f"{seconds(lane.started)} to {seconds(lane.ended)}")
    else:
        parts.append("never started")
    parts.append(f"{len(lane.model_calls)} model calls, {len(lane.tool_calls)} tool calls")
    if lane.answer:
        parts.append("the swarm's answer")
    if lane.error:
        parts.append(_cut(lane.error, 300))
    return " · ".join(parts)


def header(run: RunTimeline) -> str:
    """One line saying what the picture is of."""
    parts = []
    if run.task:
        parts.append(run.task)
    parts.append(f"sample {run.sample_id}, epoch {run.epoch}")
    n = len(run.lanes)
    parts.append(f"{n} member{'s' if n != 1 else ''}")
    if run.stop is not None:
        parts.append(f"stop: {run.stop.reason} at {seconds(run.stop.time)}")
    else:
        parts.append("no stop recorded")
    if run.answer:
        mode = f" ({run.answer_mode})" if run.answer_mode else ""
        parts.append(f"answer: {run.answer}{mode}")
    else:
        parts.append("no answer")
    parts.append(f"run {seconds(run.duration)}")
    if run.error:
        parts.append(f"sample error: {_cut(run.error, 120)}")
    return " · ".join(parts)
