"""Usage arithmetic: per-model deltas, signs, ``None`` fields, unpriced models and what no
meter holds, in both directions.

The arithmetic of meters and deltas is checked against an independent model (plain dicts of
the seven usage fields) with hypothesis; the same figures are then pinned on real runs with
two models, one priced and one not, and on two swarms that run side by side in one sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from inspect_ai import Task, eval
from inspect_ai.agent import Agent, AgentState, agent, react
from inspect_ai.dataset import Sample
from inspect_ai.event import InfoEvent
from inspect_ai.log import EvalSample
from inspect_ai.model import (
    Model,
    ModelCost,
    ModelInfo,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
    set_model_info,
)
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver
from inspect_ai.util import span

from swarm import Budget, MemberLimits, controller, member, swarm
from swarm.testing import ScriptedModelAPI, Step

from helpers import FixedModelAPI, by_name, ended_member, ledger, noop, statuses, worker

FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_cache_write",
    "input_tokens_cache_read",
    "reasoning_tokens",
    "total_cost",
)
REQUIRED = FIELDS[:3]

# -- the model: usage as a dict of the seven fields ---------------------------------------------


def as_dict(usage: ModelUsage) -> dict[str, Any]:
    return {f: getattr(usage, f) for f in FIELDS}


def model_add(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Inspect's sum: a missing optional field is ``None`` only when both are."""
    out = {}
    for f in FIELDS:
        x, y = a[f], b[f]
        out[f] = None if x is None and y is None else (x or 0) + (y or 0)
    return out


def model_minus(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for f in FIELDS:
        x, y = a[f], b[f]
        out[f] = None if x is None and y is None else (x or 0) - (y or 0)
        if f in REQUIRED and out[f] is None:
            out[f] = 0
    return out


ZERO = {f: (0 if f in REQUIRED else None) for f in FIELDS}

count = st.integers(0, 10**7)
optional = st.none() | count
dollars = st.none() | st.integers(0, 2**20).map(lambda n: n / 1024)  # exact in binary
usages = st.builds(
    ModelUsage,
    input_tokens=count,
    output_tokens=count,
    total_tokens=count,
    input_tokens_cache_write=optional,
    input_tokens_cache_read=optional,
    reasoning_tokens=optional,
    total_cost=dollars,
)


@given(usages, usages)
def test_usage_minus_is_field_by_field_and_keeps_none(a: ModelUsage, b: ModelUsage) -> None:
    from swarm._accounts.meter import usage_dict, usage_minus

    got = usage_dict(usage_minus(a, b))
    assert list(got) == list(FIELDS)
    assert got == model_minus(as_dict(a), as_dict(b))
    # and the sign: a - b is the negation of b - a, None where both are None
    back = usage_dict(usage_minus(b, a))
    assert all(
        (x is None and y is None) or x == -y
        for x, y in zip(got.values(), back.values(), strict=True)
    )


@given(st.lists(usages, max_size=6))
def test_usage_sum_is_inspects_sum(items: list[ModelUsage]) -> None:
    from swarm._accounts.meter import usage_dict, usage_sum

    expected = dict(ZERO)
    for u in items:
        expected = model_add(expected, as_dict(u))
    assert usage_dict(usage_sum(items)) == expected


names = st.sampled_from(["a/x", "b/y", "c/z"])


@given(st.dictionaries(names, usages), st.dictionaries(names, usages))
def test_per_model_delta_counts_only_what_came_after(
    before: dict[str, ModelUsage], after: dict[str, ModelUsage]
) -> None:
    from swarm._accounts.meter import per_model_delta, usage_dict

    got = {m: usage_dict(u) for m, u in per_model_delta(before, after).items()}
    expected = {
        m: as_dict(u) if m not in before else model_minus(as_dict(u), as_dict(before[m]))
        for m, u in after.items()
    }
    assert got == expected  # a model used only before is not in the delta


@given(st.lists(usages, max_size=8), st.lists(st.lists(usages, max_size=3), max_size=3))
def test_meters_add_priced_cost_and_count_unpriced_calls(
    calls: list[ModelUsage], others: list[list[ModelUsage]]
) -> None:
    from swarm._accounts.meter import UsageMeter

    meter = UsageMeter()
    for u in calls:
        meter.add(u)
    expected = dict(ZERO)
    for u in calls:
        expected = model_add(expected, as_dict(u))
    assert as_dict(meter.usage) == expected
    assert meter.tokens == expected["total_tokens"]
    assert meter.cost == sum(u.total_cost for u in calls if u.total_cost is not None)
    assert meter.unpriced == sum(1 for u in calls if u.total_cost is None)
    assert meter.as_dict() == {"usage": expected, "cost": meter.cost, "suspended_cost": 0.0}

    parts = []
    for group in others:
        part = UsageMeter()
        for u in group:
            part.add(u)
        part.suspended_cost = 0.5 * len(group)
        parts.append(part)
    meter.merge(parts)
    for part in parts:
        expected = model_add(expected, as_dict(part.usage))
    assert as_dict(meter.usage) == expected
    everything = calls + [u for g in others for u in g]
    priced = sum(u.total_cost for u in everything if u.total_cost is not None)
    assert meter.cost == priced + 0.5 * sum(len(g) for g in others)  # suspended cost counts
    assert meter.unpriced == sum(1 for u in everything if u.total_cost is None)
    assert meter.suspended_cost == 0.5 * sum(len(g) for g in others)


# -- a second model ------------------------------------------------------------------------------

PRICE = ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)


@modelapi(name="other")
def other_api() -> type[ScriptedModelAPI]:
    """A second provider of scripted models (``other/model``), with its own usage record."""

    class OtherAPI(ScriptedModelAPI):
        pass

    return OtherAPI


def other_model(scripts: dict[str, list[Step]]) -> Model:
    """A second scripted model, ``other/model`` (unpriced unless a test prices it)."""
    return get_model("other/model", scripts=scripts, memoize=False)


@solver
def spend(*models: Model) -> Solver:
    """One call of each model before the swarm."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for m in models:
            await m.generate("before the swarm")
        return state

    return solve


def run(solvers: list[Any], model: Model, log_dir: Path, **kwargs: Any) -> EvalSample:
    task = Task(dataset=[Sample(input="What is 6 * 7?", target="42")], solver=chain(*solvers))
    [log] = eval(task, model=model, display="none", log_dir=str(log_dir), **kwargs)
    assert log.status == "success", log.error
    assert log.samples is not None
    return log.samples[0]


def tools(n: int, usage: tuple[int, int]) -> list[Step]:
    return [Step(tool="noop", args={"i": i}, usage=usage) for i in range(n)]


def test_the_sample_delta_counts_each_model_from_the_swarm_start(
    log_dir: Path, priced: None
) -> None:
    main = get_model(
        "swarm/scripted",
        scripts={
            "*": [Step(reply="x", usage=(250_000, 0))],
            "a": [*tools(2, (250_000, 0)), Step(submit="42", usage=(0, 125_000))],
        },
        memoize=False,
    )
    other = other_model(
        {
            "*": [Step(reply="y", usage=(40, 10))],
            "b": [*tools(1, (30, 10)), Step(submit="7", usage=(5, 5))],
        }
    )
    solver = swarm(
        members=[member(worker, name="a"), member(on_model, {"model": other}, name="b")],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = run([spend(main, other), solver], main, log_dir)
    record = ledger(sample)
    assert statuses(sample) == {"a": "submitted", "b": "submitted"}
    # before the swarm: 250,000 + 50 tokens, $0.25; in it: a's 625,000 ($0.75), b's 50 (no price)
    assert record["sample_delta"] == {
        "input_tokens": 500_035,
        "output_tokens": 125_015,
        "total_tokens": 625_050,
        "input_tokens_cache_write": None,
        "input_tokens_cache_read": None,
        "reasoning_tokens": None,
        "total_cost": 0.75,
    }
    assert record["swarm"]["usage"] == record["sample_delta"]
    assert record["swarm"]["cost"] == 0.75
    assert record["unattributed"] == {
        "input_tokens": 0,
        "output_tokens": 0,
        "total_tokens": 0,
        "input_tokens_cache_write": None,
        "input_tokens_cache_read": None,
        "reasoning_tokens": None,
        "total_cost": 0.0,
    }
    members = by_name(record["members"])
    assert members["a"]["meter"]["usage"]["total_cost"] == 0.75
    assert members["b"]["meter"] == {
        "usage": {
            "input_tokens": 35,
            "output_tokens": 15,
            "total_tokens": 50,
            "input_tokens_cache_write": None,
            "input_tokens_cache_read": None,
            "reasoning_tokens": None,
            "total_cost": None,
        },
        "cost": 0.0,
        "suspended_cost": 0.0,
    }
    assert record["unpriced_models"] == ["other/model"]
    assert record["unpriced_calls_recorded"] == 2
    assert members["b"]["calls"]["unpriced"] == 2
    assert record["calls"] == {
        "calls": 5,
        "cache_replays": 0,
        "errored": 0,
        "no_usage": 0,
        "unpriced": 2,
    }
    assert record["total_complete"] is False
    assert record["attribution_complete"] is False


def test_a_model_used_only_before_the_swarm_is_not_unpriced(log_dir: Path, priced: None) -> None:
    main = get_model(
        "swarm/scripted", scripts={"a": [Step(submit="42", usage=(1000, 0))]}, memoize=False
    )
    other = other_model({"*": [Step(reply="y", usage=(40, 10))]})
    sample = run([spend(other), swarm(members=member(worker, name="a"))], main, log_dir)
    record = ledger(sample)
    assert record["sample_delta"]["total_tokens"] == 1000  # other's delta is zero
    assert record["unpriced_models"] == []
    assert record["total_complete"] is True
    assert record["attribution_complete"] is True


# -- what no meter holds: two swarms side by side -------------------------------------------------


@modelapi(name="values-cached")
class CachedOnly(FixedModelAPI):
    """A model whose every call is read from the provider's prompt cache: 250,000 cached input
    tokens, no other tokens (so its calls cost money and count no tokens)."""

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        out = ModelOutput.for_tool_call(self.model_name, "submit", {"answer": "42"}, content="")
        out.usage = ModelUsage(input_tokens_cache_read=250_000)
        return out

    async def count_text_tokens(self, text: str) -> int:
        return 1


@solver
def side_by_side(slow: Agent, quick: Agent) -> Solver:
    """Runs ``slow`` and, starting 0.05 s later, ``quick`` at the same time on one sample, each
    in a span of its own."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async def run_in_span(name: str, agent: Agent, delay: float) -> None:
            await anyio.sleep(delay)
            async with span(name, type="agent"):
                await agent(AgentState(messages=list(state.messages)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_in_span, "slow swarm", slow, 0.0)
            tg.start_soon(run_in_span, "quick swarm", quick, 0.05)
        return state

    return solve


def ledgers_of(sample: EvalSample) -> dict[str, dict[str, Any]]:
    """The ledgers written by the swarms of a sample, by their first member's name."""
    found = {}
    for e in sample.events:
        if isinstance(e, InfoEvent) and isinstance(e.data, dict) and e.data.get("type") == "ledger":
            found[e.data["members"][0]["name"]] = e.data
    return found


def slow_swarm() -> Agent:
    return swarm(members=member(worker, name="slow"))


@agent
def on_model(model: Model | str) -> Agent:
    """A react member on another model than the eval's."""
    return react(tools=[noop()], model=model)


def test_usage_of_another_swarm_is_unattributed_and_unpriced(log_dir: Path, priced: None) -> None:
    main = get_model(
        "swarm/scripted",
        scripts={"slow": [Step(submit="42", usage=(250_000, 0), sleep=0.5)]},
        memoize=False,
    )
    other = other_model({"quick": [*tools(2, (30, 10)), Step(submit="7", usage=(5, 5))]})
    quick = swarm(members=member(on_model, {"model": other}, name="quick"))
    found = ledgers_of(run([side_by_side(slow_swarm(), quick)], main, log_dir))
    slow = found["slow"]
    # the slow swarm's own call is priced and attributed; the quick swarm's 90 tokens fell in
    # its time and are in no meter of it
    assert slow["swarm"]["usage"]["total_tokens"] == 250_000
    assert slow["sample_delta"]["total_tokens"] == 250_090
    assert slow["unattributed"] == {
        "input_tokens": 65,
        "output_tokens": 25,
        "total_tokens": 90,
        "input_tokens_cache_write": None,
        "input_tokens_cache_read": None,
        "reasoning_tokens": None,
        "total_cost": 0.0,
    }
    assert slow["unpriced_models"] == ["other/model"]
    assert slow["calls"]["unpriced"] == 0 and slow["unpriced_calls_recorded"] == 0
    assert slow["total_complete"] is False  # another model's tokens have no price
    assert slow["attribution_complete"] is False
    assert found["quick"]["unattributed"]["total_tokens"] == 0


def test_cost_of_another_swarm_is_unattributed(log_dir: Path, priced: None) -> None:
    set_model_info("values-cached/x", ModelInfo(cost=PRICE))
    try:
        main = get_model(
            "swarm/scripted",
            scripts={"slow": [Step(submit="42", usage=(250_000, 0), sleep=0.5)]},
            memoize=False,
        )
        quick = swarm(members=member(on_model, {"model": "values-cached/x"}, name="quick"))
        found = ledgers_of(run([side_by_side(slow_swarm(), quick)], main, log_dir))
    finally:
        set_model_info("values-cached/x", ModelInfo())
    slow = found["slow"]
    # the quick swarm's one call: no tokens, 250,000 cached tokens at $0.10/M
    assert slow["unattributed"]["total_tokens"] == 0
    assert slow["unattributed"]["input_tokens_cache_read"] == 250_000
    assert slow["unattributed"]["total_cost"] == pytest.approx(0.025)
    assert slow["sample_delta"]["total_cost"] == pytest.approx(0.275)
    assert slow["total_complete"] is True
    assert slow["attribution_complete"] is False  # by the cost alone
    quick_ledger = found["quick"]
    assert quick_ledger["swarm"]["cost"] == 0.025
    assert quick_ledger["attribution_complete"] is True


def test_more_metered_than_the_sample_recorded_is_negative(priced: None) -> None:
    """The other direction: meters holding usage the sample has not (no run does this today,
    so the ledger is built from accounts whose sample delta is given)."""
    from swarm._accounts.accounts import Accounts
    from swarm._report.events import RunEvents
    from swarm._report.ledger import build_ledger

    class Given(Accounts):
        def sample_delta(self) -> dict[str, ModelUsage]:
            return {
                "swarm/scripted": ModelUsage(
                    input_tokens=60, output_tokens=40, total_tokens=100, total_cost=0.5
                )
            }

    accounts = Given(Budget())
    accounts.add_member("a", MemberLimits())
    accounts.charge(
        "a", ModelUsage(input_tokens=100, output_tokens=50, total_tokens=150, total_cost=0.75)
    )
    record = build_ledger(
        accounts=accounts,
        events=RunEvents(),
        members=[ended_member("a", "submitted")],
        stop_reason="all_done",
        ended_by=None,
        interrupted=False,
        final_cancelled=False,
        wall_clock=1.0,
    )
    assert record["unattributed"] == {
        "input_tokens": -40,
        "output_tokens": -10,
        "total_tokens": -50,
        "input_tokens_cache_write": None,
        "input_tokens_cache_read": None,
        "reasoning_tokens": None,
        "total_cost": -0.25,
    }
    assert record["total_complete"] is True
    assert record["attribution_complete"] is False


def test_one_unpriced_token_makes_an_unpriced_model(log_dir: Path, priced: None) -> None:
    main = get_model(
        "swarm/scripted", scripts={"a": [Step(submit="42", usage=(1000, 0))]}, memoize=False
    )
    other = other_model({"b": [Step(submit="7", usage=(1, 0))]})
    solver = swarm(
        members=[member(worker, name="a"), member(on_model, {"model": other}, name="b")],
        controller=controller("leaderless", stop_on_submission=False),
    )
    record = ledger(run([solver], main, log_dir))
    assert record["unpriced_models"] == ["other/model"]
    assert record["sample_delta"]["total_tokens"] == 1001


# -- two swarms in one solver ---------------------------------------------------------------------


@solver
def one_swarm_after_the_other() -> Solver:
    first = swarm(members=member(worker, name="first"))
    second = swarm(members=member(worker, name="second"))

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await first(AgentState(messages=list(state.messages)))
        await second(AgentState(messages=list(state.messages)))
        return state

    return solve


def test_a_swarm_counts_only_its_own_calls(log_dir: Path) -> None:
    """Each run has its own span: a second swarm called from the same solver does not count
    the first one's calls as its runtime's (it once counted 3 calls, not 1)."""
    scripts = {
        "first": [
            Step(tool="noop", args={"i": 1}, usage=(90, 10)),
            Step(submit="1", usage=(90, 10)),
        ],
        "second": [Step(submit="2", usage=(40, 10))],
    }
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    sample = run([one_swarm_after_the_other()], model, log_dir)
    ledgers = {
        e.data["members"][0]["name"]: e.data
        for e in sample.events
        if isinstance(e, InfoEvent) and isinstance(e.data, dict) and e.data.get("type") == "ledger"
    }
    first, second = ledgers["first"], ledgers["second"]
    assert (first["swarm"]["usage"]["total_tokens"], first["calls"]["calls"]) == (200, 2)
    assert (second["swarm"]["usage"]["total_tokens"], second["calls"]["calls"]) == (50, 1)
    assert first["runtime"]["usage"]["total_tokens"] == 0
    assert second["runtime"]["usage"]["total_tokens"] == 0
