"""A member's background work (Inspect's ``background()``): metered to the member, counted,
drained with the grace when its agent returns, cancelled at a stop; its waits and idle time.

Each agent here coordinates with the others through test-local events, never through the wall
clock, so what each run does is the same however loaded the machine is.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent, SpanEndEvent
from inspect_ai.log import EvalSample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.util import background, span

from swarm import Budget, controller, member, swarm, swarm_wait
from swarm._run.background import BackgroundOwner
from swarm._run.engine import SwarmRun
from swarm._run.waits import waits_context
from swarm.testing import Step
from swarm.timeline import timeline
from tests.helpers import Clock, by_name, ledger, metrics, run_scripted

pytestmark = pytest.mark.timeout(60)


class Cue:
    """Events one test's agents share (made fresh in each run's event loop)."""

    events: ClassVar[dict[str, anyio.Event]] = {}
    got: ClassVar[str] = ""
    own: ClassVar[str] = ""
    idler: ClassVar[str] = ""

    @classmethod
    def get(cls, name: str) -> anyio.Event:
        if name not in cls.events:
            cls.events[name] = anyio.Event()
        return cls.events[name]


@pytest.fixture(autouse=True)
def _fresh_cues() -> Iterator[None]:
    Cue.events = {}
    yield
    Cue.events = {}


def usage(i: int, o: int) -> Step:
    """A scripted reply with a fixed usage."""
    return Step(reply="ok", usage=(i, o))


async def generate(prompt: str) -> None:
    """One model call of a background task (its conversation has no preamble: the script
    keyed "<member>/sub" answers it)."""
    await get_model().generate(prompt)


async def finishes() -> None:
    await generate("first task")
    Cue.get("first done").set()


async def runs_on(then: str = "never") -> None:
    await generate("second task")
    Cue.get("second called").set()
    await Cue.get(then).wait()  # until cancelled, unless the test sets ``then``
    await generate("second task, again")


@agent
def starter(then: str = "never", returns: bool = False) -> Agent:
    """Starts two background tasks that make model calls, makes its own call, then waits
    forever (cancelled at the stop) or, with ``returns``, returns (its work drains)."""

    async def execute(state: AgentState) -> AgentState:
        background(finishes)
        background(runs_on, then)
        state.output = await get_model().generate(state.messages)
        await Cue.get("first done").wait()
        await Cue.get("second called").wait()
        Cue.get("ready").set()
        if not returns:
            await Cue.get("never").wait()
        return state

    return execute


@agent
def closer() -> Agent:
    """Submits once the starter's calls are made (its submission stops the swarm)."""

    async def execute(state: AgentState) -> AgentState:
        await Cue.get("ready").wait()
        state.output = ModelOutput.from_content("swarm/scripted", "42")
        return state

    return execute


SCRIPTS: dict[str, Any] = {
    "starter": [usage(300, 30)],
    "starter/sub": [usage(100, 10)],
}


def member_model_tokens(sample: EvalSample, name: str) -> int:
    """The log's usage of every model call under member ``name``'s agent span (its background
    tasks' spans included)."""
    parents = {e.id: e.parent_id for e in sample.events if isinstance(e, SpanBeginEvent)}
    names = {e.id: e.name for e in sample.events if isinstance(e, SpanBeginEvent)}

    def under(span: str | None) -> bool:
        while span is not None:
            if names.get(span) == name:
                return True
            span = parents.get(span)
        return False

    return sum(
        e.output.usage.total_tokens
        for e in sample.events
        if isinstance(e, ModelEvent) and e.output.usage is not None and under(e.span_id)
    )


def span_of(sample: EvalSample, name: str = "starter") -> str:
    """The id of member ``name``'s own agent span."""
    return next(
        e.id
        for e in sample.events
        if isinstance(e, SpanBeginEvent) and e.name == name and e.type == "agent"
    )


def test_background_calls_are_the_members_and_a_stop_cancels_the_running_one(
    tmp_path: Path,
) -> None:
    solver = swarm(
        members=[member(starter), member(closer)],
        controller=controller("leaderless"),
        budget=Budget(grace=0.2),
    )
    sample = run_scripted(solver, SCRIPTS, tmp_path)
    rows = by_name(ledger(sample)["members"])
    s = rows["starter"]
    # its own call (330) and one call of each background task (110 each)
    assert s["meter"]["usage"]["total_tokens"] == 330 + 110 + 110
    assert s["meter"]["usage"]["input_tokens"] == 300 + 100 + 100
    assert s["calls"]["calls"] == 3
    assert member_model_tokens(sample, "starter") == 550
    assert ledger(sample)["swarm"]["usage"]["total_tokens"] == 550
    assert (s["status"], s["cancelled"]) == ("cancelled", True)
    assert (s["background_started"], s["background_cancelled"]) == (2, 1)
    c = rows["closer"]
    assert (c["status"], c["cancelled"], c["background_started"]) == ("submitted", False, 0)
    assert ledger(sample)["stop_reason"] == "submitted"


def test_work_that_finishes_in_the_drain_is_metered_and_nothing_is_cancelled(
    tmp_path: Path,
) -> None:
    # the starter returns while its second task waits; the closer's submission (not a stop:
    # every member finishes) lets that task make its last call in the drain
    @agent
    def releaser() -> Agent:
        async def execute(state: AgentState) -> AgentState:
            await Cue.get("ready").wait()
            Cue.get("go").set()
            return state

        return execute

    solver = swarm(
        members=[member(starter, {"then": "go", "returns": True}), member(releaser)],
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(grace=30),
    )
    sample = run_scripted(solver, SCRIPTS, tmp_path)
    s = by_name(ledger(sample)["members"])["starter"]
    assert s["meter"]["usage"]["total_tokens"] == 330 + 110 + 110 + 110
    assert member_model_tokens(sample, "starter") == 660
    assert (s["status"], s["cancelled"]) == ("submitted", False)
    assert (s["background_started"], s["background_cancelled"]) == (2, 0)
    # the timeline draws the call made in the drain, after the agent's span closed, whole on
    # the starter's lane (not cut at the span's end)
    lane = next(x for x in timeline(sample).run.lanes if x.name == "starter")
    assert len(lane.model_calls) == 4
    span_end = next(
        e.timestamp
        for e in sample.events
        if isinstance(e, SpanEndEvent) and e.id == span_of(sample)
    )
    drained = [e for e in sample.events if isinstance(e, ModelEvent) and e.timestamp > span_end]
    assert len(drained) == 1 and drained[0].completed is not None
    last = max(lane.model_calls, key=lambda c: c.start)
    took = (drained[0].completed - drained[0].timestamp).total_seconds()
    assert last.end_recorded and last.end - last.start == pytest.approx(took, abs=1e-6)


def test_work_left_at_the_end_of_the_drain_is_cancelled_and_the_status_kept(
    tmp_path: Path,
) -> None:
    solver = swarm(
        members=[member(starter, {"returns": True})],
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(grace=0.1),
    )
    sample = run_scripted(solver, SCRIPTS, tmp_path)
    s = by_name(ledger(sample)["members"])["starter"]
    assert (s["status"], s["cancelled"]) == ("submitted", True)
    assert (s["background_started"], s["background_cancelled"]) == (2, 1)
    assert s["meter"]["usage"]["total_tokens"] == 550


# -- waits and the idle clock --------------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    Clock.time = 0.0
    monkeypatch.setattr(SwarmRun, "now", lambda self: Clock.time)
    yield


async def busy_until_5() -> None:
    waits = waits_context.get()
    assert waits is not None
    # it runs (so the member is not idle) until the member waits: no event says that
    while not waits.waiting("waiter"):  # noqa: ASYNC110
        await anyio.sleep(0.01)
    Clock.time = 2.0
    await generate("work")
    Clock.time = 5.0
    Cue.get("work done").set()


@agent
def waiter() -> Agent:
    """Waits once, from 0 to 9, while its background work runs from 0 to 5."""

    async def execute(state: AgentState) -> AgentState:
        background(busy_until_5)
        waited = await swarm_wait()(timeout=600)
        assert waited == "waker ended (submitted).", waited
        return state

    return execute


@agent
def waker() -> Agent:
    """Ends at 9, after the waiter's work (its end is news to the waiter's wait)."""

    async def execute(state: AgentState) -> AgentState:
        await Cue.get("work done").wait()
        Clock.time = 9.0
        return state

    return execute


def test_idle_time_stops_while_background_work_runs(tmp_path: Path, clock: None) -> None:
    solver = swarm(
        members=[member(waiter), member(waker)],
        channels=["shared_memory"],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = run_scripted(solver, {"waiter/sub": [usage(5, 5)]}, tmp_path)
    row = by_name(metrics(sample)["members"])["waiter"]
    assert (row["waits"], row["waits_by_outcome"]) == (1, {"news": 1})
    assert row["wait_time"] == 9.0
    assert row["idle_time"] == 9.0 - 5.0  # idle only once none of its work runs
    s = by_name(ledger(sample)["members"])["waiter"]
    assert (s["background_started"], s["background_cancelled"]) == (1, 0)
    assert s["meter"]["usage"]["total_tokens"] == 10


# -- the drain's waits, everyone waiting, errors ------------------------------------------------


async def waits_in_the_background() -> None:
    async with span("helper", type="agent"):
        Cue.get("helper waits").set()
        Cue.got = await swarm_wait()(timeout=600)


@agent
def returns_while_its_work_waits() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        background(waits_in_the_background)
        await Cue.get("helper waits").wait()
        return state

    return execute


def test_a_wait_of_background_work_ends_member_ending_when_the_agent_returns(
    tmp_path: Path,
) -> None:
    solver = swarm(
        members=[member(returns_while_its_work_waits)],
        channels=["shared_memory"],
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(grace=30),
    )
    sample = run_scripted(solver, {}, tmp_path)
    assert Cue.got == "returns_while_its_work_waits is ending: its own agent has finished."
    row = by_name(metrics(sample)["members"])["returns_while_its_work_waits"]
    assert (row["waits"], row["waits_by_outcome"]) == (1, {"member_ending": 1})
    assert row["idle_time"] == 0.0  # a background loop's wait is never the member's idleness
    s = by_name(ledger(sample)["members"])["returns_while_its_work_waits"]
    assert (s["status"], s["cancelled"], s["background_cancelled"]) == ("submitted", False, 0)


@agent
def waits_while_working() -> Agent:
    """Its own loop waits while its background work runs until the other member waits too."""

    async def execute(state: AgentState) -> AgentState:
        async def work() -> None:
            waits = waits_context.get()
            assert waits is not None
            while not (waits.waiting("waits_while_working") and waits.waiting("idler")):  # noqa: ASYNC110
                await anyio.sleep(0.01)
            Cue.get("both wait").set()
            await generate("work")
            if waits.waiting("waits_while_working") and waits.waiting("idler"):
                Cue.get("still waiting after the work's call").set()

        background(work)
        Cue.own = await swarm_wait()(timeout=600)
        return state

    return execute


@agent
def idler() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        Cue.idler = await swarm_wait()(timeout=600)
        return state

    return execute


def test_a_member_whose_background_work_runs_is_not_waiting(tmp_path: Path) -> None:
    # both own loops wait while one member's work runs: not "all waiting" until it ends
    solver = swarm(
        members=[member(waits_while_working), member(idler)],
        channels=["shared_memory"],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = run_scripted(solver, {"waits_while_working/sub": [usage(5, 5)]}, tmp_path)
    assert Cue.get("both wait").is_set()
    # both waits outlived the work's model call: the busy member was not counted as waiting
    assert Cue.get("still waiting after the work's call").is_set()
    nothing = "Nothing can change: every member is waiting, has ended or has not started."
    assert (Cue.own, Cue.idler) == (nothing, nothing)
    rows = by_name(metrics(sample)["members"])
    assert rows["waits_while_working"]["waits_by_outcome"] == {"all_waiting": 1}
    assert (
        by_name(ledger(sample)["members"])["waits_while_working"]["meter"]["usage"]["total_tokens"]
        == 10
    )


async def raises() -> None:
    raise ValueError("background work broke")


@agent
def breaks_in_the_background() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        background(raises)
        await Cue.get("never").wait()
        return state

    return execute


def test_a_background_error_is_the_members_error(tmp_path: Path) -> None:
    solver = swarm(
        members=[member(breaks_in_the_background), member(closer_now)],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = run_scripted(solver, {}, tmp_path)
    assert sample.error is None
    s = by_name(ledger(sample)["members"])["breaks_in_the_background"]
    assert (s["status"], s["cancelled"], s["background_started"]) == ("errored", False, 1)
    errors = [
        e.data
        for e in sample.events
        if isinstance(e, InfoEvent)
        and isinstance(e.data, dict)
        and e.data.get("type") == "member_error"
    ]
    assert errors == [
        {
            "type": "member_error",
            "member": "breaks_in_the_background",
            "error": "ValueError('background work broke')",
        }
    ]


@agent
def closer_now() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        state.output = ModelOutput.from_content("swarm/scripted", "42")
        return state

    return execute


async def calls_past_its_limit() -> None:
    await Cue.get("own call done").wait()  # after the agent's own call (10 tokens)
    for i in range(3):
        await generate(f"call {i}")
    Cue.get("never returns").set()


@agent
def limited_in_the_background() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        background(calls_past_its_limit)
        state.output = await get_model().generate(state.messages)
        Cue.get("own call done").set()
        return state

    return execute


def test_a_limit_reached_in_background_work_ends_only_that_task(tmp_path: Path) -> None:
    # the member's own token limit (40) is passed by its background task's second call: that
    # task ends, unfinished but not cancelled; the member keeps its agent's status
    solver = swarm(
        members=[member(limited_in_the_background, limits={"token": 40})],
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(grace=30),
    )
    scripts = {"limited_in_the_background": [usage(5, 5)], "*/sub": [usage(10, 10)]}
    sample = run_scripted(solver, scripts, tmp_path)
    assert not Cue.get("never returns").is_set()
    s = by_name(ledger(sample)["members"])["limited_in_the_background"]
    assert (s["background_started"], s["background_cancelled"], s["cancelled"]) == (1, 0, False)
    assert s["status"] == "submitted"  # the limit error did not become the member's error
    assert s["calls"]["calls"] == 1 + 2
    assert s["meter"]["usage"]["total_tokens"] == 10 + 20 + 20


def test_work_cannot_start_once_the_member_has_ended() -> None:
    owner = BackgroundOwner("m")
    with pytest.raises(RuntimeError) as raised:
        owner.start_soon(raises)
    assert str(raised.value) == "swarm member 'm' has ended: it cannot start background work"
