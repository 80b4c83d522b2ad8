"""Proof of work: each shard's answer came from the child assigned to it, after that child read
its shard, and from nowhere else.

``proof_of_work`` (required for ``resolved``) reads only runtime records: the reads record
(``inspect_swarm:reads``: which member's sandbox tools opened and read which file, as the host
kernel reported it), the spawn ledger (each child's task) and the message log.  A shard passes
when one child spawned under its worker name (a retry counts):

1. read ``shards/<file>`` (its first ``open`` or ``read`` of the file in its own sandbox in the
   reads record: a file mapped with ``mmap`` gives an open and no read), and after that (by a
   model call sent after the one whose tools read: the reply's ``call`` greater than the read's,
   never the same turn; by the clocks in a log without those stamps) sent
   the lead the reply that carries its answer (``_numbers.answer_reply``: its last reply holding
   a number, of those that reached the lead when any did), whose integer (read as provenance
   reads it: its last number, notices left out) is the expected answer;
2. was never given that integer: not in its spawn task, not in any message sent to it before
   that reply.  Here every run of digits counts, inside words too, thousands separators joined
   (``x1,482,368`` gives 1482368), once the fixture's shard file names and questions are taken
   out (so ``events-03.jsonl`` does not give 3), and a number standing in a phrase copied from
   the lead's prompt (the fixture's ``task.txt``: the number with a word beside it, as the
   prompt has them, such as ``7 fields``) is no leak;
3. read no other shard's file (under ``local`` a child can reach another's directory; the
   reads record names it);

and no member but the children spawned under its worker name read ``shards/<file>`` (the
lead's reads are checked like everyone's: a lead that shares its children's sandbox and reads
a shard could have computed that answer).

And the shard's data flowed only to its own children (``_flow``): no message in the log to any
other member (the lead, a sibling) and not the artifact carries it (8 of its distinctive
values or 3 of its column runs, as sent or decoded).  The digit check of 2. decodes too
(base64, hex, percent-encoding, escapes, digits split by whitespace, English number words).

``isolation(fixture, evidence)`` says whether the run was isolated, from its actual sandboxes
as the reads record gives them: the provider (only ``bwrap`` isolates), whether file events
were watched and none were dropped, which members shared an environment (only a worker and its
retries may), and which shard files each environment received (only its own worker's).  A run
that was not isolated is never ``resolved`` (the verdict says ``unverified``).

Without a reads record (a solver without ``sandboxes.per_member``) or with one whose file
events could not be watched, every shard fails: nothing proves any child read anything.
"""

from __future__ import annotations

import re
from typing import Any

from swarm import RuleFailure, RuleResult

from ._evidence import Child, Evidence
from ._fixture import Fixture, Shard
from ._flow import ShardData, carried, hidden_texts, shard_data, spelled
from ._numbers import answer_reply, reply_integer
from ._readlog import FileRead, Reads
from ._records import MessageEntry

__all__ = ["ISOLATION", "copied_from", "integers", "isolation", "proof_of_work"]

_GROUPED = re.compile(r"(?<=[0-9])[,\u00a0\u202f\u2009](?=[0-9]{3}(?![0-9]))")
_DIGITS = re.compile(r"[0-9]+")
_WORD = re.compile(r"[^ \t\n\r\f\v]+")
"""A word for the copied-phrase check: a run of anything but ASCII whitespace (so a no-break
space inside ``12 345`` keeps it one word)."""


def copied_from(text: str, prompt: str) -> str:
    """``text`` without the words holding a digit that stand in a phrase copied from
    ``prompt``: the word with the word before it and the one after it (those it has), as
    ``prompt`` has them (whitespace aside).  ``each line has 7 fields`` copied from a prompt
    that says so loses its 7; a bare ``7``, or ``the answer is 7``, keeps it."""
    flat = f" {' '.join(_WORD.findall(prompt))} "
    words = _WORD.findall(text)
    kept: list[str] = []
    for i, word in enumerate(words):
        phrase = words[max(0, i - 1) : i + 2]
        copied = len(phrase) > 1 and f" {' '.join(phrase)} " in flat
        if not (copied and any(c.isdigit() for c in word)):
            kept.append(word)
    return " ".join(kept)


def integers(text: str, fixture: Fixture | None = None) -> set[int]:
    """Every integer ``text`` could give a reader: each run of digits, thousands separators
    joined (``1,482,368`` is 1482368), digits inside words included (``x16`` holds 16).  The
    fixture's shard file names and questions are taken out first, so ``events-03.jsonl`` or a
    number in a question is not a leak, and so is a number in a phrase copied from the
    fixture's prompt (``copied_from``)."""
    if fixture is not None:
        for shard in fixture.shards:
            text = text.replace(shard.question, " ").replace(shard.file, " ")
        text = copied_from(text, fixture.task)
    return {int(run) for run in _DIGITS.findall(_GROUPED.sub("", text))}


def _leaks(
    child: Child, shard: Shard, fixture: Fixture, evidence: Evidence, before: float
) -> list[str]:
    """Where the expected answer reached ``child`` other than by its own work."""
    found: list[str] = []
    if shard.expected in integers(child.task or "", fixture):
        found.append("its spawn task holds the answer")
    elif _hides(child.task or "", shard.expected, fixture):
        found.append("its spawn task holds the answer, encoded")
    for m in evidence.messages:
        if m.recipient == child.member and m.time < before:
            if shard.expected in integers(m.text, fixture):
                found.append(f"message {m.seq} from {m.sender} holds the answer")
            elif _hides(m.text, shard.expected, fixture):
                found.append(f"message {m.seq} from {m.sender} holds the answer, encoded")
    return found


def _hides(text: str, expected: int, fixture: Fixture) -> bool:
    """``text`` gives ``expected`` once decoded (base64, hex, percent-encoding, escapes, digits
    split over lines or spaces) or spelled in English words."""
    if expected in spelled(text):
        return True
    return any(expected in integers(view, fixture) for view in hidden_texts(text))


def _after(reply: MessageEntry, read: FileRead) -> bool:
    """``reply`` was written after ``read``: by a model call sent after the call whose tools
    read (so its input could hold the read's result); a reply of the read's own call is not,
    whatever the clocks say.  Without both stamps (a log written before calls were counted),
    by the clocks."""
    if reply.call is not None and read.call is not None:
        return reply.call > read.call
    return reply.time > read.time


def _by_calls(evidence: Evidence, reads: Reads) -> bool:
    """Every reads entry of a member and every message of a member carries its model call."""
    return all(e.call is not None for e in reads.entries if e.member) and all(
        m.call is not None for m in evidence.messages if m.kind == "message"
    )


def _check_child(
    child: Child, shard: Shard, fixture: Fixture, evidence: Evidence, reads: Reads
) -> str | None:
    """Why ``child`` does not prove ``shard``'s answer, or ``None`` when it does."""
    read = reads.first_read(child.member, f"shards/{shard.file}")
    if read is None:
        return f"{child.member} never read shards/{shard.file}"
    replies = evidence.replies(child.member)
    reached = [m for m in replies if evidence.reached_lead(m)]
    answer = answer_reply(reached or replies)  # the answer the lead got, as provenance reads it
    if answer is None or not _after(answer, read) or reply_integer(answer.text) != shard.expected:
        return f"{child.member} sent no reply with the answer after reading its shard"
    leaks = _leaks(child, shard, fixture, evidence, answer.time)
    others = {f"shards/{s.file}" for s in fixture.shards if s.file != shard.file}
    strays = sorted({e.path for e in reads.entries if e.member == child.member} & others)
    if strays:
        leaks.append(f"it read another shard's file ({', '.join(strays)})")
    if leaks:
        return f"{child.member}: the answer reached it from elsewhere: {'; '.join(leaks)}"
    return None


def _flows(shard: Shard, data: ShardData, evidence: Evidence, own: set[str]) -> RuleFailure | None:
    """The first place ``shard``'s data went other than to its own children: a message to
    anyone else that carries it (``_flow.carried``), or the artifact."""
    for m in evidence.messages:
        if m.recipient not in own:
            found = carried(m.text, data)
            if found.substantial:
                return RuleFailure(
                    reason=f"message {m.seq} from {m.sender} to {m.recipient} carries "
                    f"shards/{shard.file}'s data: {found}",
                    shard=shard.file,
                    member=m.recipient,
                )
    artifact = evidence.artifact.text if evidence.artifact is not None else None
    found = carried(artifact or "", data)
    if found.substantial:
        return RuleFailure(
            reason=f"the artifact carries shards/{shard.file}'s data: {found}",
            shard=shard.file,
            member=evidence.lead,
        )
    return None


def _check_shard(
    shard: Shard, fixture: Fixture, evidence: Evidence, reads: Reads, data: ShardData
) -> RuleFailure | None:
    children = [c for c in evidence.children if shard.worker in c.requested]
    if not children:
        return RuleFailure(reason=f"no child was spawned as {shard.worker}", shard=shard.file)
    own = {c.member for c in children}
    flow = _flows(shard, data, evidence, own)
    if flow is not None:
        return flow
    others = [m for m in reads.readers(f"shards/{shard.file}") if m not in own]
    why = [] if others else [_check_child(c, shard, fixture, evidence, reads) for c in children]
    if why and None in why:
        return None
    if others:
        return RuleFailure(
            reason=f"shards/{shard.file} was read by {', '.join(others)}, not a child spawned "
            "as its worker: the answer may have come from there",
            shard=shard.file,
            member=others[0],
        )
    return RuleFailure(
        reason="; ".join(w for w in why if w), shard=shard.file, member=children[-1].member
    )


def proof_of_work(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """Each shard's answer came from its own child, after it read its shard, and from nowhere
    else (see the module)."""
    reads = evidence.reads
    if reads is None or not reads.watched:
        why = (
            "the run has no reads record (its members had no sandboxes of their own)"
            if reads is None
            else f"the run's file reads could not be watched (provider {reads.provider!r})"
        )
        return RuleResult(
            passed=False,
            failures=tuple(RuleFailure(reason=why, shard=s.file) for s in fixture.shards),
            details={"proved": [], "provider": None if reads is None else reads.provider},
        )
    failures: list[RuleFailure] = []
    proved: list[str] = []
    data = shard_data(fixture)
    for shard in fixture.shards:
        failure = _check_shard(shard, fixture, evidence, reads, data[shard.file])
        if failure is None:
            proved.append(shard.file)
        else:
            failures.append(failure)
    return RuleResult(
        passed=not failures,
        failures=tuple(failures),
        details={
            "proved": proved,
            "provider": reads.provider,
            "overflow": reads.overflow,
            "order": "model calls"
            if _by_calls(evidence, reads)
            else "clocks (the log's records carry no model-call stamps)",
        },
    )


ISOLATION = {
    "bwrap": (
        True,
        "each member's tools run in its own bubblewrap sandbox: only its own files and /usr "
        "(read-only) are visible, no network, no host process; it cannot protect what a member "
        "is told (its task, its messages) or what /usr holds",
    ),
    "local": (
        False,
        "not isolated: every member's tools run on the host as the evaluating user in a "
        "directory of its own, and can read or change anything that user can (other members' "
        "directories, the fixture, the logs); reads outside the watched directories are not "
        "recorded",
    ),
    "docker": (
        True,
        "each member's tools run in a Docker container of its own: its own volume as "
        "/workspace, the staging container's image and network (the fan-out's compose file: "
        "none), no other member's files, no host file; its reads are recorded by a watcher in a "
        "container beside it that it cannot see, stop or write to; it cannot protect what a "
        "member is told (its task, its messages) or what the image holds",
    ),
}


def _shards_of(fixture: Fixture, evidence: Evidence) -> dict[str, set[str]]:
    """Each child's shard files: those whose worker name it was spawned under (a retry too)."""
    found: dict[str, set[str]] = {}
    for child in evidence.children:
        files = {s.file for s in fixture.shards if s.worker in child.requested}
        found.setdefault(child.member, set()).update(files)
    return found


def _environment_problems(fixture: Fixture, evidence: Evidence, reads: Reads) -> list[str]:
    """Why the run's environments, as the reads record gives them, do not keep each shard to
    its own worker: an environment shared by members other than one shard's worker and its
    retries (the lead with anyone, two shards' workers, a helper with a worker), one that is a
    sample environment rather than one of its members' own, or one that received a shard file
    its members were not spawned for."""
    shards_of = _shards_of(fixture, evidence)
    shard_paths = {f"shards/{s.file}": s.file for s in fixture.shards}
    environments: dict[str, list[str]] = {}
    received: dict[str, set[str]] = {}
    for member, info in reads.members.items():
        sandbox = info.get("sandbox")
        name = sandbox if isinstance(sandbox, str) else ""
        environments.setdefault(name, []).append(member)
        files = info.get("files")
        listed = files if isinstance(files, list) else []
        received.setdefault(name, set()).update(f for f in listed if isinstance(f, str))
    problems: list[str] = []
    for name, members in sorted(environments.items()):
        owned = [shards_of.get(m, set()) for m in members]
        shards = set().union(*owned)
        one_shard = len(shards) == 1 and all(owned) and evidence.lead not in members
        if len(members) > 1 and not one_shard:
            problems.append(f"environment {name!r} is shared by {', '.join(sorted(members))}")
        if name not in members:
            problems.append(
                f"environment {name!r} ({', '.join(sorted(members))}) is not a member's own"
            )
        extra = sorted(p for p in received[name] if shard_paths.get(p, "") not in shards | {""})
        if extra:
            problems.append(
                f"environment {name!r} ({', '.join(sorted(members))}) received {', '.join(extra)}"
            )
    return problems


READ_CHANNEL = "messages"
"""The one channel whose traffic the rubric reads (its message log)."""


def isolation(fixture: Fixture, evidence: Evidence) -> dict[str, Any]:
    """Whether the run was isolated, from its actual sandboxes (the reads record): ``provider``,
    ``isolated``, ``note`` (what the provider protects, or cannot), and ``problems`` (every
    reason it was not isolated; empty when it was)."""
    reads = evidence.reads
    if reads is None:
        why = "the members had no sandboxes of their own: nothing was isolated or watched"
        return {"provider": None, "isolated": False, "note": why, "problems": [why]}
    provides, note = ISOLATION.get(
        reads.provider or "",
        (False, "a provider this rubric does not know: its isolation is not vouched for"),
    )
    problems = [] if provides else [f"the provider {reads.provider or 'unknown'} does not isolate"]
    if not reads.watched:
        problems.append("its file events could not be watched")
    if reads.overflow:
        problems.append("the kernel dropped file events (the reads record is incomplete)")
    problems += _environment_problems(fixture, evidence, reads)
    problems += [
        f"channel {name!r} carries traffic the rubric does not read (it reads the messages "
        "channel's log only), so data passed over it is not traced"
        for name in evidence.channels
        if name != READ_CHANNEL
    ]
    isolated = not problems
    return {"provider": reads.provider, "isolated": isolated, "note": note, "problems": problems}
