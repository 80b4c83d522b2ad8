"""One swarm run on one sample: the roster, the run's plugins, the loop and the stop.

Every member runs in its own task of one anyio task group, inside an agent span named after it.
Events (a member started, submitted, ended) go synchronously to the decision hooks over a fresh
``SwarmView``; a ``Decision`` can start members, choose the answer or stop the swarm.  Stopping
refuses new model calls at once, gives calls in flight ``grace`` seconds, then cancels whoever
is still running.  The result record is written in a ``finally`` path, so it exists even when
the sample errors or is cancelled.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
import pluggy
from inspect_ai.agent import AgentState
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, ChatMessageUser, ModelOutput, ModelUsage
from inspect_ai.tool import ToolDef
from inspect_ai.util import (
    LimitExceededError,
    apply_limits,
    message_limit,
    sample_limits,
    span,
    time_limit,
    turn_limit,
)
from inspect_ai.util._limit import Limit
from shortuuid import uuid as shortuuid

from swarm import hookspecs
from swarm._accounting import Accounts
from swarm._bus import Bus
from swarm._caps import effective_grace, split_sentence
from swarm._context import _MEMBER, _RUN
from swarm._defaults import KernelDefaults
from swarm._finish import write_records
from swarm._gate import check, resolve_verifier
from swarm._hooks import RunHooks
from swarm._inspect_private import UsageTap, current_span_id, token_metering_suspended
from swarm._limits import SwarmLimitError, SwarmStopped
from swarm._manager import PluginCatalog
from swarm._pricing import check_prices
from swarm._roster import RosterEntry, build_agent, expand_roster
from swarm._topology import PluginSpec, SwarmSpec
from swarm._waits import Waits
from swarm.errors import MemberErrors, PluginError, SwarmError
from swarm.records import (
    INFO_SOURCE,
    TOPOLOGY_REASONS,
    Answer,
    Decision,
    Delivery,
    MemberEnded,
    MemberInfo,
    MemberLimits,
    MemberState,
    MemberSubmitted,
    MemberView,
    Quiescent,
    SwarmView,
)

__all__ = ["RunMember", "SwarmRun"]

logger = logging.getLogger("swarm")


class RunMember:
    """The runtime's mutable record of one member."""

    __slots__ = (
        "agent_state",
        "delivery",
        "ended",
        "entry",
        "error",
        "exception",
        "first_pass_time",
        "gate_checks",
        "gate_passes",
        "info",
        "scope",
        "span_id",
        "started",
        "state",
        "status",
        "tap",
        "verified",
        "view",
    )

    def __init__(self, entry: RosterEntry) -> None:
        self.entry = entry
        self.info: MemberInfo = entry.info
        self.state: MemberState = "pending"
        self.status: str | None = None
        self.started: float | None = None
        self.ended: float | None = None
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.gate_checks = 0
        self.gate_passes = 0
        self.first_pass_time: float | None = None
        self.verified: bool | None = None
        self.scope: anyio.CancelScope | None = None
        self.agent_state: AgentState | None = None
        self.delivery: Delivery | None = None
        self.span_id = f"swarm-member-{shortuuid()}"
        self.tap: UsageTap | None = None
        self.view = self._make_view()

    def _make_view(self) -> MemberView:
        return MemberView(
            name=self.info.name,
            role=self.info.role,
            index=self.info.index,
            parent=self.info.parent,
            depth=self.info.depth,
            state=self.state,
            status=self.status,
            started=self.started,
            ended=self.ended,
            delivery=self.delivery or self.info.delivery,
            gate_checks=self.gate_checks,
            gate_passes=self.gate_passes,
        )

    def changed(self) -> None:
        self.view = self._make_view()


def _instantiate(catalog: PluginCatalog, kind: Any, spec: PluginSpec) -> object:
    reg = catalog.lookup(kind, spec.name)
    try:
        obj = reg.factory(**dict(spec.params))
    except SwarmError:
        raise
    except Exception as ex:
        raise PluginError(reg.plugin, f"{kind} factory {reg.name!r}", f"raised {ex!r}") from ex
    if obj is None:
        raise PluginError(reg.plugin, f"{kind} factory {reg.name!r}", "returned None")
    return obj


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


def _ended_by(ex: BaseException, limits: Any) -> str:
    """What ended the swarm from outside: a sample limit, or unknown."""
    for leaf in _leaves(ex):
        if isinstance(leaf, LimitExceededError) and not isinstance(leaf, SwarmLimitError):
            return f"sample_limit:{leaf.type}"
    time = limits.time
    if time.limit is not None and time.remaining is not None and time.remaining <= 0:
        return "sample_limit:time"
    return "unknown"


def _leaves(ex: BaseException) -> list[BaseException]:
    if isinstance(ex, BaseExceptionGroup):
        return [leaf for sub in ex.exceptions for leaf in _leaves(sub)]
    return [ex]


def _log_others(ex: BaseException, failure: BaseException) -> None:
    """Log what else ended the run besides the failure that becomes the sample's error."""
    for leaf in _leaves(ex):
        if leaf is not failure and not isinstance(leaf, anyio.get_cancelled_exc_class()):
            logger.error("swarm: also raised while the run failed: %r", leaf)


class SwarmRun:
    """The state of one swarm on one sample.  Built and run by the ``swarm`` agent."""

    def __init__(
        self, spec: SwarmSpec, catalog: PluginCatalog, input_messages: Sequence[ChatMessage]
    ) -> None:
        self.spec = spec
        self.catalog = catalog
        self.input_messages = list(input_messages)
        self.members: list[RunMember] = [RunMember(e) for e in expand_roster(spec.members)]
        self.by_name = {m.info.name: m for m in self.members}
        self.controller_name = spec.controller.name
        self.channel_names = tuple(c.name for c in spec.channels)
        self.channel_objects = [
            (ch.name, _instantiate(self.catalog, "channel", ch)) for ch in spec.channels
        ]
        self.controller = _instantiate(self.catalog, "controller", spec.controller)
        self.bus = Bus(self, self.channel_objects)
        self.waits = Waits(self, self.bus) if self.bus.max_wait is not None else None
        self.pm = self._build_manager()
        self.hooks = RunHooks(self.pm, on_fault=self._fail)
        # what failed the run from inside (a plugin's fault, a member's error under
        # on_member_error="fail"): the first one is the sample's error
        self.failure: SwarmError | None = None
        self.verifier = resolve_verifier(getattr(self.controller, "verifier", None))
        idle = getattr(self.controller, "idle_seconds", None)
        self.idle_seconds: float | None = None if idle is None else float(idle)
        self._last_activity = 0.0
        self._watchers: list[anyio.CancelScope] = []
        self._own_loops: dict[str, str] = {}
        self._tools: dict[bool, list[Any]] = {}
        # the name a model calls each channel tool by -> its channel (to count malformed calls)
        self.tool_channels: dict[str, str] = {}
        self.continue_wired: set[str] = set()
        self.accounts = Accounts(spec.budget)
        for m in self.members:
            self.accounts.add_member(m.info.name, m.entry.spec.limits)
        self.grace = spec.budget.grace
        self.stopping = False
        self.stop_reason: str | None = None
        self.interrupted = False
        self.ended_by: str | None = None
        self.root_span: str | None = None
        self.wall_clock = 0.0
        self._t0 = 0.0
        self.started_at = datetime.now(UTC)
        self._tg: anyio.abc.TaskGroup | None = None
        self._running = 0
        self._all_ended: anyio.Event | None = None
        self._chosen: Answer | None = None
        self.answer: Answer = Answer(member=None, mode=None, reason="no_submissions")
        self._output = ModelOutput()

    # -- construction --------------------------------------------------------------------------

    def _build_manager(self) -> pluggy.PluginManager:
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        plugins: list[tuple[str, object]] = [
            ("swarm:defaults", KernelDefaults()),
            (f"controller:{self.controller_name}", self.controller),
        ]
        for name, channel in self.channel_objects:
            plugins.append((f"channel:{name}", channel))
        plugins.append(("swarm:rate", self.bus.rate_control))
        plugins.extend(self.catalog.runtime_plugins())
        for name, plugin in plugins:
            try:
                pm.register(plugin, name=name)
            except pluggy.PluginValidationError as ex:
                raise PluginError(name, "<register>", str(ex)) from ex
        return pm

    # -- snapshots -----------------------------------------------------------------------------

    def now(self) -> float:
        """Seconds since the swarm started."""
        return anyio.current_time() - self._t0

    def view(self) -> SwarmView:
        """A frozen snapshot of the run now."""
        return SwarmView(
            members=tuple(m.view for m in self.members),
            time=self.now(),
            stopping=self.stopping,
            stop_reason=self.stop_reason,
            channels=self.channel_names,
            controller=self.controller_name,
        )

    @property
    def running_count(self) -> int:
        """How many members are running now."""
        return self._running

    def member_view(self, name: str) -> MemberView:
        """The view of member ``name`` now."""
        return self.by_name[name].view

    # -- what members wire in (swarm_tools, swarm_on_continue) ---------------------------------

    def bind_own_loop(self, member: str, span: str) -> str:
        """The member's own loop: the first loop that resolves ``swarm_tools()``."""
        return self._own_loops.setdefault(member, span)

    def own_loop(self, member: str) -> str | None:
        """The member's own loop, once bound."""
        return self._own_loops.get(member)

    def has_channel_tools(self) -> bool:
        """Whether some channel gives members tools (besides ``swarm_wait``).

        A channel whose hook fails here has already failed the run; it counts as none.
        """
        if not self.members:
            return False
        try:
            found = self.hooks.member_tools(self.view(), self.members[0].view, False)
        except PluginError:
            return False
        return any(tools for _, tools in found)

    def member_tools(self, member: str, *, nested: bool) -> list[Any]:
        """The tools a member's own (or a nested) loop gets from the channels."""
        tools = self._tools.get(nested)
        if tools is None:
            from swarm._member_tools import swarm_wait

            order = {f"channel:{name}": i for i, name in enumerate(self.channel_names)}
            found = self.hooks.member_tools(self.view(), self.member_view(member), nested)
            found.sort(key=lambda pair: order.get(pair[0], len(order)))
            tools = [t for _, ts in found for t in ts]
            for plugin, ts in found:
                kind, _, channel = plugin.partition(":")
                if kind == "channel":
                    for t in ts:
                        self.tool_channels[ToolDef(t).name] = channel
            if self.waits is not None:
                tools.append(swarm_wait())
            self._tools[nested] = tools
        return tools

    def notice_for(self, member: str, span: str) -> tuple[str, dict[str, Any]] | None:
        """The notice for a member's own loop at a turn boundary, or ``None``."""
        m = self.by_name[member]
        if self._own_loops.get(member) != span:
            return None
        self.continue_wired.add(member)
        if m.delivery != "notify":
            return None
        lines = self.hooks.notice_lines(self.view(), m.view, span)
        if not lines:
            return None
        return self.bus.notice(member, span, lines)

    @property
    def output(self) -> ModelOutput:
        """The answer's output (provisional until the run ends)."""
        return self._output

    # -- the loop ------------------------------------------------------------------------------

    async def run(self, state: AgentState) -> AgentState:
        """Run the swarm to its end and return the swarm's agent state."""
        self._t0 = anyio.current_time()
        self.started_at = datetime.now(UTC)
        self.root_span = current_span_id()
        limits = sample_limits()
        run_token = _RUN.set(self)
        try:
            self.accounts.begin(limits, [m.info.name for m in self.members])
            specs = [m.entry.spec for m in self.members]
            check_prices(specs, all_members=self.accounts.caps.cost is not None)
            async with anyio.create_task_group() as tg:
                self._tg = tg
                if self.accounts.caps.time is not None:
                    tg.start_soon(self._time_cap, self.accounts.caps.time, name="swarm time cap")
                if self.idle_seconds is not None:
                    tg.start_soon(self._idle_watch, self.idle_seconds, name="swarm idle watch")
                view = self.view()
                self.hooks.run_started(view)
                self._apply(self.hooks.start(view), "swarm_start")
                if self._running == 0 and not self.stopping:
                    self._stop("all_done")
            if self.failure is not None:  # the run cancelled itself for it
                raise self.failure
        except BaseException as ex:
            self.interrupted = True
            if self.failure is None:
                self.ended_by = _ended_by(ex, limits)
                raise
            _log_others(ex, self.failure)
            self.failure.__suppress_context__ = True
            raise self.failure  # noqa: B904  (its own cause is kept; the group is logged)
        finally:
            self._tg = None
            self.wall_clock = self.now()
            write_records(self, state)  # synchronous: cancellation cannot interrupt it
            _RUN.reset(run_token)
        if self.failure is not None:  # a plugin's fault while the records were written
            raise self.failure
        self._raise_if_every_member_errored()
        return state

    def _fail(self, error: SwarmError) -> None:
        """End the run as failed: ``error`` becomes the sample's error once the records are
        written (the first failure wins; later ones are logged)."""
        if self.failure is None:
            self.failure = error
        elif error is not self.failure:
            logger.error("swarm: a further failure while the run was failing: %s", error)
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    def _raise_if_every_member_errored(self) -> None:
        started = [m for m in self.members if m.started is not None]
        if not started or any(m.status != "errored" for m in started):
            return
        error = MemberErrors(
            {m.info.name: m.error or "unknown error" for m in started},
            "every member of the swarm errored",
        )
        raise error from started[0].exception

    def _apply(self, decided: tuple[str, Decision] | None, hook: str) -> None:
        if decided is None:
            return
        plugin, decision = decided
        for name in decision.start:
            m = self.by_name.get(name)
            if m is None or m.state != "pending":
                why = "is not in the roster" if m is None else f"is {m.state}, not pending"
                raise self.hooks.fault(
                    PluginError(plugin, hook, f"asked to start member {name!r}, which {why}")
                )
            if not self.stopping:
                self._start(m)
        if decision.answer is not None:
            m = self.by_name.get(decision.answer)
            if m is None or m.status != "submitted":
                raise self.hooks.fault(
                    PluginError(
                        plugin,
                        hook,
                        f"chose member {decision.answer!r} as the answer, but it has not submitted",
                    )
                )
            self._chosen = Answer(member=m.info.name, mode="controller", reason=decision.reason)
            self.refresh_answer()
        if decision.stop is not None:
            reason = decision.stop
            if reason not in TOPOLOGY_REASONS:
                reason = f"controller:{reason}"
            self._stop(reason)

    def _start(self, m: RunMember) -> None:
        assert self._tg is not None
        m.state = "running"
        m.started = self.now()
        mode = self.hooks.delivery_mode(self.view(), m.view)
        m.delivery = mode or "notify"
        m.changed()
        self._running += 1
        self.activity()
        self.hooks.member_started(self.view(), m.view)
        self._tg.start_soon(self._run_member, m, name=f"swarm member {m.info.name}")

    def preamble(self, m: RunMember) -> str:
        """The text appended to a member's input: who it is, its role, channel instructions."""
        n = len(self.members)
        if n == 1:
            paragraphs = [f"You are {m.info.name}, the only agent in this swarm."]
        else:
            paragraphs = [
                f"You are {m.info.name}, one of {n} agents in a swarm working on this task at "
                "the same time."
            ]
        if m.info.role:
            paragraphs.append(f"Your role: {m.info.role}.")
        if n > 1:
            weights = self.spec.budget.split
            share = None
            if isinstance(weights, tuple) and len(weights) == n:
                share = weights[m.info.index] / sum(weights)
            sentence = split_sentence(self.spec.budget, self.accounts.caps, share)
            if sentence:
                paragraphs.append(sentence)
        order = {f"channel:{name}": i for i, name in enumerate(self.channel_names)}
        found = self.hooks.member_instructions(self.view(), m.view)
        found.sort(key=lambda pair: order.get(pair[0], len(order)))
        paragraphs.extend(text for _, text in found if text.strip())
        return "\n\n".join(paragraphs)

    async def _run_member(self, m: RunMember) -> None:
        status: str | None = None
        interrupted = False
        member_token = _MEMBER.set(m.info)
        tap = m.tap = UsageTap()
        try:
            with tap, anyio.CancelScope() as scope:
                m.scope = scope
                status = await self._run_agent(m)
            if scope.cancelled_caught:
                status = "cancelled"
        except BaseException as ex:
            # the run is ending under this member: a sample limit its own call tripped, a
            # plugin's fault, or a cancellation from outside the swarm
            interrupted = True
            status = self._interrupted_status(m, ex)
            raise
        finally:
            _MEMBER.reset(member_token)
            # Inspect's record of what the member spent: a call that tripped a sample limit
            # and a native compaction are in it though no hook saw them
            self.accounts.sync(m.info.name, tap.usage)
            self._member_ended(m, status or "cancelled", decide=not interrupted)

    def _interrupted_status(self, m: RunMember, ex: BaseException) -> str:
        """A member whose own call tripped a sample limit ``errored`` (its call completed and
        is metered); any other member the run ended under is ``cancelled``."""
        for leaf in _leaves(ex):
            if isinstance(leaf, LimitExceededError) and not isinstance(leaf, SwarmLimitError):
                self._member_error(m, leaf)
                return "errored"
        return "cancelled"

    def _member_error(self, m: RunMember, ex: BaseException) -> None:
        m.error = repr(ex)
        m.exception = ex
        logger.warning("swarm member %r errored: %s", m.info.name, m.error)
        transcript().info(
            {"type": "member_error", "member": m.info.name, "error": m.error}, source=INFO_SOURCE
        )

    async def _run_agent(self, m: RunMember) -> str:
        messages: list[ChatMessage] = [msg.model_copy() for msg in self.input_messages]
        messages.append(ChatMessageUser(content=self.preamble(m), source="input"))
        state = AgentState(messages=messages)
        m.agent_state = state
        try:
            agent = build_agent(m.entry.spec)
            with apply_limits(_member_limits(m.entry.spec.limits), catch_errors=True) as scope:
                async with span(name=m.info.name, type="agent", id=m.span_id):
                    state = await agent(state)
                    m.agent_state = state
                    reason = state.output.stop_reason if state.output.choices else None
                    if reason in ("content_filter", "model_length"):
                        return "unsubmitted"
                    if self.verifier is not None:
                        await self._verify(m, state)
                return "submitted"
            error = scope.limit_error
            return f"member_limit:{error.type if error is not None else 'custom'}"
        except Exception as ex:
            return self._classify(m, ex)

    async def _verify(self, m: RunMember, state: AgentState) -> None:
        """Check a submission with the controller's verifier (a gate check of the member)."""
        assert self.verifier is not None
        async with span(name=f"{m.info.name} verify", type="gate"):
            try:
                passed, _ = await check(self.verifier, state)
            except Exception as ex:
                logger.warning("verifier failed on %s's submission: %r", m.info.name, ex)
                passed = False
        m.gate_checks += 1
        if passed:
            m.gate_passes += 1
            if m.first_pass_time is None:
                m.first_pass_time = self.now()
        m.verified = passed
        m.changed()

    def _classify(self, m: RunMember, ex: Exception) -> str:
        leaves = _leaves(ex)
        if any(isinstance(leaf, PluginError) for leaf in leaves):
            raise ex  # a plugin's fault fails the run; it is never the member's error
        ours = [leaf for leaf in leaves if isinstance(leaf, SwarmLimitError)]
        if ours and len(ours) == len(leaves):
            # a cap, share or own limit outranks a stop that other members caused
            return next((e.status for e in ours if not isinstance(e, SwarmStopped)), "stopped")
        limits = [leaf for leaf in leaves if isinstance(leaf, LimitExceededError)]
        if limits and len(limits) == len(leaves):
            if all(leaf.type == "custom" and leaf.source is None for leaf in limits):
                return "member_limit:custom"
            raise ex  # a sample limit: it ends the whole sample, as Inspect means it to
        self._member_error(m, ex if len(leaves) > 1 else leaves[0])
        if self.spec.on_member_error == "fail":
            failure = MemberErrors(
                {m.info.name: m.error or repr(ex)},
                f"member {m.info.name!r} errored (the swarm runs with on_member_error='fail')",
            )
            failure.__cause__ = ex
            self._fail(failure)
        return "errored"

    def _member_ended(self, m: RunMember, status: str, *, decide: bool = True) -> None:
        self.activity()
        m.state = "ended"
        m.status = status
        m.ended = self.now()
        m.changed()
        self._running -= 1
        event = MemberEnded(
            member=m.info.name, status=status, submitted=status == "submitted", time=m.ended
        )
        if decide and not self.stopping and self._tg is not None and self.failure is None:
            if status == "submitted":
                submitted = MemberSubmitted(member=m.info.name, time=m.ended, verified=m.verified)
                self._apply(self.hooks.on_submission(self.view(), submitted), "swarm_on_submission")
            if not self.stopping:
                self._apply(self.hooks.on_member_end(self.view(), event), "swarm_on_member_end")
        self.hooks.member_ended(self.view(), event)
        self.refresh_answer()
        if self.waits is not None:
            self.waits.member_ended(m.info.name, status)
        if self._running == 0:
            if self._all_ended is not None:
                self._all_ended.set()
            if not any(x.state == "pending" for x in self.members):
                self._cancel_watchers()

    # -- stopping ------------------------------------------------------------------------------

    def record_usage(self, member: str | None, usage: ModelUsage) -> None:
        """Meter a completed call made in this run; raise the limit error it must end with."""
        self.activity()
        m = self.by_name.get(member) if member is not None else None
        error = self.accounts.record(
            member,
            usage,
            metered=None if m is None or m.tap is None else m.tap.usage,
            suspended=token_metering_suspended(),
        )
        if error is None:
            return
        if error.status == "swarm_cap" and not self.stopping:
            self._stop("swarm_cap")
        # raised into the call, so the output's tool calls do not run: a call in flight that
        # completes past the cap after the stop began ends its member with swarm_cap too
        raise error

    async def _time_cap(self, seconds: float) -> None:
        with anyio.CancelScope() as scope:
            self._watchers.append(scope)
            await anyio.sleep(seconds)
            self._stop("swarm_time")

    def _cancel_watchers(self) -> None:
        for scope in self._watchers:
            scope.cancel()

    def activity(self) -> None:
        """Something happened (a record, a model call, a member start or end)."""
        self._last_activity = self.now()

    async def _idle_watch(self, seconds: float) -> None:
        with anyio.CancelScope() as scope:
            self._watchers.append(scope)
            while not self.stopping:
                await anyio.sleep(max(0.0, self._last_activity + seconds - self.now()))
                idle = self.now() - self._last_activity
                if idle >= seconds and not self.stopping:
                    self.quiescent("idle", idle)
                    self._last_activity = self.now()

    def quiescent(self, reason: Literal["all_waiting", "idle"], idle: float) -> None:
        """Nothing can change: ask the decision hooks (they may stop with ``quiescence``)."""
        if self.stopping or self._tg is None:
            return
        event = Quiescent(reason=reason, time=self.now(), idle=idle)
        self._apply(self.hooks.on_quiescence(self.view(), event), "swarm_on_quiescence")

    def _stop(self, reason: str) -> None:
        if self.stopping:
            return
        self.stopping = True
        self.stop_reason = reason
        # half of what the sample has left now, so the stop ends before the sample's time limit
        self.grace = effective_grace(self.spec.budget, sample_limits())
        transcript().info(
            {
                "version": 1,
                "type": "stop",
                "reason": reason,
                "time": self.now(),
                "grace": self.grace,
            },
            source=INFO_SOURCE,
        )
        self.bus.close()
        if self.waits is not None:
            self.waits.stopping()
        self._cancel_watchers()
        self._all_ended = anyio.Event()
        if self._running == 0:
            self._all_ended.set()
        if self._tg is not None:
            self._tg.start_soon(self._supervise_stop, name="swarm stop")

    async def _supervise_stop(self) -> None:
        assert self._all_ended is not None
        with anyio.move_on_after(self.grace):
            await self._all_ended.wait()
        for m in self.members:
            if m.state == "running" and m.scope is not None:
                m.scope.cancel()

    # -- the answer and the records ------------------------------------------------------------

    def refresh_answer(self) -> None:
        answer = self._chosen
        decided = None
        if answer is None:
            decided = self.hooks.choose_answer(self.view())
            answer = decided[1] if decided is not None else None
        if answer is None or answer.member is None:
            answer = Answer(member=None, mode=None, reason="no_submissions")
        else:
            m = self.by_name.get(answer.member)
            if m is None or m.status != "submitted":
                raise self.hooks.fault(
                    PluginError(
                        decided[0] if decided else "<controller>",
                        "swarm_choose_answer",
                        f"chose member {answer.member!r}, which has not submitted",
                    )
                )
        self.answer = answer
        chosen = self.by_name.get(answer.member) if answer.member else None
        if chosen is not None and chosen.agent_state is not None:
            self._output = chosen.agent_state.output
        else:
            self._output = ModelOutput()
