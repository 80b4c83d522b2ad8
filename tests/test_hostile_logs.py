"""Hostile logs for ``swarm timeline`` (issue 21): a log whose sample entry is corrupt, and
swarm records that are malformed (a member without a name, ``started`` as text, the metrics as
a string...).  Each is refused with one line on stderr naming the sample, and for a record the
field, and exit status 1, as every other log the timeline cannot draw; nothing is written.

Before the fix the corrupt entry escaped as a raw ``JSONDecodeError``, ``ValidationError`` or
``IndexError`` (the sample was read outside the guarded read) and the malformed records as
``KeyError``, ``ValueError``, ``AttributeError``, ``TypeError`` or ``OverflowError``.
"""

from __future__ import annotations

import copy
import io
import math
import sys
import zipfile
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import InfoEvent
from inspect_ai.log import EvalSample, read_eval_log, write_eval_log

from swarm import channel, member, swarm
from swarm.cli import main
from swarm.testing import call, run_eval, scripted_model, submit
from swarm.timeline import TimelineError, timeline

from helpers import shm_worker

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401  (Inspect writes a .eval log's entries with zstd)

BOARD = "/shared_memory"
RESULT = "inspect_swarm:result"
METRICS = "inspect_swarm:metrics"
LEDGER = "inspect_swarm:ledger"
ENTRY = "samples/1_epoch_1.json"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-member swarm that writes to a channel: result, metrics, ledger and evidence."""
    scripts = {
        "writer": [call("shared_memory", command="create", path=f"{BOARD}/a.md", file_text="42")],
        "reader": [call("swarm_wait", path=f"{BOARD}/a.md"), submit("42")],
    }
    ran = run_eval(
        swarm(
            members=[member(shm_worker, name="writer"), member(shm_worker, name="reader")],
            channels=[channel("shared_memory")],
        ),
        model=scripted_model(scripts),
        log_dir=tmp_path_factory.mktemp("hostile-logs"),
    )
    assert ran.status == "success", ran.error
    return Path(ran.location)


@pytest.fixture(scope="module")
def sample(log: Path) -> EvalSample:
    [found] = read_eval_log(log).samples or []
    return found


def run_timeline(*args: str) -> tuple[int, str, str]:
    """``swarm timeline ARGS`` as its entry point runs it: the status, stdout and stderr."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["swarm", "timeline", *args])
        with pytest.raises(SystemExit) as info, redirect_stdout(io.StringIO()) as out:
            with redirect_stderr(io.StringIO()) as err:
                main()
    code = info.value.code
    return (code if isinstance(code, int) else 0), out.getvalue(), err.getvalue()


# -- a corrupt sample entry ------------------------------------------------------------------


def rezip(source: Path, target: Path, data: bytes | None) -> Path:
    """A copy of the .eval log ``source`` whose sample entry holds ``data`` (none: left out)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            if name != ENTRY:
                new.writestr(name, old.read(name), compress_type=zipfile.ZIP_DEFLATED)
        if data is not None:
            new.writestr(ENTRY, data, compress_type=zipfile.ZIP_DEFLATED)
    return target


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            b'{"id": 1, ',
            "Expecting property name enclosed in double quotes: line 1 column 11 (char 10)",
        ),
        (
            b"[]",
            "1 validation error for EvalSample; Input should be a valid dictionary or instance of "
            "EvalSample [type=model_type, input_value=[], input_type=list]",
        ),
        (None, "Sample id 1 for epoch 1 not found in log {log}"),
    ],
    ids=["truncated", "not-a-sample", "left-out"],
)
def test_a_corrupt_sample_entry_is_one_line_naming_the_sample(
    log: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data: bytes | None,
    problem: str,
) -> None:
    broken = rezip(log, tmp_path / "broken.eval", data)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_timeline(str(broken), "-o", "x.html")
    message = f"sample '1' (epoch 1) of {broken} could not be read: {problem.format(log=broken)}"
    assert (code, out, err) == (1, "", f"error: {message}\n")
    assert not (tmp_path / "x.html").exists()
    with pytest.raises(TimelineError) as info:
        timeline(broken)
    assert str(info.value) == message


def test_the_copy_of_a_sound_entry_draws(log: Path, tmp_path: Path) -> None:
    """The rewritten zip is read like the original: only the entry's bytes make it fail."""
    with zipfile.ZipFile(log) as old:
        entry = old.read(ENTRY)
    copied = rezip(log, tmp_path / "copy.eval", entry)
    assert timeline(copied).to_svg() == timeline(log).to_svg()


# -- malformed swarm records -----------------------------------------------------------------

Change = Callable[[dict[str, Any]], None]


def members(store: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = store[RESULT]["members"]
    return found


def set_member(index: int, key: str, value: Any) -> Change:
    return lambda store: members(store)[index].__setitem__(key, value)


MALFORMED: dict[str, tuple[Change, str]] = {
    # case: (the change to the sample's store, the field and what is wrong with it)
    "member-without-name": (
        lambda store: members(store)[0].pop("name"),
        f"{RESULT}.members[0].name: missing",
    ),
    "name-a-number": (
        set_member(1, "name", 7),
        f"{RESULT}.members[1].name: expected a member's name (a non-empty string), got 7",
    ),
    "name-twice": (
        set_member(1, "name", "writer"),
        f"{RESULT}.members[1].name: 'writer' is also members[0].name",
    ),
    "started-as-text": (
        set_member(1, "started", "soon"),
        f"{RESULT}.members[1].started: expected a number of seconds in [0, 1e+09] or null, "
        "got 'soon'",
    ),
    "started-out-of-range": (
        set_member(0, "started", 1e300),
        f"{RESULT}.members[0].started: expected a number of seconds in [0, 1e+09] or null, "
        "got 1e+300",
    ),
    "time-infinite": (
        set_member(0, "time", math.inf),
        f"{RESULT}.members[0].time: expected a number of seconds in [0, 1e+09] or null, "
        "got inf: numbers must be finite",
    ),
    "depth-as-text": (
        set_member(1, "depth", "1"),
        f"{RESULT}.members[1].depth: expected a whole number >= 0 or null, got '1'",
    ),
    "parent-a-list": (
        set_member(1, "parent", ["writer"]),
        f"{RESULT}.members[1].parent: expected a member's name (a non-empty string) or null, "
        "got ['writer']",
    ),
    "role-a-number": (
        set_member(0, "role", 3),
        f"{RESULT}.members[0].role: expected a string or null, got 3",
    ),
    "member-a-string": (
        lambda store: members(store).__setitem__(1, "reader"),
        f"{RESULT}.members[1]: expected a mapping, got 'reader'",
    ),
    "members-a-mapping": (
        lambda store: store[RESULT].__setitem__("members", {"writer": {}}),
        f"{RESULT}.members: expected a list, got {{'writer': {{}}}}",
    ),
    "result-a-string": (
        lambda store: store.__setitem__(RESULT, "done"),
        f"{RESULT}: expected a mapping, got 'done'",
    ),
    "final-a-list": (
        lambda store: store[RESULT].__setitem__("final", ["reader"]),
        f"{RESULT}.final: expected a mapping or null, got ['reader']",
    ),
    "metrics-as-string": (
        lambda store: store.__setitem__(METRICS, "fast"),
        f"{METRICS}: expected a mapping or null, got 'fast'",
    ),
    "wall-clock-as-text": (
        lambda store: store[METRICS].__setitem__("wall_clock", "2s"),
        f"{METRICS}.wall_clock: expected a number of seconds in [0, 1e+09] or null, got '2s'",
    ),
    "ledger-caps-a-string": (
        lambda store: store[LEDGER].__setitem__("caps", "none"),
        f"{LEDGER}.caps: expected a mapping or null, got 'none'",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_record_is_one_line_naming_the_sample_and_field(
    sample: EvalSample, case: str
) -> None:
    change, problem = MALFORMED[case]
    store = copy.deepcopy(dict(sample.store))
    change(store)
    with pytest.raises(TimelineError) as info:
        timeline(sample.model_copy(update={"store": store}))
    assert str(info.value) == f"sample 1 (epoch 1) has a malformed swarm record: {problem}"


def with_evidence(sample: EvalSample, field: str, value: Any) -> EvalSample:
    """``sample`` with ``field`` of the first entry of its evidence event set to ``value``."""
    events = []
    for event in sample.events:
        data = event.data if isinstance(event, InfoEvent) else None
        if isinstance(data, dict) and data.get("type") == "evidence":
            data = copy.deepcopy(data)
            row = data["rows"][0]
            row[1 + data["schemas"][row[0]]["fields"].index(field)] = value
            event = event.model_copy(update={"data": data})
        events.append(event)
    return sample.model_copy(update={"events": events})


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("time", "later", "expected a number of seconds in [0, 1e+09] or null, got 'later'"),
        ("size", "big", "expected a whole number >= 0 or null, got 'big'"),
    ],
)
def test_a_malformed_evidence_entry_names_its_field(
    sample: EvalSample, field: str, value: Any, problem: str
) -> None:
    with pytest.raises(TimelineError) as info:
        timeline(with_evidence(sample, field, value))
    assert str(info.value) == (
        f"sample 1 (epoch 1) has a malformed swarm record: evidence.entries[0].{field}: {problem}"
    )


def test_swarm_timeline_refuses_a_malformed_record_in_one_line(
    log: Path, sample: EvalSample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = copy.deepcopy(dict(sample.store))
    members(store)[1]["started"] = "soon"
    written = read_eval_log(log)
    written.samples = [sample.model_copy(update={"store": store})]
    broken = tmp_path / "broken.eval"
    write_eval_log(written, broken)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_timeline(str(broken))
    assert (code, out) == (1, "")
    assert err == (
        f"error: sample 1 (epoch 1) has a malformed swarm record: {RESULT}.members[1].started: "
        "expected a number of seconds in [0, 1e+09] or null, got 'soon'\n"
    )
    assert list(tmp_path.iterdir()) == [broken]


def test_a_chain_of_parents_as_long_as_a_big_roster_is_drawn(sample: EvalSample) -> None:
    """1,500 members, each the parent of the next: the lanes are ordered without recursion."""
    store = copy.deepcopy(dict(sample.store))
    chain = [
        {"name": f"m{i}", "parent": f"m{i - 1}" if i else None, "depth": i, "state": "ended"}
        for i in range(1500)
    ]
    store[RESULT] = {**store[RESULT], "members": chain}
    lanes = timeline(sample.model_copy(update={"store": store})).run.lanes
    assert [(lane.name, lane.depth) for lane in lanes] == [(f"m{i}", i) for i in range(1500)]
