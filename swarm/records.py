"""Records: the frozen values that cross hook boundaries and land in the log.

Every record is an ``attrs.frozen`` class.  Plugins receive them (a ``SwarmView`` snapshot, an
event) and return them (a ``Decision``, an ``Answer``); the kernel owns every mutable thing.
Serialisation lives in ``swarm.serialization``, never here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

import attrs

from swarm._checks import as_float, as_whole, number_field

__all__ = [
    "ANSWER_MAX_CHARS",
    "EVIDENCE_TYPE",
    "evidence_entries",
    "is_protected_key",
    "INFO_SOURCE",
    "KERNEL_PREFIX",
    "LEDGER_KEY",
    "MESSAGES_KEY",
    "READS_KEY",
    "SUBAGENTS_KEY",
    "METRICS_KEY",
    "NOTICE_PREFIX",
    "NOTICE_SEPARATOR",
    "RESERVED_KEYS",
    "RESULT_KEY",
    "SPAWNS_KEY",
    "SPAWN_REFUSALS",
    "SYNTHESIS_PROMPT",
    "STATUSES",
    "TOPOLOGY_REASONS",
    "Answer",
    "Decision",
    "Delivery",
    "Draft",
    "Loop",
    "NoticeLine",
    "Receipt",
    "Record",
    "Rejection",
    "SpawnDecision",
    "SpawnRequest",
    "Submission",
    "Synthesis",
    "WaitNews",
    "FinalMode",
    "FinalRecord",
    "FinalRule",
    "MemberEnded",
    "MemberInfo",
    "MemberLimits",
    "MemberResult",
    "MemberState",
    "MemberSubmitted",
    "MemberView",
    "Quiescent",
    "RubricRule",
    "RuleFailure",
    "RuleResult",
    "SwarmResult",
    "SwarmView",
    "member_status_is_valid",
]

INFO_SOURCE = "inspect_swarm"
"""The ``source`` of every ``InfoEvent`` swarm-eval writes, and the key of its message metadata."""

NOTICE_PREFIX = "[Swarm notice] "
"""How a notice's text starts: the prefix, then one line from each channel with news."""

NOTICE_SEPARATOR = "\n\n"
"""What comes between a tool result and the notice that rides at its end (a turn that ended
with tool results gets its notice there; one that ended without a tool call, or whose last
result failed or is not plain text, gets a user message).  ``swarm.analysis.notice_text``
finds a notice in either."""

EVIDENCE_TYPE = "evidence"
"""The ``type`` of the one info event that holds a run's evidence of channel activity: every
write, view, notice line and wait, with ids and sizes, never text (``swarm.analysis.swarm_evidence``
reads it)."""


def evidence_entries(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The entries of an evidence event's ``data``, each one dict (``kind``, ``time``,
    ``member`` and the fields of its kind), in order.

    Reads the table form (version 2: ``schemas`` and ``rows``) and the earlier list of entries
    (version 1: ``entries``); anything else, or a malformed row, gives nothing for it.
    """
    entries = data.get("entries")
    if isinstance(entries, list):
        return [dict(e) for e in entries if isinstance(e, dict)]
    schemas, rows = data.get("schemas"), data.get("rows")
    if not isinstance(schemas, list) or not isinstance(rows, list):
        return []
    found: list[dict[str, Any]] = []
    for row in rows:
        if not isinstance(row, list) or not row or not isinstance(row[0], int):
            continue
        index = row[0]
        schema = schemas[index] if 0 <= index < len(schemas) else None
        if not isinstance(schema, dict) or len(schema.get("fields") or ()) != len(row) - 1:
            continue
        values = dict(zip(schema["fields"], row[1:], strict=True))
        found.append({"kind": schema.get("kind"), **values})
    return found


RESULT_KEY = "inspect_swarm:result"
"""The store key of the result record: each member's state and status, and the answer."""

LEDGER_KEY = "inspect_swarm:ledger"
"""The store key of the ledger: the swarm's accounting, to the token."""

METRICS_KEY = "inspect_swarm:metrics"
"""The store key of the metrics: how members acted, communicated and waited."""

SPAWNS_KEY = "inspect_swarm:spawns"
"""The store key of the spawn ledger: who spawned whom, what was refused, how children ended."""

MESSAGES_KEY = "inspect_swarm:messages"
"""The store key of the message log: every message and receipt delivered, and when it was seen."""

READS_KEY = "inspect_swarm:reads"
"""The store key of the reads record: which member's sandbox tools opened, read or wrote which
files, as the runtime saw it (written only with ``sandboxes.per_member``)."""

SUBAGENTS_KEY = "inspect_swarm:subagents"
"""The store key of the subagents record: the subagents members dispatched through a
``deepagent``'s ``agent`` tool, their ends and what their dispatchers received (written only when
a member dispatched one)."""

KERNEL_PREFIX = "inspect_swarm:"
"""The kernel's namespace in the sample store: every key that begins with it is written by the
kernel alone (a plugin's ``swarm_records`` may not give one; the message log of the built-in
``messages`` channel is taken by the kernel and written as its own)."""

RESERVED_KEYS: frozenset[str] = frozenset({"swarm_fanout:artifact"})
"""Store keys outside the kernel's namespace that no plugin may give either: the fan-out
scorer's artifact record, which only the scorer writes (from the lead's sandbox, when it
scores)."""


def is_protected_key(key: object) -> bool:
    """Whether ``key`` is a store key no plugin may write: the kernel's namespace and the
    reserved keys."""
    return isinstance(key, str) and (key.startswith(KERNEL_PREFIX) or key in RESERVED_KEYS)


MemberState = Literal["pending", "running", "ended"]
"""Where a member is in its life: not started, running, or ended."""

Delivery = Literal["notify", "poll"]
"""How a member learns of channel activity: notices at turn boundaries, or only when it looks."""

FinalRule = Literal["first", "last", "vote", "verify_then_vote", "synthesize"]
"""Answer rules a controller can name: the earliest or latest submission (ties by roster order),
the most frequent normalised answer (``vote``), the same among the answers a verifier passed
(``verify_then_vote``), or one model call that reads the answers and writes one
(``synthesize``)."""

FinalMode = Literal["first", "last", "controller", "vote", "verify_then_vote", "synthesize"]
"""How the answer was chosen, as recorded in ``FinalRecord.mode``."""

ANSWER_MAX_CHARS = 10_000
"""The most characters of an answer the views and the result record keep: a longer answer is
cut at this bound (its full length is the record's ``answer_chars``).  The sample's output keeps
the whole text."""

STATUSES: frozenset[str] = frozenset(
    {"submitted", "unsubmitted", "stopped", "share", "swarm_cap", "cancelled", "errored"}
)
"""Member statuses; ``member_limit:<type>`` is the one open family (``member_status_is_valid``)."""

MEMBER_LIMIT_TYPES: frozenset[str] = frozenset(
    {"token", "cost", "turn", "message", "time", "custom"}
)

TOPOLOGY_REASONS: frozenset[str] = frozenset({"submitted", "all_done", "verified", "quiescence"})
"""Stop reasons recorded as a controller gives them; any other reason ``x`` is ``controller:x``."""


def member_status_is_valid(status: str) -> bool:
    """Whether ``status`` is one of the member statuses the records allow."""
    if status in STATUSES:
        return True
    kind, _, limit = status.partition(":")
    return kind == "member_limit" and limit in MEMBER_LIMIT_TYPES


_LIMITS = "member.limits"


@attrs.frozen(kw_only=True)
class MemberLimits:
    """A member's own limits (``None`` = no limit of that kind).

    ``turn`` counts top-level generations, ``message`` the member's conversation length, ``time``
    is in seconds of wall clock, ``cost`` in dollars.  Every limit is a finite number >= 0;
    ``token``, ``turn`` and ``message`` are whole numbers (``2.0`` is read as ``2``, ``1.5`` is
    refused).  A bad value raises ``ConfigError`` naming the field.
    """

    token: int | None = attrs.field(
        default=None, converter=as_whole, validator=number_field(_LIMITS, whole=True, low=0)
    )
    cost: float | None = attrs.field(
        default=None,
        converter=as_float,
        validator=number_field(_LIMITS, low=0, unit="dollars"),
    )
    turn: int | None = attrs.field(
        default=None, converter=as_whole, validator=number_field(_LIMITS, whole=True, low=0)
    )
    message: int | None = attrs.field(
        default=None, converter=as_whole, validator=number_field(_LIMITS, whole=True, low=0)
    )
    time: float | None = attrs.field(
        default=None,
        converter=as_float,
        validator=number_field(_LIMITS, low=0, unit="seconds"),
    )

    def is_empty(self) -> bool:
        """True when no limit of any kind is set."""
        return all(v is None for v in attrs.astuple(self))


@attrs.frozen(kw_only=True)
class MemberInfo:
    """What is fixed about a named member once it joins the roster.

    ``parent`` and ``depth`` are stamped by the runtime: ``None``/0 for roster members, the
    spawning member and its depth + 1 for a spawned one.
    """

    name: str
    role: str | None = None
    index: int = 0
    parent: str | None = None
    depth: int = 0
    delivery: Delivery | None = None


@attrs.frozen(kw_only=True)
class MemberView:
    """A member as decision hooks see it: state and outcome, and the answer it submitted.

    ``answer`` is the text of its final output (``output.completion``, what the sample would be
    scored on), set once it submits and cut at ``ANSWER_MAX_CHARS``; ``None`` until then, and
    for a member that ended without submitting.  ``verified`` is the verifier's verdict on that
    submission (``None``: no verifier checked it).  Never its messages.
    """

    name: str
    role: str | None
    index: int
    parent: str | None
    depth: int
    state: MemberState
    status: str | None
    started: float | None
    ended: float | None
    delivery: Delivery | None = None
    gate_checks: int = 0
    gate_passes: int = 0
    # its agent talks to its model through Inspect's agent bridge (declared, or seen at its
    # first bridged call): it polls, and its tool calls are not the transcript's tool events
    bridged: bool = False
    answer: str | None = None
    verified: bool | None = None

    @property
    def submitted(self) -> bool:
        """Whether the member ended with a submission."""
        return self.status == "submitted"


@attrs.frozen(kw_only=True)
class SwarmView:
    """A frozen snapshot of a swarm run, handed to every decision hook.

    ``time`` is seconds since the swarm started; ``stopping`` is true once a stop has begun, and
    ``stop_reason`` then says why.  Each member's view holds the answer it submitted (its text,
    bounded), never its messages.
    """

    members: tuple[MemberView, ...]
    time: float
    stopping: bool = False
    stop_reason: str | None = None
    channels: tuple[str, ...] = ()
    controller: str = ""
    # what the kernel already knows, so that ``member`` and ``count`` do not scan the roster
    # (a view built without them computes them on first use): each name's position in
    # ``members`` (it may also hold members that joined after this view), and how many
    # members are in each state
    positions: Mapping[str, int] | None = attrs.field(default=None, eq=False, repr=False)
    counts: Mapping[str, int] | None = attrs.field(default=None, eq=False, repr=False)

    def __iter__(self) -> Iterator[MemberView]:
        return iter(self.members)

    def member(self, name: str) -> MemberView:
        """The member called ``name``; ``KeyError`` listing the roster when there is none."""
        positions = self.positions
        if positions is None:
            positions = {m.name: i for i, m in enumerate(self.members)}
            object.__setattr__(self, "positions", positions)
        at = positions.get(name)
        if at is None or at >= len(self.members) or self.members[at].name != name:
            raise KeyError(f"no member {name!r}; the roster is {[m.name for m in self.members]}")
        return self.members[at]

    def count(self, state: MemberState) -> int:
        """How many members are in ``state`` now."""
        counts = self.counts
        if counts is None:
            tally = {"pending": 0, "running": 0, "ended": 0}
            for m in self.members:
                tally[m.state] += 1
            counts = tally
            object.__setattr__(self, "counts", counts)
        return counts.get(state, 0)

    def in_state(self, state: MemberState) -> tuple[MemberView, ...]:
        """Members currently in ``state``, in roster order."""
        return tuple(m for m in self.members if m.state == state)

    @property
    def pending(self) -> tuple[MemberView, ...]:
        """Members not started yet."""
        return self.in_state("pending")

    @property
    def running(self) -> tuple[MemberView, ...]:
        """Members running now."""
        return self.in_state("running")

    @property
    def ended(self) -> tuple[MemberView, ...]:
        """Members that have ended."""
        return self.in_state("ended")

    @property
    def submissions(self) -> tuple[MemberView, ...]:
        """Members that ended with a submission, in roster order."""
        return tuple(m for m in self.members if m.submitted)


@attrs.frozen(kw_only=True)
class MemberSubmitted:
    """A member's agent returned a submission at ``time`` (seconds since the swarm started).

    ``verified`` is the verdict of the controller's verifier on it (``None``: no verifier);
    ``answer`` its text (``output.completion``, cut at ``ANSWER_MAX_CHARS``).
    """

    member: str
    time: float
    verified: bool | None = None
    answer: str | None = None


@attrs.frozen(kw_only=True)
class Quiescent:
    """Nothing can change: every running member waits (``all_waiting``), or nothing happened
    (no record, model call, member start or end) for ``idle`` seconds (``idle``)."""

    reason: Literal["all_waiting", "idle"]
    time: float
    idle: float


@attrs.frozen(kw_only=True)
class MemberEnded:
    """A member ended with ``status`` at ``time``; ``submitted`` when the status says so."""

    member: str
    status: str
    submitted: bool
    time: float


def _names(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen(kw_only=True)
class Decision:
    """What a decision hook decided.

    - ``start``: names of pending members to start now;
    - ``stop``: stop the swarm with this reason (``submitted``, ``all_done``, ``verified`` and
      ``quiescence`` are recorded as given, any other reason ``x`` as ``controller:x``);
    - ``answer``: the member whose submission is the swarm's answer, with ``reason``.

    An empty ``Decision()`` is a decision too: "nothing to do", which stops later plugins from
    deciding (a veto).  Return ``None`` from a hook to defer instead.
    """

    start: tuple[str, ...] = attrs.field(default=(), converter=_names)
    stop: str | None = None
    answer: str | None = None
    reason: str | None = None


@attrs.frozen(kw_only=True)
class Answer:
    """Which member's submission is the swarm's answer, and by what rule.

    ``member`` is ``None`` when there is no answer (``reason`` then says why, e.g.
    ``no_submissions``).
    """

    member: str | None
    mode: FinalMode | None
    reason: str | None = None


@attrs.frozen(kw_only=True)
class MemberResult:
    """One member's entry in the ``inspect_swarm:result`` record."""

    name: str
    role: str | None
    state: MemberState
    status: str | None
    submitted: bool
    started: float | None
    time: float | None
    parent: str | None
    depth: int
    sandbox: str | None = None
    error: str | None = None
    gate_checks: int = 0
    gate_passes: int = 0
    first_pass_time: float | None = None
    answer: str | None = None
    answer_chars: int | None = None
    verified: bool | None = None


@attrs.frozen(kw_only=True)
class FinalRecord:
    """How the answer was chosen (``mode``, ``member``, ``reason``), if it is provisional, and
    its text (``answer``, cut at ``ANSWER_MAX_CHARS``; ``answer_chars`` its full length)."""

    mode: FinalMode | None
    member: str | None
    reason: str | None
    provisional: bool
    answer: str | None = None
    answer_chars: int | None = None


@attrs.frozen(kw_only=True)
class Submission:
    """One submission in the result record: who, when, what (bounded), and the verifier's
    verdict (``None``: no verifier checked it)."""

    member: str
    time: float
    answer: str | None
    verified: bool | None


@attrs.frozen(kw_only=True)
class SwarmResult:
    """The ``inspect_swarm:result`` record (version 1)."""

    version: int = 1
    members: tuple[MemberResult, ...] = ()
    final: FinalRecord
    stop_reason: str | None = None
    submissions: tuple[Submission, ...] = ()


@attrs.frozen(kw_only=True)
class Synthesis:
    """How the final step of the ``synthesize`` answer rule writes the answer.

    ``model``: the model of its one call (``None``: the task's model); ``prompt``: its text,
    with ``{input}`` (the sample's input) and ``{answers}`` (the members' answers, numbered)
    replaced (``None``: ``SYNTHESIS_PROMPT``).
    """

    model: str | None = None
    prompt: str | None = None


SYNTHESIS_PROMPT = """\
Several agents worked on the same task independently. The task was:

{input}

Their answers:

{answers}

Read the answers, weigh where they agree and disagree, and write the single best answer to the \
task. Reply with the answer only."""
"""The ``synthesize`` step's default prompt."""


# -- what crosses the channel hooks ----------------------------------------------------------


@attrs.frozen(kw_only=True)
class Loop:
    """An agent loop acting for a member: its own loop, or a subagent's (``nested``)."""

    member: str
    span: str
    nested: bool


@attrs.frozen(kw_only=True)
class Draft:
    """What a channel's tool asks the bus to deliver."""

    channel: str
    kind: str
    payload: str = ""
    op: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Record:
    """A write as the runtime stamped it.  ``seq`` is 0 until committed."""

    id: str
    channel: str
    kind: str
    sender: str
    loop: str
    nested: bool
    size: int
    op: dict[str, Any]
    time: float
    seq: int = 0


@attrs.frozen(kw_only=True)
class Rejection:
    """Why a write was refused: the control that refused it, and a reason the model reads."""

    control: str
    reason: str


@attrs.frozen(kw_only=True)
class NoticeLine:
    """One channel's line in a member's notice, with the ids it names (for evidence).

    ``seen``, if given, is called with the run's time when the model call whose input holds
    the notice is sent, and never if no call that is sent holds it: a channel marks what the
    line shows (a receipt...) seen there, not when it builds the line.
    """

    channel: str
    text: str
    ids: tuple[dict[str, Any], ...] = ()
    seen: Callable[[float], None] | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen(kw_only=True)
class WaitNews:
    """What a channel reports to a waiting loop: lines to show, and the ids they name."""

    channel: str
    text: str
    ids: tuple[dict[str, Any], ...] = ()


# -- what crosses the spawning hooks ----------------------------------------------------------

SPAWN_REFUSALS: frozenset[str] = frozenset(
    {
        "max_depth",
        "max_children",
        "max_live",
        "max_spawns",
        "live_name",
        "retries",
        "template",
        "stopping",
        "parent_ended",
    }
)
"""Why the kernel refuses a spawn; a plugin's refusal may give any other reason."""


@attrs.frozen(kw_only=True)
class SpawnRequest:
    """A member asked to spawn a child: what it asked for, and the counts the decision needs.

    ``name`` is the name the parent asked for (the child's member name may differ when a child
    of that name ended before: ``name~2``).  ``children`` counts the children the parent has
    spawned so far and ``live_children`` those still running; ``live_members`` the members
    running in the whole swarm; ``spawns`` the spawns admitted so far in the swarm;
    ``live_with_name`` whether a running child of this parent already has this name; and
    ``respawns`` how many children of this parent have had this name before.
    """

    parent: str
    name: str
    template: str
    task: str
    depth: int
    time: float
    children: int = 0
    live_children: int = 0
    live_members: int = 0
    spawns: int = 0
    live_with_name: bool = False
    respawns: int = 0


@attrs.frozen(kw_only=True)
class SpawnDecision:
    """A decision on a ``SpawnRequest``: admit it, or refuse it with a ``reason`` (a short code
    recorded in the spawn ledger) and a ``message`` the model reads."""

    admit: bool
    reason: str | None = None
    message: str | None = None

    @classmethod
    def admitted(cls) -> SpawnDecision:
        """Admit the spawn."""
        return cls(admit=True)

    @classmethod
    def refused(cls, reason: str, message: str | None = None) -> SpawnDecision:
        """Refuse the spawn with ``reason`` (and ``message`` for the model; default: the
        reason)."""
        return cls(admit=False, reason=reason, message=message)


@attrs.frozen(kw_only=True)
class Receipt:
    """The runtime's word to a parent that its child ended: who, how (its member ``status``,
    and ``error_type`` for an ``errored`` one), and the sentence the parent reads.  A channel
    that carries receipts delivers it unless the child had replied to its parent and ended
    ``submitted``."""

    child: str
    parent: str
    status: str
    error_type: str | None
    text: str
    time: float


# ---------------------------------------------------------------------------------------------
# Scoring rubrics: the rules a rubric judges, and what a rule found
# ---------------------------------------------------------------------------------------------


def _is_instance(kind: type | tuple[type, ...], what: str) -> Callable[[Any, Any, Any], None]:
    def check(instance: Any, attribute: Any, value: Any) -> None:
        if not isinstance(value, kind):
            raise TypeError(
                f"{type(instance).__name__}.{attribute.name}: expected {what}, got {value!r}"
            )

    return check


def _failure_tuple(value: Iterable[RuleFailure | str]) -> tuple[RuleFailure | str, ...]:
    return tuple(value)


def _each_failure(instance: Any, attribute: Any, value: tuple[Any, ...]) -> None:
    for index, item in enumerate(value):
        if not isinstance(item, RuleFailure | str):
            raise TypeError(
                f"RuleResult.failures[{index}]: expected a RuleFailure or a string, got {item!r}"
            )


@attrs.frozen(kw_only=True)
class RuleFailure:
    """One reason a rubric rule failed, naming the shard and the member it concerns (if any)."""

    reason: str = attrs.field(validator=_is_instance(str, "a string"))
    shard: str | None = None
    member: str | None = None


@attrs.frozen(kw_only=True)
class RuleResult:
    """What one rubric rule found.

    ``passed`` is the verdict; ``failures`` says why it failed, one ``RuleFailure`` (or plain
    string) per problem; ``details`` holds JSON-ready figures a person reading the score wants
    (counts, lists of names), reported whether the rule passed or not.
    """

    passed: bool = attrs.field(validator=_is_instance(bool, "True or False"))
    failures: tuple[RuleFailure | str, ...] = attrs.field(
        default=(), converter=_failure_tuple, validator=_each_failure
    )
    details: Mapping[str, Any] = attrs.field(
        factory=dict, validator=_is_instance(Mapping, "a mapping")
    )


@attrs.frozen(kw_only=True)
class RubricRule:
    """A rule a plugin adds to a rubric (``swarm_rubric_rules``).

    ``check(fixture, evidence)`` judges one sample: the rubric passes what it scores against
    (the fan-out rubric: its ``Fixture``) and what it read from the sample (its ``Evidence``),
    and gets a ``RuleResult``.  A ``required`` rule must pass for the sample to be resolved; any
    other is reported only.
    """

    name: str = attrs.field(validator=_is_instance(str, "a string"))
    check: Callable[[Any, Any], RuleResult] = attrs.field()
    required: bool = attrs.field(default=False, validator=_is_instance(bool, "True or False"))

    @check.validator
    def _callable(self, attribute: Any, value: Any) -> None:
        if not callable(value):
            raise TypeError(f"RubricRule.check: expected a callable, got {value!r}")
