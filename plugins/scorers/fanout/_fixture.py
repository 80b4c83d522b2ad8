"""Fan-out fixtures: the shipped ones by name, or any directory of the same shape.

A fixture directory holds ``fixture.json`` (the scoring manifest: ``name``, ``artifact`` and
``shards``, each ``{file, worker, question, expected}``), ``task.txt`` (the lead's prompt, which
lists every shard as ``- shards/<file>: <question>``) and ``shards/`` (the data files, UTF-8
text).  The manifest is for the scorer only; it never reaches the agents.

A hostile fixture is refused in one line naming the file (and the field): a manifest nested
deeper than ``MAX_DEPTH`` levels, a shard that is not UTF-8 text, a worker name that cannot be
a member's name (the one check ``swarm.check_member_name`` every member name goes through).
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any, NoReturn

import attrs

from swarm import ConfigError, check_member_name

__all__ = ["FIXTURES_DIR", "Fixture", "Shard", "fixture_names", "load_fixture"]

FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"
"""Where the shipped fixtures live (inside the installed package)."""

MANIFEST = "fixture.json"
TASK = "task.txt"
SHARDS = "shards"
MAX_DEPTH = 100
"""The deepest nesting of lists and objects ``fixture.json`` may hold (a manifest needs 3)."""
_TOP_KEYS = ("name", "artifact", "shards")
_SHARD_KEYS = ("file", "worker", "question", "expected")


@attrs.frozen(kw_only=True)
class Shard:
    """One data shard and what the scorer expects for it.

    Attributes:
        file: the bare file name under ``shards/`` (``events-01.jsonl``).
        worker: the name the lead must give this shard's child (``worker-events-01``).
        question: the question the child answers about the file.
        expected: the right answer.
    """

    file: str
    worker: str
    question: str
    expected: int


@attrs.frozen(kw_only=True)
class Fixture:
    """A loaded, checked fixture.

    Attributes:
        name: the manifest's ``name``.
        artifact: the file the lead writes in its working directory (``combined-index.md``).
        shards: the shards, in the manifest's order.
        task: the text of ``task.txt``, the lead's prompt.
        directory: the fixture's directory, absolute.
    """

    name: str
    artifact: str
    shards: tuple[Shard, ...]
    task: str
    directory: Path

    @property
    def shards_dir(self) -> Path:
        """The directory of the data files, the only part of a fixture agents may see."""
        return self.directory / SHARDS

    def shard_path(self, shard: Shard) -> Path:
        """Where ``shard``'s data file is."""
        return self.shards_dir / shard.file


def fixture_names() -> tuple[str, ...]:
    """The names of the fixtures shipped with swarm-eval, sorted."""
    return tuple(sorted(p.name for p in FIXTURES_DIR.iterdir() if (p / MANIFEST).is_file()))


def load_fixture(fixture: str | os.PathLike[str]) -> Fixture:
    """Load and check a fixture: a shipped name (``json-events``) or a directory's path.

    A plain string that is a shipped fixture's name means that fixture; write ``./json-events``
    for a directory of the same name.

    Raises:
        ConfigError: no such fixture, or the directory is not of the fixture shape; the
            message names the file and the field (``shards[2].worker``).
    """
    directory = _directory(fixture)
    manifest_path = directory / MANIFEST
    manifest = _Manifest(manifest_path)
    name = manifest.text(manifest.data, "name", "name")
    artifact = manifest.file_name(manifest.data, "artifact", "artifact")
    shards = manifest.shards(directory / SHARDS)
    task = _task(directory / TASK, artifact, shards)
    return Fixture(name=name, artifact=artifact, shards=shards, task=task, directory=directory)


def _directory(fixture: str | os.PathLike[str]) -> Path:
    names = fixture_names()
    if isinstance(fixture, str) and fixture in names:
        return FIXTURES_DIR / fixture
    path = Path(fixture).resolve()
    if path.is_dir():
        if not (path / MANIFEST).is_file():
            raise ConfigError(
                f"{path / MANIFEST}: missing; a fixture directory holds {MANIFEST}, {TASK} "
                f"and {SHARDS}/"
            )
        return path
    raise ConfigError(
        f"fixture {os.fspath(fixture)!r}: neither a shipped fixture ({', '.join(names)}) "
        "nor a directory"
    )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found


class _Manifest:
    """Reads ``fixture.json`` and checks it field by field, naming the file in every error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        except (UnicodeDecodeError, ValueError) as error:
            raise ConfigError(f"{path}: not valid JSON: {error}") from None
        except RecursionError:  # the parser recurses once per level
            raise ConfigError(f"{path}: nested deeper than {MAX_DEPTH} levels") from None
        if _too_deep(data):
            raise ConfigError(f"{path}: nested deeper than {MAX_DEPTH} levels")
        self.data = self.keys(data, "(top level)", _TOP_KEYS)

    def fail(self, field: str, message: str) -> NoReturn:
        raise ConfigError(f"{self.path}: {field}: {message}")

    def keys(self, value: Any, field: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(field, f"expected an object with the keys {', '.join(keys)}, got {value!r}")
        prefix = "" if field == "(top level)" else f"{field}."
        for key in keys:
            if key not in value:
                self.fail(f"{prefix}{key}", "missing")
        for key in value:
            if key not in keys:
                self.fail(f"{prefix}{key}", f"unknown key; expected only {', '.join(keys)}")
        return value

    def text(self, data: dict[str, Any], key: str, field: str) -> str:
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(field, f"expected a non-empty string, got {value!r}")
        if "\n" in value or "\r" in value:
            self.fail(field, f"expected a single line, got {value!r}")
        return value

    def file_name(self, data: dict[str, Any], key: str, field: str) -> str:
        value = self.text(data, key, field)
        # "." has no name, so only ".." needs its own test
        if value != PurePath(value).name or "\\" in value or value == "..":
            self.fail(field, f"expected a bare file name (no folders), got {value!r}")
        return value

    def shard(self, raw: Any, index: int, shards_dir: Path) -> Shard:
        field = f"shards[{index}]"
        data = self.keys(raw, field, _SHARD_KEYS)
        file = self.file_name(data, "file", f"{field}.file")
        if not (shards_dir / file).is_file():
            self.fail(f"{field}.file", f"no such file {SHARDS}/{file} next to the manifest")
        _utf8_text(shards_dir / file)
        worker = self.text(data, "worker", f"{field}.worker")
        if worker != f"worker-{PurePath(file).stem}":
            self.fail(
                f"{field}.worker",
                f"expected 'worker-{PurePath(file).stem}' (worker-<file stem>), got {worker!r}",
            )
        try:  # the lead spawns the shard's child under this name
            check_member_name(worker, f"{self.path}: {field}.worker")
        except ConfigError as error:
            raise ConfigError(
                f"{error}; a worker's name is a member's name, worker-<file stem>: rename the file"
            ) from None
        question = self.text(data, "question", f"{field}.question")
        expected = data["expected"]
        if isinstance(expected, bool) or not isinstance(expected, int):
            self.fail(f"{field}.expected", f"expected an integer, got {expected!r}")
        return Shard(file=file, worker=worker, question=question, expected=expected)

    def shards(self, shards_dir: Path) -> tuple[Shard, ...]:
        raw = self.data["shards"]
        if not isinstance(raw, list) or not raw:
            self.fail("shards", f"expected a non-empty list of shards, got {raw!r}")
        shards = tuple(self.shard(item, index, shards_dir) for index, item in enumerate(raw))
        for attribute in ("file", "worker"):
            first: dict[str, int] = {}
            for index, shard in enumerate(shards):
                value = getattr(shard, attribute)
                if value in first:
                    self.fail(
                        f"shards[{index}].{attribute}",
                        f"{value!r} is also shards[{first[value]}].{attribute}; "
                        f"every shard needs its own {attribute}",
                    )
                first[value] = index
        return shards


def _too_deep(data: object) -> bool:
    """Whether ``data`` holds a list or object at level ``MAX_DEPTH`` (the top is level 0);
    walked without recursion."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return False


def _utf8_text(path: Path) -> None:
    """Refuse a shard that is not UTF-8 text (it becomes a sample file, read as text)."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the shard: {error.strerror}") from None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start}); "
            "a shard is read as UTF-8 text"
        ) from None


def _task(path: Path, artifact: str, shards: tuple[Shard, ...]) -> str:
    if not path.is_file():
        raise ConfigError(f"{path}: missing; a fixture's {TASK} is the lead's prompt")
    try:
        task = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text: {error}") from None
    lines = {line.strip() for line in task.splitlines()}
    for index, shard in enumerate(shards):
        line = f"- {SHARDS}/{shard.file}: {shard.question}"
        if line not in lines:
            raise ConfigError(
                f"{path}: shards[{index}]: the prompt has no line {line!r}; it must list every "
                "shard with its question as in the manifest"
            )
    if artifact not in task:
        raise ConfigError(f"{path}: artifact: the prompt never names {artifact!r}")
    return task
