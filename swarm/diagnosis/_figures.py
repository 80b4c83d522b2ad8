"""The coordination figures of one swarm run, from its ``Trace`` (definitions in
docs/diagnosis.md, each repeated on its field below)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarm.diagnosis._trace import Call, Trace, words

__all__ = [
    "COORDINATION_TOOLS",
    "CriticalPath",
    "Delivery",
    "Figures",
    "Funnel",
    "deliveries",
    "figures",
    "predecessors",
]

COORDINATION_TOOLS = frozenset(
    {
        "submit",
        "swarm_wait",
        "shared_memory",
        "send_message",
        "read_messages",
        "spawn_child",
        "list_children",
        "cancel_child",
        "wait_for_children",
    }
)
"""The swarm's own tools: not tool *work*, so not counted by redundancy."""


@attrs.frozen
class CriticalPath:
    """The longest chain of completed model calls in time (the most summed call time, then
    the most calls, then the most tokens), each call after the one before it in one member's
    order or linked to it (a read of its write, a receipt of its message, a spawn)."""

    steps: int
    tokens: int
    time: float
    calls: tuple[tuple[str, int], ...]  # (member, step) along the chain
    members: tuple[str, ...]  # in the order the chain first reaches them


@attrs.frozen
class Funnel:
    """One channel's communication: ``sent`` (committed writes, or message deliveries),
    ``reached`` (another member's model input held it, its text or a notice naming it),
    ``read`` (another member read it), ``acted`` (a reader's later output referred to it)."""

    channel: str
    sent: int
    reached: int
    read: int
    acted: int


@attrs.frozen
class Figures:
    """A run's coordination figures (``None`` where a figure has no denominator)."""

    model_calls: int  # completed model calls
    tokens: int  # their tokens
    model_time: float  # their summed time
    critical_path: CriticalPath
    parallelism: float | None  # model_time / critical_path.time; None when that time is 0
    answer_tokens: int | None  # tokens of the answer's chain (the answer's last call and its
    # ancestors); None with no answer
    overhead_tokens: int | None  # tokens - answer_tokens
    overhead: float | None  # overhead_tokens / tokens
    tool_calls: int  # tool work: tool calls other than the swarm's own tools
    duplicate_tool_calls: int  # of those, repeats of a call another member also made
    redundancy: float | None  # duplicate_tool_calls / tool_calls
    writes: int  # committed writes and messages sent, every channel
    message_density: float | None  # writes / model_calls
    funnels: tuple[Funnel, ...]
    peer_wait_time: float  # swarm_wait durations plus wait_for_children calls
    model_wait_time: float  # durations of the model calls, start to recorded end

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready values."""
        return attrs.asdict(self, recurse=True)


@attrs.frozen
class Delivery:
    """What one member gave another: a board write or a message, who could read it, its text,
    and which read of it reached which call of the reader."""

    channel: str
    ref: str  # w-3, message:2
    writer: str
    time: float
    text: str
    entry: int | None  # the evidence entry (its index) of the write
    reached: frozenset[str]  # members whose model input held it or a notice naming it
    reads: tuple[tuple[str, int, Call | None], ...]  # (reader, read entry, call that held it)


def predecessors(trace: Trace) -> dict[int, list[int]]:
    """Each completed call's predecessors in the graph of calls (by event index)."""
    preds: dict[int, list[int]] = {}
    last: dict[str, int] = {}
    for call in trace.done():
        preds[call.index] = [last[call.member]] if call.member in last else []
        last[call.member] = call.index
    for link in trace.links:
        if link.target in preds and link.source in preds and link.source < link.target:
            preds[link.target].append(link.source)
    return preds


def _critical(trace: Trace, preds: Mapping[int, list[int]]) -> CriticalPath:
    """The chain with the most summed time (then the most calls, then the most tokens, then
    the first in transcript order): a longest path of the graph of calls, one pass in
    transcript order (every predecessor comes before its call)."""
    by_index = {c.index: c for c in trace.done()}
    best: dict[int, tuple[float, int, int]] = {}  # (time, calls, tokens) of the best chain
    back: dict[int, int | None] = {}
    for index in sorted(by_index):
        call = by_index[index]
        before = max(preds[index], key=lambda p: best[p], default=None)
        time, steps, tokens = best[before] if before is not None else (0.0, 0, 0)
        best[index] = (time + call.time, steps + 1, tokens + call.tokens)
        back[index] = before
    if not best:
        return CriticalPath(steps=0, tokens=0, time=0.0, calls=(), members=())
    end: int | None = max(sorted(best), key=lambda i: best[i])
    chain: list[Call] = []
    while end is not None:
        chain.append(by_index[end])
        end = back[end]
    chain.reverse()
    members = list(dict.fromkeys(c.member for c in chain))
    return CriticalPath(
        steps=len(chain),
        tokens=sum(c.tokens for c in chain),
        time=best[chain[-1].index][0],
        calls=tuple((c.member, c.step) for c in chain),
        members=tuple(members),
    )


def answer_chain(trace: Trace, preds: Mapping[int, list[int]]) -> set[int] | None:
    """The answer member's last completed call and its ancestors; ``None`` with no answer."""
    answer = trace.answer
    done = [c for c in trace.done() if c.member == answer]
    if not done:
        return None
    seen: set[int] = set()
    stack = [done[-1].index]
    while stack:
        index = stack.pop()
        if index not in seen:
            seen.add(index)
            stack.extend(preds.get(index, ()))
    return seen


def _payload(arguments: Mapping[str, Any]) -> str:
    return " ".join(
        str(arguments[k])
        for k in ("file_text", "append_text", "new_str", "insert_text")
        if arguments.get(k)
    )


def deliveries(trace: Trace) -> list[Delivery]:
    """Every board write and every message (not receipts), in the order they were made."""
    if "deliveries" not in trace.cache:
        trace.cache["deliveries"] = _deliveries(trace)
    found: list[Delivery] = trace.cache["deliveries"]
    return found


def _board_reads(trace: Trace) -> dict[str, list[int]]:
    """Board path -> the (non-listing) read entries showing it, in order."""
    found: dict[str, list[int]] = {}
    for j, entry in enumerate(trace.evidence):
        if entry.get("kind") != "read" or entry.get("listing"):
            continue
        if entry.get("channel") != "shared_memory":
            continue
        for f in entry.get("files") or []:
            if isinstance(f, Mapping) and isinstance(f.get("path"), str):
                entries = found.setdefault(f["path"], [])
                if not entries or entries[-1] != j:
                    entries.append(j)
    return found


def _deliveries(trace: Trace) -> list[Delivery]:
    found: list[Delivery] = []
    notified = _notified(trace)
    by_path = _board_reads(trace)
    for i, entry in enumerate(trace.evidence):
        if entry.get("kind") != "delivered" or entry.get("channel") != "shared_memory":
            continue
        writer, path = str(entry.get("member")), (entry.get("op") or {}).get("path")
        tool = trace.entry_tool.get(i)
        reads = []
        shown = by_path.get(str(path), [])
        for j in shown[bisect.bisect_right(shown, i) :]:  # the reads after the write
            later = trace.evidence[j]
            if later.get("member") == writer:
                continue
            read_tool = trace.entry_tool.get(j)
            holder = trace.holder(read_tool) if read_tool is not None else None
            reads.append((str(later.get("member")), j, holder))
        record = str(entry.get("record"))
        reached = {r for r, _, held in reads if held is not None} | notified.get(record, set())
        found.append(
            Delivery(
                channel="shared_memory",
                ref=record,
                writer=writer,
                time=float(entry.get("time") or 0.0),
                text=_payload(tool.arguments) if tool is not None else "",
                entry=i,
                reached=frozenset(reached - {writer}),
                reads=tuple(reads),
            )
        )
    noticed: set[tuple[str, int]] = set()
    for n in trace.evidence:
        if n.get("kind") == "notified":
            for ref in n.get("ids") or []:
                if isinstance(ref, Mapping) and isinstance(ref.get("message"), int):
                    noticed.add((str(n.get("member")), ref["message"]))
    for m in trace.messages:
        if m.kind != "message":
            continue
        read = trace.message_read.get(m.seq)
        reads = []
        if read is not None:
            tool = trace.entry_tool.get(read)
            reads.append((m.recipient, read, trace.holder(tool) if tool is not None else None))
        found.append(
            Delivery(
                channel="messages",
                ref=f"message:{m.seq}",
                writer=m.sender,
                time=m.time,
                text=m.text,
                entry=None,
                reached=frozenset(
                    {m.recipient} if m.seen is not None or (m.recipient, m.seq) in noticed else ()
                ),
                reads=tuple(reads),
            )
        )
    return found


def _notified(trace: Trace) -> dict[str, set[str]]:
    """Board record id -> the members a sent notice named it to (notices name records by
    their file; a file's record is known from the reads that showed it)."""
    record_of: dict[tuple[str, int], str] = {}
    for entry in trace.evidence:
        for f in entry.get("files") or [] if entry.get("kind") == "read" else []:
            if isinstance(f, Mapping) and f.get("record") and f.get("file"):
                record_of[(str(f["file"]), int(f.get("version") or 0))] = str(f["record"])
    found: dict[str, set[str]] = {}
    for entry in trace.evidence:
        if entry.get("kind") != "notified" or entry.get("channel") != "shared_memory":
            continue
        for ref in entry.get("ids") or []:
            if isinstance(ref, Mapping):
                key = (str(ref.get("file")), int(ref.get("version") or 0))
                record = ref.get("record") or record_of.get(key)
            else:
                record = None
            if record:
                found.setdefault(str(record), set()).add(str(entry.get("member")))
    return found


def referred(trace: Trace, reader: str, held: Call, text: str) -> bool | None:
    """Whether ``reader``'s output from ``held`` on (its text, its tool calls' argument values)
    shares a word with ``text``; ``None`` when ``text`` has no word."""
    wanted = words(text)
    if not wanted:
        return None
    return bool(wanted & _said_from(trace, reader).get(held.index, set()))


def _said_from(trace: Trace, member: str) -> dict[int, set[str]]:
    """For each of ``member``'s calls (by event index), the words of what it and every later
    call of the member said (computed once per member)."""
    cache: dict[str, dict[int, set[str]]] = trace.cache.setdefault("said_from", {})
    if member not in cache:
        found: dict[int, set[str]] = {}
        later: set[str] = set()
        for c in reversed(trace.calls_of(member)):
            later = later | {w for s in c.said for w in words(s)}
            found[c.index] = later
        cache[member] = found
    return cache[member]


def _acted(trace: Trace, d: Delivery) -> bool:
    return any(
        held is not None and referred(trace, reader, held, d.text) is True
        for reader, _, held in d.reads
    )


def _funnels(trace: Trace, found: Sequence[Delivery]) -> tuple[Funnel, ...]:
    funnels = []
    for channel in sorted({d.channel for d in found}):
        mine = [d for d in found if d.channel == channel]
        funnels.append(
            Funnel(
                channel=channel,
                sent=len(mine),
                reached=sum(1 for d in mine if d.reached),
                read=sum(1 for d in mine if d.reads),
                acted=sum(1 for d in mine if _acted(trace, d)),
            )
        )
    return tuple(funnels)


def _duplicates(trace: Trace) -> tuple[int, int]:
    work = [t for t in trace.tools if t.function not in COORDINATION_TOOLS]
    groups: dict[str, list[str]] = {}
    for t in work:
        groups.setdefault(t.key, []).append(t.member)
    duplicates = sum(len(g) - 1 for g in groups.values() if len(set(g)) > 1)
    return len(work), duplicates


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _sum(values: Iterable[float]) -> float:
    return float(sum(values))


def figures(trace: Trace) -> Figures:
    """The coordination figures of ``trace``."""
    done = trace.done()
    preds = predecessors(trace)
    path = _critical(trace, preds)
    tokens = sum(c.tokens for c in done)
    model_time = _sum(c.time for c in done)
    chain = answer_chain(trace, preds)
    answer_tokens = None if chain is None else sum(c.tokens for c in done if c.index in chain)
    overhead = None if answer_tokens is None else tokens - answer_tokens
    tool_calls, duplicates = _duplicates(trace)
    writes = sum(1 for e in trace.evidence if e.get("kind") == "delivered")
    waited = _sum(
        float(e.get("duration") or 0.0) for e in trace.evidence if e.get("kind") == "waited"
    )
    waited += _sum(t.duration for t in trace.tools if t.function == "wait_for_children")
    return Figures(
        model_calls=len(done),
        tokens=tokens,
        model_time=model_time,
        critical_path=path,
        parallelism=_ratio(model_time, path.time),
        answer_tokens=answer_tokens,
        overhead_tokens=overhead,
        overhead=None if overhead is None else _ratio(overhead, tokens),
        tool_calls=tool_calls,
        duplicate_tool_calls=duplicates,
        redundancy=_ratio(duplicates, tool_calls),
        writes=writes,
        message_density=_ratio(writes, len(done)),
        funnels=_funnels(trace, deliveries(trace)),
        peer_wait_time=waited,
        model_wait_time=_sum(c.duration for c in trace.calls),
    )
