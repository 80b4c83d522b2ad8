"""The records the fan-out rubric reads are the kernel's alone, on real scripted runs of the
``swarm/fanout`` task: a plugin that gives one from ``swarm_records`` (even ``trylast``, after
the messages channel) or writes one through ``store()`` in ``swarm_run_ended`` is a fault
naming the plugin and the hook, and the kernel's record is what stays; the kernel seals what it
wrote (``kernel_seal``)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import get_model
from inspect_ai.util import Store, store

from swarm import (
    PluginCatalog,
    get_plugin_manager,
    hookimpl,
    in_running_sample,
    is_protected_key,
    kernel_seal,
    record_digest,
)
from swarm.plugins.scorers.fanout import (
    fanout_sample,
    fanout_topology,
    honest_scripts,
    load_fixture,
)

FIXTURE = load_fixture("json-events")
PROTECTED = (
    "inspect_swarm:spawns",
    "inspect_swarm:messages",
    "inspect_swarm:result",
    "inspect_swarm:ledger",
    "inspect_swarm:metrics",
    "swarm_fanout:artifact",
)
FORGED = {"version": 1, "forged": True}


def run(log_dir: Path, *plugins: tuple[str, object]) -> tuple[EvalLog, dict[str, Any]]:
    """The honest fan-out with ``plugins``; the log, and the kernel's seal taken in the
    sample (by a solver step after the swarm)."""
    pm, sources = get_plugin_manager()
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    seen: dict[str, Any] = {}
    from inspect_ai.solver import Generate, TaskState, solver

    @solver
    def take_seal() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            seen["seal"] = kernel_seal(state.store)
            seen["same"] = state.store is store()
            seen["running"] = in_running_sample()
            return state

        return solve

    task = Task(
        dataset=[fanout_sample(FIXTURE)],
        solver=[fanout_topology(FIXTURE, plugins=PluginCatalog(pm, sources)), take_seal()],
        sandbox="local",
    )
    model = get_model("swarm/scripted", scripts=honest_scripts(FIXTURE), memoize=False)
    [log] = inspect_eval(task, model=model, display="none", log_dir=str(log_dir))
    return log, seen


def only(log: EvalLog) -> EvalSample:
    [sample] = log.samples or []
    return sample


def swarm_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        re.sub(r"^sample=\S+\n", "", r.getMessage())
        for r in caplog.records
        if r.name == "swarm" and r.levelno >= logging.ERROR
    ]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalLog, dict[str, Any]]:
    """The honest run with no extra plugin: the kernel's records to compare with."""
    return run(tmp_path_factory.mktemp("logs"))


def test_the_kernel_seals_every_record_it_wrote(clean: tuple[EvalLog, dict[str, Any]]) -> None:
    log, seen = clean
    assert log.status == "success", log.error
    sample = only(log)
    assert seen["same"] is True  # the scorer's state.store is the store the kernel wrote
    assert seen["running"] is True
    written = sorted(k for k in sample.store if is_protected_key(k))
    # the artifact is the scorer's, not the run's; the reads record is the kernel's
    assert written == sorted([*PROTECTED[:5], "inspect_swarm:reads"])
    assert seen["seal"] == {key: record_digest(sample.store[key]) for key in written}
    # the digest is the SHA-256 of the record's canonical JSON, the same read back from a log
    texts = [m["text"] for m in sample.store["inspect_swarm:messages"]["messages"]]
    assert sorted(texts) == sorted(str(s.expected) for s in FIXTURE.shards)


def test_no_seal_and_no_running_sample_outside_an_eval() -> None:
    assert kernel_seal(Store({"inspect_swarm:result": {"version": 1}})) is None
    assert in_running_sample() is False


def test_the_protected_keys() -> None:
    assert [is_protected_key(k) for k in (*PROTECTED, "inspect_swarm:anything")] == [True] * 7
    assert [is_protected_key(k) for k in ("acme:x", "swarm_fanout:other", "inspect_swarm", 7)] == [
        False
    ] * 4


def _forged(view: Any) -> dict[str, Any]:
    return {key: dict(FORGED) for key in PROTECTED} | {"acme:fine": {"n": 1}}


class TrylastRecords:
    """Gives every protected key from ``swarm_records``, called after every other plugin."""

    swarm_records = hookimpl(trylast=True)(staticmethod(_forged))


class TryfirstRecords:
    """The same, called before every other plugin (before the messages channel too)."""

    swarm_records = hookimpl(tryfirst=True)(staticmethod(_forged))


@pytest.mark.parametrize("forger", [TrylastRecords, TryfirstRecords])
def test_swarm_records_giving_a_protected_key_is_refused_and_named(
    clean: tuple[EvalLog, dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
    log_dir: Path,
    forger: type,
) -> None:
    with caplog.at_level(logging.ERROR, logger="swarm"):
        log, _ = run(log_dir, ("forger", forger()))
    assert log.status == "error"
    sample = only(log)
    first = "Plugin 'forger', hook 'swarm_records': wrote the store key "
    assert sample.error is not None
    assert (
        sample.error.message == first + "'inspect_swarm:spawns', which is not a plugin's to write"
    )
    further = "swarm: a further failure while the run was failing: " + first
    assert [m for m in swarm_errors(caplog) if "'forger'" in m] == [
        f"{further}{key!r}, which is not a plugin's to write" for key in PROTECTED[1:]
    ]
    # the kernel's records stay: the message log is the channel's, as in the clean run
    kernel = only(clean[0]).store
    for key in PROTECTED[:5]:
        assert "forged" not in json.dumps(sample.store[key])
    texts = sorted(m["text"] for m in sample.store["inspect_swarm:messages"]["messages"])
    assert texts == sorted(m["text"] for m in kernel["inspect_swarm:messages"]["messages"])
    assert "swarm_fanout:artifact" not in sample.store
    assert sample.store["acme:fine"] == {"n": 1}  # a plugin's own key is still written


class RunEndedWriter:
    """Writes (or, for the message log, edits in place) every protected key through
    ``store()`` when the run ends."""

    @hookimpl
    def swarm_run_ended(self, view: Any, result: Any) -> None:
        for key in PROTECTED:
            if key == "inspect_swarm:messages":
                store().get(key)["messages"][0]["text"] = "999"
            else:
                store().set(key, dict(FORGED))
        store().set("acme:own", {"n": 2})


def test_swarm_run_ended_writing_a_protected_key_is_refused_named_and_undone(
    caplog: pytest.LogCaptureFixture, log_dir: Path
) -> None:
    with caplog.at_level(logging.ERROR, logger="swarm"):
        log, _ = run(log_dir, ("writer", RunEndedWriter()))
    assert log.status == "error"
    sample = only(log)
    assert sample.error is not None
    message = "Plugin 'writer', hook 'swarm_run_ended': wrote the store key {!r}, which is not "
    message += "a plugin's to write; the kernel's record stays"
    ordered = sorted(PROTECTED)
    assert sample.error.message == message.format(ordered[0])
    further = "swarm: a further failure while the run was failing: "
    assert [m for m in swarm_errors(caplog) if "'writer'" in m] == [
        further + message.format(key) for key in ordered[1:]
    ]
    for key in PROTECTED[:5]:
        assert "forged" not in json.dumps(sample.store[key])
    texts = [m["text"] for m in sample.store["inspect_swarm:messages"]["messages"]]
    assert sorted(texts) == sorted(str(s.expected) for s in FIXTURE.shards)
    assert "swarm_fanout:artifact" not in sample.store
    assert sample.store["acme:own"] == {"n": 2}  # an observer may still write its own keys
