"""swarm.diagnosis.scout: a Scout scan of a swarm log, offline and keyless (the scripted model
answers), with one result per member span."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from swarm import member, swarm
from swarm.testing import call, run_eval, scripted_model, submit

scout = pytest.importorskip("inspect_scout")


def test_a_scout_scan_finds_each_members_span(tmp_path: Path) -> None:
    from swarm.diagnosis.scout import MAST_QUESTIONS, member_spans

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

    # the scan runs in a process of its own: Scout sets up Inspect's logging again (a second
    # handler whose filter prefixes records logged in a sample with "sample=<id>"), which
    # would change every later test's log messages in this process
    scan = f"""
import inspect_scout as scout
from swarm.diagnosis.scout import mast_scanners
from swarm.testing import scripted_model
status = scout.scan(
    mast_scanners(),
    scout.transcripts_from({str(tmp_path / "logs")!r}),
    scans={str(tmp_path / "scans")!r},
    model=scripted_model(answer="no, it kept to its task"),  # no key: the scripted model
    display="none",
    max_processes=1,
)
assert status.complete
print(status.location)
"""
    done = subprocess.run(
        [sys.executable, "-c", scan],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    location = done.stdout.strip().splitlines()[-1]
    results = scout.scan_results_df(location)
    assert sorted(results.scanners) == sorted(f"swarm_{name}" for name in MAST_QUESTIONS)
    for name in MAST_QUESTIONS:
        df = results.scanners[f"swarm_{name}"]
        assert sorted(df["label"]) == ["blue", "lead", "red"]  # one result per member span
        assert set(df["value"].astype(str).str.lower()) == {"false"}
        assert set(df["answer"]) == {"no, it kept to its task"}


def test_without_scout_the_module_says_what_to_install() -> None:
    # a plain install has no inspect-scout (the scout extra): importing the scanners was a
    # bare ModuleNotFoundError
    code = (
        "import sys; sys.modules['inspect_scout'] = None\n"
        "try:\n"
        "    import swarm.diagnosis.scout\n"
        "except Exception as ex:\n"
        "    print(type(ex).__name__, ex)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == (
        "MissingExtra swarm.diagnosis.scout needs Inspect Scout: pip install 'swarm-eval[scout]'"
    )
