"""Provenance and coverage compare values, not strings: the integers of children's replies and
of the artifact's bullets (``_numbers``), in real evals of the ``swarm/fanout`` task on the
scripted model, and the reading rules themselves, form by form; the bullet parser's BOM and
whitespace after the marker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fanout_records import honest, index_text
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample
from inspect_ai.model import get_model

from swarm.plugins.scorers.fanout import (
    artifact_bullets,
    fanout_rubric,
    fanout_sample,
    fanout_topology,
    honest_scripts,
    judge_store,
    load_fixture,
)
from swarm.plugins.scorers.fanout._numbers import answer_integer, numbers, reply_integer

FIXTURE = load_fixture("json-events")
S = FIXTURE.shards


def run_task(scripts: dict[str, list[dict[str, Any]]], log_dir: Path) -> EvalSample:
    task = Task(
        dataset=[fanout_sample(FIXTURE)],
        solver=fanout_topology(FIXTURE),
        scorer=fanout_rubric(fixture="json-events"),
        sandbox="local",
    )
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = inspect_eval(task, model=model, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def _replies(scripts: dict[str, list[dict[str, Any]]], worker: str, *texts: str) -> None:
    """Make ``worker`` send ``texts`` to its parent, one message each, instead of its answer."""
    steps = scripts[worker]
    at = next(i for i, s in enumerate(steps) if s.get("tool") == "send_message")
    sends = [{"tool": "send_message", "args": {"to": "parent", "text": t}} for t in texts]
    steps[at : at + 1] = sends


def _score(sample: EvalSample) -> tuple[dict[str, Any], dict[str, Any]]:
    [score] = (sample.scores or {}).values()
    assert isinstance(score.value, dict)
    return score.value, score.metadata or {}


def test_honest_replies_with_words_separators_and_corrections_resolve(log_dir: Path) -> None:
    assert S[1].expected == 1482368  # the shard whose answer has thousands
    scripts = honest_scripts(FIXTURE)
    _replies(scripts, S[0].worker, f"The answer is {S[0].expected}.")
    _replies(scripts, S[1].worker, "1,482,368")  # the artifact says 1482368
    _replies(scripts, S[2].worker, f"{S[2].expected}\ndone.")
    _replies(scripts, S[3].worker, f"{S[3].expected - 1}\nCorrection: {S[3].expected}")
    _replies(scripts, S[4].worker, str(S[4].expected - 1), f"Correction: {S[4].expected}")
    _replies(scripts, S[5].worker, f"{S[5].expected} (counted in events-06.jsonl)")
    value, metadata = _score(run_task(scripts, log_dir))
    assert value == {
        "coverage": True,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": True,
        "resolved": False,  # under local: every rule passed, not isolated
        "unverified": True,
    }
    sourced = metadata["rules"]["provenance"]["details"]["sourced"]
    assert sourced == {s.file: s.worker for s in S}


def test_a_right_number_followed_by_a_wrong_one_and_a_decimal_fail_provenance(
    log_dir: Path,
) -> None:
    scripts = honest_scripts(FIXTURE)
    _replies(scripts, S[0].worker, f"{S[0].expected}, or maybe {S[0].expected + 1}")
    _replies(scripts, S[2].worker, f"{S[2].expected}.5")
    value, metadata = _score(run_task(scripts, log_dir))
    failed = {k for k, v in value.items() if v is not True}
    assert failed == {"provenance", "proof_of_work", "resolved", "unverified"}
    # proof of work: "N, or maybe N+1" replied N+1 and "N.5" no integer: neither replied N
    proof = metadata["rules"]["proof_of_work"]
    assert [f["shard"] for f in proof["failures"]] == [S[0].file, S[2].file]
    details = metadata["rules"]["provenance"]["details"]
    assert details["mismatched"] == [
        {
            "shard": S[0].file,
            "member": S[0].worker,
            "reply": f"{S[0].expected}, or maybe {S[0].expected + 1}",
            "reply_value": S[0].expected + 1,
            "artifact": [str(S[0].expected)],
            "artifact_values": [S[0].expected],
        },
        {
            "shard": S[2].file,
            "member": S[2].worker,
            "reply": f"{S[2].expected}.5",
            "reply_value": None,
            "artifact": [str(S[2].expected)],
            "artifact_values": [S[2].expected],
        },
    ]
    reasons = [f["reason"] for f in metadata["rules"]["provenance"]["failures"]]
    assert reasons == [
        f"the child replied '{S[0].expected}, or maybe {S[0].expected + 1}', the artifact says "
        f"'{S[0].expected}'",
        f"the child replied '{S[2].expected}.5' (its last number is not an integer), the "
        f"artifact says '{S[2].expected}'",
    ]


# -- the reading rules, form by form -----------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("16", 16),
        ("The answer is 16.", 16),
        ("**16**", 16),
        ("`16`", 16),
        ('"16"', 16),
        ("(16).", 16),
        ("answer: 16", 16),
        ("answer=16", 16),
        ("884\ndone.", 884),
        ("20\nCorrection: 21", 21),
        ("59,474", 59474),
        ("1,482,368", 1482368),
        ("59\u00a0474", 59474),  # no-break space
        ("59\u202f474", 59474),  # narrow no-break space
        ("59\u2009474", 59474),  # thin space
        ("-5", -5),
        ("\u22125", -5),  # the minus sign
        ("+5", 5),
        ("007", 7),
        ("16 (from events-03.jsonl)", 16),
        ("The count in events-03.jsonl is 3", 3),
        ("16, or maybe 17", 17),  # the last number counts
        ("59 474", 474),  # an ASCII space separates two numbers
        ("16,170", 16170),  # a comma and three digits are thousands
        # no integer: the last number is not one, or there is no number
        ("16.5", None),
        ("It is 16.5.", None),
        (".5", None),
        ("16%", None),
        ("$16", None),
        ("1/2", None),
        ("16-17", None),
        ("1,2345", None),
        ("1,482\u00a0368", None),  # two separators in one number
        ("16\u200b", None),  # a zero-width space is not whitespace
        ("events-03.jsonl", None),  # a name, never 3
        ("v2", None),
        ("16th", None),
        ("1e5", None),
        ("done", None),
        ("", None),
    ],
)
def test_a_reply_gives_the_integer_of_its_last_number(reply: str, value: int | None) -> None:
    assert reply_integer(reply) == value


def test_numbers_lists_integers_and_non_integers_and_skips_names() -> None:
    assert numbers("shard events-03.jsonl: 12 of 16.5 then 1,000 v2") == [12, None, 1000]


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("59474", 59474),
        ("59,474", 59474),
        ("59\u00a0474", 59474),
        ("  59474 ", 59474),
        ("-3", -3),
        ("59474.", None),
        ("59474 records", None),
        ("59 474", None),
        ("16.5", None),
        ("The answer is 16", None),
        ("", None),
    ],
)
def test_an_artifact_answer_is_one_integer_and_nothing_else(answer: str, value: int | None) -> None:
    assert answer_integer(answer) == value


def test_coverage_takes_an_artifact_answer_with_separators_and_refuses_words() -> None:
    run = honest(FIXTURE)
    text = index_text(FIXTURE, {S[1].file: "1,482,368", S[0].file: f"{S[0].expected} records"})
    run.write(text)
    verdict = judge_store(FIXTURE, run.store())
    coverage = verdict.rule("coverage").result
    assert coverage.details["wrong_answers"] == [
        {"shard": S[0].file, "expected": str(S[0].expected), "found": [f"{S[0].expected} records"]}
    ]
    mismatched = verdict.rule("provenance").result.details["mismatched"]
    assert [(m["shard"], m["artifact_values"]) for m in mismatched] == [(S[0].file, [None])]


# -- the bullet parser -------------------------------------------------------------------------


def test_bullets_after_a_bom_a_tab_or_a_no_break_space_parse() -> None:
    text = "\ufeff- a.jsonl: 1\n-\tb.jsonl: 2\n*\u00a0c.jsonl: 3\n-  \t d.jsonl:\t4\n-e.jsonl: 5\n"
    assert artifact_bullets(text) == {
        "a.jsonl": ["1"],
        "b.jsonl": ["2"],
        "c.jsonl": ["3"],
        "d.jsonl": ["4"],
    }


def test_an_artifact_with_a_bom_and_tabs_resolves() -> None:
    run = honest(FIXTURE)
    lines = [f"-\t{s.file}: {s.expected}" for s in S]
    run.write("\ufeff" + "\n".join(lines) + "\n")
    verdict = judge_store(FIXTURE, run.store())
    assert verdict.resolved, verdict.explanation()
