"""Answers as data, on real scripted evals: every member's answer kept (bounded), the answer
rules that read them (``vote``, ``verify_then_vote``, ``synthesize``), the verdicts of every
submission, a controller plugin that stops on agreement, and what goes wrong (normalisers that
fail, answers over the bound, no submissions, a final step cancelled).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import answer_plugins
import attrs
import pytest
from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments

from swarm import (
    ANSWER_MAX_CHARS,
    Budget,
    ConfigError,
    MemberLimits,
    controller,
    load_topology,
    member,
    normalize_answer,
    swarm,
)
from swarm.analysis import swarm_result
from swarm.testing import Step, call, fail, pause, reply, run_eval, scripted_model, submit

from helpers import catalog, ledger, members_in_turn, only_sample, result, statuses, worker

NAMES = ("m1", "m2", "m3", "m4", "m5")


def used(step: Step, tokens: int = 100) -> Step:
    """``step`` with its usage given: ``tokens`` in, a tenth of them out."""
    return attrs.evolve(step, usage=(tokens, tokens // 10))


def in_order(answers: list[str], gap: float = 0.3) -> dict[str, list[Step]]:
    """One member per answer (m1, m2...), submitting in that order, ``gap`` seconds apart
    (after a first quick reply: a process's first model call includes Inspect's setup): for
    members from a topology file, which ``run(..., in_turn=True)`` cannot chain."""
    return {
        name: [used(reply("warming up")), used(pause(gap * (i + 1), submit(text)))]
        for i, (name, text) in enumerate(zip(NAMES, answers, strict=False))
    }


def ordered(answers: list[str]) -> dict[str, list[Step]]:
    """One member per answer (m1, m2...), for ``run(..., in_turn=True)``: each starts once the
    one before has returned, so they submit in this order whatever the machine's load."""
    return {
        name: [used(reply("warming up")), used(submit(text))]
        for name, text in zip(NAMES, answers, strict=False)
    }


def run(
    log_dir: Path,
    scripts: dict[str, Any],
    ctrl: Any,
    *,
    target: str = "42",
    in_turn: bool = False,
    **kwargs: Any,
) -> EvalSample:
    names = [n for n in scripts if n != "*"]
    members = members_in_turn(names) if in_turn else [member(worker, name=n) for n in names]
    solver = swarm(members=members, controller=ctrl, **kwargs)
    log = run_eval(solver, model=scripted_model(scripts), log_dir=log_dir, target=target)
    return only_sample(log)


FIVE = ["3", "3", "4", "3", "5"]


def every_finishes(final: str, **params: Any) -> Any:
    return controller("leaderless", final=final, **params)


# -- every member's answer kept -------------------------------------------------------------------


def test_every_members_answer_and_every_submission_are_in_the_result_record(
    log_dir: Path,
) -> None:
    sample = run(log_dir, ordered(FIVE), every_finishes("last"), in_turn=True)
    record = result(sample)
    assert [
        (m["name"], m["answer"], m["answer_chars"], m["verified"]) for m in record["members"]
    ] == [
        ("m1", "3", 1, None),
        ("m2", "3", 1, None),
        ("m3", "4", 1, None),
        ("m4", "3", 1, None),
        ("m5", "5", 1, None),
    ]
    assert [(s["member"], s["answer"], s["verified"]) for s in record["submissions"]] == [
        ("m1", "3", None),
        ("m2", "3", None),
        ("m3", "4", None),
        ("m4", "3", None),
        ("m5", "5", None),
    ]
    times = [s["time"] for s in record["submissions"]]
    assert times == sorted(times)
    assert times == [m["time"] for m in record["members"]]
    assert record["final"] == {
        "mode": "last",
        "member": "m5",
        "reason": None,
        "provisional": False,
        "answer": "5",
        "answer_chars": 1,
    }
    # read back typed, through the class it is written through
    read = swarm_result(sample)
    assert read is not None and read.model_dump() == record
    assert [m.answer for m in read.members] == FIVE
    assert read.final.answer == "5"


# -- vote -----------------------------------------------------------------------------------------


def test_vote_answers_the_most_frequent_answer(log_dir: Path) -> None:
    sample = run(log_dir, ordered(FIVE), every_finishes("vote"), in_turn=True)
    record = result(sample)
    assert record["stop_reason"] == "all_done"
    assert record["final"] == {
        "mode": "vote",
        "member": "m1",  # the first of the three 3s
        "reason": None,
        "provisional": False,
        "answer": "3",
        "answer_chars": 1,
    }
    assert sample.output.completion == "3"
    assert ledger(sample)["final"]["usage"]["total_tokens"] == 0  # a vote makes no call


def test_vote_from_a_topology_file(log_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "vote.yaml"
    path.write_text(
        "members: [{factory: react, name: m1}, {factory: react, name: m2}, "
        "{factory: react, name: m3}]\n"
        "controller: {name: leaderless, final: vote, normalize: digits}\n"
    )
    # digits is a normaliser answer_plugins registers (swarm_register_normalizers)
    solver = swarm(**load_topology(path), plugins=catalog(answer_plugins))
    scripts = in_order(["x = 7.", "It is 8", "7"])
    sample = only_sample(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))
    assert result(sample)["final"]["mode"] == "vote"
    assert result(sample)["final"]["member"] == "m1"
    assert sample.output.completion == "x = 7."  # the member's own text, not the normalised one


@pytest.mark.parametrize(
    ("answers", "member", "answer"),
    [
        # 2 against 2: the answer whose first submission came first
        (["a", "b", "b", "a"], "m1", "a"),
        (["b", "a", "a", "b"], "m1", "b"),
        # the default normaliser: case and whitespace do not count
        (["x", "Y", " y ", "X\n"], "m1", "x"),
        (["Forty  Two", "forty two", "42", "42"], "m1", "Forty  Two"),
        # one vote each: the first submission
        (["1", "2", "3"], "m1", "1"),
        # a later majority beats an earlier single answer
        (["1", "2", "2"], "m2", "2"),
    ],
)
def test_ties_go_to_the_answer_submitted_first(
    log_dir: Path, answers: list[str], member: str, answer: str
) -> None:
    sample = run(log_dir, ordered(answers), every_finishes("vote"), in_turn=True)
    assert result(sample)["final"]["member"] == member
    assert sample.output.completion == answer


def test_the_default_normaliser_strips_collapses_and_casefolds() -> None:
    assert normalize_answer("  Forty\n\t TWO ") == "forty two"
    assert normalize_answer("STRASSE") == normalize_answer("straße")
    assert normalize_answer("") == ""


def test_nan_and_missing_answers(log_dir: Path) -> None:
    # an errored member has no answer; an empty answer is no vote; "NaN" is text like any other
    scripts = ordered(["NaN", "3", "nan", "", "3"])
    scripts["m2"] = [used(fail("model down"))]
    sample = run(log_dir, scripts, every_finishes("vote"), in_turn=True)
    record = result(sample)
    assert [(m["name"], m["status"], m["answer"]) for m in record["members"]] == [
        ("m1", "submitted", "NaN"),
        ("m2", "errored", None),
        ("m3", "submitted", "nan"),
        ("m4", "submitted", ""),
        ("m5", "submitted", "3"),
    ]
    assert record["final"]["member"] == "m1"
    assert record["final"]["answer"] == "NaN"


# -- verify_then_vote -----------------------------------------------------------------------------


def test_verify_then_vote_answers_among_the_answers_the_verifier_passed(log_dir: Path) -> None:
    ctrl = every_finishes("verify_then_vote", verifier="match")
    sample = run(log_dir, ordered(FIVE), ctrl, target="4", in_turn=True)
    record = result(sample)
    assert record["final"]["mode"] == "verify_then_vote"
    assert (record["final"]["member"], record["final"]["answer"]) == ("m3", "4")
    assert sample.output.completion == "4"
    assert [(s["member"], s["answer"], s["verified"]) for s in record["submissions"]] == [
        ("m1", "3", False),
        ("m2", "3", False),
        ("m3", "4", True),
        ("m4", "3", False),
        ("m5", "5", False),
    ]
    assert [(m["verified"], m["gate_checks"], m["gate_passes"]) for m in record["members"]] == [
        (False, 1, 0),
        (False, 1, 0),
        (True, 1, 1),
        (False, 1, 0),
        (False, 1, 0),
    ]


def test_verify_then_vote_with_no_pass_has_no_answer(log_dir: Path) -> None:
    ctrl = every_finishes("verify_then_vote", verifier="match")
    sample = run(log_dir, ordered(FIVE), ctrl, target="9", in_turn=True)
    record = result(sample)
    assert record["final"] == {
        "mode": None,
        "member": None,
        "reason": "no_verified_submissions",
        "provisional": False,
        "answer": None,
        "answer_chars": None,
    }
    assert sample.output.completion == ""


# -- synthesize -----------------------------------------------------------------------------------


def final_span_calls(sample: EvalSample) -> list[ModelEvent]:
    [final] = [e for e in sample.events if isinstance(e, SpanBeginEvent) and e.name == "final"]
    return [e for e in sample.events if isinstance(e, ModelEvent) and e.span_id == final.id]


def test_synthesize_makes_one_metered_call_and_answers_its_output(
    log_dir: Path, priced: None
) -> None:
    scripts: dict[str, Any] = ordered(FIVE)
    scripts["*"] = [used(reply("three, by the majority"), 700)]
    sample = run(log_dir, scripts, every_finishes("synthesize"), in_turn=True)
    record, books = result(sample), ledger(sample)
    assert record["final"] == {
        "mode": "synthesize",
        "member": None,
        "reason": None,
        "provisional": False,
        "answer": "three, by the majority",
        "answer_chars": 22,
    }
    assert sample.output.completion == "three, by the majority"
    [call_] = final_span_calls(sample)
    usage = call_.output.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (700, 70, 770)
    assert books["final"]["usage"] == usage.model_dump()
    assert books["final"]["cost"] == pytest.approx(700 * 1e-6 + 70 * 2e-6)
    assert books["runtime"]["usage"]["total_tokens"] == 0
    # five members' two calls, and the final step's one
    assert books["calls"]["calls"] == 11
    members = sum(m["meter"]["usage"]["total_tokens"] for m in books["members"])
    assert books["swarm"]["usage"]["total_tokens"] == members + 770 == 10 * 110 + 770
    assert books["sample_delta"]["total_tokens"] == books["swarm"]["usage"]["total_tokens"]
    assert books["attribution_complete"] is True and books["final_cancelled"] is False
    assert sample.model_usage["swarm/scripted"].total_tokens == members + 770
    # the prompt read every answer, in the order they came
    [call_] = final_span_calls(resolve_sample_attachments(sample))
    prompt = call_.input[-1].text
    assert "What is 6 * 7?" in prompt
    assert [f"Answer {i} (m{i}):\n{a}" in prompt for i, a in enumerate(FIVE, 1)] == [True] * 5


def test_synthesize_with_its_own_prompt(log_dir: Path) -> None:
    scripts: dict[str, Any] = ordered(["1", "2"])
    scripts["*"] = [used(reply("12"))]
    ctrl = every_finishes("synthesize", synthesize_prompt="Q: {input}\n{answers}\nA {x}:")
    sample = resolve_sample_attachments(run(log_dir, scripts, ctrl, in_turn=True))
    [call_] = final_span_calls(sample)
    assert call_.input[-1].text == (
        "Q: What is 6 * 7?\nAnswer 1 (m1):\n1\n\nAnswer 2 (m2):\n2\nA {x}:"
    )


def test_a_cancelled_final_step_has_no_answer(log_dir: Path) -> None:
    scripts: dict[str, Any] = {
        "m1": [used(submit("3"))],
        "m2": [used(submit("4"))],
        "*": [used(pause(30, reply("too late")))],
    }
    ctrl = every_finishes("synthesize")
    sample = run(log_dir, scripts, ctrl, budget=Budget(time=1.0, grace=0))
    record, books = result(sample), ledger(sample)
    assert record["final"]["reason"] == "final_cancelled"
    assert (record["final"]["member"], record["final"]["answer"]) == (None, None)
    assert books["final_cancelled"] is True
    assert books["total_complete"] is False
    assert books["final"]["usage"]["total_tokens"] == 0
    assert sample.output.completion == ""


def test_no_submissions_no_vote_and_no_synthesis(log_dir: Path) -> None:
    # every member ends at its turn limit: nobody submits
    scripts = {n: [used(call("noop", i=1)), used(submit("3"))] for n in NAMES[:2]}
    for final in ("vote", "synthesize"):
        solver = swarm(
            members=[member(worker, name=n, limits=MemberLimits(turn=1)) for n in scripts],
            controller=every_finishes(final),
        )
        sample = only_sample(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))
        record = result(sample)
        assert statuses(sample) == {"m1": "member_limit:turn", "m2": "member_limit:turn"}
        assert record["submissions"] == []
        assert [m["answer"] for m in record["members"]] == [None, None]
        assert record["final"]["reason"] == "no_submissions"
        assert ledger(sample)["final"]["usage"]["total_tokens"] == 0
        # each member's two calls (the turn limit trips at its second); no final step
        assert ledger(sample)["calls"]["calls"] == 4


# -- the bound ------------------------------------------------------------------------------------


def test_an_answer_over_the_bound_is_cut_and_its_length_kept(log_dir: Path) -> None:
    long = "7" * (ANSWER_MAX_CHARS + 50)
    sample = run(log_dir, {"m1": [used(submit(long))]}, "leaderless")
    record = result(sample)
    [m] = record["members"]
    assert (len(m["answer"]), m["answer_chars"]) == (10_000, 10_050)
    assert m["answer"] == long[:10_000]
    assert (len(record["final"]["answer"]), record["final"]["answer_chars"]) == (10_000, 10_050)
    assert len(record["submissions"][0]["answer"]) == 10_000
    assert sample.output.completion == long  # the sample keeps the whole text


# -- normalisers that fail ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("normalize", "problem"),
    [
        (
            answer_plugins.raises,
            "the normaliser answer_plugins:raises failed on the answer of m1: ValueError: no "
            "number in 1 characters",
        ),
        (
            answer_plugins.not_text,
            "the normaliser answer_plugins:not_text returned int 1 for the answer of m1, not a str",
        ),
    ],
)
def test_a_normaliser_that_fails_is_the_controllers_fault_naming_it(
    log_dir: Path, normalize: Any, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    ctrl = every_finishes("vote", normalize=normalize)
    solver = swarm(members=[member(worker, name="m1")], controller=ctrl)
    scripts = {"m1": [used(submit("3"))]}
    log = run_eval(solver, model=scripted_model(scripts), log_dir=log_dir)
    assert log.status == "error"
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "Plugin 'controller:leaderless', hook 'swarm_choose_answer': raised "
        f"{'TypeError' if 'returned' in problem else 'ValueError'}('{problem}')"
    )
    assert result(sample)["final"]["provisional"] is True
    # reported once, as the sample's error: the answer is not asked for again as the records
    # are written (which logged "a further failure" and "answer selection failed" besides)
    assert [r.getMessage() for r in caplog.records if r.name == "swarm"] == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"final": "vote", "normalize": "os:system"},
            "leaderless.normalize: 'os:system' names Python code; a topology file or -S value "
            "can only name a registered normaliser (default, exact, number, "
            "swarm-fixture-plugin/last_word). Register yours in "
            "a plugin (@hookimpl def swarm_register_normalizers(register): register('mine', "
            "mine), under the 'swarm' entry point group) or pass the function itself from "
            "Python: see docs/answers.md",
        ),
        (
            {"final": "vote", "normalize": "digitz"},
            "leaderless.normalize: unknown normalizer 'digitz'; registered normalizers: "
            "default, exact, number, swarm-fixture-plugin/last_word",
        ),
        (
            {"final": "vote", "normalize": "numbr"},
            "leaderless.normalize: unknown normalizer 'numbr' (did you mean 'number'?); "
            "registered normalizers: default, exact, number, swarm-fixture-plugin/last_word",
        ),
        (
            {"final": "vote", "normalize": 42},
            "leaderless.normalize: expected a registered normaliser's name (default, exact, "
            "number, swarm-fixture-plugin/last_word), got 42",
        ),
        (
            {"final": "first", "normalize": "number"},
            "leaderless.normalize: set only with final='vote' or 'verify_then_vote' (final "
            "'first' compares no answers, so a normaliser would never be used)",
        ),
        (
            {"final": "verify_then_vote"},
            "leaderless.verifier: 'verify_then_vote' needs a verifier: 'task', a scorer name "
            "or a Scorer",
        ),
        (
            {"final": "vote", "stop_on_submission": True},
            "leaderless.final: 'vote' needs stop_on_submission=False (a stop at the first "
            "submission leaves only the first)",
        ),
        (
            {"final": "vote", "synthesize_model": "swarm/scripted"},
            "leaderless.synthesize_model: set only with final='synthesize'",
        ),
        (
            {"final": "synthesize", "synthesize_prompt": ""},
            "leaderless.synthesize_prompt: expected a non-empty string, got ''",
        ),
        (
            {"final": "majority"},
            "leaderless.final: expected one of 'first', 'last', 'vote', 'verify_then_vote', "
            "'synthesize', got 'majority'",
        ),
    ],
)
def test_bad_answer_settings_name_the_field(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        swarm(members=member(worker), controller=controller("leaderless", **params))
    assert str(info.value) == f"controller: {message}"


# -- a controller plugin that reads answers -------------------------------------------------------


def test_a_stop_on_agreement_plugin_stops_when_three_members_agree(log_dir: Path) -> None:
    scripts = ordered(["3", "3", "4", "3"])
    scripts["m5"] = [used(reply("warming up")), used(pause(30, submit("5")))]
    solver = swarm(
        members=[*members_in_turn(NAMES[:4]), member(worker, name="m5")],
        controller="agreement",
        plugins=catalog(answer_plugins),
        budget=Budget(grace=0),
    )
    sample = only_sample(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))
    record = result(sample)
    assert record["stop_reason"] == "controller:agreement"
    assert statuses(sample) == {
        "m1": "submitted",
        "m2": "submitted",
        "m3": "submitted",
        "m4": "submitted",
        "m5": "cancelled",
    }
    assert record["final"]["mode"] == "controller"
    assert (record["final"]["member"], record["final"]["reason"]) == ("m1", "agreement")
    assert [s["member"] for s in record["submissions"]] == ["m1", "m2", "m3", "m4"]
    assert sample.output.completion == "3"


def test_the_answer_is_chosen_at_the_end_not_after_every_member(log_dir: Path) -> None:
    # a vote reads every submission: chosen after each of five ends and at the end, it
    # normalised 1 + 2 + 3 + 4 + 5 answers, then 5 twice more (25 calls in all)
    counting = answer_plugins.Counting()
    sample = run(log_dir, ordered(FIVE), every_finishes("vote", normalize=counting), in_turn=True)
    assert result(sample)["final"]["mode"] == "vote"
    assert counting.calls == 5  # once, when the members have ended
