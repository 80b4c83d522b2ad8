"""Prices checked before a cost cap or a member's cost limit applies, on real scripted evals.

A member's model is its factory's ``model`` argument (a name or a ``Model``) or else the eval's
model; every model a cap or limit depends on needs a price, and the sample fails at its start
with one ``ConfigError`` naming all the models that have none.  The models here are scripted
(``swarm/scripted`` and a second provider, ``pricing/...``), priced per test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.agent import Agent, AgentState, agent, react
from inspect_ai.model import Model, ModelCost, ModelInfo, get_model, modelapi, set_model_info

from swarm import Budget, member, swarm
from swarm.testing import ScriptedModelAPI, Step, run_eval, scripted_model

from helpers import ledger, only_sample, statuses

HOW = (
    "Give them with inspect_ai.model.set_model_info(name, ModelInfo(cost=ModelCost(...))) or "
    "set_model_cost(), or `inspect eval --model-cost-config prices.yaml`; or drop "
)
PRICE = ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)


@modelapi(name="pricing")
def pricing_api() -> type[ScriptedModelAPI]:
    """Scripted models under other names (``pricing/a``, ``pricing/b``), unpriced unless a test
    prices them."""

    class PricingAPI(ScriptedModelAPI):
        pass

    return PricingAPI


@pytest.fixture
def a_priced() -> Iterator[None]:
    """``pricing/a`` at $1 per million input and $2 per million output tokens."""
    set_model_info("pricing/a", ModelInfo(cost=PRICE))
    yield
    set_model_info("pricing/a", ModelInfo())


@agent
def on_model(model: str | Model | Agent | None = None) -> Agent:
    """A react member on the model given (``None``: the eval's)."""
    return react(model=model)


@agent
def echo() -> Agent:
    """An agent used as another agent's model: answers with a fixed text."""

    async def execute(state: AgentState) -> AgentState:
        return state

    return execute


def start_error(solver: Agent, log_dir: Path, **eval_args: Any) -> str:
    """The error the sample failed with at its start (no member made a call)."""
    log = run_eval(solver, log_dir=log_dir, **eval_args)
    assert log.samples and log.samples[0].error is not None
    sample = log.samples[0]
    assert ledger(sample)["calls"]["calls"] == 0
    return sample.error.message  # type: ignore[union-attr]


# -- a cost cap: every member's model ----------------------------------------------------------


def test_a_cost_cap_names_every_member_model_without_a_price(log_dir: Path, priced: None) -> None:
    # b is listed before a and has its model as a Model: the names come sorted, each once;
    # c is on the eval's model, which is priced
    solver = swarm(
        members=[
            member(on_model, {"model": get_model("pricing/b", memoize=False)}, name="b"),
            member(on_model, {"model": "pricing/a"}, name="a"),
            member(on_model, {"model": "pricing/a"}, name="a2"),
            member(on_model, name="c"),
        ],
        budget=Budget(cost=1.0),
    )
    assert start_error(solver, log_dir) == (
        "budget.cost: a cost cap or cost limit needs prices, and model(s) pricing/a, "
        f"pricing/b have none. {HOW}the cost cap."
    )


def test_a_members_model_argument_is_checked_not_the_evals(log_dir: Path, a_priced: None) -> None:
    # the eval's model has no price, but no member uses it: the cap applies and stops the
    # swarm after two calls of 250,000 input tokens ($0.25 each) on pricing/a
    model = get_model("pricing/a", scripts={"*": [Step(reply="r", usage=(250_000, 0))] * 5})
    solver = swarm(members=member(on_model, {"model": model}), budget=Budget(cost=0.5))
    sample = only_sample(run_eval(solver, log_dir=log_dir))
    assert statuses(sample) == {"on_model": "swarm_cap"}
    assert ledger(sample)["swarm"]["cost"] == 0.5
    # and the other way round: a member on an unpriced model fails though the eval's is priced
    solver = swarm(members=member(on_model, {"model": "pricing/b"}), budget=Budget(cost=0.5))
    set_model_info("swarm/scripted", ModelInfo(cost=PRICE))
    try:
        message = start_error(solver, log_dir)
    finally:
        set_model_info("swarm/scripted", ModelInfo())
    assert message == (
        "budget.cost: a cost cap or cost limit needs prices, and model(s) pricing/b have none. "
        f"{HOW}the cost cap."
    )


def test_a_model_given_as_an_agent_is_not_checked(log_dir: Path) -> None:
    # the first member's model is an agent, which has no price to look up: it is passed over
    # and the member after it is still checked
    solver = swarm(
        members=[
            member(on_model, {"model": echo()}, name="agent-model"),
            member(on_model, {"model": "pricing/b"}, name="b"),
        ],
        budget=Budget(cost=1.0),
    )
    assert start_error(solver, log_dir) == (
        "budget.cost: a cost cap or cost limit needs prices, and model(s) pricing/b have none. "
        f"{HOW}the cost cap."
    )


# -- member cost limits only: the members that have one -----------------------------------------


def test_member_cost_limits_check_only_their_members_and_name_the_first(log_dir: Path) -> None:
    # no cost cap: "free" has no cost limit, so its unpriced model is not asked about; the
    # message names the first member's limit that needs a price
    solver = swarm(
        members=[
            member(on_model, {"model": "pricing/a"}, name="free"),
            member(on_model, {"model": "pricing/b"}, name="b", limits={"cost": 1}),
            member(on_model, name="c", limits={"cost": 2}),
        ],
    )
    assert start_error(solver, log_dir) == (
        "members[1].limits.cost: a member's cost limit needs prices, and model(s) pricing/b, "
        f"swarm/scripted have none. {HOW}the cost limit."
    )


def test_a_counted_member_record_is_checked_once_and_named_by_its_place(
    log_dir: Path, a_priced: None
) -> None:
    # three members from one record (priced), then one from the second record (unpriced): the
    # field is the second record's, members[1], not the fourth member's
    solver = swarm(
        members=[
            member(on_model, {"model": "pricing/a"}, count=3, limits={"cost": 1}),
            member(on_model, {"model": "pricing/b"}, name="b", limits={"cost": 1}),
        ],
    )
    assert start_error(solver, log_dir) == (
        "members[1].limits.cost: a member's cost limit needs prices, and model(s) pricing/b "
        f"have none. {HOW}the cost limit."
    )


def test_member_cost_limits_with_prices_run(log_dir: Path, priced: None) -> None:
    # every limited member's model is priced: the limit applies at exactly $0.50
    model = scripted_model({"*": [Step(reply="r", usage=(250_000, 0))] * 5})
    solver = swarm(members=member(on_model, limits={"cost": 0.5}))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"on_model": "member_limit:cost"}
    assert ledger(sample)["members"][0]["meter"]["cost"] == 0.5
