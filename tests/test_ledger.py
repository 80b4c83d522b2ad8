"""Budget, metering and the ledger, checked against the spec on real evals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.agent import Agent, AgentState, agent, as_tool, react
from inspect_ai.log import EvalSample
from inspect_ai.model import ModelCost, ModelInfo, get_model, set_model_info

from swarm import Budget, ConfigError, MemberLimits, controller, member, swarm
from swarm.analysis import swarm_ledger
from swarm.testing import Step, call, fail, pause, run_eval, scripted_model, submit

from helpers import result, statuses, worker

SPEC_LEDGER = json.loads((Path(__file__).parent / "data" / "spec_ledger_example.json").read_text())
PRICE = ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)


@pytest.fixture
def priced() -> Iterator[None]:
    """The scripted model priced at $1/M input and $2/M output tokens."""
    set_model_info("swarm/scripted", ModelInfo(cost=PRICE))
    yield
    set_model_info("swarm/scripted", ModelInfo())


def sample_of(log: Any) -> EvalSample:
    assert log.status == "success", log.error
    return log.samples[0]  # type: ignore[no-any-return]


def ledger_of(sample: EvalSample) -> dict[str, Any]:
    return sample.store["inspect_swarm:ledger"]  # type: ignore[no-any-return]


def key_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: key_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        # a list of records has the keys of its first; a list of names (native compaction
        # classes: those the process has loaded) is a list, however many it holds
        return [key_tree(value[0])] if value and isinstance(value[0], dict) else []
    return None


def loop(n: int, delay: float = 0.0) -> list[Any]:
    return [pause(delay, call("noop", i=i)) for i in range(n)]


def test_ledger_keys_match_the_spec_exactly(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": [call("noop", i=0), submit("42")]})
    solver = swarm(members=member(worker, count=2), budget=Budget(cost=1.0, time=600))
    ledger = ledger_of(sample_of(run_eval(solver, model=model, log_dir=log_dir)))
    assert key_tree(ledger) == key_tree(SPEC_LEDGER)
    assert ledger["version"] == 1
    assert ledger["budget"] == {
        "cost": 1.0,
        "tokens": None,
        "time": 600.0,
        "reserve": 0.05,
        "split": "pool",
        "grace": 120.0,
    }
    assert ledger["caps"] == {"cost": 1.0, "tokens": None, "time": 600.0}
    assert ledger["sample_limits"] == dict.fromkeys(
        ("token", "cost", "message", "turn", "working", "time")
    )


def test_meters_add_up_and_match_the_sample(log_dir: Path, priced: None) -> None:
    model = scripted_model(
        {"worker-1": [call("noop", i=0), submit("42")], "*": [*loop(3), submit("7")]}
    )
    solver = swarm(
        members=member(worker, count=3),
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    ledger = ledger_of(sample)
    fields = ("input_tokens", "output_tokens", "total_tokens")
    parts = [m["meter"] for m in ledger["members"]] + [ledger["runtime"], ledger["final"]]
    for f in fields:
        assert sum(p["usage"][f] for p in parts) == ledger["swarm"]["usage"][f]
    assert sum(p["cost"] for p in parts) == pytest.approx(ledger["swarm"]["cost"])
    [usage] = sample.model_usage.values()
    for f in fields:
        assert ledger["sample_delta"][f] == getattr(usage, f)
        assert ledger["unattributed"][f] == 0
    assert ledger["sample_delta"]["total_cost"] == pytest.approx(usage.total_cost)
    assert ledger["unattributed"]["total_cost"] == 0.0
    expected_cost = (usage.input_tokens * 1.0 + usage.output_tokens * 2.0) / 1e6
    assert ledger["swarm"]["cost"] == pytest.approx(expected_cost)
    calls = {m["name"]: m["calls"] for m in ledger["members"]}
    assert calls["worker-1"] == {
        "calls": 2,
        "cache_replays": 0,
        "errored": 0,
        "no_usage": 0,
        "unpriced": 0,
    }
    assert calls["worker-2"]["calls"] == 4
    assert ledger["calls"]["calls"] == 10
    assert ledger["stop_reason"] == "all_done"
    assert ledger["total_complete"] is True
    assert ledger["attribution_complete"] is True
    assert ledger["unpriced_models"] == []


def test_unpriced_calls_make_the_totals_incomplete(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    ledger = ledger_of(sample_of(run_eval(swarm(members=worker), model=model, log_dir=log_dir)))
    assert ledger["calls"]["unpriced"] == 1
    assert ledger["unpriced_calls_recorded"] == 1
    assert ledger["unpriced_models"] == ["swarm/scripted"]
    assert ledger["swarm"]["cost"] == 0.0
    assert ledger["swarm"]["usage"]["total_cost"] is None
    assert ledger["total_complete"] is False


def test_cost_cap_stops_the_swarm(log_dir: Path, priced: None) -> None:
    per_call = (1000 * 1.0 + 100 * 2.0) / 1e6  # usage (1000, 100) at the price above
    steps = [Step(tool="noop", args={"i": i}, sleep=0.01, usage=(1000, 100)) for i in range(100)]
    model = scripted_model({"*": steps})
    cap = 10 * per_call
    solver = swarm(members=member(worker, count=4), budget=Budget(cost=cap))
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    ledger = ledger_of(sample)
    assert ledger["stop_reason"] == "swarm_cap"
    assert ledger["caps"]["cost"] == pytest.approx(cap)
    assert "swarm_cap" in statuses(sample).values()
    assert set(statuses(sample).values()) <= {"swarm_cap", "stopped"}
    over = ledger["overshoot"]["cost"]
    # calls in flight when the cap was reached: at most one per other member
    assert 0 < over <= 3 * per_call + 1e-12 or over == pytest.approx(0)
    assert ledger["swarm"]["cost"] >= cap


def test_token_cap_from_the_sample_limit(log_dir: Path) -> None:
    steps = [pause(0.01, call("noop", i=i)) for i in range(200)]
    model = scripted_model({"*": steps})
    solver = swarm(members=member(worker, count=2), budget=Budget(reserve=0.1))
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir, token_limit=20_000))
    ledger = ledger_of(sample)
    assert ledger["caps"]["tokens"] == 18_000
    assert ledger["sample_limits"]["token"] == 20_000
    assert ledger["stop_reason"] == "swarm_cap"
    assert sample.limit is None  # the swarm stopped before the sample's limit
    assert ledger["swarm"]["usage"]["total_tokens"] >= 18_000


def test_equal_split_ends_a_greedy_member_with_share(log_dir: Path) -> None:
    greedy = [fixed(i) for i in range(100)]
    model = scripted_model({"worker-1": greedy, "*": [pause(0.3, call("noop", i=0)), submit("42")]})
    solver = swarm(
        members=member(worker, count=3),
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(tokens=30_000, split="equal"),
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {
        "worker-1": "share",
        "worker-2": "submitted",
        "worker-3": "submitted",
    }
    ledger = ledger_of(sample)
    assert ledger["stop_reason"] == "all_done"
    meters = {m["name"]: m["meter"]["usage"]["total_tokens"] for m in ledger["members"]}
    assert meters["worker-1"] >= 10_000


def fixed(i: int) -> Step:
    """A tool-call step with fixed usage: 900 input and 100 output tokens."""
    return Step(tool="noop", args={"i": i}, usage=(900, 100))


def test_weighted_token_shares_sum_to_the_cap() -> None:
    from swarm._accounts.caps import SwarmCaps, shares

    got = shares(Budget(split=(1, 1, 1)), SwarmCaps(tokens=100), ["a", "b", "c"])
    assert [s.tokens for s in got.values()] == [34, 33, 33]
    got = shares(Budget(split=(2, 1)), SwarmCaps(cost=3.0, tokens=10), ["a", "b"])
    assert [s.tokens for s in got.values()] == [7, 3]
    assert [s.cost for s in got.values()] == pytest.approx([2.0, 1.0])


def test_time_cap_stops_with_swarm_time(log_dir: Path) -> None:
    model = scripted_model({"*": loop(1000, 0.05)})
    solver = swarm(members=member(worker, count=2), budget=Budget(time=1.0, grace=0.5))
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    ledger = ledger_of(sample)
    assert ledger["stop_reason"] == "swarm_time"
    assert ledger["caps"]["time"] == 1.0
    assert "time" not in ledger["overshoot"] or ledger["overshoot"]["time"] < 1.0
    assert set(statuses(sample).values()) == {"stopped"}


def test_cancelled_sample_still_has_a_ledger(log_dir: Path) -> None:
    model = scripted_model({"*": loop(1000, 0.05)})
    solver = swarm(members=member(worker, count=2), budget=Budget(time=100))
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir, time_limit=1))
    ledger = ledger_of(sample)
    assert ledger["interrupted"] is True
    assert ledger["total_complete"] is False
    assert ledger["ended_by"] == "sample_limit:time"
    assert ledger["stop_reason"] is None
    assert all(m["cancelled"] for m in ledger["members"])


def test_errored_call_is_counted(log_dir: Path, priced: None) -> None:
    model = scripted_model({"worker-1": [fail("rate limited")], "*": [submit("42")]})
    solver = swarm(
        members=member(worker, count=2),
        controller=controller("leaderless", stop_on_submission=False),
    )
    ledger = ledger_of(sample_of(run_eval(solver, model=model, log_dir=log_dir)))
    calls = {m["name"]: m["calls"] for m in ledger["members"]}
    assert calls["worker-1"]["errored"] == 1 and calls["worker-1"]["calls"] == 0
    assert ledger["calls"]["errored"] == 1
    assert ledger["total_complete"] is False


@agent
def cached_member() -> Agent:
    """Asks the model the same thing twice with the cache on."""

    async def execute(state: AgentState) -> AgentState:
        model = get_model()
        first = await model.generate("a fixed prompt", cache=True)
        state.output = await model.generate("a fixed prompt", cache=True)
        assert state.output.completion == first.completion
        return state

    return execute


def test_cache_replay_is_counted_and_free(
    log_dir: Path, priced: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    model = scripted_model({"*": [submit("42")]})
    ledger = ledger_of(
        sample_of(run_eval(swarm(members=cached_member), model=model, log_dir=log_dir))
    )
    [m] = ledger["members"]
    assert m["calls"]["cache_replays"] == 1
    assert m["calls"]["calls"] == 1
    assert ledger["swarm"]["usage"]["total_tokens"] == ledger["sample_delta"]["total_tokens"]
    assert ledger["attribution_complete"] is True


@agent
def helper_agent() -> Agent:
    """A subagent: one model call."""
    return react(name="helper", description="Answers a sub-question.", submit=False)


@agent
def delegator() -> Agent:
    """A member that calls a subagent through as_tool."""
    return react(tools=[as_tool(helper_agent())])


def test_subagent_usage_counts_for_its_member(log_dir: Path, priced: None) -> None:
    model = scripted_model(
        {
            "delegator": [call("helper", input="what is 6*7?"), submit("42")],
            "worker": [submit("41")],
        }
    )
    solver = swarm(
        members=[member(delegator), member(worker)],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    ledger = ledger_of(sample)
    calls = {m["name"]: m["calls"]["calls"] for m in ledger["members"]}
    assert calls == {"delegator": 3, "worker": 1}  # two of its own, one of its subagent's
    [usage] = sample.model_usage.values()
    total = sum(m["meter"]["usage"]["total_tokens"] for m in ledger["members"])
    assert total == usage.total_tokens
    assert ledger["attribution_complete"] is True


def test_member_token_limit_is_metered_and_enforced(log_dir: Path) -> None:
    model = scripted_model({"worker-1": [fixed(i) for i in range(50)], "*": [submit("42")]})
    solver = swarm(
        members=[
            member(worker, name="worker-1", limits=MemberLimits(token=3000)),
            member(worker, name="worker-2"),
        ],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample)["worker-1"] == "member_limit:token"
    ledger = ledger_of(sample)
    assert ledger["members"][0]["meter"]["usage"]["total_tokens"] == 3000


def test_cost_cap_needs_prices(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    log = run_eval(swarm(members=worker, budget=Budget(cost=1.0)), model=model, log_dir=log_dir)
    assert log.samples and log.samples[0].error is not None
    message = log.samples[0].error.message
    assert "budget.cost: a cost cap or cost limit needs prices" in message
    assert "swarm/scripted" in message and "set_model_info" in message


def test_swarm_ledger_reader(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": [submit("42")]})
    sample = sample_of(
        run_eval(swarm(members=member(worker, count=2)), model=model, log_dir=log_dir)
    )
    ledger = swarm_ledger(sample)
    assert ledger is not None
    assert [m.name for m in ledger.members] == ["worker-1", "worker-2"]
    assert ledger.members[0].meter.cost > 0
    schema = ledger.model_json_schema()
    assert set(schema["properties"]) == set(SPEC_LEDGER)
    assert result(sample)["final"]["member"] in ("worker-1", "worker-2")


def test_only_the_member_that_reached_the_cap_ends_swarm_cap(log_dir: Path, priced: None) -> None:
    # regression: calls in flight when the cap was reached used to end their members swarm_cap
    steps = [Step(tool="noop", args={"i": i}, sleep=0.05, usage=(1000, 100)) for i in range(100)]
    model = scripted_model({"*": steps})
    solver = swarm(members=member(worker, count=4), budget=Budget(tokens=5000, grace=5))
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    ended = list(statuses(sample).values())
    assert ended.count("swarm_cap") == 1
    assert sorted(ended) == ["stopped", "stopped", "stopped", "swarm_cap"]


def test_budget_numbers_are_normalised() -> None:
    budget = Budget(time=600, cost=1, tokens=5000.0)  # type: ignore[arg-type]
    assert (budget.time, budget.cost, budget.tokens) == (600.0, 1.0, 5000)
    assert isinstance(budget.time, float) and isinstance(budget.tokens, int)
    with pytest.raises(ConfigError, match="budget.tokens: expected a whole number"):
        Budget(tokens=10.5)  # type: ignore[arg-type]
