"""The suite's own set-up (tests/conftest.py), checked where a wrong one would pass silently."""

from __future__ import annotations

from pathlib import Path

from swarm import member, swarm
from swarm.testing import run_eval, scripted_model, submit


def test_in_process_evals_keep_no_live_view_buffer(tmp_path: Path) -> None:
    log = run_eval(
        swarm(members=member("swarm/worker", name="a")),
        model=scripted_model({"a": [submit("42")]}),
        log_dir=tmp_path,
    )
    assert log.status == "success"
    # what Inspect's logger reads to keep the live-view buffer (a database under Inspect's data
    # directory, outside the run's own temporary directory) or not
    assert log.eval.config.log_realtime is False
