"""Caps, shares and member limits pinned at their boundaries, on real scripted evals.

The scripted model's ``Step(usage=(input, output))`` fixes each call's tokens, and the
``priced`` fixture prices them at $1/M input and $2/M output, so every figure below is worked
out by hand: a cap of 300 tokens reached by calls of 100 stops the swarm after exactly three
calls, and a cap of 301 after four, 99 tokens over.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from inspect_ai import Task, eval
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.dataset import Sample
from inspect_ai.event import LoggerEvent, ModelEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessageUser, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver
from inspect_ai.util import LimitExceededError

from swarm import Budget, ConfigError, MemberLimits, controller, member, swarm
from swarm.testing import Step, pause, run_eval, scripted_model, submit

from helpers import by_name, ledger, metrics, only_sample, result, statuses, worker

ALL_FINISH = controller("leaderless", stop_on_submission=False)


def tools(n: int, usage: tuple[int, int]) -> list[Step]:
    """``n`` tool calls with fixed usage each."""
    return [Step(tool="noop", args={"i": i}, usage=usage) for i in range(n)]


def replies(n: int, usage: tuple[int, int]) -> list[Step]:
    return [Step(reply=f"r{i}", usage=usage) for i in range(n)]


def tokens(record: dict[str, Any]) -> dict[str, int]:
    """Each member's metered tokens in a ledger."""
    return {m["name"]: m["meter"]["usage"]["total_tokens"] for m in record["members"]}


@agent
def catcher() -> Agent:
    """Calls the model until a call raises a limit error, then answers with its message (as an
    agent that catches Inspect's limit errors would show it)."""

    async def execute(state: AgentState) -> AgentState:
        model = get_model()
        for _ in range(20):  # every test here reaches its limit sooner
            try:
                state.output = await model.generate(state.messages)
            except LimitExceededError as ex:
                text = f"{ex.type}|{ex.value}|{ex.limit}|{ex.message}"
                state.output = ModelOutput.from_content("catcher", text)
                return state
            state.messages += [state.output.message, ChatMessageUser(content="go on")]
        state.output = ModelOutput.from_content("catcher", "no limit error")
        return state

    return execute


def caught(sample: EvalSample) -> str:
    """The limit error the catcher caught: ``type|value|limit|message``."""
    return sample.output.completion


# -- the swarm's token cap ---------------------------------------------------------------------


def test_reaching_the_token_cap_exactly_stops_the_swarm(log_dir: Path) -> None:
    model = scripted_model({"*": tools(10, (90, 10))})
    solver = swarm(members=member(worker), budget=Budget(tokens=300))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"worker": "swarm_cap"}
    assert record["stop_reason"] == "swarm_cap"
    assert record["swarm"]["usage"]["total_tokens"] == 300
    assert (
        record["swarm"]["usage"]["input_tokens"],
        record["swarm"]["usage"]["output_tokens"],
    ) == (
        270,
        30,
    )
    assert record["members"][0]["calls"]["calls"] == 3
    assert record["overshoot"] == {}  # at the cap is not past it
    assert metrics(sample)["tokens"] == 300


def test_one_token_below_the_cap_takes_one_more_call_and_overshoots(log_dir: Path) -> None:
    model = scripted_model({"*": tools(10, (90, 10))})
    solver = swarm(members=member(worker), budget=Budget(tokens=301))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"worker": "swarm_cap"}
    assert record["swarm"]["usage"]["total_tokens"] == 400
    assert record["members"][0]["calls"]["calls"] == 4
    assert record["overshoot"] == {"tokens": 99}
    assert record["caps"] == {"cost": None, "tokens": 301, "time": None}


def test_the_token_cap_message(log_dir: Path) -> None:
    model = scripted_model({"*": replies(10, (900, 100))})
    solver = swarm(members=member(catcher), budget=Budget(tokens=3000))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert caught(sample) == "token|3000|3000|Swarm token cap reached. value: 3,000; limit: 3,000"
    assert ledger(sample)["swarm"]["usage"]["total_tokens"] == 3000


# -- the swarm's cost cap ----------------------------------------------------------------------


def test_reaching_the_cost_cap_exactly_stops_the_swarm(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": tools(10, (250_000, 0))})  # $0.25 a call
    solver = swarm(members=member(worker), budget=Budget(cost=0.75))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"worker": "swarm_cap"}
    assert record["swarm"]["cost"] == 0.75
    assert record["members"][0]["calls"]["calls"] == 3
    assert record["overshoot"] == {}
    assert metrics(sample)["cost"] == 0.75


def test_passing_the_cost_cap_overshoots_by_the_difference(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": tools(10, (250_000, 0))})
    solver = swarm(members=member(worker), budget=Budget(cost=0.6))
    record = ledger(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert record["swarm"]["cost"] == 0.75
    assert record["members"][0]["calls"]["calls"] == 3
    assert record["overshoot"] == {"cost": pytest.approx(0.15)}
    assert record["caps"] == {"cost": 0.6, "tokens": None, "time": None}


def test_only_the_call_that_reaches_the_cost_cap_ends_swarm_cap(
    log_dir: Path, priced: None
) -> None:
    # four members' calls of $0.25 in flight together: the fifth call to complete takes the
    # swarm past $1.10 and ends its member swarm_cap; the three calls of its round that
    # complete after it (the swarm is stopping) end their members stopped
    steps = [Step(tool="noop", args={"i": i}, sleep=0.05, usage=(250_000, 0)) for i in range(20)]
    model = scripted_model({"*": steps})
    solver = swarm(members=member(worker, count=4), budget=Budget(cost=1.1, grace=5))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert sorted(statuses(sample).values()) == ["stopped", "stopped", "stopped", "swarm_cap"]
    record = ledger(sample)
    assert record["stop_reason"] == "swarm_cap"
    calls = record["calls"]["calls"]  # 8 when the four stay in step (every call is metered)
    assert calls >= 5 and record["swarm"]["cost"] == 0.25 * calls
    assert record["overshoot"] == {"cost": pytest.approx(0.25 * calls - 1.1)}


def test_the_cost_cap_message(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": replies(10, (250_000, 0))})
    solver = swarm(members=member(catcher), budget=Budget(cost=0.75))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert caught(sample) == "cost|0.75|0.75|Swarm cost cap reached. value: $0.7500; limit: $0.7500"


def test_the_token_cap_is_checked_before_the_cost_cap(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": replies(10, (250_000, 0))})
    solver = swarm(members=member(catcher), budget=Budget(cost=0.75, tokens=750_000))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert caught(sample) == (
        "token|750000|750000|Swarm token cap reached. value: 750,000; limit: 750,000"
    )


# -- shares ------------------------------------------------------------------------------------


def test_an_equal_token_share_ends_its_member_exactly_at_the_share(log_dir: Path) -> None:
    model = scripted_model(
        {"greedy": tools(10, (90, 10)), "quick": [Step(submit="42", usage=(40, 10))]}
    )
    solver = swarm(
        members=[member(worker, name="greedy"), member(worker, name="quick")],
        controller=ALL_FINISH,
        budget=Budget(tokens=600, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"greedy": "share", "quick": "submitted"}
    assert tokens(record) == {"greedy": 300, "quick": 50}
    assert record["stop_reason"] == "all_done"
    assert record["overshoot"] == {}


def test_weighted_shares_follow_the_roster_order(log_dir: Path) -> None:
    # weights 4:1 of 500 tokens: big's share is 400, small's 100
    model = scripted_model(
        {
            "big": [*tools(2, (90, 10)), Step(submit="42", usage=(90, 10))],
            "small": tools(10, (90, 10)),
        }
    )
    solver = swarm(
        members=[member(worker, name="big"), member(worker, name="small")],
        controller=ALL_FINISH,
        budget=Budget(tokens=500, split=[4, 1]),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"big": "submitted", "small": "share"}
    assert tokens(ledger(sample)) == {"big": 300, "small": 100}


def test_a_spawned_member_spends_from_its_parents_share(log_dir: Path) -> None:
    # weights 2:1 of 600 tokens: lead's share is 400, other's 200.  lead spawns helper (100
    # tokens) and waits (100); helper's calls (100 each, from 0.3 s on) take lead's share to
    # 400 at its second; lead's next call finds its share used up too, and is refused before it
    # is made (so lead spends 200, not 300).  The ledger shows the share each spends from.
    lead = [
        Step(tool="spawn_child", args={"name": "helper", "task": "Help."}, usage=(90, 10)),
        Step(tool="wait_for_children", args={}, usage=(90, 10)),
        Step(submit="42", usage=(90, 10)),
    ]
    model = scripted_model(
        {
            "lead": lead,
            "helper": [Step(reply="r", usage=(90, 10), sleep=0.3)] * 10,
            "other": [Step(submit="7", usage=(40, 10))],
        }
    )
    solver = swarm(
        members=[
            member("swarm/worker", name="lead", can_spawn=["worker"]),
            member("swarm/worker", name="other"),
        ],
        templates={"worker": member("swarm/worker")},
        controller=ALL_FINISH,
        budget=Budget(tokens=600, split=[2, 1]),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"lead": "share", "other": "submitted", "helper": "share"}
    record = ledger(sample)
    assert tokens(record) == {"lead": 200, "other": 50, "helper": 200}
    assert {m["name"]: m["calls"]["calls"] for m in record["members"]} == {
        "lead": 2,
        "other": 1,
        "helper": 2,
    }
    assert {m["name"]: m["share"] for m in record["members"]} == {
        "lead": {"owner": "lead", "cost": None, "tokens": 400},
        "other": {"owner": "other", "cost": None, "tokens": 200},
        "helper": {"owner": "lead", "cost": None, "tokens": 400},
    }
    assert record["overshoot"] == {}
    # the child is told whose share it spends from (not a weight of its own)
    found = preambles(sample)
    told = {name: found[name].split("\n\n")[1] for name in ("lead", "helper")}
    assert told["lead"] == (
        "The swarm's token budget is split between the members in fixed shares; yours is 67% "
        "of it, and you stop when it is used up."
    )
    assert told["helper"] == (
        "The swarm's token budget is split between the members; you spend from the same share "
        "as lead, who spawned you, and you stop when it is used up."
    )


def test_an_equal_cost_share_ends_its_member_exactly_at_the_share(
    log_dir: Path, priced: None
) -> None:
    model = scripted_model(
        {"greedy": tools(10, (250_000, 0)), "quick": [Step(submit="42", usage=(1000, 0))]}
    )
    solver = swarm(
        members=[member(worker, name="greedy"), member(worker, name="quick")],
        controller=ALL_FINISH,
        budget=Budget(cost=1.0, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"greedy": "share", "quick": "submitted"}
    costs = {m["name"]: m["meter"]["cost"] for m in record["members"]}
    assert costs == {"greedy": 0.5, "quick": 0.001}


def two_catchers(budget: Budget, limits: MemberLimits | None = None) -> Any:
    return swarm(
        members=[member(catcher, name="a", limits=limits), member(worker, name="b")],
        controller=ALL_FINISH,
        budget=budget,
    )


def test_the_share_messages_and_their_order(log_dir: Path, priced: None) -> None:
    model = scripted_model({"a": replies(10, (250_000, 0)), "b": [Step(submit="x", usage=(1, 0))]})
    # token share 500,000 and cost share $0.50 are both reached by a's second call
    budget = Budget(tokens=1_000_000, cost=1.0, split="equal")
    sample = only_sample(run_eval(two_catchers(budget), model=model, log_dir=log_dir))
    answer = by_name(result(sample)["members"])
    assert answer["a"]["status"] == "submitted"  # it caught the error and answered
    assert caught(sample) == (
        "token|500000|500000|Swarm member 'a' token share reached. value: 500,000; limit: 500,000"
    )
    budget = Budget(cost=1.0, split="equal")
    sample = only_sample(run_eval(two_catchers(budget), model=model, log_dir=log_dir))
    assert caught(sample) == (
        "cost|0.5|0.5|Swarm member 'a' cost share reached. value: $0.5000; limit: $0.5000"
    )


# -- member limits -----------------------------------------------------------------------------


def test_a_member_cost_limit_ends_it_exactly_at_the_limit(log_dir: Path, priced: None) -> None:
    model = scripted_model({"capped": tools(10, (250_000, 0)), "free": [submit("42")]})
    solver = swarm(
        members=[
            member(worker, name="capped", limits=MemberLimits(cost=0.5)),
            member(worker, name="free"),
        ],
        controller=ALL_FINISH,
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"capped": "member_limit:cost", "free": "submitted"}
    assert record["members"][0]["meter"]["cost"] == 0.5
    assert record["members"][0]["calls"]["calls"] == 2


def test_a_member_token_limit_one_above_takes_one_more_call(log_dir: Path) -> None:
    model = scripted_model({"*": tools(10, (90, 10))})
    solver = swarm(members=member(worker, limits=MemberLimits(token=201)))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"worker": "member_limit:token"}
    assert tokens(ledger(sample)) == {"worker": 300}
    assert ledger(sample)["stop_reason"] == "all_done"


def test_the_member_limit_messages_and_their_order(log_dir: Path, priced: None) -> None:
    model = scripted_model({"a": replies(10, (250_000, 0)), "b": [Step(submit="x", usage=(1, 0))]})
    both = MemberLimits(token=500_000, cost=0.5)
    sample = only_sample(run_eval(two_catchers(Budget(), both), model=model, log_dir=log_dir))
    assert caught(sample) == (
        "token|500000|500000|Swarm member 'a' token limit reached. value: 500,000; limit: 500,000"
    )
    cost = MemberLimits(cost=0.5)
    sample = only_sample(run_eval(two_catchers(Budget(), cost), model=model, log_dir=log_dir))
    assert caught(sample) == (
        "cost|0.5|0.5|Swarm member 'a' cost limit reached. value: $0.5000; limit: $0.5000"
    )


def test_the_swarm_cap_outranks_a_member_limit_and_so_does_a_share(log_dir: Path) -> None:
    model = scripted_model({"a": replies(10, (90, 10)), "b": [Step(submit="x", usage=(50, 50))]})
    # b's 100 tokens and a's second call reach the cap of 300 and a's member limit of 200
    sample = only_sample(
        run_eval(
            two_catchers(Budget(tokens=300), MemberLimits(token=200)), model=model, log_dir=log_dir
        )
    )
    assert caught(sample) == "token|300|300|Swarm token cap reached. value: 300; limit: 300"
    # a's share (300 of 600) is reached with its member limit of 300
    sample = only_sample(
        run_eval(
            two_catchers(Budget(tokens=600, split="equal"), MemberLimits(token=300)),
            model=model,
            log_dir=log_dir,
        )
    )
    assert caught(sample) == (
        "token|300|300|Swarm member 'a' token share reached. value: 300; limit: 300"
    )


@agent
def late() -> Agent:
    """Calls the model after 0.3 s, and keeps the message of the limit error it gets."""

    async def execute(state: AgentState) -> AgentState:
        import anyio
        from inspect_ai.util import store

        await anyio.sleep(0.3)
        try:
            state.output = await get_model().generate(state.messages)
        except LimitExceededError as ex:
            store().set("late", f"{ex.type}|{ex.value}|{ex.limit}|{ex.message}")
        return state

    return execute


def test_a_call_after_the_stop_is_refused_with_the_reason(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    solver = swarm(members=[member(worker, name="first"), member(late, name="late")])
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert result(sample)["stop_reason"] == "submitted"
    assert sample.store["late"] == "custom|0|0|Stopped by the swarm: submitted"
    assert ledger(sample)["members"][1]["calls"]["calls"] == 0


# -- caps derived from the sample's limits, after usage before the swarm -----------------------


@solver
def spend() -> Solver:
    """Spends tokens before the swarm runs (the "*" script's first step)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await get_model().generate("before the swarm")
        return state

    return solve


def spend_then(swarm_solver: Any, model: Any, log_dir: Path, **limits: Any) -> EvalSample:
    task = Task(
        dataset=[Sample(input="What is 6 * 7?", target="42")],
        solver=chain(spend(), swarm_solver),
    )
    [log] = eval(task, model=model, display="none", log_dir=str(log_dir), **limits)
    assert log.samples is not None and len(log.samples) == 1
    return log.samples[0]


def test_a_derived_token_cap_leaves_out_what_was_used_before_the_swarm(log_dir: Path) -> None:
    model = scripted_model(
        {"*": [Step(reply="x", usage=(700, 100))], "worker": tools(30, (90, 10))}
    )
    solver = swarm(members=member(worker), budget=Budget(reserve=0.1))
    sample = spend_then(solver, model, log_dir, token_limit=2001)
    assert sample.limit is None
    record = ledger(sample)
    # floor(2001 * 0.9 - 800) = floor(1000.9)
    assert record["caps"] == {"cost": None, "tokens": 1000, "time": None}
    assert record["sample_limits"]["token"] == 2001
    assert statuses(sample) == {"worker": "swarm_cap"}
    assert record["swarm"]["usage"]["total_tokens"] == 1000
    # the sample's delta counts from the swarm's start: the 800 tokens before are not in it
    assert record["sample_delta"]["total_tokens"] == 1000
    assert record["unattributed"]["total_tokens"] == 0


def test_a_derived_cost_cap_leaves_out_what_was_spent_before_the_swarm(
    log_dir: Path, priced: None
) -> None:
    model = scripted_model(
        {"*": [Step(reply="x", usage=(250_000, 0))], "worker": tools(30, (125_000, 0))}
    )
    solver = swarm(members=member(worker), budget=Budget(reserve=0.25))
    sample = spend_then(solver, model, log_dir, cost_limit=1.0)
    assert sample.limit is None
    record = ledger(sample)
    assert record["caps"] == {"cost": 0.5, "tokens": None, "time": None}  # 1.0 * 0.75 - 0.25
    assert record["sample_limits"]["cost"] == 1.0
    assert record["swarm"]["cost"] == 0.5
    assert record["members"][0]["calls"]["calls"] == 4


def test_a_derived_time_cap_leaves_out_the_time_before_the_swarm(log_dir: Path) -> None:
    @solver
    def dawdle() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            import anyio

            await anyio.sleep(0.3)
            return state

        return solve

    task = Task(
        dataset=[Sample(input="q", target="42")],
        solver=chain(dawdle(), swarm(members=member(worker), budget=Budget(reserve=0.5))),
    )
    [log] = eval(task, model=scripted_model(), display="none", log_dir=str(log_dir), time_limit=60)
    cap = ledger(only_sample(log))["caps"]["time"]
    assert 29.0 < cap <= 29.7  # 60 * 0.5, less the 0.3 s (and more) before the swarm


def test_a_derived_cap_that_leaves_nothing_is_an_error(log_dir: Path) -> None:
    scripts = {"*": [Step(reply="x", usage=(800, 100))], "worker": tools(3, (1, 0))}
    solver = swarm(members=member(worker), budget=Budget(reserve=0.1))
    sample = spend_then(solver, scripted_model(scripts), log_dir, token_limit=1000)
    assert sample.error is not None
    assert (
        "budget.tokens: the sample's tokens limit 1000 less the reserve (10%) leaves nothing "
        "after the 900 already used; raise the limit or lower the reserve"
    ) in sample.error.message
    # the failed run's ledger counts from the swarm's start too: the 900 tokens used before it
    # are not the swarm's, attributed or not (they once were, as unattributed)
    record = ledger(sample)
    assert record["sample_limits"]["token"] == 1000
    assert record["sample_delta"]["total_tokens"] == 0
    assert record["unattributed"]["total_tokens"] == 0
    assert record["calls"]["calls"] == 0
    # one token less before the swarm leaves a cap of exactly one token
    scripts["*"] = [Step(reply="x", usage=(800, 99))]
    sample = spend_then(solver, scripted_model(scripts), log_dir, token_limit=1000)
    assert sample.error is None
    record = ledger(sample)
    assert record["caps"]["tokens"] == 1
    assert statuses(sample) == {"worker": "swarm_cap"}
    assert record["swarm"]["usage"]["total_tokens"] == 1


def warnings_of(sample: EvalSample) -> list[str]:
    return [
        e.message.message.split("\n", 1)[-1]
        for e in sample.events
        if isinstance(e, LoggerEvent) and e.message.name == "swarm"
    ]


def test_an_explicit_cap_above_what_the_sample_has_left_is_warned_of(log_dir: Path) -> None:
    model = scripted_model({"*": [Step(reply="x", usage=(700, 100))], "worker": [submit("42")]})
    above = swarm(members=member(worker), budget=Budget(tokens=1201))
    sample = spend_then(above, model, log_dir, token_limit=2000)
    assert warnings_of(sample) == [
        "budget.tokens 1201 is above what the sample has left (1200 of 2000): the sample's "
        "limit will end the swarm first, without its final step"
    ]
    assert ledger(sample)["caps"]["tokens"] == 1201  # used as given
    at = swarm(members=member(worker), budget=Budget(tokens=1200))
    sample = spend_then(at, model, log_dir, token_limit=2000)
    assert warnings_of(sample) == []


def test_the_grace_is_clipped_by_the_sample_time_limit(log_dir: Path) -> None:
    # a grace of 100 s would outlast the sample's 2 s: clipped to half the time the sample has
    # left, the hung member is cancelled and the swarm ends cleanly before the sample's limit
    model = scripted_model({"*": [pause(30, submit("late"))]})
    solver = swarm(members=member(worker), budget=Budget(time=0.5, grace=100))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir, time_limit=2))
    record = ledger(sample)
    assert sample.limit is None
    assert record["interrupted"] is False and record["ended_by"] is None
    assert record["stop_reason"] == "swarm_time"
    assert statuses(sample) == {"worker": "cancelled"}
    assert 0.5 < record["overshoot"]["time"] < 1.5
    assert record["budget"]["grace"] == 100.0  # the record keeps the budget as given


def limits_with(remaining: float | None) -> Any:
    """Sample limits whose time limit has ``remaining`` seconds left (``None``: no limit)."""
    from types import SimpleNamespace

    return SimpleNamespace(time=SimpleNamespace(remaining=remaining))


@pytest.mark.parametrize(
    ("grace", "remaining", "expected"),
    [
        (10.0, None, 10.0),  # no time limit: the grace as given
        (10.0, 30.0, 10.0),  # half of what is left is more than the grace
        (10.0, 20.0, 10.0),  # exactly half
        (10.0, 6.0, 3.0),  # half of what is left
        (10.0, 1.5, 0.75),  # below a second too
        (10.0, 0.0, 0.0),
        (10.0, -2.0, 0.0),  # past the limit: no grace, never a negative one
        (0.0, 6.0, 0.0),
    ],
)
def test_the_grace_is_half_the_time_left_at_most(
    grace: float, remaining: float | None, expected: float
) -> None:
    from swarm._accounts.caps import effective_grace

    assert effective_grace(Budget(grace=grace), limits_with(remaining)) == expected


def test_the_time_overshoot_is_what_passed_the_time_cap() -> None:
    from swarm._accounts.accounts import Accounts
    from swarm._accounts.caps import SwarmCaps

    accounts = Accounts(Budget(time=10))
    accounts.caps = SwarmCaps(time=10.0)
    assert accounts.overshoot(9.5) == {}
    assert accounts.overshoot(10.0) == {}  # at the cap is not past it
    assert accounts.overshoot(10.25) == {"time": 0.25}


# -- split validation ---------------------------------------------------------------------------


def sample_error(solver: Any, log_dir: Path, **eval_args: Any) -> str:
    log = run_eval(solver, model=scripted_model(), log_dir=log_dir, **eval_args)
    assert log.samples and log.samples[0].error is not None
    return log.samples[0].error.message


def test_split_weights_must_match_the_roster() -> None:
    from swarm._accounts.caps import SwarmCaps, shares

    two = [member(worker, name="a"), member(worker, name="b")]
    with pytest.raises(ConfigError) as info:
        swarm(members=two, budget=Budget(tokens=100, split=[1, 2, 3]))
    assert str(info.value) == (
        "budget.split: 3 weight(s) for 2 member(s); give one weight per member, in roster order"
    )
    with pytest.raises(ConfigError) as info:
        swarm(members=two, budget=Budget(cost=1.0, split=[1]))
    assert str(info.value).startswith("budget.split: 1 weight(s) for 2 member(s);")
    # the shares themselves refuse it too (a roster built some other way)
    with pytest.raises(ConfigError) as info:
        shares(Budget(tokens=100, split=[1, 2, 3]), SwarmCaps(tokens=100), ["a", "b"])
    assert str(info.value) == (
        "budget.split: 3 weights for 2 members (a, b); give one weight per member"
    )


def test_split_needs_a_cap(log_dir: Path) -> None:
    message = sample_error(
        swarm(members=member(worker, count=2), budget=Budget(split="equal")), log_dir
    )
    assert (
        "budget.split: splitting needs a cost or token cap (give budget.cost or budget.tokens, "
        "or a sample limit), or use split='pool'"
    ) in message


def test_a_token_share_of_zero_is_refused_naming_the_member(log_dir: Path) -> None:
    # 2 tokens over three equal shares: the leftovers go to the first two in roster order
    solver = swarm(members=member(worker, count=3), budget=Budget(tokens=2, split="equal"))
    message = sample_error(solver, log_dir)
    assert (
        "budget.split: member 'worker-3' would get a token share of 0 (cap 2); raise the cap "
        "or use split='pool'"
    ) in message
    # a split derived from the sample's token limit: 3 * (1 - 0.05) = 2.85, rounded down to 2
    solver = swarm(members=member(worker, count=3), budget=Budget(split="equal"))
    assert "member 'worker-3' would get a token share of 0 (cap 2)" in sample_error(
        solver, log_dir, token_limit=3
    )


# -- what members are told of the budget --------------------------------------------------------


def preambles(sample: EvalSample) -> dict[str, str]:
    """Each member's preamble (the last input message of its first model call)."""
    found: dict[str, str] = {}
    for e in resolve_sample_attachments(sample).events:
        if isinstance(e, ModelEvent):
            text = e.input[-1].text
            name = text.split(",", 1)[0].removeprefix("You are ")
            found.setdefault(name, text)
    return found


@pytest.mark.parametrize(
    ("budget", "sentences"),
    [
        (Budget(tokens=10_000), ["The budget is shared by all members."] * 2),
        (
            Budget(tokens=10_000, split="equal"),
            [
                "The swarm's token budget is split equally between the members; you stop when "
                "your share is used up."
            ]
            * 2,
        ),
        (
            Budget(cost=1.0, tokens=10_000, split=[3, 1]),
            [
                f"The swarm's cost and token budget is split between the members in fixed "
                f"shares; yours is {share} of it, and you stop when it is used up."
                for share in ("75%", "25%")
            ],
        ),
        (Budget(time=100), [None, None]),
    ],
)
def test_members_are_told_how_the_budget_is_split(
    log_dir: Path, priced: None, budget: Budget, sentences: list[str | None]
) -> None:
    model = scripted_model({"*": [submit("42")]})
    solver = swarm(members=member(worker, count=2), controller=ALL_FINISH, budget=budget)
    found = preambles(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    for name, sentence in zip(("worker-1", "worker-2"), sentences, strict=True):
        paragraphs = found[name].split("\n\n")
        assert paragraphs[0] == (
            f"You are {name}, one of 2 agents in a swarm working on this task at the same time."
        )
        assert paragraphs[1:] == ([] if sentence is None else [sentence])


def test_a_lone_member_is_told_nothing_of_the_budget(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    solver = swarm(members=member(worker), budget=Budget(tokens=100, split="equal"))
    found = preambles(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert found == {"worker": "You are worker, the only agent in this swarm."}


# -- budget values -----------------------------------------------------------------------------


def test_budget_numbers_are_normalised_and_bounded() -> None:
    budget = Budget(cost=2, time=60, tokens=100.0, reserve=0, grace=0)  # type: ignore[arg-type]
    assert (budget.cost, budget.time, budget.tokens, budget.reserve, budget.grace) == (
        2.0,
        60.0,
        100,
        0.0,
        0.0,
    )
    assert all(isinstance(v, float) for v in (budget.cost, budget.time, budget.reserve))
    assert isinstance(budget.tokens, int)
    assert Budget(split=[1, 2.5]).split == (1, 2.5)
    assert Budget(reserve=0.999).reserve == 0.999


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cost": 0}, "budget.cost: expected a number of dollars > 0, got 0.0"),
        ({"time": -1}, "budget.time: expected a number of seconds > 0, got -1.0"),
        ({"tokens": 0}, "budget.tokens: expected a whole number > 0, got 0"),
        ({"tokens": 10.5}, "budget.tokens: expected a whole number > 0, got 10.5"),
        (
            {"cost": "1"},
            "budget.cost: expected a number of dollars > 0, got the text '1' (a number in "
            "quotes is text; write 1)",
        ),
        ({"tokens": True}, "budget.tokens: expected a whole number > 0, got True"),
        ({"reserve": 1}, "budget.reserve: expected a fraction in [0, 1), got 1.0"),
        ({"reserve": -0.1}, "budget.reserve: expected a fraction in [0, 1), got -0.1"),
        ({"reserve": "x"}, "budget.reserve: expected a fraction in [0, 1), got 'x'"),
        ({"grace": -1}, "budget.grace: expected a number of seconds >= 0, got -1.0"),
        ({"grace": False}, "budget.grace: expected a number of seconds >= 0, got False"),
        (
            {"split": "half"},
            "budget.split: expected 'pool', 'equal' or a list of weights, got 'half'",
        ),
        ({"split": []}, "budget.split: expected 'pool', 'equal' or a list of weights, got ()"),
        ({"split": [1, "2"]}, "budget.split[1]: expected a number, got '2'"),
        ({"split": [1, True]}, "budget.split[1]: expected a number, got True"),
        ({"split": [2, 0]}, "budget.split[1]: weights must be finite and > 0, got 0"),
        ({"split": [-1]}, "budget.split[0]: weights must be finite and > 0, got -1"),
        (
            {"split": [1e308, 1e308]},
            "budget.split: the weights add up to more than a float can hold",
        ),
    ],
)
def test_bad_budget_values_name_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Budget(**fields)
    assert str(info.value) == message


def test_a_budget_from_a_mapping(log_dir: Path) -> None:
    solver = swarm(members=member(worker), budget={"tokens": 300.0, "split": [1]})
    model = scripted_model({"*": tools(10, (90, 10))})
    record = ledger(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert record["budget"] == {
        "cost": None,
        "tokens": 300,
        "time": None,
        "reserve": 0.05,
        "split": [1],
        "grace": 120.0,
    }
    assert record["swarm"]["usage"]["total_tokens"] == 300
    with pytest.raises(ConfigError) as info:
        swarm(members=member(worker), budget={"tokenz": 1, "cots": 2})
    assert str(info.value) == (
        "budget: unknown key(s) 'cots' (did you mean 'cost'?), 'tokenz' (did you mean "
        "'tokens'?); expected some of cost, grace, reserve, split, time, tokens"
    )
    with pytest.raises(ConfigError) as info:
        swarm(members=member(worker), budget=5)  # type: ignore[arg-type]
    assert str(info.value) == "budget: expected Budget(...) or a mapping, got 5"


def test_no_budget_means_no_caps(log_dir: Path) -> None:
    model = scripted_model({"*": [*tools(5, (90, 10)), Step(submit="42", usage=(40, 10))]})
    sample = only_sample(run_eval(swarm(members=member(worker)), model=model, log_dir=log_dir))
    record = ledger(sample)
    assert record["caps"] == {"cost": None, "tokens": None, "time": None}
    assert record["overshoot"] == {}
    assert statuses(sample) == {"worker": "submitted"}
    assert record["swarm"]["usage"]["total_tokens"] == 550


# -- shares, against a model in exact arithmetic -------------------------------------------------


def model_token_shares(cap: int, weights: list[int]) -> list[int]:
    """Largest remainders in exact fractions: floors, then one more token each to the largest
    remainders, ties by roster order."""
    total = sum(weights)
    exact = [Fraction(cap * w, total) for w in weights]
    floors = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (floors[i] - exact[i], i))
    for i in order[: cap - sum(floors)]:
        floors[i] += 1
    return floors


@given(
    st.integers(1, 10**6),
    st.lists(st.integers(1, 50), min_size=1, max_size=8),
    st.none() | st.integers(1, 10**4).map(lambda n: n / 64),
)
def test_split_shares_match_the_model(cap: int, weights: list[int], cost: float | None) -> None:
    from swarm._accounts.caps import SwarmCaps as Caps
    from swarm._accounts.caps import shares

    names = [f"m{i}" for i in range(len(weights))]
    expected = model_token_shares(cap, weights)
    budget = Budget(tokens=cap, split=weights)
    if 0 in expected:
        with pytest.raises(ConfigError) as info:
            shares(budget, Caps(tokens=cap, cost=cost), names)
        first = names[expected.index(0)]
        assert str(info.value) == (
            f"budget.split: member {first!r} would get a token share of 0 (cap {cap}); raise the "
            "cap or use split='pool'"
        )
        return
    got = shares(budget, Caps(tokens=cap, cost=cost), names)
    assert list(got) == names
    assert [s.tokens for s in got.values()] == expected
    assert sum(s.tokens or 0 for s in got.values()) == cap
    if cost is None:
        assert all(s.cost is None for s in got.values())
    else:
        total = sum(weights)
        assert [s.cost for s in got.values()] == pytest.approx([cost * w / total for w in weights])
    equal = shares(Budget(tokens=cap, split="equal"), Caps(tokens=cap), names)
    if 0 not in (model := model_token_shares(cap, [1] * len(names))):
        assert [s.tokens for s in equal.values()] == model


def test_cost_only_shares_have_no_token_share() -> None:
    from swarm._accounts.caps import SwarmCaps as Caps
    from swarm._accounts.caps import shares

    got = shares(Budget(cost=1.0, split=[1, 3]), Caps(cost=1.0), ["a", "b"])
    assert [(s.cost, s.tokens) for s in got.values()] == [(0.25, None), (0.75, None)]
    assert shares(Budget(tokens=10), Caps(tokens=10), ["a", "b"]) == {}  # pooled


def test_derived_cost_and_time_caps_name_their_kind(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": [Step(reply="x", usage=(500_000, 0))], "worker": [submit("42")]})
    solver = swarm(members=member(worker), budget=Budget(reserve=0.5))
    sample = spend_then(solver, model, log_dir, cost_limit=1.0)
    assert sample.error is not None
    assert (
        "budget.cost: the sample's cost limit 1.0 less the reserve (50%) leaves nothing after "
        "the 0.5 already used; raise the limit or lower the reserve"
    ) in sample.error.message
    above = swarm(members=member(worker), budget=Budget(cost=0.9))
    sample = spend_then(above, model, log_dir, cost_limit=1.0)
    assert warnings_of(sample) == [
        "budget.cost 0.9 is above what the sample has left (0.5 of 1.0): the sample's limit "
        "will end the swarm first, without its final step"
    ]


def test_a_time_cap_above_the_sample_time_limit_is_warned_of(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    sample = only_sample(
        run_eval(
            swarm(members=member(worker), budget=Budget(time=100)),
            model=model,
            log_dir=log_dir,
            time_limit=60,
        )
    )
    [warning] = warnings_of(sample)
    assert re.fullmatch(
        r"budget\.time 100\.0 is above what the sample has left \(59\.\d+ of 60\): the sample's "
        r"limit will end the swarm first, without its final step",
        warning,
    ), warning


def test_a_derived_time_cap_that_leaves_nothing_is_an_error(log_dir: Path) -> None:
    @solver
    def dawdle() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            import anyio

            await anyio.sleep(0.3)
            return state

        return solve

    task = Task(
        dataset=[Sample(input="q", target="42")],
        solver=chain(dawdle(), swarm(members=member(worker), budget=Budget(reserve=0.9))),
    )
    [log] = eval(task, model=scripted_model(), display="none", log_dir=str(log_dir), time_limit=2)
    assert log.samples and log.samples[0].error is not None
    assert re.search(
        r"budget\.time: the sample's time limit 2 less the reserve \(90%\) leaves nothing after "
        r"the 0\.\d+ already used; raise the limit or lower the reserve",
        log.samples[0].error.message,
    ), log.samples[0].error.message
