"""The typed entries the fan-out rubric reads from a sample's store.

Each class is one validated entry of a runtime record: a spawn ledger entry, a message log
entry, a member of the result record, a member of the ledger, the artifact.  They are built only
by the parsers in ``_parse`` from entries that passed every check; an entry that did not is
never evidence.
"""

from __future__ import annotations

from typing import Literal

import attrs

__all__ = [
    "ARTIFACT_KEY",
    "LEDGER_KEY",
    "MESSAGES_KEY",
    "METRICS_KEY",
    "READS_KEY",
    "RESULT_KEY",
    "JUDGED_KEYS",
    "OPTIONAL_KEYS",
    "SPAWNS_KEY",
    "STORE_KEYS",
    "SUBAGENTS_KEY",
    "Artifact",
    "MemberRun",
    "MemberUsage",
    "MessageEntry",
    "MessageKind",
    "RecordReport",
    "Seen",
    "SpawnEntry",
    "SpawnOp",
]

SPAWNS_KEY = "inspect_swarm:spawns"
MESSAGES_KEY = "inspect_swarm:messages"
RESULT_KEY = "inspect_swarm:result"
LEDGER_KEY = "inspect_swarm:ledger"
METRICS_KEY = "inspect_swarm:metrics"
ARTIFACT_KEY = "swarm_fanout:artifact"
READS_KEY = "inspect_swarm:reads"
SUBAGENTS_KEY = "inspect_swarm:subagents"
STORE_KEYS = (
    SPAWNS_KEY,
    MESSAGES_KEY,
    RESULT_KEY,
    LEDGER_KEY,
    METRICS_KEY,
    ARTIFACT_KEY,
    READS_KEY,
)
"""The store keys the rubric always reads."""
OPTIONAL_KEYS = (SUBAGENTS_KEY,)
"""The store keys the rubric reads when the run wrote them (the subagents record, of a deepagent
lead's background subagents), judged, sealed and digested like the others only then."""
JUDGED_KEYS = (*STORE_KEYS, *OPTIONAL_KEYS)
"""Every store key the rubric reads, and nothing else."""

SpawnOp = Literal["spawn", "refused", "end", "delete"]
MessageKind = Literal["message", "receipt"]


@attrs.frozen(kw_only=True)
class SpawnEntry:
    """One entry of the spawn ledger (``inspect_swarm:spawns``).

    ``member`` is ``None`` only for ``refused``; ``requested`` is the name the parent asked for
    (the shard assignment), ``member`` the child's unique member name.
    """

    seq: int
    time: float
    op: SpawnOp
    member: str | None
    requested: str
    parent: str
    depth: int
    template: str | None
    task: str | None
    status: str | None
    reason: str | None


@attrs.frozen(kw_only=True)
class Seen:
    """When a message first reached its recipient's conversation, and how (``read``,
    ``wait`` or ``notice``)."""

    time: float
    via: str
    call: int | None = None  # the recipient's model call that carried it (None: not stamped)


@attrs.frozen(kw_only=True)
class MessageEntry:
    """One entry of the message log (``inspect_swarm:messages``), stamped by the runtime.

    ``seen`` is ``None`` when the text never reached the recipient's conversation.
    """

    seq: int
    time: float
    kind: MessageKind
    sender: str
    recipient: str
    relationship: str
    text: str
    about: str | None
    status: str | None
    seen: Seen | None
    call: int | None = None  # the sender's model call whose tool sent it (None: not stamped)


@attrs.frozen(kw_only=True)
class MemberRun:
    """A member as the result record (``inspect_swarm:result``) has it: whether and when it
    ran, and where it sits in the spawn tree."""

    name: str
    state: str
    status: str | None
    started: float | None
    ended: float | None
    parent: str | None
    depth: int


@attrs.frozen(kw_only=True)
class MemberUsage:
    """A member's accounting from the ledger (``inspect_swarm:ledger``).

    ``calls`` are completed model calls other than cache replays, ``errored`` failed attempts.
    """

    name: str
    tokens: int
    cost: float
    calls: int
    cache_replays: int
    errored: int

    @property
    def turns(self) -> int:
        """Completed model calls, cache replays included (the metrics' "steps")."""
        return self.calls + self.cache_replays


@attrs.frozen(kw_only=True)
class Artifact:
    """The lead's artifact as the task stored it: its path, and its text (``None`` when the
    file did not exist)."""

    path: str
    text: str | None


@attrs.frozen(kw_only=True)
class RecordReport:
    """How one store record read: present or not, and what of it could not be used.

    ``problem`` is set when the record as a whole is unusable (not an object, wrong version);
    ``malformed`` counts entries skipped because a field was missing or of the wrong type,
    ``unknown`` entries skipped because of an ``op``/``kind`` this rubric does not know (the
    envelope was valid).  ``problems`` says why, entry by entry.
    """

    key: str
    present: bool
    problem: str | None = None
    malformed: int = 0
    unknown: int = 0
    problems: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        """Present and readable as a whole (some entries may still have been skipped)."""
        return self.present and self.problem is None
