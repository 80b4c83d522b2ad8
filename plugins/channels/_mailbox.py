"""The state of the ``messages`` channel for one run: every member's mailbox and the message log.

Pure, synchronous Python: no Inspect, no anyio.  The channel stamps what it delivers from the
runtime's own record of the write (sender, time); nothing here comes from a model but the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

import attrs

__all__ = ["Entry", "Mailbox", "fenced", "neutralised", "relationship"]

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
    record: str | None = None  # the bus record of the send (None for a receipt)
    about: str | None = None  # a receipt's child
    status: str | None = None  # a receipt's child's status
    seen: dict[str, Any] | None = None  # {"time", "via"} once it reached the recipient

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
        record: str | None = None,
        about: str | None = None,
        status: str | None = None,
    ) -> Entry:
        """Put one message in ``recipient``'s mailbox and the log."""
        entry = Entry(
            seq=len(self.log) + 1,
            time=time,
            kind=kind,
            sender=sender,
            recipient=recipient,
            relationship=relationship,
            text=text,
            record=record,
            about=about,
            status=status,
        )
        self.log.append(entry)
        self._unread.setdefault(recipient, []).append(entry)
        if kind == "message":
            self._replies.add((sender, recipient))
        return entry

    def unread(self, member: str) -> list[Entry]:
        """``member``'s messages not read yet, oldest first."""
        return list(self._unread.get(member, ()))

    def read(self, member: str, time: float) -> list[Entry]:
        """Take ``member``'s unread messages: they are seen now (``via`` read)."""
        taken = self._unread.pop(member, [])
        for entry in taken:
            if entry.seen is None:
                entry.seen = {"time": time, "via": "read"}
        return taken

    def to_notice(self, member: str) -> list[Entry]:
        """``member``'s unread messages no notice has named yet (each is named once)."""
        fresh = [e for e in self._unread.get(member, ()) if e.seq not in self._noticed]
        self._noticed.update(e.seq for e in fresh)
        return fresh

    def noticed(self, entries: Iterable[Entry], time: float) -> None:
        """Receipts whose sentence a notice showed: seen now (``via`` notice), and read."""
        for entry in entries:
            if entry.seen is None:
                entry.seen = {"time": time, "via": "notice"}
            unread = self._unread.get(entry.recipient, [])
            if entry in unread:
                unread.remove(entry)

    def replied(self, child: str, parent: str) -> bool:
        """Whether ``child`` has sent ``parent`` a message."""
        return (child, parent) in self._replies
