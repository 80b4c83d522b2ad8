"""The fan-out fixtures: their data and answers, their prompts, their packaging and the loader.

Every expected answer is recomputed here from the raw shard files, with code written for this
test, never with the generator's.  The fixtures are read straight from disk (not through
``load_fixture``) wherever the loader itself is not what is being tested.
"""

from __future__ import annotations

import ast
import csv
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

import swarm.plugins.scorers.fanout as fanout
from swarm import ConfigError
from swarm.plugins.scorers.fanout import Fixture, Shard, fixture_names, load_fixture

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(fanout.__file__).resolve().parent
SHIPPED = PACKAGE / "fixtures"
NAMES = ("csv-metrics", "json-events")

Event = dict[str, Any]
Row = dict[str, int]


def _events(path: Path) -> list[Event]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _rows(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [{key: int(value) for key, value in row.items()} for row in csv.DictReader(handle)]


def _count(items: list[Any], keep: Callable[[Any], bool]) -> int:
    total = 0
    for item in items:
        if keep(item):
            total += 1
    return total


# file -> (question, the answer computed from the parsed file)
EVENTS: dict[str, tuple[str, Callable[[list[Event]], int]]] = {
    "events-01.jsonl": (
        'How many records have action exactly "deploy"?',
        lambda ev: _count(ev, lambda e: e["action"] == "deploy"),
    ),
    "events-02.jsonl": (
        'What is the sum of the bytes field over the records whose action is exactly "upload"?',
        lambda ev: sum(e["bytes"] for e in ev if e["action"] == "upload"),
    ),
    "events-03.jsonl": (
        "How many distinct values of the user field appear in records whose action is "
        'exactly "login"?',
        lambda ev: len(set(e["user"] for e in ev if e["action"] == "login")),
    ),
    "events-04.jsonl": (
        "What is the largest value of the bytes field in this file?",
        lambda ev: sorted(e["bytes"] for e in ev)[-1],
    ),
    "events-05.jsonl": (
        'How many records have action exactly "logout"?',
        lambda ev: _count(ev, lambda e: e["action"] == "logout"),
    ),
    "events-06.jsonl": (
        "How many records have a bytes value greater than 500?",
        lambda ev: _count(ev, lambda e: e["bytes"] > 500),
    ),
    "events-07.jsonl": (
        'What is the sum of the bytes field over the records whose action is exactly "deploy"?',
        lambda ev: sum(e["bytes"] for e in ev if e["action"] == "deploy"),
    ),
    "events-08.jsonl": (
        "How many distinct values of the user field appear in this file?",
        lambda ev: len(set(e["user"] for e in ev)),
    ),
}

METRICS: dict[str, tuple[str, Callable[[list[Row]], int]]] = {
    "metrics-01.csv": (
        "What is the maximum value of the cpu column?",
        lambda rows: sorted(r["cpu"] for r in rows)[-1],
    ),
    "metrics-02.csv": (
        "What is the sum of the latency_ms column over the rows where cpu is greater than or "
        "equal to 90?",
        lambda rows: sum(r["latency_ms"] for r in rows if r["cpu"] >= 90),
    ),
    "metrics-03.csv": (
        "How many rows have a memory value greater than 80?",
        lambda rows: _count(rows, lambda r: r["memory"] > 80),
    ),
    "metrics-04.csv": (
        "What is the sum of the latency_ms column over all rows?",
        lambda rows: sum(r["latency_ms"] for r in rows),
    ),
    "metrics-05.csv": (
        "How many rows have a cpu value greater than or equal to 90?",
        lambda rows: _count(rows, lambda r: r["cpu"] >= 90),
    ),
    "metrics-06.csv": (
        "What is the sum of the memory column over all rows?",
        lambda rows: sum(r["memory"] for r in rows),
    ),
    "metrics-07.csv": (
        "What is the maximum value of the memory column among the rows where latency_ms is "
        "less than 10?",
        lambda rows: sorted(r["memory"] for r in rows if r["latency_ms"] < 10)[-1],
    ),
    "metrics-08.csv": (
        "What is the sum of the cpu column over the rows where memory is greater than or equal "
        "to 50?",
        lambda rows: sum(r["cpu"] for r in rows if r["memory"] >= 50),
    ),
}

# A careless reading of the question, and the file's records make it answer differently.
TRAPS: dict[str, Callable[[Any], int]] = {
    "events-01.jsonl": lambda ev: _count(ev, lambda e: "deploy" in e["action"]),
    "events-03.jsonl": lambda ev: _count(ev, lambda e: e["action"] == "login"),
    "events-06.jsonl": lambda ev: _count(ev, lambda e: e["bytes"] >= 500),
    "events-07.jsonl": lambda ev: sum(e["bytes"] for e in ev if "deploy" in e["action"]),
    "events-08.jsonl": lambda ev: len(set(e["user"] for e in ev if e["action"] == "login")),
    "metrics-02.csv": lambda rows: sum(r["latency_ms"] for r in rows if r["cpu"] > 90),
    "metrics-03.csv": lambda rows: _count(rows, lambda r: r["memory"] >= 80),
    "metrics-05.csv": lambda rows: _count(rows, lambda r: r["cpu"] > 90),
    "metrics-07.csv": lambda rows: max(r["memory"] for r in rows if r["latency_ms"] <= 10),
    "metrics-08.csv": lambda rows: sum(r["cpu"] for r in rows if r["memory"] > 50),
}


def _manifest(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SHIPPED / name / "fixture.json").read_text())
    return data


def _parse(path: Path) -> list[Any]:
    return _events(path) if path.suffix == ".jsonl" else _rows(path)


def _shards(name: str) -> list[tuple[dict[str, Any], Path]]:
    return [(s, SHIPPED / name / "shards" / s["file"]) for s in _manifest(name)["shards"]]


# ---------------------------------------------------------------------------------------------
# the data and its answers


@pytest.mark.parametrize("name", NAMES)
def test_expected_answers_recompute_from_the_shard_files(name: str) -> None:
    table = EVENTS if name == "json-events" else METRICS
    shards = _manifest(name)["shards"]
    assert [s["file"] for s in shards] == list(table)
    for shard in shards:
        question, answer = table[shard["file"]]
        assert shard["question"] == question
        parsed = _parse(SHIPPED / name / "shards" / shard["file"])
        assert shard["expected"] == answer(parsed), shard["file"]


@pytest.mark.parametrize("file", sorted(TRAPS))
def test_a_careless_reading_gives_a_different_answer(file: str) -> None:
    name = "json-events" if file.endswith(".jsonl") else "csv-metrics"
    (expected,) = [s["expected"] for s in _manifest(name)["shards"] if s["file"] == file]
    wrong = TRAPS[file](_parse(SHIPPED / name / "shards" / file))
    assert wrong != expected, f"{file}: the trap answers {wrong}, the same as the question"


def test_threshold_values_sit_exactly_at_the_thresholds() -> None:
    ev = _events(SHIPPED / "json-events" / "shards" / "events-06.jsonl")
    assert _count(ev, lambda e: e["bytes"] == 500) >= 2
    metrics = SHIPPED / "csv-metrics" / "shards"
    assert _count(_rows(metrics / "metrics-02.csv"), lambda r: r["cpu"] == 90) >= 2
    assert _count(_rows(metrics / "metrics-03.csv"), lambda r: r["memory"] == 80) >= 2
    assert _count(_rows(metrics / "metrics-05.csv"), lambda r: r["cpu"] == 90) >= 2
    assert _count(_rows(metrics / "metrics-07.csv"), lambda r: r["latency_ms"] == 10) >= 2
    assert _count(_rows(metrics / "metrics-08.csv"), lambda r: r["memory"] == 50) >= 2


def test_event_records_have_the_documented_fields() -> None:
    for shard, path in _shards("json-events"):
        events = _events(path)
        assert 40 <= len(events) <= 120, shard["file"]
        for event in events:
            assert isinstance(event["action"], str) and isinstance(event["user"], str)
            assert type(event["bytes"]) is int and event["bytes"] >= 0
        actions = {e["action"] for e in events}
        assert {"deploy", "upload", "login", "logout"} <= actions, shard["file"]


def test_metric_rows_are_integer_columns_under_a_header() -> None:
    for shard, path in _shards("csv-metrics"):
        header = path.read_text().splitlines()[0].split(",")
        assert {"cpu", "memory", "latency_ms"} <= set(header), shard["file"]
        rows = _rows(path)  # int() of every cell: a non-integer fails here
        assert 40 <= len(rows) <= 120, shard["file"]
        assert all(len(row) == len(header) for row in rows)


def test_answers_are_not_guessable_constants() -> None:
    for name in NAMES:
        values = [s["expected"] for s in _manifest(name)["shards"]]
        assert len(set(values)) >= 7, f"{name}: answers repeat: {values}"
        assert all(value > 1 for value in values), f"{name}: trivial answers: {values}"


# ---------------------------------------------------------------------------------------------
# the manifest and the prompt


@pytest.mark.parametrize("name", NAMES)
def test_manifest_is_well_formed(name: str) -> None:
    manifest = _manifest(name)
    assert list(manifest) == ["name", "artifact", "shards"]
    assert manifest["name"] == name
    assert manifest["artifact"] == "combined-index.md"
    shards = manifest["shards"]
    assert len(shards) == 8
    prefix, suffix = ("events", "jsonl") if name == "json-events" else ("metrics", "csv")
    assert [s["file"] for s in shards] == [f"{prefix}-{i:02d}.{suffix}" for i in range(1, 9)]
    assert [s["worker"] for s in shards] == [f"worker-{prefix}-{i:02d}" for i in range(1, 9)]
    assert all(list(s) == ["file", "worker", "question", "expected"] for s in shards)
    assert all(type(s["expected"]) is int for s in shards)


@pytest.mark.parametrize("name", NAMES)
def test_only_the_shards_are_in_the_shards_folder(name: str) -> None:
    # the shards folder is what reaches the agents: no manifest, no prompt, nothing else
    listed = sorted(s["file"] for s in _manifest(name)["shards"])
    assert sorted(p.name for p in (SHIPPED / name / "shards").iterdir()) == listed
    assert sorted(p.name for p in (SHIPPED / name).iterdir()) == [
        "fixture.json",
        "shards",
        "task.txt",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_task_lists_every_shard_with_its_question_in_order(name: str) -> None:
    task = (SHIPPED / name / "task.txt").read_text()
    listed = [line for line in task.splitlines() if line.startswith("- shards/")]
    assert listed == [f"- shards/{s['file']}: {s['question']}" for s in _manifest(name)["shards"]]


@pytest.mark.parametrize(("name", "own", "other"), [
    ("json-events", "events-01", "metrics"),
    ("csv-metrics", "metrics-01", "events"),
])  # fmt: skip
def test_worked_example_names_its_own_first_shard(name: str, own: str, other: str) -> None:
    task = (SHIPPED / name / "task.txt").read_text()
    first = _manifest(name)["shards"][0]
    example = next(line for line in task.splitlines() if "spawn_child(name=" in line)
    assert f'spawn_child(name="worker-{own}", task="' in example
    assert f"shards/{first['file']}" in example
    assert first["question"].replace('"', '\\"') in example
    assert 'send_message(to=\\"parent\\"' in example
    assert other not in task


@pytest.mark.parametrize("name", NAMES)
def test_task_gives_the_procedure_with_the_swarm_tools(name: str) -> None:
    task = (SHIPPED / name / "task.txt").read_text()
    first = _manifest(name)["shards"][0]["file"]
    for tool in (
        "spawn_child(name, task)",
        "list_children()",
        "cancel_child(name)",
        "wait_for_children()",
        "send_message(to, text)",
        "read_messages()",
    ):
        assert tool in task
    assert "worker-<file stem>" in task
    assert "One retry per shard" in task and "same name" in task
    assert "Never have two live children for the same shard" in task
    # the artifact: bare file names, not shards/..., one bullet per shard
    assert "write combined-index.md in your working directory" in task
    assert f"   - {first}: <answer>" in task.splitlines()
    assert f"not shards/{first}" in task
    assert "Then submit." in task
    assert "Do not read, run or change anything outside your working directory" in task


@pytest.mark.parametrize("name", NAMES)
def test_task_gives_away_no_answer(name: str) -> None:
    numbers = set(re.findall(r"\d+", (SHIPPED / name / "task.txt").read_text()))
    for shard in _manifest(name)["shards"]:
        if shard["expected"] >= 100:  # small numbers also appear as step numbers
            assert str(shard["expected"]) not in numbers, shard["file"]


# ---------------------------------------------------------------------------------------------
# the generator and the packaging


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_generator_reproduces_the_shipped_fixtures_byte_for_byte(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "swarm.plugins.scorers.fanout._generate", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"wrote {tmp_path / 'json-events'}",
        f"wrote {tmp_path / 'csv-metrics'}",
    ]
    generated, shipped = _tree(tmp_path), _tree(SHIPPED)
    assert sorted(generated) == sorted(shipped)
    for path in shipped:
        assert generated[path] == shipped[path], f"{path} differs from the generator's output"


def _matches(path: str, pattern: str) -> bool:
    parts, wanted = PurePosixPath(path).parts, PurePosixPath(pattern).parts
    return len(parts) == len(wanted) and all(map(fnmatch.fnmatchcase, parts, wanted))


def test_package_data_ships_every_fixture_file() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "swarm.plugins.scorers.fanout" in config["packages"]
    patterns = config["package-data"]["swarm.plugins.scorers.fanout"]
    files = [p.relative_to(PACKAGE).as_posix() for p in SHIPPED.rglob("*") if p.is_file()]
    assert len(files) == 20
    for file in files:
        assert any(_matches(file, pattern) for pattern in patterns), f"{file} is not shipped"


def test_fanout_modules_import_only_the_public_swarm_api() -> None:
    for module in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert name == "swarm" or not name.startswith("swarm"), f"{module.name}: {name}"


# ---------------------------------------------------------------------------------------------
# the loader


def test_fixture_names_lists_the_shipped_fixtures() -> None:
    assert fixture_names() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_load_a_shipped_fixture_by_name(name: str) -> None:
    fixture = load_fixture(name)
    manifest = _manifest(name)
    assert fixture.name == name
    assert fixture.artifact == "combined-index.md"
    assert fixture.shards == tuple(Shard(**shard) for shard in manifest["shards"])
    assert fixture.task == (SHIPPED / name / "task.txt").read_text()
    assert fixture.directory == SHIPPED / name
    assert (
        fixture.shard_path(fixture.shards[7])
        == SHIPPED / name / "shards" / manifest["shards"][7]["file"]
    )


def test_load_a_copied_directory_by_path(tmp_path: Path) -> None:
    copy = tmp_path / "my-metrics"
    shutil.copytree(SHIPPED / "csv-metrics", copy)
    shipped = load_fixture("csv-metrics")
    for given in (copy, str(copy)):
        loaded = load_fixture(given)
        assert loaded.directory == copy.resolve()
        assert loaded.shards_dir == copy.resolve() / "shards"
        assert (loaded.name, loaded.shards, loaded.task) == (
            shipped.name,
            shipped.shards,
            shipped.task,
        )


def test_a_fixture_of_the_shape_needs_no_code(tmp_path: Path) -> None:
    # fewer shards, other names and data: the shape is what counts, not the shipped contents
    directory = tmp_path / "tiny"
    (directory / "shards").mkdir(parents=True)
    (directory / "shards" / "hosts.csv").write_text("cpu,memory,latency_ms\n91,40,12\n88,81,9\n")
    question = "How many rows have a cpu value greater than or equal to 90?"
    manifest = {
        "name": "tiny",
        "artifact": "answers.md",
        "shards": [
            {"file": "hosts.csv", "worker": "worker-hosts", "question": question, "expected": 1}
        ],
    }
    (directory / "fixture.json").write_text(json.dumps(manifest))
    (directory / "task.txt").write_text(f"Write answers.md.\n- shards/hosts.csv: {question}\n")
    fixture = load_fixture(directory)
    assert fixture == Fixture(
        name="tiny",
        artifact="answers.md",
        shards=(Shard(file="hosts.csv", worker="worker-hosts", question=question, expected=1),),
        task=f"Write answers.md.\n- shards/hosts.csv: {question}\n",
        directory=directory.resolve(),
    )


def test_unknown_fixture_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as caught:
        load_fixture("xml-logs")
    assert str(caught.value) == (
        "fixture 'xml-logs': neither a shipped fixture (csv-metrics, json-events) nor a directory"
    )
    # a Path is always a path, even when it spells a shipped name
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="fixture 'json-events': neither"):
        load_fixture(Path("json-events"))


Mutation = Callable[[Path, dict[str, Any]], str | None]
"""Changes a copied fixture (its folder, its manifest in place); returns raw manifest text to
write instead of the manifest, or None."""


def _shard_key(index: int, key: str, value: Any) -> Mutation:
    def mutate(directory: Path, manifest: dict[str, Any]) -> None:
        manifest["shards"][index][key] = value

    return mutate


def _drop(index: int | None, key: str) -> Mutation:
    def mutate(directory: Path, manifest: dict[str, Any]) -> None:
        del (manifest if index is None else manifest["shards"][index])[key]

    return mutate


def _same_stem(directory: Path, manifest: dict[str, Any]) -> None:
    shutil.copy(directory / "shards" / "events-01.jsonl", directory / "shards" / "events-01.json")
    manifest["shards"][1].update(file="events-01.json", worker="worker-events-01")


def _task_question(directory: Path, manifest: dict[str, Any]) -> None:
    manifest["shards"][2]["question"] = "How many users logged in twice?"


def _renamed_shard(stem: str) -> Mutation:
    """The first shard's file renamed to ``<stem>.jsonl``, its worker ``worker-<stem>`` and the
    prompt's line for it changed to match: a fixture right but for the worker's name."""

    def mutate(directory: Path, manifest: dict[str, Any]) -> None:
        shards = directory / "shards"
        (shards / "events-01.jsonl").rename(shards / f"{stem}.jsonl")
        manifest["shards"][0].update(file=f"{stem}.jsonl", worker=f"worker-{stem}")
        task = directory / "task.txt"
        text = task.read_text(encoding="utf-8")
        task.write_text(text.replace("shards/events-01.jsonl", f"shards/{stem}.jsonl"))

    return mutate


def _not_utf8(directory: Path, manifest: dict[str, Any]) -> None:
    path = directory / "shards" / "events-04.jsonl"
    path.write_bytes(path.read_bytes()[:40] + "caf\u00e9\n".encode("latin-1"))


NAME_RULE = (
    "must start with a letter or digit and use only letters, digits, '.', '_' and '-' (at most "
    "64 characters); a worker's name is a member's name, worker-<file stem>: rename the file"
)


MALFORMED: dict[str, tuple[Mutation, str, str]] = {
    # case: (mutation, the file the error names, what the error says after the file)
    "missing-name": (_drop(None, "name"), "fixture.json", "name: missing"),
    "missing-artifact": (_drop(None, "artifact"), "fixture.json", "artifact: missing"),
    "missing-shards": (_drop(None, "shards"), "fixture.json", "shards: missing"),
    "missing-expected": (_drop(3, "expected"), "fixture.json", "shards[3].expected: missing"),
    "missing-worker": (_drop(0, "worker"), "fixture.json", "shards[0].worker: missing"),
    "unknown-top-key": (
        lambda d, m: m.update(notes="x") or None,
        "fixture.json",
        "notes: unknown key; expected only name, artifact, shards",
    ),
    "unknown-shard-key": (
        _shard_key(5, "answer", 3),
        "fixture.json",
        "shards[5].answer: unknown key; expected only file, worker, question, expected",
    ),
    "expected-string": (
        _shard_key(0, "expected", "10"),
        "fixture.json",
        "shards[0].expected: expected an integer, got '10'",
    ),
    "expected-bool": (
        _shard_key(1, "expected", True),
        "fixture.json",
        "shards[1].expected: expected an integer, got True",
    ),
    "expected-float": (
        _shard_key(2, "expected", 6.0),
        "fixture.json",
        "shards[2].expected: expected an integer, got 6.0",
    ),
    "name-not-string": (
        lambda d, m: m.update(name=7) or None,
        "fixture.json",
        "name: expected a non-empty string, got 7",
    ),
    "artifact-in-folder": (
        lambda d, m: m.update(artifact="out/combined-index.md") or None,
        "fixture.json",
        "artifact: expected a bare file name (no folders), got 'out/combined-index.md'",
    ),
    "shards-not-list": (
        lambda d, m: m.update(shards={"file": "events-01.jsonl"}) or None,
        "fixture.json",
        "shards: expected a non-empty list of shards",
    ),
    "shards-empty": (
        lambda d, m: m.update(shards=[]) or None,
        "fixture.json",
        "shards: expected a non-empty list of shards, got []",
    ),
    "shard-not-object": (
        lambda d, m: m["shards"].__setitem__(2, "events-03.jsonl"),
        "fixture.json",
        "shards[2]: expected an object with the keys file, worker, question, expected",
    ),
    "worker-misnamed": (
        _shard_key(2, "worker", "worker-3"),
        "fixture.json",
        "shards[2].worker: expected 'worker-events-03' (worker-<file stem>), got 'worker-3'",
    ),
    "worker-not-unique": (
        _same_stem,
        "fixture.json",
        "shards[1].worker: 'worker-events-01' is also shards[0].worker; every shard needs its "
        "own worker",
    ),
    "file-not-unique": (
        lambda d, m: m["shards"].__setitem__(1, dict(m["shards"][0])),
        "fixture.json",
        "shards[1].file: 'events-01.jsonl' is also shards[0].file",
    ),
    "file-missing-on-disk": (
        lambda d, m: (d / "shards" / "events-05.jsonl").unlink(),
        "fixture.json",
        "shards[4].file: no such file shards/events-05.jsonl next to the manifest",
    ),
    "file-outside-shards": (
        _shard_key(0, "file", "../fixture.json"),
        "fixture.json",
        "shards[0].file: expected a bare file name (no folders), got '../fixture.json'",
    ),
    "question-empty": (
        _shard_key(6, "question", "  "),
        "fixture.json",
        "shards[6].question: expected a non-empty string",
    ),
    "question-two-lines": (
        _shard_key(6, "question", "How many?\nReally?"),
        "fixture.json",
        "shards[6].question: expected a single line",
    ),
    "worker-not-a-member-name": (
        _renamed_shard("events 01"),
        "fixture.json",
        f"shards[0].worker: 'worker-events 01' {NAME_RULE}",
    ),
    "worker-name-too-long": (
        _renamed_shard("e" * 58),
        "fixture.json",
        f"shards[0].worker: 'worker-{'e' * 58}' {NAME_RULE}",
    ),
    "shard-not-utf8": (
        _not_utf8,
        "shards/events-04.jsonl",
        "not UTF-8 text (byte 0xe9 at offset 43); a shard is read as UTF-8 text",
    ),
    "nested-200000-deep": (
        lambda d, m: "[" * 200_000 + "]" * 200_000,
        "fixture.json",
        "nested deeper than 100 levels",
    ),
    "nested-in-a-field": (
        lambda d, m: json.dumps({**m, "name": json.loads("[" * 100 + "]" * 100)}),
        "fixture.json",
        "nested deeper than 100 levels",
    ),
    "not-json": (lambda d, m: '{"name": ', "fixture.json", "not valid JSON"),
    "duplicate-key": (
        lambda d, m: json.dumps(m)[:-1] + ', "name": "again"}',
        "fixture.json",
        "not valid JSON: the key 'name' appears twice in one object",
    ),
    "top-level-list": (
        lambda d, m: "[]",
        "fixture.json",
        "(top level): expected an object with the keys name, artifact, shards, got []",
    ),
    "manifest-missing": (
        lambda d, m: (d / "fixture.json").unlink(),
        "fixture.json",
        "missing; a fixture directory holds fixture.json, task.txt and shards/",
    ),
    "task-missing": (
        lambda d, m: (d / "task.txt").unlink(),
        "task.txt",
        "missing; a fixture's task.txt is the lead's prompt",
    ),
    "task-not-updated": (
        _task_question,
        "task.txt",
        "shards[2]: the prompt has no line '- shards/events-03.jsonl: How many users logged in "
        "twice?'",
    ),
    "task-without-artifact": (
        lambda d, m: m.update(artifact="answers.md") or None,
        "task.txt",
        "artifact: the prompt never names 'answers.md'",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_fixture_is_refused_naming_file_and_field(case: str, tmp_path: Path) -> None:
    mutate, file, message = MALFORMED[case]
    directory = tmp_path / "broken"
    shutil.copytree(SHIPPED / "json-events", directory)
    manifest = _manifest("json-events")
    raw = mutate(directory, manifest)
    if (directory / "fixture.json").exists():
        text = raw if raw is not None else json.dumps(manifest)
        (directory / "fixture.json").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_fixture(directory)
    error = str(caught.value)
    assert error.startswith(f"{directory.resolve() / file}: {message}"), error
