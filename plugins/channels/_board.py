"""The in-memory state of one shared-memory board for one swarm run.

Pure, synchronous Python: no Inspect, no anyio.  The ``shared_memory`` channel wraps a ``Board``
in its tool and its bus state; every method runs to completion with no ``await``.

Paths are ``/shared_memory`` plus 1-8 components of ``[A-Za-z0-9._-]{1,64}`` (not ``.``/``..``,
at most 160 bytes, never normalised).  Directories are implicit; a file cannot sit under another
file's path.  ``view`` (and ``wait_news``) also accept file ids ``f-N``.

API (every refusal is a ``BoardError(control, message)``; ``control`` is one of ``CONTROLS``):

- ``Board(*, max_files=100, max_file_bytes=16_000, max_file_lines=1_000,
  max_board_bytes=400_000)``; ``ConfigError`` when a bound is out of range (``Bounds``).
- ``add_loop(loop, member)``: register a loop (an agent span id) acting for ``member``.  Loops
  are also registered on first use; seen state is tracked per loop, never per member.
- ``plan(command, args, *, member, loop) -> Plan``: validate the tool arguments (a mapping of
  ``path``, ``file_text``, ``old_str``, ``new_str``, ``insert_line``, ``insert_text``,
  ``old_path``, ``new_path``, ``append_text``) and compute the exact change; mutates nothing.
- ``apply(plan, *, record_id) -> Applied``: commit a plan.  Never fails when nothing was written
  since ``plan``; otherwise the write is planned again and refused with control ``stale`` if the
  result differs (other than versions, for ``str_replace``/``append``).
- ``view(path_or_id, *, member, loop, view_range=None) -> Viewed``: a fenced file (marks that
  version seen by ``loop``), a listing (marks nothing), or a tombstone's one line; ``.files``
  says what was read, for evidence.
- ``status_line(loop) -> str | None``, ``notice(loop) -> NoticeLine | None`` (covers what it
  names until it changes again), ``wait_news(loop, path_filter) -> WaitNews | None``,
  ``news(loop) -> tuple[str, ...]``: what is news to ``loop``.
- ``get(path_or_id) -> FileInfo | None``, ``files() -> tuple[FileInfo, ...]``, ``file_count``,
  ``total_bytes``, ``bounds``.

News is kept per loop and updated in proportion to each write: a file is news to a loop when a
different loop wrote a version above what that loop has seen; a tombstone is news only when the
loop had seen the file or been told of it (by a notice, status line or wait result).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import attrs

from swarm import ConfigError, SwarmError

from . import _board_text as text
from ._board_text import ROOT

__all__ = [
    "COMMANDS",
    "CONTROLS",
    "Applied",
    "Board",
    "BoardError",
    "Bounds",
    "FileChange",
    "FileInfo",
    "FileRead",
    "FileRef",
    "NoticeLine",
    "Plan",
    "Viewed",
    "WaitNews",
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

_BOUND_CONTROLS = frozenset({"max_files", "max_file_bytes", "max_file_lines", "max_board_bytes"})
_ID_RE = re.compile(r"f-[1-9][0-9]*")
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
            raise ConfigError(f"shared_memory {name} must be an integer in [{lo}, {hi}], not {value!r}")

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
        if self.old_path is not None:
            return {"file": self.file, "old_path": self.old_path, "new_path": self.path}
            | {"base": self.base, "version": self.version}
        out: dict[str, Any] = {"file": self.file, "path": self.path, "base": self.base}
        out["version"] = self.version
        return out | ({"deleted": True} if self.deleted else {})


@attrs.frozen(kw_only=True)
class Plan:
    """A write computed against the board (``plan``), ready for ``apply``.  Single use."""

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
    revision: int = attrs.field(repr=False)
    serial: int = attrs.field(repr=False)


@attrs.frozen(kw_only=True)
class Applied:
    """A committed write: the acknowledgment, the files it changed, and who now has news.

    ``news_loops``/``news_members``: the loops (and their members) this write made news for.
    """

    command: str
    ack: str
    changes: tuple[FileChange, ...]
    payload_bytes: int
    news_loops: tuple[str, ...]
    news_members: tuple[str, ...]


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
        out = {"file": self.file, "path": self.path, "version": self.version}
        out |= {"record": self.record}
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
class NoticeLine:
    """The shared-memory line of a notice and the files it covers."""

    text: str
    files: tuple[FileRef, ...]

    @property
    def ids(self) -> list[dict[str, Any]]:
        """The notice metadata: ``[{"file", "version", "record"}, ...]``."""
        return _ids(self.files)


@attrs.frozen(kw_only=True)
class WaitNews:
    """The news line of a ``swarm_wait`` result and the files it names."""

    text: str
    files: tuple[FileRef, ...]

    @property
    def ids(self) -> list[dict[str, Any]]:
        """``[{"file", "version", "record"}, ...]``."""
        return _ids(self.files)


@attrs.define
class _File:
    id: str
    path: str
    content: str | None
    size: int
    version: int
    writer: str
    record: str
    loop: str
    # the latest version written by a loop other than ``loop`` (0: none), and its writer
    other_version: int = 0
    other_writer: str = ""


@attrs.define
class _Loop:
    member: str | None
    seen: dict[str, int] = attrs.Factory(dict)  # file id -> highest version seen
    told: set[str] = attrs.Factory(set)  # files named to the loop by a news line
    pending: set[str] = attrs.Factory(set)  # files that are news now
    unnotified: set[str] = attrs.Factory(set)  # pending files no notice has covered yet


def _key(file: str) -> int:
    return int(file[2:])


def _normal(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n")


def _lines(content: str) -> list[str]:
    lines = content.split("\n") if content else []
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _size(value: str) -> int:
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise BoardError("invalid", "the text is not valid UTF-8 (it has a lone surrogate).")


def _show(path: str) -> str:
    return repr(path if len(path) <= 200 else path[:200] + "...")


def path_error(path: str) -> str | None:
    """What is wrong with ``path`` under the path grammar (the root is valid), or ``None``."""
    shown = _show(path)
    if path == ROOT:
        return None
    if not path.startswith(ROOT + "/"):
        hint = " (file ids like f-3 are accepted only by view)" if _ID_RE.fullmatch(path) else ""
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
            return f"Invalid path {shown}: '.' and '..' are not allowed (paths are never normalised)."
        if len(part) > _MAX_PART:
            return f"Invalid path {shown}: a component is {len(part)} characters; the limit is 64."
        if not _PART_RE.fullmatch(part):
            return (
                f"Invalid path {shown}: component {part!r} may use only letters, digits, "
                "'.', '_' and '-'."
            )
    return None


def _parents(path: str) -> list[str]:
    """The directories strictly between the root and ``path``."""
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(3, len(parts))]


def _under(path: str, directory: str) -> bool:
    return directory == ROOT or path == directory or path.startswith(directory + "/")


class Board:
    """One shared-memory board: files, tombstones, and each loop's seen state and news."""

    def __init__(
        self,
        *,
        max_files: int = 100,
        max_file_bytes: int = 16_000,
        max_file_lines: int = 1_000,
        max_board_bytes: int = 400_000,
    ) -> None:
        self.bounds = Bounds(
            max_files=max_files,
            max_file_bytes=max_file_bytes,
            max_file_lines=max_file_lines,
            max_board_bytes=max_board_bytes,
        )
        self._files: dict[str, _File] = {}  # every file ever, tombstones included
        self._paths: dict[str, str] = {}  # live path -> id
        self._dirs: dict[str, int] = {}  # implicit directory -> live files under it
        self._loops: dict[str, _Loop] = {}
        self._next_file = 1
        self._bytes = 0
        self._revision = 0  # bumped by every applied write
        self._serials = itertools.count(1)
        self._applied: set[int] = set()

    # -- queries ---------------------------------------------------------------------------

    @property
    def file_count(self) -> int:
        """Live files."""
        return len(self._paths)

    @property
    def total_bytes(self) -> int:
        """UTF-8 bytes of all live files' content."""
        return self._bytes

    def get(self, path_or_id: str) -> FileInfo | None:
        """The live file at a path, or the file (tombstone too) with an id."""
        file_id = path_or_id if _ID_RE.fullmatch(path_or_id) else self._paths.get(path_or_id)
        f = self._files.get(file_id) if file_id else None
        return None if f is None else self._info(f)

    def files(self) -> tuple[FileInfo, ...]:
        """Every live file, by path."""
        return tuple(self._info(self._files[self._paths[p]]) for p in sorted(self._paths))

    def news(self, loop: str) -> tuple[str, ...]:
        """The ids of the files that are news to ``loop``, in id order."""
        return tuple(sorted(self._loop(loop).pending, key=_key))

    @staticmethod
    def _info(f: _File) -> FileInfo:
        return FileInfo(
            id=f.id,
            path=f.path,
            content=f.content,
            version=f.version,
            writer=f.writer,
            record=f.record,
            loop=f.loop,
        )

    # -- loops -----------------------------------------------------------------------------

    def add_loop(self, loop: str, member: str) -> None:
        """Register ``loop`` as acting for ``member`` (idempotent; one member per loop)."""
        self._loop(loop, member)

    def _loop(self, loop: str, member: str | None = None) -> _Loop:
        lp = self._loops.get(loop)
        if lp is None:
            live = {f for f in self._paths.values()}
            lp = self._loops[loop] = _Loop(member, pending=live, unnotified=set(live))
        elif member is not None and lp.member != member:
            if lp.member is not None:
                raise ValueError(f"loop {loop!r} acts for {lp.member!r}, not {member!r}")
            lp.member = member
        return lp

    def _is_news(self, loop: str, lp: _Loop, f: _File) -> bool:
        seen = lp.seen.get(f.id, 0)
        latest = f.version if f.loop != loop else f.other_version
        known = f.content is not None or seen > 0 or f.id in lp.told
        return latest > seen and known

    def _refresh(self, loop: str, lp: _Loop, f: _File, changed: bool) -> bool:
        if self._is_news(loop, lp, f):
            lp.pending.add(f.id)
            if changed:
                lp.unnotified.add(f.id)
            return changed
        lp.pending.discard(f.id)
        lp.unnotified.discard(f.id)
        return False

    # -- writes ----------------------------------------------------------------------------

    def plan(self, command: str, args: Mapping[str, object], *, member: str, loop: str) -> Plan:
        """Validate a write and compute its exact result against the board, changing nothing."""
        frozen = MappingProxyType(dict(args))
        target, subtree, changes, contents, payload = self._draft(
            command, frozen, self._loop(loop, member)
        )
        return Plan(
            command=command,
            member=member,
            loop=loop,
            args=frozen,
            target=target,
            subtree=subtree,
            changes=tuple(changes),
            payload=payload,
            payload_bytes=_size(payload),
            contents=tuple(contents),
            revision=self._revision,
            serial=next(self._serials),
        )

    def apply(self, plan: Plan, *, record_id: str) -> Applied:
        """Commit ``plan`` as the write recorded as ``record_id``."""
        if plan.serial in self._applied:
            raise ValueError("this plan was already applied")
        lp = self._loop(plan.loop, plan.member)
        changes, contents = plan.changes, plan.contents
        if plan.revision != self._revision:
            try:
                _, _, fresh, fresh_contents, _ = self._draft(plan.command, plan.args, lp)
            except BoardError as error:
                if error.control in _BOUND_CONTROLS:
                    raise
                raise BoardError("stale", text.STALE) from error
            blind = plan.command in ("str_replace", "append")
            if self._shape(changes, contents, blind) != self._shape(fresh, fresh_contents, blind):
                raise BoardError("stale", text.STALE)
            changes, contents = tuple(fresh), tuple(fresh_contents)
        self._applied.add(plan.serial)
        self._revision += 1
        done: list[FileChange] = []
        news: set[str] = set()
        for change, content in zip(changes, contents, strict=True):
            f = self._commit(change, content, plan, record_id)
            done.append(attrs.evolve(change, file=f.id))
            if change.file is None or lp.seen.get(f.id, 0) == change.base:
                lp.seen[f.id] = f.version
            self._refresh(plan.loop, lp, f, changed=False)
            for name, other in self._loops.items():
                if name != plan.loop and self._refresh(name, other, f, changed=True):
                    news.add(name)
        members = {m for n in news if (m := self._loops[n].member) is not None}
        return Applied(
            command=plan.command,
            ack=self._ack(plan, done),
            changes=tuple(done),
            payload_bytes=plan.payload_bytes,
            news_loops=tuple(sorted(news)),
            news_members=tuple(sorted(members)),
        )

    @staticmethod
    def _shape(
        changes: Sequence[FileChange], contents: Sequence[str | None], blind: bool
    ) -> list[tuple[object, ...]]:
        if blind:  # writes that need no view tolerate versions (and so content) moving on
            return [(c.file, c.path, c.old_path, c.deleted) for c in changes]
        return [attrs.astuple(c) + (t,) for c, t in zip(changes, contents, strict=True)]

    def _commit(self, change: FileChange, content: str | None, plan: Plan, record: str) -> _File:
        size = 0 if content is None else len(content.encode("utf-8"))
        if change.file is None:
            f = _File(f"f-{self._next_file}", change.path, content, size, 1, plan.member, record, plan.loop)
            self._files[f.id] = f
            self._next_file += 1
            self._link(f)
            self._bytes += size
            return f
        f = self._files[change.file]
        self._unlink(f)
        self._bytes += size - f.size
        if f.loop != plan.loop:
            f.other_version, f.other_writer = f.version, f.writer
        f.path, f.content, f.size, f.version = change.path, content, size, change.version
        f.writer, f.record, f.loop = plan.member, record, plan.loop
        if content is not None:
            self._link(f)
        return f

    def _link(self, f: _File) -> None:
        self._paths[f.path] = f.id
        for d in _parents(f.path):
            self._dirs[d] = self._dirs.get(d, 0) + 1

    def _unlink(self, f: _File) -> None:
        if self._paths.get(f.path) != f.id:
            return
        del self._paths[f.path]
        for d in _parents(f.path):
            self._dirs[d] -= 1
            if not self._dirs[d]:
                del self._dirs[d]

    def _ack(self, plan: Plan, done: list[FileChange]) -> str:
        first = done[0]
        match plan.command:
            case "delete":
                ids = sorted((c.file or "" for c in done), key=_key)
                return text.deleted_ack(plan.target, ids, plan.subtree)
            case "rename":
                new = str(plan.args["new_path"])
                return text.renamed_ack(
                    plan.target, new, first.file or "", first.version, len(done), plan.subtree
                )
            case "insert":
                line = plan.args["insert_line"]
                return f"Inserted text after line {line} of {first.path} ({first.file}, now version {first.version})."
        verbs = {"create": "Replaced", "str_replace": "Edited", "append": "Appended to"}
        verb = "Created" if first.base == 0 else verbs[plan.command]
        return text.written_ack(verb, first.path, first.file or "", first.version)

    # -- planning --------------------------------------------------------------------------

    def _draft(
        self, command: str, args: Mapping[str, object], lp: _Loop
    ) -> tuple[str, bool, list[FileChange], list[str | None], str]:
        """(target, subtree, changes, new contents, payload) for a write, or ``BoardError``."""
        if command not in COMMANDS:
            raise BoardError("invalid", f"Unknown command: {command}")
        if command == "rename":
            return self._draft_rename(args, lp)
        path = self._path_arg(args, "path", command)
        f = self._live(path)
        payload = ""
        if command == "delete":
            targets, subtree = self._targets(path, "deleted")
            for t in targets:
                self._need_view(lp, t, "deleting it")
            changes = [FileChange(file=t.id, path=t.path, base=t.version, version=t.version + 1, deleted=True) for t in targets]
            return path, subtree, changes, [None] * len(changes), payload
        if command == "create":
            content = payload = _normal(self._text_arg(args, "file_text", command))
            if f is not None:
                self._need_view(lp, f, "replacing it")
        elif command == "append":
            payload = _normal(self._text_arg(args, "append_text", command))
            if not payload:
                raise BoardError("invalid", "append: The `append_text` parameter cannot be empty.")
            content = payload if f is None or not f.content else f.content.rstrip("\n") + "\n" + payload
            if f is not None and f.content and f.content.endswith("\n"):
                content = f.content + payload
        else:  # str_replace, insert: an existing file
            f = self._existing(path, command)
            assert f.content is not None
            if command == "str_replace":
                content, payload = self._replace(f.content, path, args)
            else:
                content, payload = self._insert(f, path, args, lp)
        if f is None:
            self._check_free(path)
        change = FileChange(
            file=None if f is None else f.id,
            path=path,
            base=0 if f is None else f.version,
            version=1 if f is None else f.version + 1,
        )
        self._check_content(path, content, f)
        return path, False, [change], [content], payload

    def _draft_rename(
        self, args: Mapping[str, object], lp: _Loop
    ) -> tuple[str, bool, list[FileChange], list[str | None], str]:
        old = self._path_arg(args, "old_path", "rename")
        new = self._path_arg(args, "new_path", "rename")
        targets, subtree = self._targets(old, "renamed")
        if new == old or self._live(new) is not None or new in self._dirs or new == ROOT:
            raise BoardError("exists", f"The destination {new} already exists")
        if new.startswith(old + "/"):
            raise BoardError("path", f"Cannot rename {old} to {new}: a path cannot move inside itself.")
        self._check_free(new)
        changes: list[FileChange] = []
        for t in targets:
            moved = new + t.path[len(old) :]
            if (problem := path_error(moved)) is not None:
                raise BoardError("path", f"Cannot rename {old} to {new}: {problem}")
            self._need_view(lp, t, "renaming it")
            changes.append(FileChange(file=t.id, path=moved, base=t.version, version=t.version + 1, old_path=t.path))
        return old, subtree, changes, [t.content for t in targets], ""

    def _replace(self, content: str, path: str, args: Mapping[str, object]) -> tuple[str, str]:
        old = _normal(self._text_arg(args, "old_str", "str_replace", required=False) or "")
        if not old:
            raise BoardError(
                "invalid",
                "str_replace: The `old_str` parameter cannot be empty. Consider using the "
                "`insert` command instead.",
            )
        new = _normal(self._text_arg(args, "new_str", "str_replace", required=False) or "")
        starts: list[int] = []
        at = content.find(old)
        while at != -1 and len(starts) < 50:
            starts.append(at)
            at = content.find(old, at + 1)
        if not starts:
            raise BoardError(
                "invalid",
                f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.",
            )
        if len(starts) > 1:
            lines = sorted({content.count("\n", 0, s) + 1 for s in starts})
            raise BoardError(
                "invalid",
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines "
                f"{lines}. Please ensure it is unique",
            )
        return content[: starts[0]] + new + content[starts[0] + len(old) :], new

    def _insert(self, f: _File, path: str, args: Mapping[str, object], lp: _Loop) -> tuple[str, str]:
        line = args.get("insert_line")
        if line is None:
            raise BoardError("invalid", "insert_line is required for insert command")
        if isinstance(line, bool) or not isinstance(line, int):
            raise BoardError("invalid", f"insert_line must be an integer, not {line!r}")
        insert = _normal(self._text_arg(args, "insert_text", "insert"))
        self._need_view(lp, f, "inserting into it")
        content = f.content or ""
        lines = _lines(content)
        if not 0 <= line <= len(lines):
            raise BoardError(
                "invalid",
                f"Invalid `insert_line` parameter: {line}. It should be within the range of "
                f"lines of the file: {[0, len(lines)]}",
            )
        added = (insert[:-1] if insert.endswith("\n") else insert).split("\n")
        new = "\n".join(lines[:line] + added + lines[line:])
        ends = content.endswith("\n") if line < len(lines) else insert.endswith("\n")
        return new + ("\n" if ends else ""), insert

    # -- checks ----------------------------------------------------------------------------

    @staticmethod
    def _text_arg(args: Mapping[str, object], name: str, command: str, required: bool = True) -> str:
        value = args.get(name)
        if value is None:
            if required:
                raise BoardError("invalid", f"{name} is required for {command} command")
            return ""
        if not isinstance(value, str):
            raise BoardError("invalid", f"{name} must be a string, not {type(value).__name__}")
        return value

    def _path_arg(self, args: Mapping[str, object], name: str, command: str) -> str:
        path = args.get(name)
        if path is None or path == "":
            what = "Path" if name == "path" else name
            raise BoardError("invalid", f"{what} is required for {command} command")
        if not isinstance(path, str):
            raise BoardError("invalid", f"{name} must be a string, not {type(path).__name__}")
        if (problem := path_error(path)) is not None:
            raise BoardError("path", problem)
        return path

    def _live(self, path: str) -> _File | None:
        file_id = self._paths.get(path)
        return None if file_id is None else self._files[file_id]

    def _existing(self, path: str, command: str) -> _File:
        f = self._live(path)
        if f is None and (path == ROOT or path in self._dirs):
            raise BoardError(
                "invalid",
                f"The path {path} is a directory and only the `view` command can be used on "
                f"directories",
            )
        if f is None:
            raise BoardError("not_found", f"The path {path} does not exist. Please provide a valid path.")
        return f

    def _targets(self, path: str, done: str) -> tuple[list[_File], bool]:
        """The live file at ``path``, or every live file under the directory ``path``."""
        if path == ROOT:
            raise BoardError("path", f"The root {ROOT} cannot be {done}.")
        f = self._live(path)
        if f is not None:
            return [f], False
        if path not in self._dirs:
            raise BoardError("not_found", f"The path {path} does not exist. Please provide a valid path.")
        under = sorted(p for p in self._paths if p.startswith(path + "/"))
        return [self._files[self._paths[p]] for p in under], True

    def _check_free(self, path: str) -> None:
        """A new file may go at ``path``: not a directory, not under another file."""
        if path == ROOT or path in self._dirs:
            raise BoardError("exists", f"The path {path} is a directory; a file cannot be created there.")
        for d in _parents(path):
            if d in self._paths:
                raise BoardError("exists", f"{d} is a file, so {path} cannot be created under it.")

    @staticmethod
    def _need_view(lp: _Loop, f: _File, action: str) -> None:
        if lp.seen.get(f.id, 0) < f.version:
            raise BoardError("unviewed", text.unviewed(f.id, f.version, f.writer, action))

    def _check_content(self, path: str, content: str, f: _File | None) -> None:
        if (marker := text.fence_marker(content)) is not None:
            raise BoardError(
                "fence",
                f"the text would put {marker!r} in {path}; shared memory cannot hold fence "
                "markers (<peer_message, <peer_file, <peer_listing, opening or closing, any case).",
            )
        b = self.bounds
        if f is None and len(self._paths) >= b.max_files:
            raise BoardError(
                "max_files",
                f"shared memory has {len(self._paths)} files; the limit is {b.max_files}. "
                "Delete a file you no longer need or add to an existing one.",
            )
        size = _size(content)
        if size > b.max_file_bytes:
            raise BoardError(
                "max_file_bytes",
                f"{path} would be {size} bytes; the limit is {b.max_file_bytes} bytes per file.",
            )
        lines = len(_lines(content))
        if lines > b.max_file_lines:
            raise BoardError(
                "max_file_lines",
                f"{path} would have {lines} lines; the limit is {b.max_file_lines} lines per file.",
            )
        total = self._bytes + size - (0 if f is None else f.size)
        if total > b.max_board_bytes:
            raise BoardError(
                "max_board_bytes",
                f"shared memory would hold {total} bytes; the limit is {b.max_board_bytes} bytes "
                "in all.",
            )

    # -- reads -----------------------------------------------------------------------------

    def view(
        self,
        path_or_id: str | None,
        *,
        member: str,
        loop: str,
        view_range: Sequence[int] | None = None,
    ) -> Viewed:
        """View a file (by path or id), a tombstone (by id) or a directory listing."""
        lp = self._loop(loop, member)
        if not path_or_id:
            raise BoardError("invalid", "Path is required for view command")
        if not isinstance(path_or_id, str):
            raise BoardError("invalid", f"path must be a string, not {type(path_or_id).__name__}")
        if _ID_RE.fullmatch(path_or_id):
            f = self._files.get(path_or_id)
            if f is None:
                raise BoardError("not_found", f"There is no file {path_or_id}.")
        else:
            if (problem := path_error(path_or_id)) is not None:
                raise BoardError("path", problem)
            f = self._live(path_or_id)
            if f is None:
                return self._listing(path_or_id)
        read = FileRead(file=f.id, path=f.path, version=f.version, record=f.record)
        if f.content is None:
            result = Viewed(text=f"{f.id} was deleted by {f.writer}.", files=(attrs.evolve(read, deleted=True),))
        else:
            lines, first = _lines(f.content), 1
            if view_range is not None:
                lines, first = self._range(lines, view_range)
                read = attrs.evolve(read, lines=(first, first + len(lines) - 1))
            body = text.file_fence(
                file=f.id,
                path=f.path,
                version=f.version,
                writer=f.writer,
                record=f.record,
                lines=lines,
                first=first,
                ranged=view_range is not None,
            )
            result = Viewed(text=body, files=(read,))
        lp.seen[f.id] = max(lp.seen.get(f.id, 0), f.version)
        self._refresh(loop, lp, f, changed=False)
        return result

    @staticmethod
    def _range(lines: list[str], view_range: Sequence[int]) -> tuple[list[str], int]:
        shown = list(view_range) if isinstance(view_range, Sequence) else view_range
        if (
            isinstance(view_range, str)
            or not isinstance(view_range, Sequence)
            or len(view_range) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in view_range)
        ):
            raise BoardError("invalid", "Invalid `view_range`. It should be a list of two integers.")
        start, end = view_range
        n = len(lines)
        if not 1 <= start <= n:
            raise BoardError(
                "invalid",
                f"Invalid `view_range`: {shown}. Its first element `{start}` should be within "
                f"the range of lines of the file: {[1, n]}",
            )
        if end > n:
            end = -1
        if end != -1 and end < start:
            raise BoardError(
                "invalid",
                f"Invalid `view_range`: {shown}. Its second element `{end}` should be larger or "
                f"equal than its first `{start}`",
            )
        return lines[start - 1 : None if end == -1 else end], start

    def _listing(self, path: str) -> Viewed:
        if path != ROOT and path not in self._dirs:
            raise BoardError("not_found", f"The path {path} does not exist. Please provide a valid path.")
        under = [self._files[self._paths[p]] for p in sorted(self._paths) if _under(p, path)]
        if not under:
            return Viewed(text=text.EMPTY_BOARD, files=(), listing=True)
        rows = [(f.id, f.version, f.writer, f.path) for f in under]
        reads = tuple(FileRead(file=f.id, path=f.path, version=f.version, record=f.record) for f in under)
        return Viewed(text=text.listing_fence(path, rows), files=reads, listing=True)

    # -- news ------------------------------------------------------------------------------

    def _named(self, loop: str, lp: _Loop, ids: set[str]) -> tuple[list[_File], list[str], list[str], str]:
        """Files, labels, writers and the first id to view, for the news ``ids`` of a loop."""
        files = [self._files[i] for i in sorted(ids, key=_key)]
        labels = [
            f"{f.id} deleted" if f.content is None else f"{f.id} new" if not lp.seen.get(f.id) else f.id
            for f in files
        ]
        writers = sorted({f.writer if f.loop != loop else f.other_writer for f in files} - {""})
        first = next((f.id for f in files if f.content is not None), files[0].id)
        lp.told.update(ids)
        return files, labels, writers, first

    def status_line(self, loop: str) -> str | None:
        """``Shared memory: N files changed since you last viewed them (...)``, or ``None``."""
        lp = self._loop(loop)
        if not lp.pending:
            return None
        _, labels, _, _ = self._named(loop, lp, lp.pending)
        return text.status_text(labels)

    def notice(self, loop: str) -> NoticeLine | None:
        """The notice line for what changed since the last notice; it covers what it names."""
        lp = self._loop(loop)
        if not lp.unnotified:
            return None
        files, labels, writers, first = self._named(loop, lp, lp.unnotified)
        lp.unnotified.clear()
        refs = tuple(FileRef(file=f.id, version=f.version, record=f.record) for f in files)
        return NoticeLine(text=text.notice_text(labels, writers, first), files=refs)

    def wait_news(self, loop: str, path_filter: str | None) -> WaitNews | None:
        """News for a wait on a path, directory or id (``None``: the whole board), or ``None``."""
        lp = self._loop(loop)
        if path_filter is not None and _ID_RE.fullmatch(path_filter):
            if path_filter not in self._files:
                raise BoardError("not_found", f"There is no file {path_filter}.")
            ids = {path_filter} & lp.pending
        else:
            where = ROOT if path_filter is None else path_filter
            if (problem := path_error(where)) is not None:
                raise BoardError("path", problem)
            ids = {i for i in lp.pending if _under(self._files[i].path, where)}
        if not ids:
            return None
        files, labels, writers, first = self._named(loop, lp, ids)
        refs = tuple(FileRef(file=f.id, version=f.version, record=f.record) for f in files)
        return WaitNews(text=text.wait_text(labels, writers, first), files=refs)
