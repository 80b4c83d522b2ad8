"""The rules about the artifact's answers: coverage (they are right) and provenance (they are
what the children replied).

The artifact is read with a strict bullet parser: a UTF-8 byte order mark at the start of the
text is dropped; a line (surrounding whitespace ignored) that starts with ``-`` or ``*``, then
at least one whitespace character (a space, a tab, a no-break space: any Unicode whitespace),
then ``<key>: <answer>``, where the key is the text before the first colon (trimmed) and the
answer the rest (trimmed).  A key counts for a shard only when it is the shard's bare file name
exactly: ``shards/events-01.jsonl`` is not ``events-01.jsonl``.  Every occurrence of a shard is
kept, so a wrong bullet cannot hide behind a right one.

Answers are compared as integers (``_numbers``): a bullet's answer must be one integer and
nothing else (``59,474`` or ``59474``); a child's reply gives the integer that is its last
number (``The answer is 59,474.``).
"""

from __future__ import annotations

import re
from typing import Any

from swarm import RuleFailure, RuleResult

from ._evidence import Evidence
from ._fixture import Fixture, Shard
from ._numbers import answer_integer, answer_reply, numbers, reply_integer, without_notices
from ._readlog import FileRead
from ._records import MessageEntry

__all__ = ["artifact_bullets", "coverage", "provenance"]

_BULLET = re.compile(r"^[-*]\s+(?P<key>[^:]*):(?P<answer>.*)$")
_BOM = "\ufeff"


def artifact_bullets(text: str) -> dict[str, list[str]]:
    """Every bullet of ``text``: each key's answers, in the order they appear."""
    found: dict[str, list[str]] = {}
    for line in text.removeprefix(_BOM).splitlines():
        match = _BULLET.match(line.strip())
        if match is None:
            continue
        key = match["key"].strip()
        if key:
            found.setdefault(key, []).append(match["answer"].strip())
    return found


def _bullets(evidence: Evidence) -> dict[str, list[str]] | None:
    artifact = evidence.artifact
    if artifact is None or artifact.text is None:
        return None
    return artifact_bullets(artifact.text)


def _no_artifact(evidence: Evidence) -> str:
    if evidence.artifact is None:
        return "no artifact was stored"
    return f"the artifact {evidence.artifact.path} was not written"


def coverage(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """Every shard has a bullet in the artifact, and every one of its bullets is the expected
    answer: one integer (thousands separators allowed) whose value is the expected one."""
    bullets = _bullets(evidence)
    if bullets is None:
        reason = _no_artifact(evidence)
        details: dict[str, Any] = {
            "artifact": None,
            "missing_shards": [s.file for s in fixture.shards],
            "wrong_answers": [],
            "unknown_bullets": [],
        }
        return RuleResult(passed=False, failures=(RuleFailure(reason=reason),), details=details)
    failures: list[RuleFailure] = []
    missing: list[str] = []
    wrong: list[dict[str, Any]] = []
    for shard in fixture.shards:
        answers = bullets.get(shard.file, [])
        expected = str(shard.expected)
        if not answers:
            missing.append(shard.file)
            failures.append(RuleFailure(reason="no bullet in the artifact", shard=shard.file))
        elif any(answer_integer(answer) != shard.expected for answer in answers):
            wrong.append({"shard": shard.file, "expected": expected, "found": answers})
            said = ", ".join(repr(a) for a in answers)
            failures.append(
                RuleFailure(
                    reason=f"expected {expected!r}, the artifact says {said}", shard=shard.file
                )
            )
    files = {s.file for s in fixture.shards}
    details = {
        "artifact": evidence.artifact.path if evidence.artifact else None,
        "missing_shards": missing,
        "wrong_answers": wrong,
        "unknown_bullets": sorted(key for key in bullets if key not in files),
    }
    return RuleResult(passed=not failures, failures=tuple(failures), details=details)


def _last_reply(evidence: Evidence, shard: Shard) -> MessageEntry | None:
    """(member, text) of the reply that carries the answer (``_numbers.answer_reply``: the last
    one holding a number, a later sign-off with none left aside) among the messages that reached
    the lead from children assigned to ``shard`` (spawned under the shard's worker name)."""
    assigned = {c.member for c in evidence.children if shard.worker in c.requested}
    reached = [
        m
        for m in evidence.messages
        if m.sender in assigned and evidence.is_reply(m) and evidence.reached_lead(m)
    ]
    return answer_reply(reached)


def _written(evidence: Evidence) -> tuple[FileRead | None, str | None]:
    """The lead's last write of the artifact (the reads record's ``write`` in its own sandbox),
    and why the artifact's order cannot be judged by model calls (``None`` when it can)."""
    reads = evidence.reads
    if reads is None or not reads.watched or evidence.lead is None or evidence.artifact is None:
        return None, "not checked: no watched reads record"
    members = [e for e in reads.entries if e.member]
    if not members or any(e.call is None for e in members):
        return None, "not checked: the reads record carries no model-call stamps"
    return reads.last_write(evidence.lead, evidence.artifact.path), None


def _unseen_before(reply: MessageEntry, write: FileRead | None, path: str) -> str | None:
    """Why ``reply`` had not reached the lead's model before the call whose tools wrote the
    artifact (its last write), or ``None`` when it had: ``seen.call <= write.call``.  A
    deepagent subagent's result (the subagents record) carries the time its dispatching loop's
    model first had it, not a call number: it is ordered by that time against the write's."""
    if write is None:
        return f"no write of {path} by the lead was recorded"
    seen = reply.seen
    if seen is None:
        return "the reply never reached the lead's model"
    if seen.call is not None and write.call is not None:
        if seen.call > write.call:
            return (
                f"the lead wrote {path} in its model call {write.call}, before the reply "
                f"reached its model (call {seen.call})"
            )
        return None
    if seen.time > write.time:
        return (
            f"the lead wrote {path} at {write.time:.3f} s, before the reply reached its model "
            f"(at {seen.time:.3f} s)"
        )
    return None


def _no_integer(text: str) -> str:
    if not numbers(without_notices(text)):
        return " (no number in it)"
    return " (its last number is not an integer)"


def provenance(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """Every bullet the artifact gives for a shard is the integer of the reply that carried the
    answer to the lead from a child spawned under that shard's worker name (the last such reply
    holding a number: ``_numbers.answer_reply``): the reply's last number, an integer
    (``_numbers.reply_integer``, notices left out), equals the bullet's integer.

    The lead's model must have had that reply before it wrote the artifact: the reply's
    ``seen.call`` is at most the ``call`` of the lead's last write of the artifact in the reads
    record (an artifact written before the replies were seen fails for those shards).  Without
    those stamps (an older log, no watched reads record) the order is not checked, and the
    details' ``order`` says so.

    A shard with bullets but no such reply fails (the lead wrote an answer no child gave it),
    and so does one whose last reply holds no integer or whose bullet is not one; a shard with
    no bullet is coverage's to judge and is only listed in the details.
    """
    bullets = _bullets(evidence) or {}
    write, unchecked = _written(evidence)
    path = evidence.artifact.path if evidence.artifact is not None else ""
    failures: list[RuleFailure] = []
    sourced: dict[str, str] = {}
    unsourced: list[str] = []
    mismatched: list[dict[str, Any]] = []
    absent: list[str] = []
    for shard in fixture.shards:
        answers = bullets.get(shard.file, [])
        if not answers:
            absent.append(shard.file)
            continue
        reply = _last_reply(evidence, shard)
        if reply is None:
            unsourced.append(shard.file)
            failures.append(
                RuleFailure(
                    reason=f"no reply from a child named {shard.worker} reached the lead, "
                    "yet the artifact has an answer",
                    shard=shard.file,
                )
            )
            continue
        member, text = reply.sender, reply.text.strip()
        value = reply_integer(text)
        values = [answer_integer(answer) for answer in answers]
        if value is None or any(v != value for v in values):
            mismatched.append(
                {
                    "shard": shard.file,
                    "member": member,
                    "reply": text,
                    "reply_value": value,
                    "artifact": answers,
                    "artifact_values": values,
                }
            )
            said = ", ".join(repr(a) for a in answers)
            read = "" if value is not None else _no_integer(text)
            failures.append(
                RuleFailure(
                    reason=f"the child replied {text!r}{read}, the artifact says {said}",
                    shard=shard.file,
                    member=member,
                )
            )
        elif unchecked is None and (early := _unseen_before(reply, write, path)) is not None:
            failures.append(
                RuleFailure(
                    reason=f"{member} replied {text!r}, but {early}: the artifact's value did "
                    "not come from it",
                    shard=shard.file,
                    member=member,
                )
            )
        else:
            sourced[shard.file] = member
    details = {
        "sourced": sourced,
        "unsourced": unsourced,
        "mismatched": mismatched,
        "not_in_artifact": absent,
        "written_in_call": None if write is None else write.call,
        "order": unchecked or "model calls",
    }
    return RuleResult(passed=not failures, failures=tuple(failures), details=details)
