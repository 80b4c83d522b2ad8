"""Typed models of the spawn ledger (``inspect_swarm:spawns``) and the message log
(``inspect_swarm:messages``), read back from a log's sample."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from inspect_ai.log import EvalSample
from pydantic import BaseModel, ConfigDict, Field

from swarm.records import MESSAGES_KEY, SPAWNS_KEY

__all__ = [
    "MessageLog",
    "MessageLogEntry",
    "SpawnLedger",
    "SpawnLedgerEntry",
    "swarm_messages",
    "swarm_spawns",
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SpawnLedgerEntry(_Record):
    """One entry of the spawn ledger."""

    seq: int = Field(description="Order of writing, from 1.")
    time: float = Field(description="Seconds since the swarm started.")
    op: Literal["spawn", "refused", "end", "delete"] = Field(description="What happened.")
    member: str | None = Field(description="The child's member name (null when refused).")
    requested: str = Field(description="The name the parent asked for.")
    parent: str = Field(description="The member that spawned (or asked to).")
    depth: int = Field(description="The child's depth (its parent's plus one).")
    template: str = Field(description="The template the child runs.")
    task: str | None = Field(description="The task text (spawn and refused).")
    status: str | None = Field(description="The child's status (end).")
    reason: str | None = Field(description="Why (refused: the control; delete: the cause).")


class SpawnLedger(_Record):
    """The ``inspect_swarm:spawns`` record (version 1)."""

    version: Literal[1] = Field(description="Record version.")
    entries: list[SpawnLedgerEntry] = Field(description="Every entry, in order.")


class Seen(_Record):
    """When a message first reached its recipient's conversation."""

    time: float = Field(description="Seconds since the swarm started.")
    via: Literal["read", "notice", "wait"] = Field(description="How it got there.")


class MessageLogEntry(_Record):
    """One message (or receipt) delivered to one recipient."""

    seq: int = Field(description="Order of delivery, from 1.")
    time: float = Field(description="Seconds since the swarm started.")
    kind: Literal["message", "receipt"] = Field(description="A member's message or a receipt.")
    sender: str = Field(description="Who sent it (a receipt: the child it is about).")
    recipient: str = Field(description="Who it was delivered to.")
    relationship: Literal["parent", "child", "sibling", "other"] = Field(
        description="What the sender is to the recipient (stamped by the runtime)."
    )
    size: int = Field(description="UTF-8 bytes of the text.")
    text: str = Field(description="The text as sent.")
    about: str | None = Field(description="A receipt's child.")
    status: str | None = Field(description="A receipt's child's status.")
    seen: Seen | None = Field(description="When it reached the recipient, if it did.")


class MessageLog(_Record):
    """The ``inspect_swarm:messages`` record (version 1)."""

    version: Literal[1] = Field(description="Record version.")
    messages: list[MessageLogEntry] = Field(description="Every delivery, in order.")


M = TypeVar("M", bound=BaseModel)


def _read(sample: EvalSample, key: str, model: type[M]) -> M | None:
    data: Any = (sample.store or {}).get(key)
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("version") != 1:
        version = data.get("version") if isinstance(data, dict) else None
        raise ValueError(
            f"sample {sample.id} (epoch {sample.epoch}) has an {key} of version {version!r}; "
            "this release reads version 1"
        )
    return model.model_validate(data)


def swarm_spawns(sample: EvalSample) -> SpawnLedger | None:
    """The sample's spawn ledger, or ``None`` (no member of its swarm could spawn)."""
    return _read(sample, SPAWNS_KEY, SpawnLedger)


def swarm_messages(sample: EvalSample) -> MessageLog | None:
    """The sample's message log, or ``None`` (its swarm had no messages channel)."""
    return _read(sample, MESSAGES_KEY, MessageLog)
