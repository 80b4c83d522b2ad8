"""A new user's slips with ``swarm fanout`` (issue 21): a fixture the loader refuses is one
``error:`` line on stderr with exit status 1, and a wrong option (``--timeout -5``, a
``--log-dir`` that cannot be written) one line with exit status 2, as every ``swarm`` command
reports them; nothing runs and nothing is printed on stdout.

Before the fix a worker name that cannot be a member's name ran the eval, which ended
unresolved (the lead's spawn was refused); a manifest nested 200,000 deep and a shard that is
not UTF-8 escaped as tracebacks (``RecursionError``, ``UnicodeDecodeError``), as did an
unwritable ``--log-dir``; ``--timeout -5`` ran, and Inspect's error landed in the JSON outcome.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from swarm import ConfigError
from swarm.cli import main
from swarm.plugins.scorers.fanout import load_fixture, run_fanout

NAME_RULE = (
    "must start with a letter or digit and use only letters, digits, '.', '_' and '-' (at most "
    "64 characters); a worker's name is a member's name, worker-<file stem>: rename the file"
)


def fanout(*args: str) -> tuple[int, str, str]:
    """``swarm fanout ARGS`` as its entry point runs it: the status, stdout and stderr."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["swarm", "fanout", *args])
        with pytest.raises(SystemExit) as info, redirect_stdout(io.StringIO()) as out:
            with redirect_stderr(io.StringIO()) as err:
                main()
    code = info.value.code
    return (code if isinstance(code, int) else 0), out.getvalue(), err.getvalue()


def copied(tmp_path: Path) -> Path:
    directory = tmp_path / "mine"
    shutil.copytree(load_fixture("json-events").directory, directory)
    return directory


def space_in_a_name(directory: Path) -> Path:
    """The first shard as ``events 01.jsonl``: its worker is ``worker-events 01``."""
    (directory / "shards" / "events-01.jsonl").rename(directory / "shards" / "events 01.jsonl")
    manifest = json.loads((directory / "fixture.json").read_text(encoding="utf-8"))
    manifest["shards"][0].update(file="events 01.jsonl", worker="worker-events 01")
    (directory / "fixture.json").write_text(json.dumps(manifest), encoding="utf-8")
    task = directory / "task.txt"
    text = task.read_text(encoding="utf-8")
    task.write_text(text.replace("shards/events-01.jsonl", "shards/events 01.jsonl"))
    return directory / "fixture.json"


def nested(directory: Path) -> Path:
    (directory / "fixture.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    return directory / "fixture.json"


def not_utf8(directory: Path) -> Path:
    shard = directory / "shards" / "events-02.jsonl"
    shard.write_bytes(b'{"ts": "2026-01-01", "user": "j\xf6rg"}\n')
    return shard


@pytest.mark.parametrize(
    ("spoil", "problem"),
    [
        (space_in_a_name, f"shards[0].worker: 'worker-events 01' {NAME_RULE}"),
        (nested, "nested deeper than 100 levels"),
        (not_utf8, "not UTF-8 text (byte 0xf6 at offset 31); a shard is read as UTF-8 text"),
    ],
    ids=["worker-name", "nested-200000-deep", "shard-not-utf8"],
)
def test_a_fixture_the_loader_refuses_is_one_line_and_status_1(
    tmp_path: Path, spoil: Callable[[Path], Path], problem: str
) -> None:
    directory = copied(tmp_path)
    named = spoil(directory)
    logs = tmp_path / "logs"
    code, out, err = fanout("--fixture", str(directory), "--log-dir", str(logs))
    assert (code, out, err) == (1, "", f"error: {named.resolve()}: {problem}\n")
    assert not list(logs.glob("*.eval"))  # nothing ran


@pytest.mark.parametrize("value", ["-5", "0"])
def test_a_timeout_below_one_second_is_a_usage_error(tmp_path: Path, value: str) -> None:
    logs = tmp_path / "logs"
    code, out, err = fanout("--fixture", "json-events", "--timeout", value, "--log-dir", str(logs))
    assert (code, out) == (2, "")
    assert err == f"error: --timeout: expected a whole number of seconds >= 1, got {value}\n"
    assert not logs.exists()


def test_run_fanout_refuses_the_same_timeout(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        run_fanout("json-events", None, -5, str(tmp_path))
    assert str(info.value) == "timeout: expected a whole number of seconds >= 1, got -5"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("where", "problem"),
    [
        ("a-file/logs", "cannot write logs in {log_dir}: Not a directory"),
        ("a-file", "{log_dir} is a file, not a directory"),
    ],
    ids=["under-a-file", "a-file"],
)
def test_a_log_dir_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, where: str, problem: str
) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    log_dir = str(tmp_path / where)
    code, out, err = fanout("--fixture", "json-events", "--log-dir", log_dir)
    assert (code, out) == (2, "")
    assert err == f"error: --log-dir: {problem.format(log_dir=log_dir)}\n"


def test_a_refused_fixture_leaves_no_log_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: the --log-dir (by default ./logs) was made before the fixture was loaded, so a
    # refused fixture left an empty ./logs wherever the command ran (the test suite's own run
    # of this command left one in the checkout)
    monkeypatch.chdir(tmp_path)
    code, out, err = fanout("--fixture", "no-such-fixture")
    assert (code, out) == (1, "")
    assert err.startswith("error: ") and "no-such-fixture" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
