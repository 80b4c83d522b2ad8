"""Reading the spawn ledger (``inspect_swarm:spawns``), the message log
(``inspect_swarm:messages``) and the subagents record (``inspect_swarm:subagents``) back from a
log's sample: the same pydantic classes the records are written through (``swarm._schemas``)."""

from __future__ import annotations

from typing import Any, TypeVar

from inspect_ai.log import EvalSample
from pydantic import BaseModel

from swarm._schemas import (
    MessageLog,
    MessageLogEntry,
    SpawnLedger,
    SpawnLedgerEntry,
    SubagentDispatch,
    SubagentEnd,
    SubagentRan,
    SubagentReceived,
    SubagentSeen,
    SubagentsRecord,
    SubagentUsage,
)
from swarm.records import MESSAGES_KEY, SPAWNS_KEY, SUBAGENTS_KEY

__all__ = [
    "MessageLog",
    "MessageLogEntry",
    "SpawnLedger",
    "SpawnLedgerEntry",
    "SubagentDispatch",
    "SubagentEnd",
    "SubagentRan",
    "SubagentReceived",
    "SubagentSeen",
    "SubagentUsage",
    "SubagentsRecord",
    "read_record",
    "swarm_messages",
    "swarm_spawns",
    "swarm_subagents",
]


M = TypeVar("M", bound=BaseModel)


def read_record(sample: EvalSample, key: str, model: type[M]) -> M | None:
    """The sample's record under ``key`` read as ``model`` (``None``: it has none);
    ``ValueError`` for a version other than 1."""
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
    return read_record(sample, SPAWNS_KEY, SpawnLedger)


def swarm_messages(sample: EvalSample) -> MessageLog | None:
    """The sample's message log, or ``None`` (its swarm had no messages channel)."""
    return read_record(sample, MESSAGES_KEY, MessageLog)


def swarm_subagents(sample: EvalSample) -> SubagentsRecord | None:
    """The sample's subagents record, or ``None`` (no member dispatched a deepagent subagent
    or a CLI sub-agent).  Its ``entries`` are ``SubagentDispatch``, ``SubagentRan`` (a CLI's
    sub-agent's tool calls), ``SubagentEnd`` and ``SubagentReceived`` values, told apart by
    their ``op``."""
    return read_record(sample, SUBAGENTS_KEY, SubagentsRecord)
