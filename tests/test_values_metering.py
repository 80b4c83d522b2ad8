"""Which meter each model call lands in, and which calls the swarm refuses.

On real scripted evals: calls made with Inspect's token metering suspended (``suspend_token_limit``,
as approvers do) count their cost but not their tokens, toward the caps and shares too; calls
priced at zero spend nothing of a cost cap; a child whose parent ended is refused its next call;
and a fresh process's first swarm registers the model hooks that enforce its caps.  Calls made in
a swarm outside every member's task are the runtime's; no built-in code makes one, so that path
is pinned on the accounts and the hooks themselves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.hooks import BeforeModelGenerate, ModelUsageData
from inspect_ai.model import (
    ChatMessageUser,
    GenerateConfig,
    ModelCost,
    ModelInfo,
    ModelUsage,
    get_model,
    set_model_info,
)
from inspect_ai.util import suspend_token_limit

import swarm as swarm_package
from swarm import Budget, MemberLimits, controller, member, swarm
from swarm.testing import Step, call, pause, run_eval, scripted_model, submit

from helpers import by_name, ledger, only_sample, result, statuses

ALL_FINISH = controller("leaderless", stop_on_submission=False)
QUARTER = Step(reply="r", usage=(250_000, 0))  # $0.25 at the ``priced`` fixture's prices


@agent
def approving(suspended: int = 2, plain: int = 1) -> Agent:
    """Makes ``suspended`` calls with token metering suspended, then ``plain`` calls."""

    async def execute(state: AgentState) -> AgentState:
        model = get_model()
        for i in range(suspended + plain):
            if i < suspended:
                with suspend_token_limit():
                    state.output = await model.generate(state.messages)
            else:
                state.output = await model.generate(state.messages)
            state.messages += [state.output.message, ChatMessageUser(content="go on")]
        return state

    return execute


def meters(sample: Any) -> dict[str, dict[str, Any]]:
    return {name: m["meter"] for name, m in by_name(ledger(sample)["members"]).items()}


# -- calls with token metering suspended ----------------------------------------------------------


def test_a_suspended_call_counts_its_cost_and_not_its_tokens(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": [QUARTER] * 3})
    sample = only_sample(
        run_eval(swarm(members=member(approving, name="a")), model=model, log_dir=log_dir)
    )
    record = ledger(sample)
    a = meters(sample)["a"]
    assert a["usage"]["total_tokens"] == 250_000  # the plain call's only
    assert a["usage"]["total_cost"] == 0.25
    assert (a["suspended_cost"], a["cost"]) == (0.5, 0.75)
    assert record["swarm"]["cost"] == 0.75 and record["swarm"]["suspended_cost"] == 0.5
    # the sample counted the suspended calls' tokens: no meter holds them
    assert record["sample_delta"]["total_tokens"] == 750_000
    assert record["unattributed"]["total_tokens"] == 500_000
    assert record["unattributed"]["total_cost"] == 0.0
    assert record["calls"]["calls"] == 3 and record["unpriced_calls_recorded"] == 0


def test_suspended_calls_reach_the_cost_cap(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": [QUARTER] * 5})
    solver = swarm(members=member(approving, {"suspended": 5}, name="a"), budget=Budget(cost=0.5))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"a": "swarm_cap"}
    assert meters(sample)["a"]["suspended_cost"] == 0.5
    assert ledger(sample)["calls"]["calls"] == 2


def test_suspended_calls_use_up_a_cost_share(log_dir: Path, priced: None) -> None:
    # $1 split equally: a's two suspended calls use its $0.50; b's one call leaves b inside its own
    model = scripted_model({"*": [QUARTER] * 5})
    solver = swarm(
        members=[
            member(approving, {"suspended": 5}, name="a"),
            member(approving, {"suspended": 0, "plain": 1}, name="b"),
        ],
        controller=ALL_FINISH,
        budget=Budget(cost=1.0, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"a": "share", "b": "submitted"}
    assert (meters(sample)["a"]["suspended_cost"], meters(sample)["b"]["cost"]) == (0.5, 0.25)
    assert ledger(sample)["swarm"]["cost"] == 0.75


def test_unpriced_suspended_calls_are_counted_unpriced(log_dir: Path) -> None:
    model = scripted_model({"*": [QUARTER] * 3})
    sample = only_sample(
        run_eval(swarm(members=member(approving, name="a")), model=model, log_dir=log_dir)
    )
    record = ledger(sample)
    assert record["unpriced_calls_recorded"] == 3  # two suspended, one plain
    assert meters(sample)["a"]["suspended_cost"] == 0.0 and meters(sample)["a"]["cost"] == 0.0
    assert record["total_complete"] is False


@pytest.fixture
def free() -> Iterator[None]:
    """The scripted model priced at zero: every call costs exactly $0."""
    zero = ModelCost(input=0.0, output=0.0, input_cache_write=0.0, input_cache_read=0.0)
    set_model_info("swarm/scripted", ModelInfo(cost=zero))
    yield
    set_model_info("swarm/scripted", ModelInfo())


def test_calls_priced_at_zero_spend_nothing_of_a_cost_cap_or_share(
    log_dir: Path, free: None
) -> None:
    model = scripted_model({"*": [QUARTER] * 4})
    solver = swarm(
        members=[
            member(approving, {"suspended": 2, "plain": 2}, name="a"),
            member(approving, {"suspended": 0, "plain": 3}, name="b"),
        ],
        controller=ALL_FINISH,
        budget=Budget(cost=0.01, split="equal"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"a": "submitted", "b": "submitted"}
    record = ledger(sample)
    assert record["swarm"]["cost"] == 0.0 and record["swarm"]["usage"]["total_cost"] == 0.0
    assert record["swarm"]["usage"]["total_tokens"] == 1_250_000
    assert record["calls"]["calls"] == 7 and record["unpriced_calls_recorded"] == 0


# -- refusals --------------------------------------------------------------------------------------


def test_a_child_whose_parent_ended_is_refused_its_next_call(log_dir: Path) -> None:
    # the lead spawns a and ends at once; a's call in flight completes and its next one is
    # refused (its status: stopped), long before the grace of 20 s would cancel it.  a's call
    # takes 3 s so that it is still in flight when the lead's next (instant) call ends it: it
    # once took 0.3 s, and on a loaded machine a's first call ended and its second began first
    lead = [call("spawn_child", name="a", task="t"), submit("done")]
    model = scripted_model({"lead": lead, "a": [pause(3, Step(reply="r", usage=(90, 10)))] * 30})
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        controller=ALL_FINISH,
        budget={"grace": 20},
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"lead": "submitted", "a": "stopped"}
    assert by_name(ledger(sample)["members"])["a"]["calls"]["calls"] == 1
    assert result(sample)["stop_reason"] == "all_done"


# -- the model hooks, registered by a process's first swarm ----------------------------------------

FRESH = """
import json
import sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from swarm import Budget, member, swarm
from swarm.testing import Step, run_eval, scripted_model

# an eval with no swarm first: nothing of swarm-eval is registered with Inspect yet
eval(Task(dataset=[Sample(input="q", target="a")]), model="mockllm/model", log_dir=sys.argv[1])
model = scripted_model({"*": [Step(reply="r", usage=(90, 10))] * 10})
solver = swarm(members=member("swarm/worker", name="w"), budget=Budget(tokens=300))
[sample] = run_eval(solver, model=model, log_dir=sys.argv[1]).samples
ledger = sample.store["inspect_swarm:ledger"]
print("RESULT", json.dumps([ledger["members"][0]["status"], ledger["swarm"]["usage"]["total_tokens"]]))
"""


def test_a_fresh_process_registers_the_hooks_when_its_first_swarm_runs(tmp_path: Path) -> None:
    # in this process (whose hooks an earlier swarm may have registered) the swarm stops at
    # its cap of 300 tokens, in calls of 100 ...
    model = scripted_model({"*": [Step(reply="r", usage=(90, 10))] * 10})
    solver = swarm(members=member("swarm/worker", name="w"), budget=Budget(tokens=300))
    here = ledger(only_sample(run_eval(solver, model=model, log_dir=tmp_path / "here")))
    assert (here["members"][0]["status"], here["swarm"]["usage"]["total_tokens"]) == (
        "swarm_cap",
        300,
    )
    # ... and in a new process, whose first swarm registers them: the same swarm package as
    # this process's (a mutation run's copy, say), run where that package is (where a
    # mutation run's configuration is)
    root = Path(swarm_package.__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", FRESH, str(tmp_path / "logs")],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "INSPECT_DISPLAY": "none"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # no hook was registered when the first eval began: Inspect printed no hooks banner
    assert "hooks enabled" not in done.stdout
    [line] = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    # the first swarm's calls were metered as they completed: the cap stopped it at 300
    assert json.loads(line.removeprefix("RESULT ")) == ["swarm_cap", 300]


# -- calls outside every member: the runtime's --------------------------------------------------


def usage(tokens: int, cost: float | None) -> ModelUsage:
    return ModelUsage(input_tokens=tokens, output_tokens=0, total_tokens=tokens, total_cost=cost)


def test_calls_outside_every_member_are_metered_to_the_runtime() -> None:
    from swarm._accounts.accounts import Accounts
    from swarm._accounts.caps import SwarmCaps
    from swarm._accounts.limit_errors import SwarmCapReached

    accounts = Accounts(Budget(cost=1.0))
    accounts.caps = SwarmCaps(cost=1.0)
    accounts.add_member("a", MemberLimits())
    # no member, a member of another swarm, and three calls with token metering suspended
    assert accounts.charge(None, usage(300, 0.25)) is None
    assert accounts.charge("of-another-swarm", usage(200, 0.125)) is None
    assert accounts.charge(None, usage(100, 0.125), suspended=True) is None
    assert accounts.charge(None, usage(100, None), suspended=True) is None
    assert accounts.charge(None, usage(100, 0.0), suspended=True) is None
    runtime = accounts.runtime
    assert (runtime.usage.total_tokens, runtime.usage.total_cost) == (500, 0.375)
    assert (runtime.suspended_cost, runtime.cost, runtime.unpriced) == (0.125, 0.5, 1)
    assert accounts.members["a"].tokens == 0
    # the runtime's $0.50 counts toward the cap: the member's $0.50 call reaches it exactly
    error = accounts.charge("a", usage(50, 0.5))
    assert isinstance(error, SwarmCapReached)
    assert (error.type, error.value, error.limit) == ("cost", 1.0, 1.0)
    assert (accounts.swarm.tokens, accounts.swarm.cost) == (550, 1.0)


def test_the_model_hooks_meter_a_call_without_a_member_as_the_runtimes() -> None:
    from swarm._accounts.limit_errors import SwarmStopped
    from swarm._run.identity import member_context
    from swarm._run.metering import SwarmModelHooks, usage_context
    from swarm.records import MemberInfo

    class Sink:
        def __init__(self, reason: str | None) -> None:
            self.reason = reason
            self.asked: list[str | None] = []
            self.recorded: list[tuple[str | None, int]] = []

        def refused(self, member: str | None) -> SwarmStopped | None:
            self.asked.append(member)
            return None if self.reason is None else SwarmStopped(self.reason)

        def record_usage(self, member: str | None, usage: ModelUsage) -> None:
            self.recorded.append((member, usage.total_tokens))

    before = BeforeModelGenerate(
        model_name="swarm/scripted",
        input=[ChatMessageUser(content="q")],
        tools=[],
        tool_choice="auto",
        config=GenerateConfig(),
        cache=None,
    )
    used = ModelUsageData(model_name="swarm/scripted", usage=usage(30, None), call_duration=0.1)
    hooks = SwarmModelHooks()

    async def main() -> None:
        assert not hooks.enabled()  # outside a swarm
        sink = Sink("parent_ended")
        token = usage_context.set(sink)  # type: ignore[arg-type]
        try:
            assert hooks.enabled()
            # no member: nothing is refused (the runtime's calls are never asked about)
            await hooks.on_before_model_generate(before)
            await hooks.on_model_usage(used)
            assert (sink.asked, sink.recorded) == ([], [(None, 30)])
            # a member: asked by name, and refused with the reason
            who = member_context.set(MemberInfo(name="a"))
            try:
                with pytest.raises(SwarmStopped, match="^Stopped by the swarm: parent_ended$"):
                    await hooks.on_before_model_generate(before)
                await hooks.on_model_usage(used)
            finally:
                member_context.reset(who)
            assert (sink.asked, sink.recorded) == (["a"], [(None, 30), ("a", 30)])
        finally:
            usage_context.reset(token)

    anyio.run(main)
