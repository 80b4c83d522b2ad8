"""One member's task: its agent run inside its own agent span, limits and usage tap, and how it
ended.

Each member runs its agent on a copy of the sample's input plus its preamble, in an agent span
named after it (its ``started`` time is when that span opens), inside an Inspect token-limit
node that taps everything it spends (a call that trips a sample limit, a native compaction).
A submission is checked by the controller's verifier when there is one.  Whatever happens, the
member ends exactly once, with one status.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio
from inspect_ai.agent import AgentState
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, ChatMessageUser
from inspect_ai.util import (
    Limit,
    apply_limits,
    message_limit,
    sample_limits,
    span,
    time_limit,
    turn_limit,
)

from swarm._accounts.caps import effective_grace
from swarm._inspect.private import UsageTap
from swarm._run.answer import keep_answer
from swarm._run.background import BackgroundOwner, BackgroundWatcher
from swarm._run.gate import check
from swarm._run.identity import member_context
from swarm._run.members import RunMember
from swarm._run.ports import MemberHost, SandboxPort
from swarm._run.status import AgentEnd, classify, interrupted_status, leaves
from swarm._spec.budget import Budget
from swarm._spec.roster import build_agent
from swarm._spec.verifier import Verifier
from swarm.errors import MemberErrors
from swarm.records import INFO_SOURCE, MemberLimits

__all__ = ["MemberRunner"]

logger = logging.getLogger("swarm")


def _member_limits(limits: MemberLimits) -> list[Limit]:
    # token and cost limits are the swarm's own (checked after each call with the ledger's
    # meters, so the call that reaches a limit is metered too); the rest are Inspect's.
    made: list[Limit] = []
    if limits.turn is not None:
        made.append(turn_limit(limits.turn))
    if limits.message is not None:
        made.append(message_limit(limits.message))
    if limits.time is not None:
        made.append(time_limit(limits.time))
    return made


class MemberRunner:
    """Runs members of one run, each in its own task."""

    def __init__(
        self,
        host: MemberHost,
        input_messages: Sequence[ChatMessage],
        verifier: Verifier | None,
        *,
        fail_on_error: bool,
        sandboxes: SandboxPort | None = None,
        watcher: BackgroundWatcher | None = None,
        budget: Budget | None = None,
    ) -> None:
        self._host = host
        self._watcher = watcher
        self._budget = budget
        self._sandboxes = sandboxes
        self._input = list(input_messages)
        self._verifier = verifier
        self._fail_on_error = fail_on_error

    async def run(self, m: RunMember) -> None:
        """Run member ``m`` to its end (its task's body)."""
        status: str | None = None
        interrupted = False
        member_token = member_context.set(m.info)
        tap = m.tap = UsageTap()
        owner = m.background = BackgroundOwner(m.name, self._watcher)
        try:
            with tap, anyio.CancelScope() as scope:
                m.scope = scope
                status = await self._run_owning(m, owner)
            if scope.cancelled_caught:
                # a hard stop: during the drain the agent's own status is kept; a member the
                # swarm halted in place of raising into its bridged call ends as the limit says
                m.work_cancelled = True
                status = m.agent_status or m.halted or "cancelled"
        except BaseException as ex:
            # the run is ending under this member: a sample limit its own call tripped, a
            # plugin's fault, or a cancellation from outside the swarm
            interrupted = True
            status = self._ended(m, interrupted_status(ex))
            raise
        finally:
            member_context.reset(member_token)
            # Inspect's record of what the member spent: a call that tripped a sample limit
            # and a native compaction are in it though no hook saw them
            self._host.sync_usage(m.name, tap.usage)
            self._host.member_ended(m, status or "cancelled", decide=not interrupted)

    async def _run_owning(self, m: RunMember, owner: BackgroundOwner) -> str:
        """Run the member's agent owning its background work, then drain that work."""
        try:
            async with owner.hosting():
                status = m.agent_status = await self._run_agent(m)
                if await owner.drain(self._grace()):  # its calls in flight are unknown
                    m.work_cancelled = True
            return status
        except Exception as ex:  # out of the task group, the background work's error first
            end = classify(ex)
            found = leaves(ex)
            if end.propagate:
                if len(found) == 1:
                    raise found[0] from None
                raise
            return self._ended(m, end)

    async def _run_agent(self, m: RunMember) -> str:
        if m.task is not None:  # a spawned member works on its parent's task, not the sample's
            messages: list[ChatMessage] = [ChatMessageUser(content=m.task, source="input")]
        else:
            messages = [msg.model_copy() for msg in self._input]
        messages.append(ChatMessageUser(content=self._host.preamble(m), source="input"))
        state = AgentState(messages=messages)
        m.agent_state = state
        try:
            if self._sandboxes is not None:  # its own sandbox, before its first tool call
                await self._sandboxes.enter(m.name, m.entry.spec.sandbox_for(m.name))
            agent = build_agent(m.entry.spec)
            with apply_limits(_member_limits(m.entry.spec.limits), catch_errors=True) as scope:
                async with span(name=m.name, type="agent", id=m.span_id):
                    # its start is when its span opens, not when it was scheduled (the run
                    # took the time then, kept for a member whose agent never starts)
                    m.started = self._host.now()
                    state = await agent(state)
                    m.agent_state = state
                    reason = state.output.stop_reason if state.output.choices else None
                    if reason in ("content_filter", "model_length"):
                        return "unsubmitted"
                    keep_answer(m, state)
                    if self._verifier is not None and m.info.depth == 0:
                        # a child's answer is to its parent's task, not the sample's
                        await self._verify(m, state, self._verifier)
                return "submitted"
            error = scope.limit_error
            return f"member_limit:{error.type if error is not None else 'custom'}"
        except Exception as ex:
            end = classify(ex)
            if end.propagate:
                raise
            status = self._ended(m, end)
            if end.error is not None and self._fail_on_error:
                failure = MemberErrors(
                    {m.name: m.error or repr(ex)},
                    f"member {m.name!r} errored (the swarm runs with on_member_error='fail')",
                )
                failure.__cause__ = ex
                self._host.fail(failure)
            return status

    def _grace(self) -> float:
        """How long a member's background work may run on after its agent returns: the
        budget's grace, clipped to half the sample's remaining time (as for a stop)."""
        return 0.0 if self._budget is None else effective_grace(self._budget, sample_limits())

    def _ended(self, m: RunMember, end: AgentEnd) -> str:
        """Keep a member's own error (logged and in the transcript); return its status."""
        if end.error is not None:
            m.error = repr(end.error)
            m.exception = end.error
            logger.warning("swarm member %r errored: %s", m.name, m.error)
            transcript().info(
                {"type": "member_error", "member": m.name, "error": m.error}, source=INFO_SOURCE
            )
        return end.status or "cancelled"

    async def _verify(self, m: RunMember, state: AgentState, verifier: Verifier) -> None:
        """Check a submission with the controller's verifier (a gate check of the member)."""
        async with span(name=f"{m.name} verify", type="gate"):
            try:
                passed, _ = await check(verifier, state)
            except Exception as ex:
                logger.warning("verifier failed on %s's submission: %r", m.name, ex)
                passed = False
        m.gate_checks += 1
        if passed:
            m.gate_passes += 1
            if m.first_pass_time is None:
                m.first_pass_time = self._host.now()
        m.verified = passed
