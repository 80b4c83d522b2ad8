"""``member_scores(scorer)``: every member's answer scored next to the swarm's own score, in the
eval and with ``inspect score`` on a saved log (the real command line, in a temp dir)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.scorer import match

from swarm import ConfigError, controller, swarm
from swarm.analysis import MEMBER_SCORE_KEYS, member_scores
from swarm.testing import Step, reply, run_eval, scripted_model, submit

from helpers import members_in_turn

FOUR = {"m1": "41", "m2": "42", "m3": "40", "m4": "43"}  # one of four is right: m2


def used(step: Step) -> Step:
    return attrs.evolve(step, usage=(100, 10))


def four_members(log_dir: Path, final: str, **eval_args: Any) -> EvalLog:
    scripts = {name: [used(reply("warming up")), used(submit(text))] for name, text in FOUR.items()}
    solver = swarm(
        members=members_in_turn(FOUR),  # m1 to m4 submit in order
        controller=controller("leaderless", final=final, stop_on_submission=False),
    )
    return run_eval(solver, model=scripted_model(scripts), log_dir=log_dir, **eval_args)


def figures(log: EvalLog, scorer: str = "member_scores") -> dict[str, tuple[float, float]]:
    """Each key's (mean, stderr) over the samples, from the log's results."""
    assert log.results is not None
    found = {s.name: s for s in log.results.scores if s.scorer == scorer}
    return {
        key: (found[key].metrics["mean"].value, found[key].metrics["stderr"].value)
        for key in MEMBER_SCORE_KEYS
    }


@pytest.mark.parametrize(("final", "team"), [("first", 0.0), ("last", 0.0), ("vote", 0.0)])
def test_one_member_of_four_right(log_dir: Path, final: str, team: float) -> None:
    log = four_members(log_dir, final, scorer=member_scores(match()))
    [sample] = log.samples or []
    score = sample.scores["member_scores"]
    assert score.value == {"team": team, "best": 1.0, "mean": 0.25, "any": 1.0}
    assert score.metadata == {"members": {"m1": 0.0, "m2": 1.0, "m3": 0.0, "m4": 0.0}}
    assert figures(log) == {
        "team": (team, 0.0),
        "best": (1.0, 0.0),
        "mean": (0.25, 0.0),
        "any": (1.0, 0.0),
    }


def test_the_team_scores_as_its_chosen_answer(log_dir: Path) -> None:
    # verify_then_vote answers with the one member match passes: the team is right too
    scripts = {name: [used(reply("warming up")), used(submit(text))] for name, text in FOUR.items()}
    solver = swarm(
        members=members_in_turn(FOUR),  # m1 to m4 submit in order
        controller=controller("leaderless", final="verify_then_vote", verifier="match"),
    )
    log = run_eval(
        solver, model=scripted_model(scripts), log_dir=log_dir, scorer=member_scores("match")
    )
    [sample] = log.samples or []
    assert sample.scores["member_scores"].value == {
        "team": 1.0,
        "best": 1.0,
        "mean": 0.25,
        "any": 1.0,
    }


def test_over_samples_the_metrics_are_inspects_mean_and_stderr(log_dir: Path) -> None:
    log = four_members(log_dir, "first", scorer=member_scores(match()), samples=2)
    assert figures(log) == {
        "team": (0.0, 0.0),
        "best": (1.0, 0.0),
        "mean": (0.25, 0.0),
        "any": (1.0, 0.0),
    }


def test_inspect_score_on_a_saved_log_gives_the_same_figures(log_dir: Path, tmp_path: Path) -> None:
    log = four_members(log_dir, "first")  # scored by the task's includes() only
    inspect = Path(sys.executable).parent / "inspect"
    scored = tmp_path / "scored.eval"
    done = subprocess.run(
        [
            str(inspect),
            "score",
            "--scorer",
            "swarm/member_scores",
            "-S",
            "scorer=match",
            "--action",
            "append",
            # the log's model is rebuilt to score; the scripted model's scripts are not needed
            "--model",
            "swarm/scripted",
            "--display",
            "none",
            "--output-file",
            str(scored),
            log.location,
        ],
        cwd=tmp_path,
        env={**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    again = read_eval_log(str(scored))
    assert figures(again) == {
        "team": (0.0, 0.0),
        "best": (1.0, 0.0),
        "mean": (0.25, 0.0),
        "any": (1.0, 0.0),
    }
    [sample] = again.samples or []
    assert sample.scores is not None
    assert sample.scores["member_scores"].value == {
        "team": 0.0,
        "best": 1.0,
        "mean": 0.25,
        "any": 1.0,
    }
    assert sample.scores["includes"].value == "I"  # the task's own score is kept


def test_a_sample_without_a_swarm_scores_its_output_only(log_dir: Path) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    task = Task(
        dataset=[Sample(input="What is 6 * 7?", target="42")],
        solver=generate(),
        scorer=member_scores(match()),
    )
    [log] = eval(task, model=scripted_model(answer="42"), display="none", log_dir=str(log_dir))
    [sample] = log.samples or []
    assert sample.scores["member_scores"].value == {
        "team": 1.0,
        "best": 0.0,
        "mean": 0.0,
        "any": 0.0,
    }


def test_an_unknown_scorer_name_is_an_error_naming_it() -> None:
    with pytest.raises(ConfigError) as info:
        member_scores("no_such_scorer_x")
    assert str(info.value).startswith(
        "member_scores.scorer: no Inspect scorer called 'no_such_scorer_x'"
    )
