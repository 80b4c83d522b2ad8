"""Links between lanes: who spawned whom, and messages, read from the swarm's own logs.

A swarm with spawning writes a spawn ledger (``inspect_swarm:spawns``) and a message log
(``inspect_swarm:messages``) to the sample store.  Each is read here and nowhere else, so the
rest of the timeline only sees ``SpawnMark``s and ``Message``s; a store without them gives none.
Either record may be a list of entries or a mapping with the list under ``entries`` (or under
its own name, ``spawns`` / ``messages``).  Entries missing a field the picture needs (a time,
a sender or recipient that is a member) are left out rather than guessed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from swarm.records import MESSAGES_KEY, SPAWNS_KEY
from swarm.timeline._model import Message, SpawnMark

__all__ = ["messages", "spawn_marks", "spawn_tasks"]


def _entries(record: object, name: str) -> list[Mapping[str, Any]]:
    if isinstance(record, Mapping):
        record = record.get("entries", record.get(name))
    if not isinstance(record, list):
        return []
    return [e for e in record if isinstance(e, Mapping)]


def _time(entry: Mapping[str, Any]) -> float | None:
    value = entry.get("time")
    return float(value) if isinstance(value, int | float) else None


def _text(entry: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def spawn_marks(store: Mapping[str, Any]) -> dict[str, list[SpawnMark]]:
    """Spawn requests by the member that made them: ``spawn`` (admitted) and ``refused``."""
    found: dict[str, list[SpawnMark]] = {}
    for entry in _entries(store.get(SPAWNS_KEY), "spawns"):
        op, time, parent = entry.get("op"), _time(entry), _text(entry, "parent")
        if op not in ("spawn", "refused") or time is None or parent is None:
            continue
        child = _text(entry, "member", "name")
        requested = _text(entry, "requested", "requested_name", "name", "member") or "?"
        found.setdefault(parent, []).append(
            SpawnMark(
                start=time,
                end=time,
                requested=requested,
                child=child if op == "spawn" else None,
                refused=(_text(entry, "reason") or "refused") if op == "refused" else None,
            )
        )
    return found


def spawn_tasks(store: Mapping[str, Any]) -> dict[str, str]:
    """Each admitted child's task, by the child's name."""
    found: dict[str, str] = {}
    for entry in _entries(store.get(SPAWNS_KEY), "spawns"):
        child, task = _text(entry, "member", "name"), _text(entry, "task")
        if entry.get("op") == "spawn" and child is not None and task is not None:
            found.setdefault(child, task)
    return found


def messages(store: Mapping[str, Any], members: Collection[str]) -> tuple[Message, ...]:
    """The message log's messages between two members of ``members``, in time order."""
    found = []
    for entry in _entries(store.get(MESSAGES_KEY), "messages"):
        time = _time(entry)
        sender, recipient = _text(entry, "sender"), _text(entry, "recipient")
        if time is None or sender not in members or recipient not in members:
            continue
        assert sender is not None and recipient is not None
        seq = entry.get("seq")
        found.append(
            Message(
                time=time,
                sender=sender,
                recipient=recipient,
                kind=_text(entry, "kind") or "message",
                seq=seq if isinstance(seq, int) else None,
            )
        )
    return tuple(sorted(found, key=lambda m: (m.time, m.seq or 0)))
