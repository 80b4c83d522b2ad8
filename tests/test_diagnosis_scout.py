"""swarm.diagnosis.scout: a Scout scan of a swarm log, offline and keyless (the scripted model
answers), with one result per member span."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from swarm import member, swarm
from swarm.testing import call, run_eval, scripted_model, submit

scout = pytest.importorskip("inspect_scout")


def test_a_scout_scan_finds_each_members_span(tmp_path: Path) -> None:
    from swarm.diagnosis.scout import MAST_QUESTIONS, mast_scanners, member_spans

    lead = [call("spawn_child", name=n, task=f"a word for {n}") for n in ("red", "blue")]
    lead += [call("wait_for_children"), call("read_messages"), submit("red: cherry, blue: sky")]
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
    )
    scripts = {
        "lead": lead,
        "red": [call("send_message", to="parent", text="cherry"), submit("cherry")],
        "blue": [call("send_message", to="parent", text="sky"), submit("sky")],
    }
    log = run_eval(solver, model=scripted_model(scripts), log_dir=tmp_path / "logs")
    sample = (read_eval_log(log.location).samples or [])[0]
    spans = member_spans(sample.events)
    assert sorted(spans) == ["blue", "lead", "red"]
    [answer] = getattr(spans["red"][-1], "tool_calls", None) or []  # its last call: the submit
    assert (answer.function, answer.arguments) == ("submit", {"answer": "cherry"})

    status = scout.scan(
        mast_scanners(),
        scout.transcripts_from(str(tmp_path / "logs")),
        scans=str(tmp_path / "scans"),
        model=scripted_model(answer="no, it kept to its task"),  # no key: the scripted model
        display="none",
        max_processes=1,
    )
    assert status.complete
    results = scout.scan_results_df(status.location)
    assert sorted(results.scanners) == sorted(f"swarm_{name}" for name in MAST_QUESTIONS)
    for name in MAST_QUESTIONS:
        df = results.scanners[f"swarm_{name}"]
        assert sorted(df["label"]) == ["blue", "lead", "red"]  # one result per member span
        assert set(df["value"].astype(str).str.lower()) == {"false"}
        assert set(df["answer"]) == {"no, it kept to its task"}
