"""The ledger's completeness flags, one cause at a time, its call counts and the result record's
provisional answer, on real scripted evals.

Each test makes exactly one thing incomplete in an otherwise complete, priced run, so that
``total_complete`` (and with it ``attribution_complete``) is false for that cause alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.agent import Agent, AgentState, agent, react
from inspect_ai.model import (
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)
from inspect_ai.tool import Tool, tool

from swarm import Budget, controller, member, swarm
from swarm.testing import Step, fail, pause, reply, run_eval, scripted_model, submit

from helpers import (
    FixedModelAPI,
    by_name,
    ended_member,
    ledger,
    metrics,
    only_sample,
    result,
    statuses,
    worker,
)

CLEAN_CALLS = {"calls": 0, "cache_replays": 0, "errored": 0, "no_usage": 0, "unpriced": 0}


def calls(**counts: int) -> dict[str, int]:
    return {**CLEAN_CALLS, **counts}


def incomplete_only_by(record: dict[str, Any]) -> None:
    assert record["total_complete"] is False
    assert record["attribution_complete"] is False
    assert record["unattributed"]["total_tokens"] == 0
    assert record["unattributed"]["total_cost"] == 0.0


def test_a_clean_priced_run_is_complete(log_dir: Path, priced: None) -> None:
    model = scripted_model(
        {"*": [Step(tool="noop", args={"i": 0}, usage=(250_000, 0)), submit("42")]}
    )
    solver = swarm(
        members=member(worker, count=2),
        controller=controller("leaderless", stop_on_submission=False),
    )
    record = ledger(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert record["calls"] == calls(calls=4)
    assert [m["cancelled"] for m in record["members"]] == [False, False]
    assert (record["interrupted"], record["final_cancelled"], record["resumed"]) == (False,) * 3
    assert (record["stop_reason"], record["ended_by"]) == ("all_done", None)
    assert record["unpriced_models"] == []
    # the model API classes loaded in this process that compact natively: none of ours (the
    # scripted model's); Inspect's providers that this process loaded (which depends on the
    # tests it ran before: OpenAI's, and Anthropic's wherever `anthropic` is installed), and
    # tests/test_metering.py's (its class stays loaded once a test has made it)
    assert [
        c
        for c in record["native_compaction_classes"]
        if not c.startswith("inspect_ai.model._providers.")
        and c != "test_metering.compacting_api.<locals>.CompactingAPI"
    ] == []
    assert record["total_complete"] is True
    assert record["attribution_complete"] is True
    assert (
        record["runtime"]
        == record["final"]
        == {
            "usage": {
                "input_tokens": 0,
                "output_tokens": 0,
                "total_tokens": 0,
                "input_tokens_cache_write": None,
                "input_tokens_cache_read": None,
                "reasoning_tokens": None,
                "total_cost": None,
            },
            "cost": 0.0,
            "suspended_cost": 0.0,
        }
    )
    for m in record["members"]:
        assert (m["bridged"], m["background_started"], m["background_cancelled"]) == (False, 0, 0)


@tool
def sleeper() -> Tool:
    async def execute(seconds: float) -> str:
        """Sleep.

        Args:
            seconds: how long
        """
        await anyio.sleep(seconds)
        return "awake"

    return execute


@agent
def sleepy() -> Agent:
    """A react member that can sleep in a tool."""
    return react(tools=[sleeper()])


def test_a_cancelled_member_alone_makes_the_totals_incomplete(log_dir: Path, priced: None) -> None:
    # the member is cancelled in a tool, not in a model call: no call of its is unknown
    model = scripted_model(
        {"quick": [submit("42")], "hung": [Step(tool="sleeper", args={"seconds": 30})]}
    )
    solver = swarm(
        members=[member(worker, name="quick"), member(sleepy, name="hung")],
        budget=Budget(grace=0.1),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"quick": "submitted", "hung": "cancelled"}
    assert [m["cancelled"] for m in record["members"]] == [False, True]
    assert [m["status"] for m in record["members"]] == ["submitted", "cancelled"]
    assert record["calls"] == calls(calls=2)
    assert record["interrupted"] is False
    incomplete_only_by(record)


def test_an_interrupted_run_alone_makes_the_totals_incomplete(log_dir: Path) -> None:
    # a cost cap on an unpriced model fails the sample before any member starts
    model = scripted_model({"*": [submit("42")]})
    log = run_eval(
        swarm(members=member(worker), budget=Budget(cost=1.0)), model=model, log_dir=log_dir
    )
    assert log.samples
    sample = log.samples[0]
    assert sample.error is not None
    record = ledger(sample)
    assert (record["interrupted"], record["ended_by"], record["stop_reason"]) == (
        True,
        "unknown",
        None,
    )
    assert record["calls"] == calls() and record["members"][0]["status"] is None
    assert record["members"][0]["cancelled"] is False
    incomplete_only_by(record)
    answer = result(sample)
    assert answer["final"] == {
        "mode": None,
        "member": None,
        "reason": "no_submissions",
        "provisional": True,
        "answer": None,
        "answer_chars": None,
    }
    assert answer["members"][0]["state"] == "pending"
    assert metrics(sample)["never_acted"] == ["worker"]


def test_an_errored_call_alone_makes_the_totals_incomplete(log_dir: Path, priced: None) -> None:
    model = scripted_model({"a": [fail("provider down")], "b": [submit("42")]})
    solver = swarm(
        members=[member(worker, name="a"), member(worker, name="b")],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = ledger(sample)
    assert statuses(sample) == {"a": "errored", "b": "submitted"}
    members = by_name(record["members"])
    assert members["a"]["calls"] == calls(errored=1)
    assert members["b"]["calls"] == calls(calls=1)
    assert record["calls"] == calls(calls=1, errored=1)
    assert members["a"]["cancelled"] is False
    assert by_name(result(sample)["members"])["a"]["error"] == "ScriptedModelError('provider down')"
    incomplete_only_by(record)


def test_a_call_cancelled_in_flight_is_counted_errored(log_dir: Path, priced: None) -> None:
    model = scripted_model({"quick": [submit("42")], "slow": [pause(30, reply("late"))]})
    solver = swarm(
        members=[member(worker, name="quick"), member(worker, name="slow")],
        budget=Budget(grace=0.1),
    )
    record = ledger(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert by_name(record["members"])["slow"]["calls"] == calls(errored=1)
    assert by_name(record["members"])["slow"]["meter"]["usage"]["total_tokens"] == 0
    assert record["total_complete"] is False


@modelapi(name="values-nousage")
class NoUsage(FixedModelAPI):
    """A model that reports no usage for its calls (it always submits 42)."""

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        return ModelOutput.for_tool_call(self.model_name, "submit", {"answer": "42"}, content="")

    async def count_text_tokens(self, text: str) -> int:
        return 1


def test_a_call_without_usage_alone_makes_the_totals_incomplete(log_dir: Path) -> None:
    sample = only_sample(
        run_eval(
            swarm(members=member(worker)), model=get_model("values-nousage/x"), log_dir=log_dir
        )
    )
    record = ledger(sample)
    assert statuses(sample) == {"worker": "submitted"}
    assert record["calls"] == calls(calls=1, no_usage=1)
    assert record["unpriced_calls_recorded"] == 0 and record["unpriced_models"] == []
    assert record["swarm"]["usage"]["total_tokens"] == 0
    incomplete_only_by(record)
    # a step is a completed call, with or without usage
    assert metrics(sample)["longest_member_steps"] == 1
    assert metrics(sample)["never_acted"] == []


def test_unpriced_calls_are_counted_where_they_were_made(log_dir: Path) -> None:
    model = scripted_model({"*": [Step(tool="noop", args={"i": 0}, usage=(90, 10)), submit("42")]})
    solver = swarm(
        members=member(worker, count=2),
        controller=controller("leaderless", stop_on_submission=False),
    )
    record = ledger(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert [m["calls"] for m in record["members"]] == [calls(calls=2, unpriced=2)] * 2
    assert record["calls"] == calls(calls=4, unpriced=4)
    assert record["unpriced_calls_recorded"] == 4
    assert record["unpriced_models"] == ["swarm/scripted"]
    assert record["swarm"]["cost"] == 0.0
    assert record["total_complete"] is False and record["attribution_complete"] is False


def test_the_budget_is_recorded_as_given(log_dir: Path, priced: None) -> None:
    model = scripted_model({"*": [submit("42")]})
    budget = Budget(cost=2, tokens=10_000, time=600, reserve=0.2, split=[3, 1], grace=7)
    solver = swarm(
        members=member(worker, count=2),
        controller=controller("leaderless", stop_on_submission=False),
        budget=budget,
    )
    record = ledger(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert record["budget"] == {
        "cost": 2.0,
        "tokens": 10_000,
        "time": 600.0,
        "reserve": 0.2,
        "split": [3, 1],
        "grace": 7.0,
    }
    assert record["caps"] == {"cost": 2.0, "tokens": 10_000, "time": 600.0}
    assert record["version"] == 1


def test_sample_limits_are_recorded(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    sample = only_sample(
        run_eval(
            swarm(members=member(worker)),
            model=model,
            log_dir=log_dir,
            token_limit=10_000,
            message_limit=50,
            time_limit=60,
            working_limit=30,
        )
    )
    record = ledger(sample)
    limits = record["sample_limits"]
    assert (limits["token"], limits["message"], limits["time"], limits["working"]) == (
        10_000,
        50,
        60,
        30,
    )
    assert limits["cost"] is None and limits["turn"] is None
    assert record["caps"]["tokens"] == 9500  # 10,000 * 0.95
    assert 56.9 < record["caps"]["time"] <= 57.0  # 60 * 0.95, less the time before the swarm


# -- statuses and the provisional answer ----------------------------------------------------------


def truncated(stop_reason: str) -> Any:
    out = ModelOutput.from_content("mockllm/model", "half an answer", stop_reason=stop_reason)  # type: ignore[arg-type]
    out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return get_model("mockllm/model", custom_outputs=[out])


@agent
def one_call() -> Agent:
    """Calls the model once and ends with its output."""

    async def execute(state: AgentState) -> AgentState:
        state.output = await get_model().generate(state.messages)
        return state

    return execute


def test_an_output_cut_at_the_model_length_is_unsubmitted(log_dir: Path) -> None:
    # react stops at a model_length output; any agent may end with a filtered one
    for agent_, reason in ((worker, "model_length"), (one_call, "content_filter")):
        sample = only_sample(
            run_eval(
                swarm(members=member(agent_, name="worker")),
                model=truncated(reason),
                log_dir=log_dir,
            )
        )
        assert statuses(sample) == {"worker": "unsubmitted"}, reason
        record = result(sample)
        assert record["members"][0]["submitted"] is False
        assert record["final"] == {
            "mode": None,
            "member": None,
            "reason": "no_submissions",
            "provisional": False,
            "answer": None,
            "answer_chars": None,
        }
        assert sample.output.completion == ""
        assert ledger(sample)["swarm"]["usage"]["total_tokens"] == 15
        assert metrics(sample)["steps_to_answer"] is None


def test_an_answer_chosen_before_a_sample_limit_is_provisional(log_dir: Path) -> None:
    model = scripted_model(
        {"quick": [submit("42")], "slow": [pause(0.05, call_noop(i)) for i in range(1000)]}
    )
    solver = swarm(
        members=[member(worker, name="quick"), member(worker, name="slow")],
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(time=100),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir, time_limit=1))
    record = result(sample)
    assert record["final"] == {
        "mode": "first",
        "member": "quick",
        "reason": None,
        "provisional": True,
        "answer": "42",
        "answer_chars": 2,
    }
    assert record["stop_reason"] is None
    assert sample.output.completion == "42"
    book = ledger(sample)
    assert (book["interrupted"], book["ended_by"]) == (True, "sample_limit:time")
    assert book["overshoot"] == {}


def call_noop(i: int) -> Step:
    return Step(tool="noop", args={"i": i}, usage=(9, 1))


def test_a_final_answer_is_not_provisional(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    sample = only_sample(run_eval(swarm(members=member(worker)), model=model, log_dir=log_dir))
    assert result(sample)["final"] == {
        "mode": "first",
        "member": "worker",
        "reason": None,
        "provisional": False,
        "answer": "42",
        "answer_chars": 2,
    }
    # the swarm's conversation ends with the answer, marked as the final one
    assert sample.messages[-1].metadata == {
        "inspect_swarm": {"final": {"mode": "first", "member": "worker"}}
    }


# -- the three records, as written ----------------------------------------------------------------


def test_each_record_is_in_the_store_and_in_the_transcript(log_dir: Path) -> None:
    from inspect_ai.event import InfoEvent

    model = scripted_model({"*": [submit("42")]})
    sample = only_sample(run_eval(swarm(members=member(worker)), model=model, log_dir=log_dir))
    found = {
        e.data["type"]: e.data
        for e in sample.events
        if isinstance(e, InfoEvent)
        and e.source == "inspect_swarm"
        and isinstance(e.data, dict)
        and e.data.get("type") in ("result", "ledger", "metrics")
    }
    assert set(found) == {"result", "ledger", "metrics"}
    for kind in ("result", "ledger", "metrics"):
        assert found[kind] == {"type": kind, **sample.store[f"inspect_swarm:{kind}"]}


def test_a_members_result_entry(log_dir: Path) -> None:
    model = scripted_model({"lead": [submit("42")], "helper": [fail("down")]})
    solver = swarm(
        members=[member(worker, name="lead", role="plan the work"), member(worker, name="helper")],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    lead, helper = result(sample)["members"]
    assert lead == {
        "name": "lead",
        "role": "plan the work",
        "state": "ended",
        "status": "submitted",
        "submitted": True,
        "started": lead["started"],
        "time": lead["time"],
        "parent": None,
        "depth": 0,
        "sandbox": None,
        "error": None,
        "gate_checks": 0,
        "gate_passes": 0,
        "first_pass_time": None,
        "answer": "42",
        "answer_chars": 2,
        "verified": None,
    }
    assert (helper["answer"], helper["answer_chars"], helper["verified"]) == (None, None, None)
    assert 0.0 <= lead["started"] < lead["time"] <= metrics(sample)["wall_clock"]
    assert (helper["role"], helper["status"], helper["submitted"]) == (None, "errored", False)
    assert helper["error"] == "ScriptedModelError('down')"
    # the swarm's conversation: the input, then the answer
    assert [m.role for m in sample.messages] == ["user", "assistant"]
    assert sample.messages[0].text == "What is 6 * 7?"


def test_an_interrupted_run_keeps_the_conversation_as_it_was(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    log = run_eval(
        swarm(members=member(worker), budget=Budget(cost=1.0)), model=model, log_dir=log_dir
    )
    assert log.samples
    sample = log.samples[0]
    assert [m.role for m in sample.messages] == ["user"]
    [row] = metrics(sample)["members"]
    assert row["delivery_effective"] == "notify"  # never started, nothing configured


# -- what counts as zero ----------------------------------------------------------------------------


def ledger_with(delta: ModelUsage, metered: ModelUsage) -> dict[str, Any]:
    """The ledger of accounts that metered ``metered`` while the sample recorded ``delta``."""
    from swarm import MemberLimits
    from swarm._accounts.accounts import Accounts
    from swarm._report.events import RunEvents
    from swarm._report.ledger import build_ledger

    class Given(Accounts):
        def sample_delta(self) -> dict[str, ModelUsage]:
            return {"swarm/scripted": delta}

    accounts = Given(Budget())
    accounts.add_member("a", MemberLimits())
    accounts.charge("a", metered)
    return build_ledger(
        accounts=accounts,
        events=RunEvents(),
        members=[ended_member("a", "submitted")],
        stop_reason="all_done",
        ended_by=None,
        interrupted=False,
        final_cancelled=False,
        wall_clock=1.0,
    )


def usage(tokens: int, cost: float) -> ModelUsage:
    return ModelUsage(input_tokens=tokens, output_tokens=0, total_tokens=tokens, total_cost=cost)


def test_unattributed_within_rounding_is_zero() -> None:
    # a cost difference within 1e-12 is written as 0.0; within 1e-9 of the cost (or of $1) it
    # still counts as attributed; a token is nothing in a billion
    record = ledger_with(usage(100, 0.5 + 5e-13), usage(100, 0.5))
    assert record["unattributed"]["total_cost"] == 0.0
    assert record["attribution_complete"] is True
    record = ledger_with(usage(100, 0.5 + 5e-10), usage(100, 0.5))
    assert record["unattributed"]["total_cost"] == pytest.approx(5e-10)
    assert record["attribution_complete"] is True
    record = ledger_with(usage(100, 0.5 + 1.5e-9), usage(100, 0.5))
    assert record["attribution_complete"] is False
    # the cost tolerance grows with the cost above $1: 1e-9 of $10
    record = ledger_with(usage(100, 10.0 + 5e-9), usage(100, 10.0))
    assert record["attribution_complete"] is True
    record = ledger_with(usage(100, 10.0 + 1.5e-8), usage(100, 10.0))
    assert record["attribution_complete"] is False
    record = ledger_with(usage(1_000_000_000, 1.0), usage(999_999_999, 1.0))
    assert record["unattributed"]["total_tokens"] == 1
    assert record["attribution_complete"] is True  # at the tolerance, not past it
    record = ledger_with(usage(2_000_000_000, 1.0), usage(1_999_999_997, 1.0))
    assert record["attribution_complete"] is False
    record = ledger_with(usage(100, 0.5), usage(99, 0.5))
    assert record["attribution_complete"] is False


# -- call counts, per member and in total ------------------------------------------------------------


def conversation(turn: int, ask: str) -> list[Any]:
    """A conversation at ``turn`` (the scripted model plays the step of that turn)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

    messages: list[Any] = [ChatMessageUser(content=ask)]
    for _ in range(turn):
        messages += [ChatMessageAssistant(content="a"), ChatMessageUser(content=ask)]
    return messages


@agent
def calls_on(model_name: str = "", turns: int = 1, cached: bool = False) -> Agent:
    """Makes ``turns`` calls of its own (through ``model_name``, or the eval's model), each at
    the next turn or, ``cached``, all of one conversation; a call that fails is caught."""

    async def execute(state: AgentState) -> AgentState:
        from swarm import current_member

        info = current_member()
        assert info is not None
        model = get_model(model_name) if model_name else get_model()
        for turn in range(turns):
            messages = conversation(0 if cached else turn, f"{info.name}'s question")
            try:
                state.output = await model.generate(messages, cache=cached)
            except Exception:
                continue
        return state

    return execute


def test_call_counts_add_up_per_member_and_in_total(
    log_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    model = scripted_model(
        {
            "retrier/sub": [fail("once"), fail("twice"), Step(reply="ok", usage=(10, 0))],
            "replayer/sub": [Step(reply="r", usage=(20, 0))],
            "replayer2/sub": [Step(reply="r", usage=(30, 0))],
        }
    )
    solver = swarm(
        members=[
            member(calls_on, {"turns": 3}, name="retrier"),
            member(calls_on, {"turns": 3, "cached": True}, name="replayer"),
            member(calls_on, {"turns": 2, "cached": True}, name="replayer2"),
            member(calls_on, {"model_name": "values-nousage/x", "turns": 2}, name="silent"),
            member(calls_on, {"model_name": "values-nousage/x", "turns": 1}, name="silent2"),
        ],
        controller=controller("leaderless", stop_on_submission=False),
    )
    record = ledger(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert {m["name"]: m["calls"] for m in record["members"]} == {
        "retrier": calls(calls=1, errored=2, unpriced=1),
        "replayer": calls(calls=1, cache_replays=2, unpriced=1),
        "replayer2": calls(calls=1, cache_replays=1, unpriced=1),
        "silent": calls(calls=2, no_usage=2),
        "silent2": calls(calls=1, no_usage=1),
    }
    assert record["calls"] == calls(calls=6, errored=2, cache_replays=3, no_usage=3, unpriced=3)
    assert record["swarm"]["usage"]["total_tokens"] == 60  # replays and usage-less calls add none
