"""The schemas of the stored records that have readers: the result record
(``inspect_swarm:result``), the ledger (``inspect_swarm:ledger``), the spawn ledger
(``inspect_swarm:spawns``), the message log (``inspect_swarm:messages``) and the subagents
record (``inspect_swarm:subagents``).

One frozen pydantic model per record (and per part of one), each field with its description,
unknown fields refused.  Both sides use these same classes:

- the writers build their record through them: ``_report/ledger.py`` constructs a
  ``SwarmLedger``; the runtime's spawn entries *are* ``SpawnLedgerEntry``s (``_report/spawns``
  calls them ``SpawnEntry``); ``_report/subagents.py`` validates its entries through a
  ``SubagentsRecord``; the kernel passes the ``messages`` channel's log through
  ``MessageLog`` before it writes it, and the result record (``swarm.SwarmResult``, the value
  ``swarm_run_ended`` observers get) through ``ResultRecord`` (``_run/finish.py``).  Each
  writes ``model_dump()``, so a record has the schema's fields, in the schema's order, and a
  field the schema lacks, or one missing, fails the build instead of reaching the store;
- ``swarm.analysis`` re-exports them to read a log's records back (``swarm_ledger()``,
  ``swarm_spawns()``, ``swarm_messages()``), and their ``model_json_schema()`` describes every
  field.

Why pydantic is the one schema, and attrs is not: the readers must be pydantic (Inspect's logs
are pydantic; users get typed attributes, ``model_json_schema()`` and the descriptions), and
models derived from attrs classes at import time would be invisible to type checkers and to the
reference docs.  The writers' inputs stay what they were (attrs values, meters, the mailbox):
only the record, the wire format, is defined here, which is the split between the business model
and the wire format that attrs' docs recommend.

A number that a writer may store either as an integer or as a float (a sample limit given as
``600``, a token overshoot, a split weight) is ``int | float``: pydantic turns an integer in a
``float`` field into a float, which would write ``600.0`` where the record holds ``600``.

The result record is a hook value too (``swarm.SwarmResult``, attrs, unstructured by
``swarm.serialization``); ``ResultRecord`` is its stored form, and the kernel writes the one
through the other, so a field added to one side only fails the build.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

__all__ = [
    "ResultFinal",
    "ResultMember",
    "ResultRecord",
    "ResultSubmission",
    "Calls",
    "LedgerBudget",
    "LedgerCaps",
    "LedgerShare",
    "MemberLedger",
    "MessageLog",
    "MessageLogEntry",
    "Meter",
    "SampleLimits",
    "Seen",
    "SpawnLedger",
    "SpawnLedgerEntry",
    "SpawnOp",
    "SubagentDispatch",
    "SubagentEnd",
    "SubagentEntry",
    "SubagentReceived",
    "SubagentSeen",
    "SubagentUsage",
    "SubagentsRecord",
    "SwarmLedger",
    "Usage",
    "schema_problem",
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- the ledger -------------------------------------------------------------------------------


class Usage(_Record):
    """Token usage and cost, as Inspect's ``ModelUsage`` reports it."""

    input_tokens: int = Field(description="Input tokens (excluding cached).")
    output_tokens: int = Field(description="Output tokens.")
    total_tokens: int = Field(description="All tokens.")
    input_tokens_cache_write: int | None = Field(description="Tokens written to a cache.")
    input_tokens_cache_read: int | None = Field(description="Tokens read from a cache.")
    reasoning_tokens: int | None = Field(description="Reasoning tokens.")
    total_cost: float | None = Field(description="Dollars, when priced; null when unpriced.")


class Meter(_Record):
    """The usage and cost of what a member (or the runtime, final step, swarm) did."""

    usage: Usage = Field(description="Usage of the calls metered.")
    cost: float = Field(description="Dollars of the priced calls.")
    suspended_cost: float = Field(
        description="Part of the cost spent while token counting was suspended."
    )


class Calls(_Record):
    """Model calls by outcome."""

    calls: int = Field(description="Completed calls other than cache replays.")
    cache_replays: int = Field(description="Calls replayed from cache, at no charge.")
    errored: int = Field(description="Attempts that errored or were cancelled (retries too).")
    no_usage: int = Field(description="Completed calls that reported no usage.")
    unpriced: int = Field(description="Completed calls with usage but no cost.")


class LedgerShare(_Record):
    """The share of a split budget a member spends from."""

    owner: str = Field(
        description="The roster member whose share it is: the member itself, or for a member "
        "spawned at run time the one its parent spends from."
    )
    cost: float | None = Field(description="Dollars; null when cost is not capped.")
    tokens: int | None = Field(description="Tokens; null when tokens are not capped.")


class MemberLedger(_Record):
    """One member's accounting.

    ``share`` is written only when the budget is split: a ledger of ``split="pool"`` has the
    spec's fields and no other.
    """

    name: str = Field(description="The member's name.")
    status: str | None = Field(description="How it ended; null if never started.")
    bridged: bool = Field(description="Whether it is a bridged agent.")
    meter: Meter = Field(description="Its usage, subagents' and background work's included.")
    calls: Calls = Field(description="Its model calls by outcome.")
    cancelled: bool = Field(description="The swarm or the sample cancelled it.")
    background_started: int = Field(description="Background tasks it started.")
    background_cancelled: int = Field(description="Background tasks cancelled unfinished.")
    share: LedgerShare | None = Field(
        default=None,
        description="The share it spends from and is stopped at, with a split budget; absent "
        "with split 'pool'.",
    )

    @model_serializer(mode="wrap")
    def _without_pool_share(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.share is None:
            del data["share"]
        return data


class LedgerBudget(_Record):
    """The budget as given."""

    cost: float | None = Field(description="Cost cap in dollars; null: from the sample's limit.")
    tokens: int | None = Field(description="Token cap; null: from the sample's limit.")
    time: float | None = Field(description="Time cap in seconds; null: from the sample's limit.")
    reserve: float = Field(description="Fraction of a sample limit held back from its cap.")
    split: Literal["pool", "equal"] | list[int | float] = Field(
        description='"pool", "equal", or one weight per member, as given.'
    )
    grace: float = Field(description="Seconds calls in flight may finish after a stop.")


class LedgerCaps(_Record):
    """The caps the swarm applied (null: no cap)."""

    cost: float | None = Field(description="Dollars.")
    tokens: int | None = Field(description="Tokens.")
    time: float | None = Field(description="Seconds.")


class SampleLimits(_Record):
    """The sample's limits when the swarm started (null: no limit), as given."""

    token: int | float | None = Field(description="Tokens.")
    cost: int | float | None = Field(description="Dollars.")
    message: int | float | None = Field(description="Messages.")
    turn: int | float | None = Field(description="Turns.")
    working: int | float | None = Field(description="Seconds of working time.")
    time: int | float | None = Field(description="Seconds.")


class SwarmLedger(_Record):
    """The ``inspect_swarm:ledger`` record (version 1): the swarm's accounting."""

    version: Literal[1] = Field(description="Record version.")
    budget: LedgerBudget = Field(description="The budget as given.")
    caps: LedgerCaps = Field(description="Caps applied.")
    sample_limits: SampleLimits = Field(description="Sample limits at the swarm's start.")
    members: list[MemberLedger] = Field(description="One entry per member, roster order.")
    runtime: Meter = Field(description="The controller's own calls.")
    final: Meter = Field(description="The final step's calls.")
    swarm: Meter = Field(description="Everything in the swarm.")
    calls: Calls = Field(description="Every call in the swarm.")
    unpriced_calls_recorded: int = Field(description="Unpriced calls the swarm meter saw.")
    sample_delta: Usage = Field(description="The sample's usage while the swarm ran.")
    unattributed: Usage = Field(description="sample_delta minus swarm.")
    unpriced_models: list[str] = Field(description="Models with tokens but no cost.")
    native_compaction_classes: list[str] = Field(
        description="Loaded model classes that can compact natively (usage may be missing)."
    )
    overshoot: dict[str, int | float] = Field(description="How far usage went past each cap.")
    stop_reason: str | None = Field(description="Why the swarm stopped itself.")
    ended_by: str | None = Field(description="What ended it from outside.")
    interrupted: bool = Field(description="An error or cancellation ended it early.")
    final_cancelled: bool = Field(description="The final step was cancelled.")
    resumed: bool = Field(description="The sample resumed from a checkpoint.")
    total_complete: bool = Field(description="No call is known to be missing from totals.")
    attribution_complete: bool = Field(description="total_complete and unattributed is zero.")


# -- the result record ------------------------------------------------------------------------


class ResultMember(_Record):
    """One member in the result record."""

    name: str = Field(description="The member's name.")
    role: str | None = Field(description="Its role.")
    state: Literal["pending", "running", "ended"] = Field(description="Where it is in its life.")
    status: str | None = Field(description="How it ended; null unless ended.")
    submitted: bool = Field(description="status == 'submitted'.")
    started: float | None = Field(description="When it started (seconds since the start).")
    time: float | None = Field(description="When it ended (seconds since the start).")
    parent: str | None = Field(description="The member that spawned it.")
    depth: int = Field(description="Spawning depth (0: a roster member).")
    sandbox: str | None = Field(description="Its own sandbox (always null in this version).")
    error: str | None = Field(description="An errored member's error (its repr).")
    gate_checks: int = Field(description="Its gate checks.")
    gate_passes: int = Field(description="Its gate checks that passed.")
    first_pass_time: float | None = Field(description="When its first check passed.")
    answer: str | None = Field(
        description="The text it submitted (its output's completion), cut at 10,000 "
        "characters; null unless it submitted."
    )
    answer_chars: int | None = Field(description="The full length of that text.")
    verified: bool | None = Field(
        description="The verifier's verdict on its submission; null: none checked it."
    )


class ResultFinal(_Record):
    """How the answer was chosen, and its text."""

    mode: (
        Literal["first", "last", "controller", "vote", "verify_then_vote", "synthesize"] | None
    ) = Field(description="The rule that chose it; null with no answer.")
    member: str | None = Field(description="The answer's member (null: none, or synthesized).")
    reason: str | None = Field(description="A controller's reason, or why there is no answer.")
    provisional: bool = Field(description="The run did not end normally.")
    answer: str | None = Field(description="The answer's text, cut at 10,000 characters.")
    answer_chars: int | None = Field(description="The full length of the answer's text.")


class ResultSubmission(_Record):
    """One submission, in the order they came."""

    member: str = Field(description="Who submitted.")
    time: float = Field(description="When (seconds since the start).")
    answer: str | None = Field(description="What (cut at 10,000 characters).")
    verified: bool | None = Field(description="The verifier's verdict; null: none checked it.")


class ResultRecord(_Record):
    """The ``inspect_swarm:result`` record (version 1)."""

    version: Literal[1] = Field(description="Record version.")
    members: list[ResultMember] = Field(description="Every member, in the order they joined.")
    final: ResultFinal = Field(description="The answer.")
    stop_reason: str | None = Field(description="Why the swarm stopped itself.")
    submissions: list[ResultSubmission] = Field(description="Every submission, in order.")


# -- the spawn ledger -------------------------------------------------------------------------

SpawnOp = Literal["spawn", "refused", "end", "delete"]
"""What a spawn ledger entry records: a child admitted, a request refused, a child ended, a live
child torn down."""


class SpawnLedgerEntry(_Record):
    """One entry of the spawn ledger."""

    seq: int = Field(description="Order of writing, from 1.")
    time: float = Field(description="Seconds since the swarm started.")
    op: SpawnOp = Field(description="What happened.")
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


# -- the message log --------------------------------------------------------------------------


class Seen(_Record):
    """When a message first reached its recipient's conversation."""

    time: float = Field(description="Seconds since the swarm started.")
    via: Literal["read", "notice", "wait"] = Field(description="How it got there.")
    call: int | None = Field(
        default=None,
        description="The number of the recipient's model call that carried it (its first is "
        "1); null in a log written before calls were counted.",
    )


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
    call: int | None = Field(
        default=None,
        description="A message: the number of the sender's model call whose tool sent it (its "
        "first is 1); null for a receipt, and in a log written before calls were counted.",
    )


class MessageLog(_Record):
    """The ``inspect_swarm:messages`` record (version 1)."""

    version: Literal[1] = Field(description="Record version.")
    messages: list[MessageLogEntry] = Field(description="Every delivery, in order.")


# -- the subagents record ---------------------------------------------------------------------


class _Entry(_Record):
    seq: int = Field(description="Order in the record, from 0 (by time, then op).")
    time: float = Field(description="Seconds since the swarm started.")
    member: str = Field(description="The member whose subagent it is.")
    name: str = Field(
        description="The runtime's name for this run of a subagent: <member>/AGENT-N for a "
        "background dispatch, <member>/<span id> for a foreground one, <member>/<agent id> for "
        "a CLI's sub-agent."
    )
    agent: str | None = Field(
        description="deepagent's id (AGENT-N), for a background dispatch; a CLI's own agent id "
        "for a CLI's sub-agent (null until the CLI told its parent)."
    )
    span: str = Field(description="The agent span the subagent ran in.")


class SubagentDispatch(_Entry):
    """The ``agent`` call began."""

    op: Literal["dispatch"] = Field(description="What happened.")
    subagent: str = Field(description="The subagent's type (its span's name).")
    background: bool = Field(description="Whether it was dispatched in the background.")
    parent: str = Field(
        description="The dispatching loop: the member, or the name of the subagent that did."
    )
    depth: int = Field(description="1 from the member's own loop.")
    prompt: str = Field(description="The call's prompt argument.")
    task_description: str | None = Field(description="The call's task_description argument.")


class SubagentUsage(_Record):
    """The model calls in a subagent's span, its own subagents' included."""

    total_tokens: int = Field(description="Their total tokens.")
    calls: int = Field(description="Completed calls, other than cache replays.")
    cache_replays: int = Field(description="Calls answered from Inspect's cache.")
    errored: int = Field(description="Calls that errored or never completed.")


class SubagentEnd(_Entry):
    """Its span closed (the run's end when it never did)."""

    op: Literal["end"] = Field(description="What happened.")
    status: Literal["completed", "errored", "cancelled", "running"] | None = Field(
        description="deepagent's status for it (running: it outlived the run; null: the "
        "registry was not reachable)."
    )
    started: float | None = Field(description="When its span opened (seconds since the start).")
    result: str | None = Field(description="Its result, as deepagent kept it.")
    error: str | None = Field(description="Its error, as deepagent kept it.")
    usage: SubagentUsage = Field(description="Its calls' usage.")


class SubagentSeen(_Record):
    """When a received result first reached the dispatching loop's model."""

    time: float = Field(description="Seconds since the swarm started.")
    via: Literal["model_call"] = Field(description="How it got there.")


class SubagentReceived(_Entry):
    """A tool result of the member's held the subagent's terminal block."""

    op: Literal["received"] = Field(description="What happened.")
    via: Literal[
        "agent", "agent_wait", "agent_status", "agent_cancel", "notification", "wait_agent"
    ] = Field(
        description="The tool whose result held it (a CLI's sub-agent: wait_agent, or "
        "notification for the CLI's own message to its parent)."
    )
    kind: Literal["result", "status"] = Field(
        description="result: a completed subagent's result; status: an errored or cancelled "
        "one's block."
    )
    text: str = Field(description="The result, or the status block.")
    seen: SubagentSeen | None = Field(description="When the loop's model first received it.")


class SubagentRan(_Entry):
    """A CLI's sub-agent asked its CLI to run a tool (one tool call of its model's output)."""

    op: Literal["ran"] = Field(description="What happened.")
    tool: str = Field(description="The tool's name.")
    arguments: dict[str, Any] = Field(description="The call's arguments.")


SubagentEntry = Annotated[
    SubagentDispatch | SubagentRan | SubagentEnd | SubagentReceived, Field(discriminator="op")
]
"""One entry of the subagents record, by its ``op``."""


class SubagentsRecord(_Record):
    """The ``inspect_swarm:subagents`` record (version 1)."""

    version: Literal[1] = Field(description="Record version.")
    entries: list[SubagentEntry] = Field(description="Every entry, in order.")


def schema_problem(error: ValidationError) -> str:
    """What a record's schema refused, on one line: each field's path and pydantic's reason
    (``messages[0].size: Field required; messages[0].sent: Extra inputs are not permitted``)."""
    parts = []
    for found in error.errors():
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in found["loc"])
        parts.append(f"{path.lstrip('.') or '(the record)'}: {found['msg']}")
    return "; ".join(parts)
