"""The built-in controllers: their settings (each refusal names the field), their stops and
their answers, on real scripted evals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.scorer import match

from swarm import Budget, ConfigError, controller, member, swarm
from swarm.testing import pause, reply, run_eval, scripted_model, submit

from helpers import metrics, only_sample, result, statuses, worker


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        (
            "leaderless",
            {"stop_on_submission": "yes"},
            "leaderless.stop_on_submission: expected true or false, got 'yes'",
        ),
        (
            "leaderless",
            {"stop_on_submission": 1},
            "leaderless.stop_on_submission: expected true or false, got 1",
        ),
        (
            "leaderless",
            {"final": "middle"},
            "leaderless.final: expected one of 'first', 'last', 'vote', 'verify_then_vote', "
            "'synthesize', got 'middle'",
        ),
        (
            "leaderless",
            {"final": "last", "stop_on_submission": True},
            "leaderless.final: 'last' needs stop_on_submission=False (a stop at the first "
            "submission leaves only the first)",
        ),
        (
            "quiescence",
            {"idle_seconds": 0},
            "quiescence.idle_seconds: must be finite and > 0, got 0",
        ),
        (
            "quiescence",
            {"idle_seconds": -1.5},
            "quiescence.idle_seconds: must be finite and > 0, got -1.5",
        ),
        (
            "quiescence",
            {"idle_seconds": "5"},
            "quiescence.idle_seconds: expected a number of seconds, got '5'; that is the text "
            "'5' (a number in quotes is text; write 5)",
        ),
        (
            "quiescence",
            {"idle_seconds": True},
            "quiescence.idle_seconds: expected a number of seconds, got True",
        ),
        (
            "quiescence",
            {"final": "Last"},
            "quiescence.final: expected 'first' or 'last', got 'Last'",
        ),
        (
            "verified",
            {"verifier": None},
            "verified.verifier: give 'task', a scorer name or a Scorer",
        ),
        ("verified", {"verifier": ""}, "verified.verifier: give 'task', a scorer name or a Scorer"),
        ("verified", {"verifier": 3}, "verified.verifier: expected a scorer, got 3"),
    ],
)
def test_bad_settings_name_the_field(name: str, params: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        swarm(members=member(worker), controller=controller(name, **params))
    assert str(info.value) == f"controller: {message}"


def test_good_settings_at_their_edges() -> None:
    from swarm.plugins.controllers.leaderless import leaderless
    from swarm.plugins.controllers.quiescence import quiescence
    from swarm.plugins.controllers.verified import verified

    assert (leaderless().stop_on_submission, leaderless().final) == (True, "first")
    got = leaderless(stop_on_submission=False, final="last")
    assert (got.stop_on_submission, got.final) == (False, "last")
    # every rule but first lets everyone finish unless told otherwise
    for final in ("last", "vote", "synthesize"):
        assert leaderless(final=final).stop_on_submission is False  # type: ignore[arg-type]
    assert leaderless(final="vote").synthesis is None
    got = leaderless(final="synthesize", synthesize_model="swarm/scripted")
    assert (got.synthesis.model, got.synthesis.prompt) == ("swarm/scripted", None)
    q = quiescence()
    assert (q.idle_seconds, q.final) == (60.0, "first")
    q = quiescence(idle_seconds=2, final="last")
    assert (q.idle_seconds, q.final) == (2.0, "last") and isinstance(q.idle_seconds, float)
    assert quiescence(idle_seconds=0.001).idle_seconds == 0.001
    assert verified().verifier == "task"
    assert verified(match()).verifier is not None


def two(a: Any, b: Any) -> dict[str, Any]:
    return {"a": a, "b": b}


def members() -> list[Any]:
    return [member(worker, name="a"), member(worker, name="b")]


# -- leaderless ---------------------------------------------------------------------------------


def test_leaderless_stops_at_the_first_submission(log_dir: Path) -> None:
    model = scripted_model(two([submit("42")], [pause(30, submit("late"))]))
    solver = swarm(members=members(), controller="leaderless", budget=Budget(grace=0))
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = result(sample)
    assert record["stop_reason"] == "submitted"
    assert record["final"] == {
        "mode": "first",
        "member": "a",
        "reason": None,
        "provisional": False,
        "answer": "42",
        "answer_chars": 2,
    }
    assert statuses(sample) == {"a": "submitted", "b": "cancelled"}


@pytest.mark.parametrize(("final", "answer"), [("first", "a"), ("last", "b")])
def test_leaderless_lets_everyone_finish(log_dir: Path, final: str, answer: str) -> None:
    model = scripted_model(two([submit("42")], [pause(0.2, submit("43"))]))
    solver = swarm(
        members=members(),
        controller=controller("leaderless", stop_on_submission=False, final=final),
    )
    record = result(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert record["stop_reason"] == "all_done"
    assert record["final"] == {
        "mode": final,
        "member": answer,
        "reason": None,
        "provisional": False,
        "answer": {"a": "42", "b": "43"}[answer],
        "answer_chars": 2,
    }


# -- quiescence ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("final", "answer"), [("first", "a"), ("last", "b")])
def test_quiescence_answers_first_or_last(log_dir: Path, final: str, answer: str) -> None:
    model = scripted_model(two([submit("42")], [pause(0.2, submit("43"))]))
    solver = swarm(members=members(), controller=controller("quiescence", final=final))
    record = result(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert record["stop_reason"] == "all_done"
    assert record["final"] == {
        "mode": final,
        "member": answer,
        "reason": None,
        "provisional": False,
        "answer": {"a": "42", "b": "43"}[answer],
        "answer_chars": 2,
    }


def test_quiescence_stops_after_its_idle_seconds(log_dir: Path) -> None:
    model = scripted_model(two([submit("42")], [pause(30, reply("thinking"))]))
    solver = swarm(
        members=members(),
        controller=controller("quiescence", idle_seconds=0.3),
        budget=Budget(grace=0),
    )
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = result(sample)
    assert record["stop_reason"] == "quiescence"
    assert record["final"]["member"] == "a"
    assert statuses(sample) == {"a": "submitted", "b": "cancelled"}
    assert 0.3 <= metrics(sample)["wall_clock"] < 1.5


# -- verified -----------------------------------------------------------------------------------


def test_verified_answers_with_the_first_passing_submission(log_dir: Path) -> None:
    model = scripted_model(two([submit("41")], [pause(0.2, submit("42"))]))
    solver = swarm(members=members(), controller={"name": "verified", "verifier": "match"})
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = result(sample)
    assert record["stop_reason"] == "verified"
    assert record["final"] == {
        "mode": "controller",
        "member": "b",
        "reason": "verified",
        "provisional": False,
        "answer": "42",
        "answer_chars": 2,
    }
    assert sample.output.completion == "42"


def test_verified_without_a_pass_answers_with_the_first_submission(log_dir: Path) -> None:
    model = scripted_model(two([submit("41")], [pause(0.2, submit("43"))]))
    solver = swarm(members=members(), controller=controller("verified", verifier=match()))
    record = result(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    assert record["stop_reason"] == "all_done"
    assert record["final"] == {
        "mode": "first",
        "member": "a",
        "reason": None,
        "provisional": False,
        "answer": "41",
        "answer_chars": 2,
    }
