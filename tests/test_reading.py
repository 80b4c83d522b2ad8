"""``swarm.analysis.read_sample``: one sample of a log, read off the main thread, whole or with
only what the record readers read."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log_sample

from swarm import controller, member, swarm
from swarm.analysis import read_sample, swarm_ledger, swarm_result
from swarm.analysis._read import off_main_thread
from swarm.testing import run_eval, scripted_model, submit


def test_read_sample_is_inspects_sample_whole_or_with_only_its_records(tmp_path: Path) -> None:
    solver = swarm(members=member("swarm/worker", count=2), controller=controller("leaderless"))
    log = run_eval(solver, model=scripted_model({"*": [submit("42")]}), log_dir=tmp_path, samples=2)
    assert log.location
    whole = read_eval_log_sample(log.location, id=2)
    assert read_sample(log.location, 2) == whole
    assert read_sample(log.location).id == 1  # the first sample by default
    records = read_sample(log.location, 2, records_only=True)
    assert records.events == [] and records.messages == [] and records.attachments == {}
    assert records.store == whole.store and records.scores == whole.scores
    assert swarm_ledger(records) == swarm_ledger(whole)
    assert swarm_result(records) == swarm_result(whole)
    with pytest.raises(IndexError):
        read_sample(log.location, 3)


def test_off_main_thread_runs_elsewhere_and_raises_here() -> None:
    assert off_main_thread(threading.current_thread) is not threading.main_thread()

    def fail() -> None:
        raise KeyError("no such thing")

    with pytest.raises(KeyError, match="no such thing"):
        off_main_thread(fail)
