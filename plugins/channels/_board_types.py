"""The values a shared-memory board hands out, its error, its bounds and its path grammar.

``_board`` holds the state; these frozen records are what crosses to the channel that wraps it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from swarm import ConfigError, SwarmError, shortened

from ._board_text import ROOT

__all__ = [
    "COMMANDS",
    "BOUND_CONTROLS",
    "CONTROLS",
    "ID_RE",
    "Applied",
    "BoardError",
    "Bounds",
    "FileChange",
    "FileInfo",
    "FileRead",
    "FileRef",
    "BoardNotice",
    "Plan",
    "Viewed",
    "BoardNews",
    "path_error",
]

COMMANDS: frozenset[str] = frozenset(
    {"create", "str_replace", "insert", "append", "delete", "rename"}
)
"""The write commands ``plan`` accepts (``view`` has its own method)."""

CONTROLS: frozenset[str] = frozenset(
    {"max_files", "max_file_bytes", "max_file_lines", "max_board_bytes", "path", "stale"}
    | {"unviewed", "fence", "invalid", "not_found", "exists"}
)
"""Every ``BoardError.control``."""

BOUND_CONTROLS: frozenset[str] = frozenset(
    {"max_files", "max_file_bytes", "max_file_lines", "max_board_bytes"}
)
"""The controls of the limits (a write refused by one may succeed after others shrink)."""

ID_RE = re.compile(r"f-[1-9][0-9]*")
"""A file id, as ``view`` and ``wait_news`` accept it."""

_PART_RE = re.compile(r"[A-Za-z0-9._-]+")
_MAX_PATH_BYTES = 160
_MAX_PARTS = 8
_MAX_PART = 64


class BoardError(SwarmError):
    """A board refused a command.  ``control`` names the rule; ``message`` is for the model."""

    def __init__(self, control: str, message: str) -> None:
        self.control = control
        self.message = message
        super().__init__(message)


def _in_range(name: str, lo: int, hi: int) -> Any:
    def check(_: object, __: object, value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ConfigError(
                f"shared_memory {name} must be an integer in [{lo}, {hi}], not {value!r}"
            )

    return check


@attrs.frozen(kw_only=True)
class Bounds:
    """The board's limits.  ``ConfigError`` names a bound that is out of range."""

    max_files: int = attrs.field(default=100, validator=_in_range("max_files", 1, 10_000))
    max_file_bytes: int = attrs.field(
        default=16_000, validator=_in_range("max_file_bytes", 1, 262_144)
    )
    max_file_lines: int = attrs.field(
        default=1_000, validator=_in_range("max_file_lines", 1, 100_000)
    )
    max_board_bytes: int = attrs.field(default=400_000)

    @max_board_bytes.validator
    def _board_range(self, attribute: object, value: int) -> None:
        _in_range("max_board_bytes", self.max_file_bytes, 16_777_216)(self, attribute, value)


@attrs.frozen(kw_only=True)
class FileInfo:
    """A file as it is now; ``content`` is ``None`` for a tombstone (``path`` is its last path)."""

    id: str
    path: str
    content: str | None
    version: int
    writer: str
    record: str
    loop: str

    @property
    def deleted(self) -> bool:
        """Whether the file is a tombstone."""
        return self.content is None


@attrs.frozen(kw_only=True)
class FileChange:
    """One file a write changes.  ``file`` is ``None`` in a plan for a file the write creates.

    ``base`` is the version written against (0 for a new file), ``version`` the one it makes;
    ``old_path`` is set by a rename; ``path`` of a deleted file is the path it had.
    """

    file: str | None
    path: str
    base: int
    version: int
    old_path: str | None = None
    deleted: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The evidence form: ``{file, path, base, version[, deleted]}`` or the rename form."""
        out: dict[str, Any] = {"file": self.file}
        if self.old_path is not None:
            out |= {"old_path": self.old_path, "new_path": self.path}
        else:
            out["path"] = self.path
        out |= {"base": self.base, "version": self.version}
        return out | ({"deleted": True} if self.deleted else {})


@attrs.frozen(kw_only=True, eq=False)
class Plan:
    """A write computed against the board (``plan``), ready for ``apply``.  Single use.

    ``args`` are the tool arguments as given; ``target`` the path the command named
    (``old_path`` for rename) and ``subtree`` whether it is a directory; ``changes`` the files
    it will change (``file=None`` for one it creates); ``payload`` the text it writes
    (``file_text``, ``new_str``, ``insert_text`` or ``append_text``, line endings normalised;
    empty for delete and rename).
    """

    command: str
    member: str
    loop: str
    args: Mapping[str, object]
    target: str
    subtree: bool
    changes: tuple[FileChange, ...]
    payload: str
    payload_bytes: int
    contents: tuple[str | None, ...] = attrs.field(repr=False)
    # (UTF-8 bytes, lines) of each of ``contents``
    measures: tuple[tuple[int, int], ...] = attrs.field(repr=False)
    revision: int = attrs.field(repr=False)
    serial: int = attrs.field(repr=False)


@attrs.frozen(kw_only=True)
class Applied:
    """A committed write: the acknowledgment and the files it changed.

    Who it is news for is computed lazily, when each loop next looks (``news``,
    ``status_line``, ``notice``, ``wait_news``), so a write costs the same however many loops
    there are.
    """

    command: str
    ack: str
    changes: tuple[FileChange, ...]
    payload_bytes: int


@attrs.frozen(kw_only=True)
class FileRead:
    """What a view read of one file (never its content): ``lines`` for a ranged view."""

    file: str
    path: str
    version: int
    record: str
    lines: tuple[int, int] | None = None
    deleted: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The evidence form."""
        out: dict[str, Any] = {"file": self.file, "path": self.path, "version": self.version}
        out["record"] = self.record
        out |= {"lines": list(self.lines)} if self.lines else {}
        return out | ({"deleted": True} if self.deleted else {})


@attrs.frozen(kw_only=True)
class Viewed:
    """A view's result ``text`` and what it read; ``listing`` for a directory."""

    text: str
    files: tuple[FileRead, ...]
    listing: bool = False


@attrs.frozen(kw_only=True)
class FileRef:
    """A file a news line names, at its current version."""

    file: str
    version: int
    record: str


def _ids(files: tuple[FileRef, ...]) -> list[dict[str, Any]]:
    return [{"file": f.file, "version": f.version, "record": f.record} for f in files]


@attrs.frozen(kw_only=True)
class BoardNotice:
    """The shared-memory line of a notice and the files it covers."""

    text: str
    files: tuple[FileRef, ...]

    @property
    def ids(self) -> list[dict[str, Any]]:
        """The notice metadata: ``[{"file", "version", "record"}, ...]``."""
        return _ids(self.files)


@attrs.frozen(kw_only=True)
class BoardNews:
    """The news line of a ``swarm_wait`` result and the files it names."""

    text: str
    files: tuple[FileRef, ...]

    @property
    def ids(self) -> list[dict[str, Any]]:
        """``[{"file", "version", "record"}, ...]``."""
        return _ids(self.files)


def _show(path: str) -> str:
    return repr(shortened(path))


def path_error(path: str) -> str | None:
    """What is wrong with ``path`` under the path grammar (the root is valid), or ``None``."""
    shown = _show(path)
    if path == ROOT:
        return None
    if not path.startswith(ROOT + "/"):
        hint = " (file ids like f-3 are accepted only by view)" if ID_RE.fullmatch(path) else ""
        return f"Invalid path {shown}: paths must start with {ROOT}/{hint}."
    size = len(path.encode("utf-8", "surrogatepass"))
    if size > _MAX_PATH_BYTES:
        return f"Invalid path {shown}: it is {size} bytes; the limit is {_MAX_PATH_BYTES}."
    parts = path[len(ROOT) + 1 :].split("/")
    if len(parts) > _MAX_PARTS:
        return f"Invalid path {shown}: it has {len(parts)} components under {ROOT}; the limit is 8."
    for part in parts:
        if not part:
            return f"Invalid path {shown}: it has an empty component (a doubled or trailing '/')."
        if part in (".", ".."):
            return (
                f"Invalid path {shown}: '.' and '..' are not allowed (paths are never normalised)."
            )
        if len(part) > _MAX_PART:
            return f"Invalid path {shown}: a component is {len(part)} characters; the limit is 64."
        if not _PART_RE.fullmatch(part):
            return (
                f"Invalid path {shown}: component {part!r} may use only letters, digits, "
                "'.', '_' and '-'."
            )
    return None
