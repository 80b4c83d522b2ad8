"""Proof of work: each shard's answer came from the child assigned to it, after that child read
its shard, and from nowhere else.

``proof_of_work`` (required for ``resolved``) reads only runtime records: the reads record
(``inspect_swarm:reads``: which member's sandbox tools opened and read which file, as the host
kernel reported it), the spawn ledger (each child's task) and the message log.  A shard passes
when one child spawned under its worker name (a retry counts):

1. read ``shards/<file>`` (its first ``read`` of the file in the reads record), and after that
   sent the lead a reply whose integer (read as provenance reads it: its last number) is the
   expected answer;
2. was never given that integer: not in its spawn task, not in any message sent to it before
   that reply.  Here every run of digits counts, inside words too, thousands separators joined
   (``x1,482,368`` gives 1482368), once the fixture's shard file names and questions are taken
   out (so ``events-03.jsonl`` does not give 3);
3. read no other shard's file (under ``local`` a child can reach another's directory; the
   reads record names it).

Without a reads record (a solver without ``sandboxes.per_member``) or with one whose file
events could not be watched, every shard fails: nothing proves any child read anything.
"""

from __future__ import annotations

import re
from typing import Any

from swarm import RuleFailure, RuleResult

from ._evidence import Child, Evidence
from ._fixture import Fixture, Shard
from ._numbers import reply_integer
from ._readlog import Reads

__all__ = ["ISOLATION", "integers", "isolation", "proof_of_work"]

_GROUPED = re.compile(r"(?<=[0-9])[,\u00a0\u202f\u2009](?=[0-9]{3}(?![0-9]))")
_DIGITS = re.compile(r"[0-9]+")


def integers(text: str, fixture: Fixture | None = None) -> set[int]:
    """Every integer ``text`` could give a reader: each run of digits, thousands separators
    joined (``1,482,368`` is 1482368), digits inside words included (``x16`` holds 16).  The
    fixture's shard file names and questions are taken out first, so ``events-03.jsonl`` or a
    number in a question is not a leak."""
    if fixture is not None:
        for shard in fixture.shards:
            text = text.replace(shard.question, " ").replace(shard.file, " ")
    return {int(run) for run in _DIGITS.findall(_GROUPED.sub("", text))}


def _leaks(
    child: Child, shard: Shard, fixture: Fixture, evidence: Evidence, before: float
) -> list[str]:
    """Where the expected answer reached ``child`` other than by its own work."""
    found: list[str] = []
    if shard.expected in integers(child.task or "", fixture):
        found.append("its spawn task holds the answer")
    for m in evidence.messages:
        if (
            m.recipient == child.member
            and m.time < before
            and shard.expected in integers(m.text, fixture)
        ):
            found.append(f"message {m.seq} from {m.sender} holds the answer")
    return found


def _check_shard(
    shard: Shard, fixture: Fixture, evidence: Evidence, reads: Reads
) -> RuleFailure | None:
    children = [c for c in evidence.children if shard.worker in c.requested]
    if not children:
        return RuleFailure(reason=f"no child was spawned as {shard.worker}", shard=shard.file)
    others = {f"shards/{s.file}" for s in fixture.shards if s.file != shard.file}
    why: list[str] = []
    for child in children:
        read = reads.first_read(child.member, f"shards/{shard.file}")
        if read is None:
            why.append(f"{child.member} never read shards/{shard.file}")
            continue
        replies = [
            m
            for m in evidence.replies(child.member)
            if m.time > read.time and reply_integer(m.text) == shard.expected
        ]
        if not replies:
            why.append(f"{child.member} sent no reply with the answer after reading its shard")
            continue
        leaks = _leaks(child, shard, fixture, evidence, replies[0].time)
        strays = sorted({e.path for e in reads.entries if e.member == child.member} & others)
        if strays:
            leaks.append(f"it read another shard's file ({', '.join(strays)})")
        if not leaks:
            return None
        why.append(f"{child.member}: the answer reached it from elsewhere: {'; '.join(leaks)}")
    return RuleFailure(reason="; ".join(why), shard=shard.file, member=children[-1].member)


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
    for shard in fixture.shards:
        failure = _check_shard(shard, fixture, evidence, reads)
        if failure is None:
            proved.append(shard.file)
        else:
            failures.append(failure)
    overflow = any(e.op == "overflow" for e in reads.entries)
    return RuleResult(
        passed=not failures,
        failures=tuple(failures),
        details={"proved": proved, "provider": reads.provider, "overflow": overflow},
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


def isolation(reads: Reads | None) -> dict[str, Any]:
    """What isolation the run had, for the score's metadata."""
    if reads is None:
        return {
            "provider": None,
            "isolated": False,
            "note": "the members had no sandboxes of their own: nothing was isolated or watched",
        }
    isolated, note = ISOLATION.get(
        reads.provider or "",
        (False, "a provider this rubric does not know: its isolation is not vouched for"),
    )
    return {"provider": reads.provider, "isolated": isolated, "note": note}
