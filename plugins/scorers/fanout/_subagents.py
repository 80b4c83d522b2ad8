"""A deepagent lead's background subagents as the rubric's children.

The subagents record (``inspect_swarm:subagents``, written by the runtime from the transcript
and the deepagent's own background registry) is read as the entries of the records the rules
already judge, so every rule applies unchanged:

- each background ``dispatch`` is a ``spawn`` entry: the subagent run's name
  (``<member>/AGENT-N``) is the child's member name, its subagent type the name it was
  ``requested`` under (the shard assignment: the fan-out's deepagent lead has one subagent type
  per shard, its worker name as an identifier, ``worker_events_01`` for ``worker-events-01``,
  which the fixture maps back: ``subagent_aliases``), the dispatching loop its ``parent`` and the
  prompt its ``task``;
- each ``end`` is an ``end`` entry with its status, and a member of the result record (started
  when its span opened, ended when it closed); its usage is a member of the ledger, and is taken
  off the lead's own entry (the ledger meters a subagent's calls to the member that owns it);
- each ``received`` is a message to the lead: a ``result`` a reply (relationship ``child``,
  its text the subagent's result, ``seen`` when a model call of the dispatching loop that
  carried it was sent), a ``status`` (errored, cancelled) a receipt about the child.

A foreground dispatch is not a child (the lead waited for it as for any tool), and is left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ._fields import Malformed, mapping, number, optional_number, optional_text, text, whole
from ._fixture import Fixture
from ._readlog import READ_OPS, Reads
from ._records import (
    SUBAGENTS_KEY,
    MemberRun,
    MemberUsage,
    MessageEntry,
    RecordReport,
    Seen,
    SpawnEntry,
)

__all__ = [
    "Ran",
    "SubagentChildren",
    "child_aliases",
    "credit_reads",
    "lead_own_usage",
    "named_shard",
    "names_path",
    "subagent_aliases",
    "subagent_children",
    "subagent_type",
]

_OPS = ("dispatch", "ran", "end", "received")


@attrs.frozen(kw_only=True)
class Ran:
    """One tool call a CLI's sub-agent asked its CLI to run (a ``ran`` entry)."""

    child: str
    member: str  # the CLI member whose container it ran in
    time: float
    text: str  # the call's tool name and JSON arguments


@attrs.frozen(kw_only=True)
class SubagentChildren:
    """The subagents record read as entries of the other records."""

    ran: tuple[Ran, ...] = ()
    spawns: tuple[SpawnEntry, ...] = ()
    messages: tuple[MessageEntry, ...] = ()
    members: tuple[MemberRun, ...] = ()
    usage: tuple[MemberUsage, ...] = ()
    report: RecordReport = attrs.field(
        factory=lambda: RecordReport(key=SUBAGENTS_KEY, present=False)
    )


def _flag(entry: Mapping[str, Any], key: str) -> bool:
    value = entry.get(key)
    if not isinstance(value, bool):
        raise Malformed(f"{key}: expected true or false, got {value!r:.80}")
    return value


def _seen(entry: Mapping[str, Any]) -> Seen | None:
    if "seen" not in entry:
        raise Malformed("seen: missing")
    raw = entry["seen"]
    if raw is None:
        return None
    seen = mapping(raw, "seen")
    return Seen(time=number(seen, "time"), via=text(seen, "via"))


def subagent_type(worker: str) -> str:
    """The deepagent subagent type of a shard's child: its worker name as a Python identifier
    (deepagent's rule for subagent names): ``worker-events-01`` is ``worker_events_01``."""
    return re.sub(r"[^0-9A-Za-z_]", "_", worker)


def subagent_aliases(fixture: Fixture) -> dict[str, str]:
    """Each shard's subagent type -> its worker name (types two workers share are left out:
    such a fixture cannot have a deepagent lead, and ``fanout_deepagent_topology`` refuses it)."""
    types = [subagent_type(s.worker) for s in fixture.shards]
    return {t: s.worker for t, s in zip(types, fixture.shards, strict=True) if types.count(t) == 1}


def child_aliases(fixture: Fixture) -> dict[str, str]:
    """What the rubric maps a subagent's dispatch to its worker by: ``subagent_aliases``, and
    each shard's path (``shards/<file>``) -> its worker name (a Codex sub-agent's shard is the
    one shard file its task names: ``named_shard``)."""
    return subagent_aliases(fixture) | {f"shards/{s.file}": s.worker for s in fixture.shards}


_PATH = re.compile(r"[\w./~-]+")


def paths_named(text: str) -> set[str]:
    """The path-like words of ``text``, each also without a trailing ``.`` (a sentence's end)
    and a leading ``./``."""
    found: set[str] = set()
    for word in _PATH.findall(text):
        word = word.rstrip(".")
        found |= {word, word.removeprefix("./")}
    return found


def names_path(text: str, path: str) -> bool:
    """Whether ``text`` names ``path``: a word of it is the path, or ends with ``/<path>``
    (``/workspace/shards/a.jsonl`` names ``shards/a.jsonl``)."""
    return _among(paths_named(text), path)


def _among(words: set[str], path: str) -> bool:
    return any(w == path or w.endswith(f"/{path}") for w in words)


def named_shard(prompt: str, aliases: Mapping[str, str]) -> str | None:
    """The worker of the one shard path (an ``aliases`` key with a ``/``) ``prompt`` names, or
    ``None`` when it names none or more than one."""
    named = {w for k, w in aliases.items() if "/" in k and names_path(prompt, k)}
    return next(iter(named)) if len(named) == 1 else None


def subagent_children(
    value: Any, seq_from: int, message_seq_from: int, aliases: Mapping[str, str]
) -> SubagentChildren:
    """Read the subagents record; synthetic ``seq``s continue after ``seq_from`` (spawns) and
    ``message_seq_from`` (messages), in the record's order; a dispatch's subagent type is
    ``requested`` as its alias (the worker name) when it has one, else as the worker of the
    one shard its task names (a Codex sub-agent's: Codex's ``spawn_agent`` takes no name)."""
    if value is None:
        return SubagentChildren()
    problems: list[str] = []
    try:
        record = mapping(value, "the record")
        if whole(record, "version") != 1:
            raise Malformed("version: expected 1")
        raw = record.get("entries")
        if not isinstance(raw, list):
            raise Malformed("entries: expected a list")
    except Malformed as ex:
        report = RecordReport(key=SUBAGENTS_KEY, present=True, problem=str(ex))
        return SubagentChildren(report=report)
    spawns: list[SpawnEntry] = []
    messages: list[MessageEntry] = []
    members: list[MemberRun] = []
    usage: list[MemberUsage] = []
    ran: list[Ran] = []
    children: dict[str, tuple[str, int]] = {}  # name -> (lead, depth), background ones only
    malformed = unknown = 0
    for index, item in enumerate(raw):
        try:
            entry = mapping(item, "the entry")
            op = text(entry, "op")
            time = number(entry, "time")
            name = text(entry, "name")
            if op not in _OPS:
                unknown += 1
                problems.append(f"entries[{index}]: skipped: unknown op {op!r}")
                continue
            if op == "dispatch":
                if not _flag(entry, "background") or name in children:
                    continue
                depth = whole(entry, "depth", low=1)
                member = text(entry, "member")
                children[name] = (member, depth)
                spawns.append(
                    SpawnEntry(
                        seq=seq_from + len(spawns) + 1,
                        time=time,
                        op="spawn",
                        member=name,
                        requested=aliases.get(kind := text(entry, "subagent"))
                        or named_shard(text(entry, "prompt"), aliases)
                        or kind,
                        parent=text(entry, "parent"),
                        depth=depth,
                        template=None,
                        task=text(entry, "prompt"),
                        status=None,
                        reason=None,
                    )
                )
                continue
            if name not in children:
                continue
            lead, depth = children[name]
            if op == "ran":
                args = entry.get("arguments")
                if not isinstance(args, dict):
                    raise Malformed(f"arguments: expected a mapping, got {args!r:.80}")
                called = f"{text(entry, 'tool')} {json.dumps(args, ensure_ascii=False)}"
                ran.append(Ran(child=name, member=lead, time=time, text=called))
                continue
            if op == "end":
                status = optional_text(entry, "status")
                used = mapping(entry.get("usage"), "usage")
                if status not in (None, "running"):
                    spawns.append(
                        SpawnEntry(
                            seq=seq_from + len(spawns) + 1,
                            time=time,
                            op="end",
                            member=name,
                            requested="",
                            parent=lead,
                            depth=depth,
                            template=None,
                            task=None,
                            status=status,
                            reason=None,
                        )
                    )
                started = optional_number(entry, "started")
                members.append(
                    MemberRun(
                        name=name,
                        state="running" if status in (None, "running") else "ended",
                        status=status,
                        started=started,
                        ended=None if status in (None, "running") else time,
                        parent=lead,
                        depth=depth,
                    )
                )
                usage.append(
                    MemberUsage(
                        name=name,
                        tokens=whole(used, "total_tokens", low=0),
                        cost=0.0,
                        calls=whole(used, "calls", low=0),
                        cache_replays=whole(used, "cache_replays", low=0),
                        errored=whole(used, "errored", low=0),
                    )
                )
                continue
            kind = text(entry, "kind")
            result = kind == "result"
            messages.append(
                MessageEntry(
                    seq=message_seq_from + len(messages) + 1,
                    time=time,
                    kind="message" if result else "receipt",
                    sender=name,
                    recipient=text(entry, "member"),
                    relationship="child",
                    text=text(entry, "text"),
                    about=None if result else name,
                    status=None,
                    seen=_seen(entry),
                )
            )
        except Malformed as ex:
            malformed += 1
            problems.append(f"entries[{index}]: {ex}")
    report = RecordReport(
        key=SUBAGENTS_KEY,
        present=True,
        malformed=malformed,
        unknown=unknown,
        problems=tuple(problems[:20]),
    )
    return SubagentChildren(
        ran=tuple(ran),
        spawns=tuple(spawns),
        messages=tuple(messages),
        members=tuple(members),
        usage=tuple(usage),
        report=report,
    )


def lead_own_usage(
    usage: Sequence[MemberUsage], children: Sequence[MemberUsage], lead: str | None
) -> tuple[MemberUsage, ...]:
    """The ledger's members with the lead's entry less its subagents' calls (metered to it)."""
    if not children or lead is None:
        return tuple(usage)
    tokens = sum(c.tokens for c in children)
    calls = sum(c.calls for c in children)
    replays = sum(c.cache_replays for c in children)
    errored = sum(c.errored for c in children)
    return tuple(
        attrs.evolve(
            u,
            tokens=max(0, u.tokens - tokens),
            calls=max(0, u.calls - calls),
            cache_replays=max(0, u.cache_replays - replays),
            errored=max(0, u.errored - errored),
        )
        if u.name == lead
        else u
        for u in usage
    )


def credit_reads(reads: Reads | None, ran: Sequence[Ran]) -> Reads | None:
    """A CLI's sub-agents share its container, so the runtime credits every read there to the
    CLI member.  Here a read is credited instead to the sub-agent of that member whose own tool
    call, at or before the read, last named the file (``names_path``); when two named it at the
    same moment, or none did, it stays the member's.  A credited sub-agent works in its member's
    environment (added to ``members``), which the isolation check then finds shared.

    What this cannot tell apart: the member's own read of a file one of its sub-agents had
    asked for, and a read by a command that does not name the file (``cat shards/*``), which
    stays the member's.  Such a run is not isolated, so it is never ``resolved``."""
    if reads is None or not ran:
        return reads
    asked: dict[str, list[tuple[Ran, set[str]]]] = {}
    for r in ran:  # each call's path-like words read once, not once per read entry
        asked.setdefault(r.member, []).append((r, paths_named(r.text)))
    entries = []
    credited: dict[str, Any] = {}
    for e in reads.entries:
        asks = [
            r for r, words in asked.get(e.member, ()) if r.time <= e.time and _among(words, e.path)
        ]
        if e.op in READ_OPS and asks:
            latest = max(r.time for r in asks)
            who = {r.child for r in asks if r.time == latest}
            if len(who) == 1:
                child = who.pop()
                credited[child] = reads.members.get(e.member, {}).get("sandbox", e.sandbox)
                e = attrs.evolve(e, member=child)
        entries.append(e)
    members = dict(reads.members)
    for child, sandbox in credited.items():
        members.setdefault(child, {"sandbox": sandbox, "files": []})
    return attrs.evolve(reads, entries=tuple(entries), members=members)
