"""The swarm's own work per member does not grow with the roster: on the same workload at
4 and at 16 members, every member costs the same number of reads of member views and of answer
choices (pinned counts, not times: every view read again after every change, or an
answer chosen after every member's end, would grow with n)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import swarm._run.members as members_module
from swarm import channel, controller, hookimpl, member, swarm
from swarm.records import Answer, SwarmView
from swarm.testing import run_eval, scripted_model, submit

from helpers import catalog, only_sample, result, shm_worker, sm


class CountingAnswers:
    """Counts the answer choices; the kernel's default then answers."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def swarm_choose_answer(self, view: SwarmView) -> Answer | None:
        self.calls += 1
        return None


def views_and_choices(n: int, log_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """How many times a member's view was read for the swarm's views, and how many answer
    choices, in one run of ``n`` members that each append once and submit."""
    read = 0
    real = members_module.RunMember.view

    def counting(self: members_module.RunMember) -> Any:
        nonlocal read
        read += 1
        return real.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(members_module.RunMember, "view", property(counting))
    answers = CountingAnswers()
    solver = swarm(
        members=member(shm_worker, count=n),
        channels=[channel("shared_memory", rate=None)],
        controller=controller("leaderless", stop_on_submission=False),
        plugins=catalog(answers),
    )
    script = {"*": [sm("append", path="/shared_memory/notes.md", append_text="x"), submit("42")]}
    sample = only_sample(run_eval(solver, model=scripted_model(script), log_dir=log_dir))
    assert [m["status"] for m in result(sample)["members"]] == ["submitted"] * n
    monkeypatch.setattr(members_module.RunMember, "view", real)
    return read, answers.calls


def test_views_read_and_answer_choices_per_member_do_not_grow_with_the_roster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    views_small, choices_small = views_and_choices(4, tmp_path / "4", monkeypatch)
    views_large, choices_large = views_and_choices(16, tmp_path / "16", monkeypatch)
    assert (views_small, views_large) == (11 * 4, 11 * 16)  # eleven reads per member
    assert choices_small == choices_large == 1  # at the end, not after every member's end
