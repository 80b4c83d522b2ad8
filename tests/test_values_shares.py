"""A split budget's shares hold as each member's own cap (issue 41: "the equal split is not
equal"), pinned to the token on real scripted evals.

Before, a member's share was checked after the swarm's cap: a member that passed its share (its
last call is metered whole) took the overshoot out of the swarm's cap, so later members were
stopped ``swarm_cap`` before their own share was used.  In a swarm of 4 with 171 tokens split
equally and calls of 30, the first two spent 60 each and the last two were stopped at 30.  Now
each member's calls are checked against its own share only, a used-up share refuses its next
call, and the ledger shows each member's ``share``.  A member spawned at run time spends from
its parent's share (``test_values_caps.py::test_a_spawned_member_spends_from_its_parents_share``
pins that run, and the ``share`` its ledger entry shows).

Every call's tokens are fixed with ``Step(usage=(input, output))``, so every figure is worked
out by hand in the test that pins it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.log import EvalSample
from inspect_ai.model import (
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.util import LimitExceededError, store

from swarm import Budget, MemberLimits, member, swarm
from swarm._accounts.accounts import Accounts
from swarm._accounts.caps import SwarmCaps
from swarm._accounts.caps import shares as split_shares
from swarm._accounts.limit_errors import ShareExhausted
from swarm.analysis import swarm_ledger
from swarm.testing import Step, run_eval, scripted_model

from helpers import (
    all_finish,
    ledger,
    logged_usage,
    members_in_turn,
    only_sample,
    result,
    statuses,
    worker,
)


def tools(n: int, usage: tuple[int, int], sleep: float = 0.0) -> list[Step]:
    """``n`` tool calls with fixed usage each, each taking ``sleep`` seconds."""
    return [Step(tool="noop", args={"i": i}, usage=usage, sleep=sleep) for i in range(n)]


def tokens(sample: EvalSample) -> dict[str, int]:
    """Each member's metered tokens in the ledger."""
    return {m["name"]: m["meter"]["usage"]["total_tokens"] for m in ledger(sample)["members"]}


def ledger_statuses(sample: EvalSample) -> dict[str, str | None]:
    return {m["name"]: m["status"] for m in ledger(sample)["members"]}


def shares(sample: EvalSample) -> dict[str, dict[str, Any] | None]:
    """Each member's ``share`` in the ledger (``None`` where the entry has none)."""
    return {m["name"]: m.get("share") for m in ledger(sample)["members"]}


def calls(sample: EvalSample) -> dict[str, int]:
    return {m["name"]: m["calls"]["calls"] for m in ledger(sample)["members"]}


def assert_ledger_is_the_log(sample: EvalSample) -> None:
    """The ledger's members hold, to the token, the usage of the model events Inspect logged in
    their spans, and the swarm's meter is the sample's usage."""
    logged = logged_usage(sample)
    assert tokens(sample) == {n: u.total_tokens for n, u in logged.items()}
    record = ledger(sample)
    assert record["swarm"]["usage"]["total_tokens"] == sum(
        u.total_tokens for u in sample.model_usage.values()
    )
    assert record["unattributed"]["total_tokens"] == 0


# -- the issue: a member's overshoot comes out of no other member's share ------------------------


def test_the_reported_swarm_of_four_gives_every_member_its_share(log_dir: Path) -> None:
    # 171 tokens split equally: shares 43, 43, 43, 42.  Every call is 30 tokens; w-1 and w-2
    # call at once, w-3 and w-4 after 0.3 s.  Each member's second call takes it to 60, past
    # its share: it ends "share" there, and nobody is stopped by the others' overshoot (before:
    # w-1 and w-2 spent 60 each, and w-3 and w-4 were stopped at 30, one "swarm_cap" and one
    # "stopped", by the swarm's cap of 171)
    model = scripted_model(
        {
            "w-1": tools(10, (20, 10)),
            "w-2": tools(10, (20, 10)),
            "w-3": tools(10, (20, 10), sleep=0.3),
            "w-4": tools(10, (20, 10), sleep=0.3),
        }
    )
    solver = swarm(
        members=[member(worker, name=f"w-{i}") for i in range(1, 5)],
        controller=all_finish(),
        budget=Budget(tokens=171, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    every = {"w-1": "share", "w-2": "share", "w-3": "share", "w-4": "share"}
    assert statuses(sample) == every
    assert ledger_statuses(sample) == every
    assert tokens(sample) == {"w-1": 60, "w-2": 60, "w-3": 60, "w-4": 60}
    assert calls(sample) == {"w-1": 2, "w-2": 2, "w-3": 2, "w-4": 2}
    assert shares(sample) == {
        "w-1": {"owner": "w-1", "cost": None, "tokens": 43},
        "w-2": {"owner": "w-2", "cost": None, "tokens": 43},
        "w-3": {"owner": "w-3", "cost": None, "tokens": 43},
        "w-4": {"owner": "w-4", "cost": None, "tokens": 42},
    }
    record = ledger(sample)
    assert record["caps"]["tokens"] == 171
    assert record["stop_reason"] == "all_done"
    assert result(sample)["stop_reason"] == "all_done"
    # the swarm passed its cap by the four members' overshoots: 17 + 17 + 17 + 18
    assert record["overshoot"] == {"tokens": 69}
    assert_ledger_is_the_log(sample)


def test_uneven_members_each_stop_at_their_own_share(log_dir: Path) -> None:
    # 400 tokens split equally: 100 each.  The members run one after another (each starts when
    # the one before has returned), so the earlier ones' overshoot is spent before the later
    # ones start:
    #   big     calls of 30: 30, 60, 90, 120 -> "share" at 120 (20 over)
    #   bigger  calls of 70: 70, 140 -> "share" at 140 (40 over)
    #   small   wants less: two calls and a submission of 30 each -> "submitted" at 90
    #   late    calls of 30: 30, 60, 90, 120 -> "share" at 120
    # Before, the swarm's cap was reached at 260 + 90 + 60 = 410 and late ended "swarm_cap" at
    # 60, with 40 of its share never spent.
    model = scripted_model(
        {
            "big": tools(10, (20, 10)),
            "bigger": tools(10, (60, 10)),
            "small": [*tools(2, (20, 10)), Step(submit="42", usage=(20, 10))],
            "late": tools(10, (20, 10)),
        }
    )
    solver = swarm(
        members=members_in_turn(["big", "bigger", "small", "late"]),
        controller=all_finish(),
        budget=Budget(tokens=400, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    ended = {"big": "share", "bigger": "share", "small": "submitted", "late": "share"}
    assert statuses(sample) == ended
    assert ledger_statuses(sample) == ended
    assert tokens(sample) == {"big": 120, "bigger": 140, "small": 90, "late": 120}
    assert calls(sample) == {"big": 4, "bigger": 2, "small": 3, "late": 4}
    assert shares(sample) == {
        name: {"owner": name, "cost": None, "tokens": 100}
        for name in ("big", "bigger", "small", "late")
    }
    record = ledger(sample)
    assert record["stop_reason"] == "all_done"
    assert record["overshoot"] == {"tokens": 70}  # 470 against the cap of 400
    assert_ledger_is_the_log(sample)
    # the reader has the share too
    read = swarm_ledger(sample)
    assert read is not None
    assert [(m.name, m.share and m.share.tokens) for m in read.members] == [
        ("big", 100),
        ("bigger", 100),
        ("small", 100),
        ("late", 100),
    ]


def test_a_weighted_cost_split_holds_each_members_cost_share(log_dir: Path, priced: None) -> None:
    # $1 split 2:1:1: shares $0.50, $0.25, $0.25.  A call of (100_000, 0) tokens costs $0.10 and
    # one of (150_000, 0) $0.15; every member calls at once.
    #   a  calls of $0.15: 0.15, 0.30, 0.45, 0.60 -> "share" at $0.60
    #   b  calls of $0.15: 0.15, 0.30 -> "share" at $0.30
    #   c  one call of $0.10 and a submission of $0.10 -> "submitted" at $0.20
    # Before, the members' overshoots were taken out of the swarm's cap of $1, and whichever
    # call reached it ended its member "swarm_cap" (a, in the runs tried) and stopped the rest.
    model = scripted_model(
        {
            "a": tools(10, (150_000, 0), sleep=0.01),
            "b": tools(10, (150_000, 0), sleep=0.01),
            "c": [*tools(1, (100_000, 0), sleep=0.05), Step(submit="7", usage=(100_000, 0))],
        }
    )
    solver = swarm(
        members=[member(worker, name=n) for n in ("a", "b", "c")],
        controller=all_finish(),
        budget=Budget(cost=1.0, split=[2, 1, 1]),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    ended = {"a": "share", "b": "share", "c": "submitted"}
    assert statuses(sample) == ended
    assert ledger_statuses(sample) == ended
    costs = {m["name"]: m["meter"]["cost"] for m in ledger(sample)["members"]}
    assert costs == pytest.approx({"a": 0.60, "b": 0.30, "c": 0.20})
    assert tokens(sample) == {"a": 600_000, "b": 300_000, "c": 200_000}
    assert shares(sample) == {
        "a": {"owner": "a", "cost": 0.5, "tokens": None},
        "b": {"owner": "b", "cost": 0.25, "tokens": None},
        "c": {"owner": "c", "cost": 0.25, "tokens": None},
    }
    record = ledger(sample)
    assert record["stop_reason"] == "all_done"
    assert record["overshoot"] == {"cost": pytest.approx(0.10)}
    assert_ledger_is_the_log(sample)


# -- a used-up share refuses the next call, as a stopping swarm does ----------------------------


@agent
def persistent() -> Agent:
    """Calls the model 5 times whatever it gets, keeping each limit error's
    ``type|value|limit|message`` in the store (an agent that ignores limits)."""

    async def execute(state: AgentState) -> AgentState:
        caught: list[str] = []
        for _ in range(5):
            try:
                state.output = await get_model().generate(state.messages)
            except LimitExceededError as ex:
                caught.append(f"{ex.type}|{ex.value}|{ex.limit}|{ex.message}")
                continue
            state.messages += [state.output.message, ChatMessageUser(content="go on")]
        store().set("caught", caught)
        state.output = ModelOutput.from_content("persistent", "done")
        return state

    return execute


def test_a_used_up_share_refuses_every_later_call_before_it_is_made(log_dir: Path) -> None:
    # 600 tokens split equally: 300 each.  a's calls are 100 tokens: its third reaches 300 and
    # raises the share error; its next two calls are refused before they are made, so it
    # spends 300, not 500 (before, each later call was made, metered and then raised into)
    model = scripted_model(
        {"a": [Step(reply=f"r{i}", usage=(90, 10)) for i in range(5)], "b": [Step(submit="x")]}
    )
    solver = swarm(
        members=[member(persistent, name="a"), member(worker, name="b")],
        controller=all_finish(),
        budget=Budget(tokens=600, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    message = "Swarm member 'a' token share reached. value: 300; limit: 300"
    assert sample.store["caught"] == [f"token|300|300|{message}"] * 3
    assert tokens(sample)["a"] == 300
    assert calls(sample)["a"] == 3
    # it caught the errors and answered, so its agent returned: submitted
    assert statuses(sample)["a"] == "submitted"
    assert shares(sample)["a"] == {"owner": "a", "cost": None, "tokens": 300}
    assert_ledger_is_the_log(sample)


def test_a_member_limit_below_the_share_still_ends_it_first(log_dir: Path) -> None:
    # the share is 300 of 600; the member's own limit of 200 is reached at its second call
    model = scripted_model({"a": tools(10, (90, 10)), "b": [Step(submit="x", usage=(90, 10))]})
    solver = swarm(
        members=[
            member(worker, name="a", limits=MemberLimits(token=200)),
            member(worker, name="b"),
        ],
        controller=all_finish(),
        budget=Budget(tokens=600, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"a": "member_limit:token", "b": "submitted"}
    assert tokens(sample) == {"a": 200, "b": 100}


# -- a pooled budget is as it was ----------------------------------------------------------------


def test_a_pooled_budget_lets_a_member_spend_what_another_left(log_dir: Path) -> None:
    # 400 tokens, one pool: quick submits (30), then greedy (calls of 30) spends what is left:
    # 30 + 13 * 30 = 420 reaches the cap at greedy's 13th call, so greedy ends "swarm_cap" with
    # 390, 20 over.  The ledger's members have no share.
    model = scripted_model(
        {"quick": [Step(submit="42", usage=(20, 10))], "greedy": tools(20, (20, 10))}
    )
    solver = swarm(
        members=members_in_turn(["quick", "greedy"]),
        controller=all_finish(),
        budget=Budget(tokens=400),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"quick": "submitted", "greedy": "swarm_cap"}
    assert tokens(sample) == {"quick": 30, "greedy": 390}
    record = ledger(sample)
    assert record["stop_reason"] == "swarm_cap"
    assert record["overshoot"] == {"tokens": 20}
    assert all("share" not in m for m in record["members"])
    assert_ledger_is_the_log(sample)
    # split equally, greedy stops at its own share of 200 instead: 7 calls, 210
    solver = swarm(
        members=members_in_turn(["quick", "greedy"]),
        controller=all_finish(),
        budget=Budget(tokens=400, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"quick": "submitted", "greedy": "share"}
    assert tokens(sample) == {"quick": 30, "greedy": 210}
    assert ledger(sample)["stop_reason"] == "all_done"
    assert ledger(sample)["overshoot"] == {}


# -- the accounts ---------------------------------------------------------------------------------


def used(tokens: int) -> ModelUsage:
    return ModelUsage(input_tokens=tokens, output_tokens=0, total_tokens=tokens)


def test_the_accounts_check_a_split_member_against_its_share_only() -> None:
    accounts = Accounts(Budget(tokens=100, split="equal"))
    accounts.add_member("a", MemberLimits())
    accounts.add_member("b", MemberLimits())
    # what ``begin`` derives from the budget (the sample has no limits here)
    accounts.caps = SwarmCaps(tokens=100)
    accounts.shares = split_shares(accounts.budget, accounts.caps, ["a", "b"])
    # a passes its share of 50 by 70 with one call: its share error, and nothing else
    error = accounts.charge("a", used(120))
    assert isinstance(error, ShareExhausted) and error.status == "share"
    assert (error.value, error.limit) == (120, 50)
    # b is past the swarm's cap (120 + 10 >= 100) but within its share: nothing
    assert accounts.charge("b", used(10)) is None
    assert accounts.share_used_up("b") is None
    assert accounts.share_of("b") == ("b", accounts.shares["b"])
    # b reaches its share exactly
    error = accounts.charge("b", used(40))
    assert isinstance(error, ShareExhausted) and (error.value, error.limit) == (50, 50)
    # a member spawned by b spends from b's share, already used up: refused at once
    accounts.add_member("c", MemberLimits(), share_of="b")
    assert accounts.share_of("c") == ("b", accounts.shares["b"])
    refused = accounts.share_used_up("c")
    assert refused is not None and refused.message == (
        "Swarm member 'c' token share reached. value: 50; limit: 50"
    )
    assert accounts.swarm.tokens == 170
