"""The state of the ``messages`` channel for one run: every member's mailbox and the message log.

Pure, synchronous Python: no Inspect, no anyio.  The channel stamps what it delivers from the
runtime's own record of the write (sender, time); nothing here comes from a model but the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

import attrs

__all__ = ["Entry", "Mailbox", "fenced", "neutralised", "page", "relationship", "shown_size"]

Relationship = Literal["parent", "child", "sibling", "other"]
Kind = Literal["message", "receipt"]

_FENCE = re.compile(r"<(/?)(peer_message)", re.IGNORECASE)


def neutralised(text: str) -> str:
    """``text`` with anything that could open or close a message fence made inert."""
    return _FENCE.sub(lambda m: f"<{m.group(1)}\u200b{m.group(2)}", text)


def fenced(entry: Entry) -> str:
    """How a message reaches a model: fenced, with who sent it, never forgeable from its text."""
    return (
        f'<peer_message from="{entry.sender}" relationship="{entry.relationship}" '
        f'kind="{entry.kind}" seq="{entry.seq}">\n{neutralised(entry.text)}\n</peer_message>'
    )


def remaining(n: int) -> str:
    """The line that ends a page of ``read_messages`` when ``n`` messages are left unread."""
    return f"{n} more message{'' if n == 1 else 's'}: call read_messages again."


def page(entries: list[Entry], limit: int | None) -> tuple[int, str, bool]:
    """How many of ``entries`` (oldest first) one ``read_messages`` shows, its text, and whether
    it fits: as many as fit in ``limit`` UTF-8 bytes (``None``: all) together with the line
    saying how many remain, so that Inspect never cuts it.  At least one: a first entry too big
    to fit alone (a receipt under a tiny limit; ``shown_size`` keeps messages small enough) is
    shown alone and does not fit, so Inspect cuts it and it is never seen."""
    parts = [fenced(e) for e in entries]
    if limit is None:
        return len(parts), "\n\n".join(parts), True
    shown, used = 0, -2
    for k, part in enumerate(parts, start=1):
        used += 2 + len(part.encode("utf-8"))
        rest = len(parts) - k
        tail = len(remaining(rest)) + 2 if rest else 0  # the line is ASCII
        if used + tail > limit:
            break
        shown = k
    fits = shown > 0
    shown = max(shown, 1)
    text = "\n\n".join(parts[:shown])
    if shown < len(parts):
        text += "\n\n" + remaining(len(parts) - shown)
    return shown, text, fits


def shown_size(sender: str, text: str) -> int:
    """The most UTF-8 bytes a message from ``sender`` with ``text`` takes on a page of
    ``read_messages``: its fence (with the longest relationship and a 10-digit seq) and the
    line saying how many remain.  A message over the tool-output limit with them is refused."""
    entry = Entry(
        seq=10**9,
        time=0.0,
        kind="message",
        sender=sender,
        recipient="",
        relationship="sibling",
        text=text,
    )
    return len(fenced(entry).encode("utf-8")) + 2 + len(remaining(10**9))


def relationship(
    sender: str, sender_parent: str | None, recipient: str, recipient_parent: str | None
) -> Relationship:
    """What ``sender`` is to ``recipient``, from the runtime's record of who spawned whom."""
    if sender_parent is not None and sender_parent == recipient:
        return "child"
    if recipient_parent is not None and recipient_parent == sender:
        return "parent"
    if sender_parent is not None and sender_parent == recipient_parent:
        return "sibling"
    return "other"


@attrs.define
class Entry:
    """One message (or receipt) delivered to one recipient."""

    seq: int
    time: float
    kind: Kind
    sender: str
    recipient: str
    relationship: Relationship
    text: str
    about: str | None = None  # a receipt's child
    status: str | None = None  # a receipt's child's status
    seen: dict[str, Any] | None = None  # {"time", "via", "call"} once it reached the recipient
    call: int | None = None  # the sender's model call that asked for it (a message)

    @property
    def size(self) -> int:
        """UTF-8 bytes of the text."""
        return len(self.text.encode("utf-8"))

    def as_dict(self) -> dict[str, Any]:
        """As the message log writes it."""
        return {
            "seq": self.seq,
            "time": self.time,
            "kind": self.kind,
            "sender": self.sender,
            "recipient": self.recipient,
            "relationship": self.relationship,
            "size": self.size,
            "text": self.text,
            "about": self.about,
            "status": self.status,
            "seen": self.seen,
            "call": self.call,
        }


class Mailbox:
    """Every member's mail in one run, and the log of every delivery in order."""

    def __init__(self) -> None:
        self.log: list[Entry] = []
        self._unread: dict[str, list[Entry]] = {}
        self._noticed: set[int] = set()  # seqs a notice has named
        self._replies: set[tuple[str, str]] = set()  # (sender, recipient) of every message

    def deliver(
        self,
        *,
        time: float,
        kind: Kind,
        sender: str,
        recipient: str,
        relationship: Relationship,
        text: str,
        about: str | None = None,
        status: str | None = None,
        call: int | None = None,
    ) -> Entry:
        """Put one message in ``recipient``'s mailbox and the log (``call``: the number of the
        sender's model call whose tool sent it)."""
        entry = Entry(
            seq=len(self.log) + 1,
            time=time,
            kind=kind,
            sender=sender,
            recipient=recipient,
            relationship=relationship,
            text=text,
            about=about,
            status=status,
            call=call,
        )
        self.log.append(entry)
        self._unread.setdefault(recipient, []).append(entry)
        if kind == "message":
            self._replies.add((sender, recipient))
        return entry

    def unread(self, member: str) -> list[Entry]:
        """``member``'s messages not read yet, oldest first."""
        return list(self._unread.get(member, ()))

    def take(self, member: str, n: int) -> list[Entry]:
        """Take ``member``'s ``n`` oldest unread messages (a page a read shows); the rest stay
        unread.  They are not seen until the model call that carries them is sent (``seen``)."""
        unread = self._unread.get(member, [])
        taken, unread[:n] = unread[:n], []
        return taken

    @staticmethod
    def seen(entries: Iterable[Entry], time: float, via: str, call: int | None) -> None:
        """``entries`` reached the recipient's model at ``time`` (``via`` read or notice), in
        its model call number ``call``."""
        for entry in entries:
            if entry.seen is None:
                entry.seen = {"time": time, "via": via, "call": call}

    def to_notice(self, member: str) -> list[Entry]:
        """``member``'s unread messages no notice has named yet (each is named once)."""
        fresh = [e for e in self._unread.get(member, ()) if e.seq not in self._noticed]
        self._noticed.update(e.seq for e in fresh)
        return fresh

    def noticed(self, entries: Iterable[Entry], time: float, call: int | None) -> None:
        """Receipts whose sentence a notice showed, in a model call sent at ``time`` (the
        recipient's number ``call``): seen then (``via`` notice), and read."""
        for entry in entries:
            if entry.seen is None:
                entry.seen = {"time": time, "via": "notice", "call": call}
            unread = self._unread.get(entry.recipient, [])
            if entry in unread:
                unread.remove(entry)

    def replied(self, child: str, parent: str) -> bool:
        """Whether ``child`` has sent ``parent`` a message."""
        return (child, parent) in self._replies
