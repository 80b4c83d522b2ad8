"""The swarm runs end to end: leaderless stops, answers, errors, limits, spans."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.agent import react
from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments

from swarm import Budget, MemberLimits, controller, member, swarm
from swarm.testing import call, fail, pause, reply, run_eval, scripted_model, submit

from helpers import result, statuses, worker


def only_sample(log: object) -> EvalSample:
    samples = log.samples  # type: ignore[attr-defined]
    assert log.status == "success", log.error  # type: ignore[attr-defined]
    assert samples is not None and len(samples) == 1
    return samples[0]


def loop(n: int, delay: float = 0.02) -> list:  # type: ignore[type-arg]
    return [pause(delay, call("noop", i=i)) for i in range(n)]


def test_leaderless_stops_at_first_submission(log_dir: Path) -> None:
    model = scripted_model(
        {"worker-2": [call("noop", i=0), submit("42")], "*": loop(200)}, answer="42"
    )
    log = run_eval(swarm(members=member(worker, count=4)), model=model, log_dir=log_dir)
    sample = only_sample(log)
    record = result(sample)
    assert record["stop_reason"] == "submitted"
    assert statuses(sample) == {
        "worker-1": "stopped",
        "worker-2": "submitted",
        "worker-3": "stopped",
        "worker-4": "stopped",
    }
    assert record["final"] == {
        "mode": "first",
        "member": "worker-2",
        "reason": None,
        "provisional": False,
        "answer": "42",
        "answer_chars": 2,
    }
    assert sample.output.completion.endswith("42")
    assert sample.scores is not None and sample.scores["includes"].value == "C"


def test_all_finish_and_last_answer(log_dir: Path) -> None:
    model = scripted_model(
        {
            "worker-1": [pause(0.3, submit("first"))],
            "worker-2": [pause(0.6, submit("42"))],
            "worker-3": [pause(0.1, submit("early"))],
        }
    )
    solver = swarm(
        members=member(worker, count=3),
        controller=controller("leaderless", stop_on_submission=False, final="last"),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = result(sample)
    assert record["stop_reason"] == "all_done"
    assert set(statuses(sample).values()) == {"submitted"}
    assert record["final"]["mode"] == "last"
    assert record["final"]["member"] == "worker-2"
    assert sample.output.completion.endswith("42")
    # the swarm's conversation is the input plus the chosen member's final message
    assert sample.messages[-1].metadata == {
        "inspect_swarm": {"final": {"mode": "last", "member": "worker-2"}}
    }


def test_first_answer_is_earliest_with_all_finishing(log_dir: Path) -> None:
    model = scripted_model(
        {"worker-1": [pause(0.4, submit("slow"))], "worker-2": [pause(0.1, submit("42"))]}
    )
    solver = swarm(
        members=member(worker, count=2),
        controller={"name": "leaderless", "stop_on_submission": False},
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert result(sample)["final"]["member"] == "worker-2"


def test_member_that_raises_ends_errored_alone(log_dir: Path) -> None:
    model = scripted_model(
        {
            "worker-1": [call("noop", i=0), fail("provider exploded")],
            "*": [call("noop", i=1), submit("42")],
        }
    )
    solver = swarm(
        members=member(worker, count=3),
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {
        "worker-1": "errored",
        "worker-2": "submitted",
        "worker-3": "submitted",
    }
    members = {m["name"]: m for m in result(sample)["members"]}
    assert "provider exploded" in members["worker-1"]["error"]
    assert result(sample)["stop_reason"] == "all_done"
    assert sample.error is None


def test_every_member_errored_is_a_sample_error_with_their_errors(log_dir: Path) -> None:
    model = scripted_model({"*": [fail("nothing works")]})
    log = run_eval(swarm(members=member(worker, count=2)), model=model, log_dir=log_dir)
    assert log.status == "error"
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "every member of the swarm errored: worker-1: ScriptedModelError('nothing works'); "
        "worker-2: ScriptedModelError('nothing works')"
    )
    # the records were written before the sample failed: the swarm itself ended normally
    record = result(sample)
    assert record["final"] == {
        "mode": None,
        "member": None,
        "reason": "no_submissions",
        "provisional": False,
        "answer": None,
        "answer_chars": None,
    }
    assert record["stop_reason"] == "all_done"
    assert statuses(sample) == {"worker-1": "errored", "worker-2": "errored"}
    assert sample.store["inspect_swarm:ledger"]["interrupted"] is False
    assert "inspect_swarm:metrics" in sample.store


def test_no_submission_gives_empty_output(log_dir: Path) -> None:
    # one member errors, the other reaches its turn limit: no answer, and no sample error
    model = scripted_model({"worker-1": [fail("nothing works")], "worker-2": loop(5, 0)})
    solver = swarm(members=member(worker, count=2, limits={"turn": 1}))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = result(sample)
    assert record["final"] == {
        "mode": None,
        "member": None,
        "reason": "no_submissions",
        "provisional": False,
        "answer": None,
        "answer_chars": None,
    }
    assert statuses(sample) == {"worker-1": "errored", "worker-2": "member_limit:turn"}
    assert sample.output.completion == ""
    assert record["stop_reason"] == "all_done"


def test_one_agent_span_per_member(log_dir: Path) -> None:
    model = scripted_model(answer="42")
    sample = only_sample(
        run_eval(
            swarm(members=[member(worker, count=2), member(react, name="solo")]),
            model=model,
            log_dir=log_dir,
        )
    )
    spans = [e for e in sample.events if isinstance(e, SpanBeginEvent) and e.type == "agent"]
    names = [e.name for e in spans]
    for name in ("worker-1", "worker-2", "solo"):
        assert names.count(name) == 1
    swarm_span = next(e for e in spans if e.name == "swarm")
    assert all(
        e.parent_id == swarm_span.id for e in spans if e.name in ("worker-1", "worker-2", "solo")
    )


def test_preamble_names_member_size_and_role(log_dir: Path) -> None:
    model = scripted_model(answer="42")
    solver = swarm(
        members=[member(worker, name="lead", role="plan the work"), member(worker, name="helper")]
    )
    sample = resolve_sample_attachments(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    inputs = [e.input for e in sample.events if isinstance(e, ModelEvent)]
    texts = ["\n".join(m.text for m in inp) for inp in inputs]
    assert any(
        "You are lead, one of 2 agents in a swarm working on this task at the same time." in t
        and "Your role: plan the work." in t
        for t in texts
    )
    assert any("You are helper, one of 2 agents" in t and "Your role" not in t for t in texts)


def test_grace_then_cancel(log_dir: Path) -> None:
    model = scripted_model({"worker-1": [submit("42")], "*": [pause(30, reply("too slow"))]})
    solver = swarm(members=member(worker, count=2), budget=Budget(grace=0.3))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"worker-1": "submitted", "worker-2": "cancelled"}
    assert result(sample)["stop_reason"] == "submitted"
    # worker-2's 30 s call was cut off at the grace's end, never answered (no clock compared)
    replies = [e.output.completion for e in sample.events if isinstance(e, ModelEvent)]
    assert "too slow" not in replies


def test_calls_in_flight_finish_within_grace(log_dir: Path) -> None:
    model = scripted_model(
        {"worker-1": [submit("42")], "*": [pause(0.5, call("noop", i=0)), submit("late")]}
    )
    solver = swarm(members=member(worker, count=2), budget=Budget(grace=5))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    # worker-2's call in flight completes; its next call is refused: it ends stopped
    assert statuses(sample) == {"worker-1": "submitted", "worker-2": "stopped"}


def test_member_limit_ends_only_that_member(log_dir: Path) -> None:
    model = scripted_model({"worker-1": loop(20, 0.0), "*": [call("noop", i=0), submit("42")]})
    solver = swarm(
        members=[
            member(worker, name="worker-1", limits=MemberLimits(turn=3)),
            member(worker, name="worker-2"),
        ],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert statuses(sample) == {"worker-1": "member_limit:turn", "worker-2": "submitted"}


def test_outer_time_limit_leaves_provisional_answer(log_dir: Path) -> None:
    model = scripted_model({"worker-1": [submit("42")], "*": loop(1000, 0.05)})
    # an explicit time cap above the sample's limit: the sample's limit ends the swarm first
    solver = swarm(
        members=member(worker, count=3),
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(time=100),
    )
    log = run_eval(solver, model=model, log_dir=log_dir, time_limit=2)
    sample = only_sample(log)
    assert sample.limit is not None and sample.limit.type == "time"
    record = result(sample)
    assert record["final"]["member"] == "worker-1"
    assert record["final"]["provisional"] is True
    assert statuses(sample)["worker-2"] == "cancelled"
    assert sample.output.completion.endswith("42")


def test_sample_token_limit_ends_the_sample(log_dir: Path) -> None:
    model = scripted_model({"*": loop(100, 0.0)})
    log = run_eval(
        swarm(members=member(worker, count=2)), model=model, log_dir=log_dir, token_limit=2000
    )
    sample = only_sample(log)
    assert sample.limit is not None and sample.limit.type == "token"
    assert result(sample)["final"]["provisional"] is True


def test_many_samples_run_concurrently(log_dir: Path) -> None:
    model = scripted_model({"worker-1": [pause(0.05, submit("42"))], "*": loop(50)})
    log = run_eval(swarm(members=member(worker, count=3)), model=model, log_dir=log_dir, samples=6)
    assert log.status == "success"
    assert log.samples is not None and len(log.samples) == 6
    for sample in log.samples:
        assert result(sample)["final"]["member"] == "worker-1"
        assert statuses(sample)["worker-2"] == "stopped"
