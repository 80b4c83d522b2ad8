"""One swarm run on one sample: the engine that composes the run's services.

Every member runs in its own task of one anyio task group (``member_task``).  Events (a member
started, submitted, ended; everyone waits; nothing happens) go synchronously to the decision
hooks over a fresh ``SwarmView``; a ``Decision`` can start members, choose the answer or stop the
swarm.  Stopping refuses new model calls at once, gives calls in flight a grace, then cancels
whoever is still running.  The records are written in a ``finally`` path (``finish``), so they
exist even when the sample errors or is cancelled.

The engine is the only module that knows every part of the runtime; each service sees it only
through a narrow port (``ports``).
"""

from __future__ import annotations

import contextvars
import functools
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

import anyio
from inspect_ai.agent import AgentState
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, ModelUsage
from inspect_ai.util import sample_limits

from swarm._accounts.accounts import Accounts
from swarm._accounts.caps import effective_grace, sample_time_left
from swarm._accounts.limit_errors import SwarmLimitError
from swarm._accounts.pricing import check_prices
from swarm._hooks.calls import RunHooks
from swarm._hooks.catalog import PluginCatalog
from swarm._inspect.private import store_events_suspended, token_metering_suspended
from swarm._run.answer import AnswerChoice, submission
from swarm._run.assembly import instantiate, run_plugin_manager
from swarm._run.bus import Bus, ChannelSettings, RateControl, bus_context
from swarm._run.final_step import FinalStep
from swarm._run.finish import RunOrigin, run_origin, run_outcome, write_records
from swarm._run.identity import bind_contexts
from swarm._run.member_task import MemberRunner
from swarm._run.members import Roster, RunMember
from swarm._run.metering import register_model_hooks, usage_context
from swarm._run.preamble import in_channel_order, preamble
from swarm._run.sandboxes import MemberSandboxes
from swarm._run.spawn_tools import kernel_tool_kind, kernel_tools
from swarm._run.spawning import Spawner, SpawnPolicy, spawner_context
from swarm._run.status import ended_by, every_member_errored, log_others, refusal_of
from swarm._run.waits import Waits, waits_context
from swarm._run.watchers import Watchers, cancel_after
from swarm._run.wiring import Wiring, wiring_context
from swarm._spec.roster import MemberSpec, expand_roster
from swarm._spec.topology import SwarmSpec
from swarm._spec.verifier import resolve_verifier
from swarm.errors import PluginError, SwarmError
from swarm.records import (
    INFO_SOURCE,
    TOPOLOGY_REASONS,
    Decision,
    MemberEnded,
    MemberView,
    Quiescent,
    SwarmView,
)

__all__ = ["SwarmRun"]

logger = logging.getLogger("swarm")


class SwarmRun:
    """The state of one swarm on one sample.  Built and run by the ``swarm`` agent."""

    def __init__(
        self, spec: SwarmSpec, catalog: PluginCatalog, input_messages: Sequence[ChatMessage]
    ) -> None:
        self.spec = spec
        self.input_messages = list(input_messages)
        self.roster = Roster(expand_roster(spec.members))
        self.channel_names = tuple(c.name for c in spec.channels)
        channels = [(ch.name, instantiate(catalog, "channel", ch)) for ch in spec.channels]
        self.controller = instantiate(catalog, "controller", spec.controller)
        settings = ChannelSettings.of(channels)
        rate = RateControl(settings.rates, self.now)
        policy = SpawnPolicy(spec.spawning)
        kernel = [("swarm:rate", rate), *([("swarm:spawning", policy)] if spec.spawns else [])]
        ctrl = (spec.controller.name, self.controller)
        pm = run_plugin_manager(catalog, controller=ctrl, channels=channels, kernel=kernel)
        self.hooks = RunHooks(pm, on_fault=self.fail, bound=sample_time_left)
        self.spawner = Spawner(self, self.hooks, spec.templates) if spec.spawns else None
        policy.spawner = self.spawner
        self.bus = Bus(self, self.hooks, channels, rate)
        longest = settings.max_wait  # None: no channel can wake members, so no waits
        self.waits = None if longest is None else Waits(self, self.bus, self.hooks, longest)
        kind = functools.partial(kernel_tool_kind, self.roster, self.spawner)
        tools = functools.partial(kernel_tools, self.waits)
        self.wiring = Wiring(self, self.hooks, self.bus, self.channel_names, kind, tools)
        self.accounts = Accounts(spec.budget)
        for m in self.roster:
            self.accounts.add_member(m.name, m.entry.spec.limits)
        idle = getattr(self.controller, "idle_seconds", None)
        self.idle_seconds: float | None = None if idle is None else float(idle)
        self.sandboxes = MemberSandboxes(spec.sandboxes, self.now, self.bus.calls_sent)
        self.runner = MemberRunner(
            self,
            self.input_messages,
            resolve_verifier(getattr(self.controller, "verifier", None)),
            fail_on_error=spec.on_member_error == "fail",
            sandboxes=self.sandboxes,
            watcher=self.waits,
            budget=spec.budget,
        )
        # what failed the run from inside (a fault, an error under "fail"): the first one wins
        self.failure: SwarmError | None = None
        self.grace = spec.budget.grace
        self.stopping = False
        self.stop_reason: str | None = None
        self.interrupted = False
        self.ended_by: str | None = None
        self._last_activity = 0.0
        self.watchers = Watchers(self)
        self._t0 = 0.0
        self._tg: anyio.abc.TaskGroup | None = None
        self._root = contextvars.Context()  # the run's own context, taken when it starts
        self._all_ended: anyio.Event | None = None
        self.answers = AnswerChoice(self.roster, self.hooks)
        self.final = FinalStep(self.answers, self.accounts, self.controller, input_messages)

    # -- the ports: what the services see -------------------------------------------------------

    def now(self) -> float:
        """Seconds since the swarm started."""
        return anyio.current_time() - self._t0

    def view(self) -> SwarmView:
        """A frozen snapshot of the run now."""
        return SwarmView(
            members=self.roster.views(),
            positions=self.roster.positions,
            counts=self.roster.counts(),
            time=self.now(),
            stopping=self.stopping,
            stop_reason=self.stop_reason,
            channels=self.channel_names,
            controller=self.spec.controller.name,
        )

    def member_view(self, name: str) -> MemberView:
        """The view of member ``name`` now."""
        return self.roster[name].view

    def own_loop(self, member: str) -> str | None:
        """The member's own loop, once bound."""
        return self.wiring.own_loop(member)

    def running(self) -> int:
        """How many members are running now."""
        return self.roster.running

    def activity(self) -> None:
        """Something happened (a record, a model call, a member start or end)."""
        self._last_activity = self.now()

    def idle_since(self) -> float:
        """When something last happened."""
        return self._last_activity

    def record_usage(self, member: str | None, usage: ModelUsage) -> None:
        """Meter a completed call made in this run; raise the limit error it must end with."""
        self.activity()
        m = self.roster.get(member)
        error = self.accounts.charge(
            member,
            usage,
            metered=None if m is None or m.tap is None else m.tap.usage,
            suspended=token_metering_suspended(),
        )
        if error is None:
            return
        if error.status == "swarm_cap" and not self.stopping:
            self.stop("swarm_cap")
        # raised into the call, so the output's tool calls do not run
        raise error

    def refused(self, member: str | None) -> SwarmLimitError | None:
        """The error ``member``'s new calls are refused with, or ``None`` (``refusal_of``)."""
        stop = (self.stop_reason or "stopping") if self.stopping else None
        return refusal_of(self.accounts, stop, self.roster.get(member))

    def sync_usage(self, member: str, usage: ModelUsage) -> None:
        """Bring a member's meter up to Inspect's record of what it spent."""
        self.accounts.sync(member, usage)

    def preamble(self, member: RunMember) -> str:
        """The text appended to a member's input."""
        found = self.hooks.member_instructions(self.view(), member.view)
        instructions = in_channel_order(found, self.channel_names)
        caps = self.accounts.caps
        return preamble(member.info, len(self.roster), self.spec.budget, caps, instructions)

    def join(self, spec: MemberSpec, wanted: str, *, parent: str | None) -> RunMember:
        """A member joins the running swarm (pending until started): named ``wanted``, or its
        first free variant (``wanted~2``...), one level deeper than its parent, with its own
        account, spending from its parent's share when the budget is split."""
        above = self.roster.get(parent)
        depth = 0 if above is None else above.info.depth + 1
        m = self.roster.add(spec, self.roster.free_name(wanted), parent=parent, depth=depth)
        self.accounts.add_member(m.name, spec.limits, share_of=parent)
        return m

    def member(self, name: str) -> RunMember:
        """The member called ``name``."""
        return self.roster[name]

    def start_child(self, member: RunMember) -> None:
        """Start a member that joined the running swarm (spawned)."""
        if not self.stopping and self._tg is not None:
            self._start(member)

    def tear_down(self, member: RunMember, *, now: bool) -> None:
        """Refuse the member's new calls now; cancel it ``now`` or after the grace if it runs."""
        member.torn_down = True
        if self._tg is not None and member.state == "running":
            grace = 0.0 if now else effective_grace(self.spec.budget, sample_limits())
            self._tg.start_soon(cancel_after, [member], grace, name=f"tear down {member.name}")

    def fail(self, error: SwarmError) -> None:
        """End the run as failed: the first ``error`` is the sample's once records are written."""
        if self.failure is None:
            self.failure = error
        elif error is not self.failure:
            logger.error("swarm: a further failure while the run was failing: %s", error)
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    # -- the run --------------------------------------------------------------------------------

    async def run(self, state: AgentState) -> AgentState:
        """Run the swarm to its end and return its agent state."""
        register_model_hooks()
        self._t0 = anyio.current_time()
        started_at = datetime.now(UTC)
        origin = run_origin()
        limits = sample_limits()
        contexts = bind_contexts(
            (usage_context, self),
            (bus_context, self.bus),
            (waits_context, self.waits),
            (wiring_context, self.wiring),
            (spawner_context, self.spawner),
        )
        try:
            self.accounts.begin(limits, [m.name for m in self.roster])
            self.sandboxes.begin(self.roster, self.spec.templates)  # the names exist
            specs = [m.entry.spec for m in self.roster]
            check_prices(specs, all_members=self.accounts.caps.cost is not None)
            async with anyio.create_task_group() as tg:
                self._tg = tg
                with store_events_suspended():  # the members' spans: no store copies
                    self._root = contextvars.copy_context()
                self.watchers.start(
                    tg,
                    time_cap=self.accounts.caps.time,
                    idle_seconds=self.idle_seconds,
                    waits=self.waits,
                )
                view = self.view()
                self.hooks.run_started(view)
                self._apply(self.hooks.start(view), "swarm_start")
                if self.roster.running == 0 and not self.stopping:
                    self.stop("all_done")
            if self.failure is not None:  # the run cancelled itself for it
                raise self.failure
            await self.final.run(self.view(), self.now, self.grace)
        except BaseException as ex:
            self.interrupted = True
            if self.failure is None:
                self.ended_by = ended_by(ex, limits)
                raise
            log_others(ex, self.failure)
            self.failure.__suppress_context__ = True
            raise self.failure  # noqa: B904  (its own cause is kept; the group is logged)
        finally:
            self._tg = None
            self._finish(state, started_at, origin)  # synchronous: nothing interrupts it
            contexts.reset()
        if self.failure is not None:  # a plugin's fault while the records were written
            raise self.failure
        failed = every_member_errored(self.roster)
        if failed is not None:
            raise failed
        return state

    def _apply(self, decided: tuple[str, Decision] | None, hook: str) -> None:
        if decided is None:
            return
        plugin, decision = decided
        for name in decision.start:
            m = self.roster.get(name)
            if m is None or m.state != "pending":
                why = "is not in the roster" if m is None else f"is {m.state}, not pending"
                raise self.hooks.fault(
                    PluginError(plugin, hook, f"asked to start member {name!r}, which {why}")
                )
            if not self.stopping:
                self._start(m)
        if decision.answer is not None:
            m = self.roster.get(decision.answer)
            if m is None or m.status != "submitted":
                why = f"chose member {decision.answer!r} as the answer, but it has not submitted"
                raise self.hooks.fault(PluginError(plugin, hook, why))
            self.answers.choose(m.name, decision.reason)
        if decision.stop is not None:
            reason = decision.stop
            self.stop(reason if reason in TOPOLOGY_REASONS else f"controller:{reason}")

    def _start(self, m: RunMember) -> None:
        assert self._tg is not None
        self.roster.mark_running(m, self.now())
        m.delivery = self.hooks.delivery_mode(self.view(), m.view)
        self.activity()
        self.hooks.member_started(self.view(), m.view)
        # every member starts from the run's own context, also one spawned from another
        # member's tool call: it must not inherit that member's limits, usage tap or span
        tg = self._tg
        self._root.copy().run(lambda: tg.start_soon(self.runner.run, m, name=f"member {m.name}"))

    def member_ended(self, m: RunMember, status: str, *, decide: bool) -> None:
        """``m`` ended with ``status``: ask the decision hooks (if ``decide``), tell observers."""
        self.activity()
        self.roster.mark_ended(m, status, self.now())
        assert m.ended is not None
        event = MemberEnded(
            member=m.name, status=status, submitted=status == "submitted", time=m.ended
        )
        if decide and not self.stopping and self._tg is not None and self.failure is None:
            if status == "submitted":
                sub = submission(m)
                self._apply(self.hooks.on_submission(self.view(), sub), "swarm_on_submission")
            if not self.stopping:
                self._apply(self.hooks.on_member_end(self.view(), event), "swarm_on_member_end")
        if self.spawner is not None:  # its parent's receipt, its own children torn down
            self.spawner.member_ended(m, status)
        self.hooks.member_ended(self.view(), event)
        if self.waits is not None:
            self.waits.member_ended(m.name, status)
        if self.roster.running == 0:
            if self._all_ended is not None:
                self._all_ended.set()
            if not self.roster.any_pending():
                self.watchers.cancel()

    def quiescent(self, reason: Literal["all_waiting", "idle"], idle: float) -> None:
        """Nothing can change: ask the decision hooks (they may stop with ``quiescence``)."""
        if self.stopping or self._tg is None:
            return
        event = Quiescent(reason=reason, time=self.now(), idle=idle)
        self._apply(self.hooks.on_quiescence(self.view(), event), "swarm_on_quiescence")
        if reason == "idle":
            self.activity()  # the idle time counts again from this decision

    # -- stopping -------------------------------------------------------------------------------

    def stop(self, reason: str) -> None:
        """Refuse new calls and writes, release the waits, cancel members left after the grace."""
        if self.stopping:
            return
        self.stopping = True
        self.stop_reason = reason
        # half of what the sample has left now, so the stop ends before the sample's time limit
        self.grace = effective_grace(self.spec.budget, sample_limits())
        now, grace = self.now(), self.grace
        transcript().info(
            {"version": 1, "type": "stop", "reason": reason, "time": now, "grace": grace},
            source=INFO_SOURCE,
        )
        self.bus.close()
        if self.waits is not None:
            self.waits.stopping()
        if self.spawner is not None:
            self.spawner.stopping()
        self.watchers.cancel()
        self._all_ended = anyio.Event()
        if self.roster.running == 0:
            self._all_ended.set()
        if self._tg is not None:
            members = list(self.roster)  # no member joins once the swarm stops
            self._tg.start_soon(cancel_after, members, self.grace, self._all_ended, name="stop")

    # -- the answer and the records -------------------------------------------------------------

    def _finish(self, state: AgentState, started_at: datetime, origin: RunOrigin) -> None:
        try:  # first, so nothing after it can cost the log its evidence
            self.bus.evidence.write()
        except Exception:  # nor can the evidence cost the log its records
            logger.exception("swarm: could not write the run's evidence")
        self.answers.give(state, self.view(), self.input_messages, interrupted=self.interrupted)
        outcome = run_outcome(
            self.roster,
            self.wiring,
            self.bus,
            self.waits,
            self.accounts,
            answer=self.answers.answer,
            answer_text=self.answers.text(),
            final_cancelled=self.final.cancelled,
            interrupted=self.interrupted,
            stop_reason=self.stop_reason,
            ended_by=self.ended_by,
            wall_clock=self.now(),
            started_at=started_at,
            origin=origin,
            view=self.view(),
            spawns=None if self.spawner is None else tuple(self.spawner.entries),
            reads=self.sandboxes.finish(),
        )
        write_records(outcome, self.hooks)
