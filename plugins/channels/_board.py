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
- ``apply(plan, *, record_id) -> Applied``: commit a plan (once; plans belong to their board).
  Never fails when nothing was written since ``plan``; otherwise the write is planned again:
  refused with control ``stale`` if the result differs (other than versions, for the blind
  ``str_replace``/``append``) or no longer plans, with the bound's control if a bound now
  refuses it.  ``Applied`` has the ``ack``, the ``changes`` (ids, paths, base and new versions,
  for evidence), ``payload_bytes``, and the loops/members the write made news for.
- ``view(path_or_id, *, member, loop, view_range=None) -> Viewed``: a fenced file (marks that
  version seen by ``loop``), a listing (marks nothing), or a tombstone's one line; ``.files``
  says what was read, for evidence.
- ``status_line(loop) -> str | None``, ``notice(loop) -> BoardNotice | None``,
  ``wait_news(loop, path_filter) -> BoardNews | None``, ``news(loop) -> tuple[str, ...]``:
  what is news to ``loop``.  The first three cover what they name for notices: the next
  notice omits a file until another loop changes it again.
- ``get(path_or_id) -> FileInfo | None``, ``files() -> tuple[FileInfo, ...]``, ``file_count``,
  ``total_bytes``, ``bounds``; ``path_error(path) -> str | None`` checks the grammar alone.

News is kept per loop and updated in proportion to each write: a file is news to a loop when a
different loop wrote a version above what that loop has seen; a tombstone is news only when the
loop had seen the file or been told of it (by a notice, status line or wait result).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import attrs

from swarm import shortened

from . import _board_edit as edit
from . import _board_text as text
from ._board_text import ROOT
from ._board_types import (
    BOUND_CONTROLS,
    COMMANDS,
    CONTROLS,
    ID_RE,
    Applied,
    BoardError,
    BoardNews,
    BoardNotice,
    Bounds,
    FileChange,
    FileInfo,
    FileRead,
    FileRef,
    Plan,
    Viewed,
    path_error,
)

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
    "BoardNotice",
    "Plan",
    "Viewed",
    "BoardNews",
    "path_error",
]


@attrs.define
class _File:
    id: str
    path: str
    content: str | None
    size: int  # UTF-8 bytes of ``content``
    lines: int  # its lines as ``view`` numbers them
    version: int
    writer: str
    record: str
    loop: str
    # the writer of the latest version written by a loop other than ``loop`` ("": none)
    other_writer: str = ""


@attrs.define
class _Loop:
    member: str | None
    seen: dict[str, int] = attrs.Factory(dict)  # file id -> highest version seen
    told: set[str] = attrs.Factory(set)  # files named to the loop by a news line
    pending: set[str] = attrs.Factory(set)  # files that are news now
    unnotified: set[str] = attrs.Factory(set)  # pending files no news line has named yet
    cursor: int = 0  # how much of the board's change log this loop has taken in
    # a result has told the loop the board's news since its last turn boundary
    informed: bool = False


@attrs.frozen
class _Draft:
    target: str  # the path the command named (``old_path`` for rename)
    subtree: bool  # whether ``target`` is a directory
    changes: tuple[FileChange, ...]
    contents: tuple[str | None, ...]
    payload: str
    # (UTF-8 bytes, lines) of each of ``contents``, computed from what changed for an append
    measures: tuple[tuple[int, int], ...]


def _shape(
    changes: Sequence[FileChange], contents: Sequence[str | None], blind: bool
) -> list[tuple[object, ...]]:
    """What must not differ between a plan and its re-plan at ``apply``."""
    if blind:  # writes that need no view tolerate versions (and so content) moving on
        return [(c.file, c.path, c.old_path, c.deleted) for c in changes]
    return [(*attrs.astuple(c), t) for c, t in zip(changes, contents, strict=True)]


def _ack(plan: Plan, done: list[FileChange]) -> str:
    first, file = done[0], done[0].file or ""
    if plan.command == "delete":
        ids = sorted((c.file or "" for c in done), key=_key)
        return text.deleted_ack(plan.target, ids, plan.subtree)
    if plan.command == "rename":
        new = str(plan.args["new_path"])
        return text.renamed_ack(plan.target, new, file, first.version, len(done), plan.subtree)
    verbs = {"create": "Replaced", "str_replace": "Edited", "append": "Appended to"}
    verbs["insert"] = f"Inserted text after line {plan.args.get('insert_line')} of"
    verb = "Created" if first.base == 0 else verbs[plan.command]
    return text.written_ack(verb, first.path, file, first.version)


def _key(file: str) -> int:
    return int(file[2:])


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
        # every file changed, in the order of its latest change, with that change's serial: a
        # loop takes in the files changed since it last looked (a suffix of this order), so a
        # write and a look cost the same however many loops and writes there are
        self._changed: dict[str, int] = {}
        self._change_serial = 0
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
        file_id = path_or_id if ID_RE.fullmatch(path_or_id) else self._paths.get(path_or_id)
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
            live = set(self._paths.values())
            lp = self._loops[loop] = _Loop(
                member, pending=live, unnotified=set(live), cursor=self._change_serial
            )
        elif member is not None and lp.member != member:
            if lp.member is not None:
                raise ValueError(f"loop {loop!r} acts for {lp.member!r}, not {member!r}")
            lp.member = member
        # every change past the cursor is another loop's (a writer is caught up before it
        # writes and takes in its own changes); a file's news depends on its state now, so each
        # file changed since is refreshed once, however often it changed
        if lp.cursor < self._change_serial:
            for file_id, serial in reversed(self._changed.items()):
                if serial <= lp.cursor:
                    break
                self._refresh(lp, self._files[file_id], changed=True)
            lp.cursor = self._change_serial
        return lp

    @staticmethod
    def _is_news(lp: _Loop, f: _File) -> bool:
        # a loop's own write is news to it only when it had not seen what it wrote over: then
        # ``seen`` stays below that version, and so below the version it wrote
        seen = lp.seen.get(f.id, 0)
        known = f.content is not None or seen > 0 or f.id in lp.told
        return f.version > seen and known

    def _refresh(self, lp: _Loop, f: _File, changed: bool) -> None:
        if self._is_news(lp, f):
            lp.pending.add(f.id)
            if changed:
                lp.unnotified.add(f.id)
        else:
            lp.pending.discard(f.id)
            lp.unnotified.discard(f.id)

    # -- writes ----------------------------------------------------------------------------

    def plan(self, command: str, args: Mapping[str, object], *, member: str, loop: str) -> Plan:
        """Validate a write and compute its exact result against the board, changing nothing."""
        frozen = MappingProxyType(dict(args))
        draft = self._draft(command, frozen, self._loop(loop, member))
        return Plan(
            command=command,
            member=member,
            loop=loop,
            args=frozen,
            target=draft.target,
            subtree=draft.subtree,
            changes=draft.changes,
            payload=draft.payload,
            payload_bytes=edit.size(draft.payload),
            contents=draft.contents,
            measures=draft.measures,
            revision=self._revision,
            serial=next(self._serials),
        )

    def apply(self, plan: Plan, *, record_id: str) -> Applied:
        """Commit ``plan`` as the write recorded as ``record_id``."""
        if plan.serial in self._applied:
            raise ValueError("this plan was already applied")
        lp = self._loop(plan.loop)  # ``plan`` registered the loop's member
        changes, contents, measures = plan.changes, plan.contents, plan.measures
        if plan.revision != self._revision:  # something was written since: plan it again
            try:
                fresh = self._draft(plan.command, plan.args, lp)
            except BoardError as error:
                if error.control in BOUND_CONTROLS:
                    raise
                raise BoardError("stale", text.STALE) from error
            blind = plan.command in ("str_replace", "append")
            if _shape(changes, contents, blind) != _shape(fresh.changes, fresh.contents, blind):
                raise BoardError("stale", text.STALE)
            changes, contents, measures = fresh.changes, fresh.contents, fresh.measures
        self._applied.add(plan.serial)
        self._revision += 1
        done: list[FileChange] = []
        for change, content, measure in zip(changes, contents, measures, strict=True):
            f = self._commit(change, content, measure, plan, record_id)
            done.append(attrs.evolve(change, file=f.id))
            # the writer saw what it wrote only if it had seen what it wrote over
            if change.file is None or lp.seen.get(f.id) == change.base:
                lp.seen[f.id] = f.version
            self._refresh(lp, f, changed=False)
            self._change_serial += 1
            self._changed.pop(f.id, None)  # to the end of the order of latest changes
            self._changed[f.id] = self._change_serial
        lp.cursor = self._change_serial  # the writer has taken in its own changes
        return Applied(
            command=plan.command,
            ack=_ack(plan, done),
            changes=tuple(done),
            payload_bytes=plan.payload_bytes,
        )

    def _commit(
        self,
        change: FileChange,
        content: str | None,
        measure: tuple[int, int],
        plan: Plan,
        record: str,
    ) -> _File:
        size, lines = (0, 0) if content is None else measure
        if change.file is None:
            file_id, self._next_file = f"f-{self._next_file}", self._next_file + 1
            f = _File(file_id, change.path, content, size, lines, 1, plan.member, record, plan.loop)
            self._files[f.id] = f
        else:
            f = self._files[change.file]
            self._unlink(f)
            self._bytes -= f.size
            if f.loop != plan.loop:
                f.other_writer = f.writer
            f.path, f.content, f.version = change.path, content, change.version
            f.size, f.lines = size, lines
            f.writer, f.record, f.loop = plan.member, record, plan.loop
        if content is not None:
            self._link(f)
            self._bytes += size
        return f

    def _link(self, f: _File) -> None:
        self._paths[f.path] = f.id
        for d in _parents(f.path):
            self._dirs[d] = self._dirs.get(d, 0) + 1

    def _unlink(self, f: _File) -> None:
        del self._paths[f.path]
        for d in _parents(f.path):
            self._dirs[d] -= 1
            if not self._dirs[d]:
                del self._dirs[d]

    # -- planning --------------------------------------------------------------------------

    def _draft(self, command: str, args: Mapping[str, object], lp: _Loop) -> _Draft:
        """The exact result of a write against the board now, or ``BoardError``."""
        if command not in COMMANDS:
            raise BoardError("invalid", f"Unknown command: {command}")
        if command == "rename":
            return self._draft_rename(args, lp)
        path = self._path_arg(args, "path", command)
        if command == "delete":
            targets, subtree = self._targets(path, "deleted")
            for t in targets:
                self._need_view(lp, t, "deleting it")
            gone = [
                FileChange(
                    file=t.id, path=t.path, base=t.version, version=t.version + 1, deleted=True
                )
                for t in targets
            ]
            return _Draft(
                path, subtree, tuple(gone), (None,) * len(gone), "", ((0, 0),) * len(gone)
            )
        f = self._live(path)
        measure: tuple[int, int] | None = None  # computed from the whole content below
        checked = None  # the text the fence check reads (None: the whole content)
        if command == "create":
            content = payload = edit.normal(self._text_arg(args, "file_text", command))
            if f is not None:
                self._need_view(lp, f, "replacing it")
        elif command == "append":
            payload = edit.normal(self._text_arg(args, "append_text", command))
            if not payload:
                raise BoardError("invalid", "append: The `append_text` parameter cannot be empty.")
            old = "" if f is None else f.content or ""
            content = edit.appended(old, payload)
            if f is not None and old:  # what was there was checked: only what is added is new
                added = edit.size(payload) + (0 if old.endswith("\n") else 1)
                measure = (f.size + added, f.lines + len(edit.lines(payload)))
                checked = payload
        elif command == "str_replace":
            f = self._existing(path)
            old = edit.normal(self._text_arg(args, "old_str", command, required=False))
            payload = edit.normal(self._text_arg(args, "new_str", command, required=False))
            content = edit.replaced(f.content or "", old, payload, path)
        else:  # insert
            f = self._existing(path)
            line = args.get("insert_line")
            if line is None:
                raise BoardError("invalid", "insert_line is required for insert command")
            if isinstance(line, bool) or not isinstance(line, int):
                raise BoardError("invalid", f"insert_line must be an integer, not {line!r}")
            payload = edit.normal(self._text_arg(args, "insert_text", command))
            self._need_view(lp, f, "inserting into it")
            content = edit.inserted(f.content or "", line, payload)
        if f is None:
            self._check_free(path)
        if measure is None:
            measure = (edit.size(content), len(edit.lines(content)))
        self._check_content(path, content if checked is None else checked, measure, f)
        base = 0 if f is None else f.version
        change = FileChange(
            file=None if f is None else f.id, path=path, base=base, version=base + 1
        )
        return _Draft(path, False, (change,), (content,), payload, (measure,))

    def _draft_rename(self, args: Mapping[str, object], lp: _Loop) -> _Draft:
        old = self._path_arg(args, "old_path", "rename")
        new = self._path_arg(args, "new_path", "rename")
        targets, subtree = self._targets(old, "renamed")
        if new == ROOT or new in self._paths or new in self._dirs:
            raise BoardError("exists", f"The destination {new} already exists")
        if new.startswith(old + "/"):
            raise BoardError("path", f"Cannot rename {old} to {new}: it would be inside itself.")
        self._check_free(new)
        changes: list[FileChange] = []
        for t in targets:
            moved = new + t.path[len(old) :]
            if (problem := path_error(moved)) is not None:
                raise BoardError("path", f"Cannot rename {old} to {new}: {problem}")
            self._need_view(lp, t, "renaming it")
            changes.append(
                FileChange(
                    file=t.id, path=moved, base=t.version, version=t.version + 1, old_path=t.path
                )
            )
        contents = tuple(t.content for t in targets)
        measures = tuple((t.size, t.lines) for t in targets)
        return _Draft(old, subtree, tuple(changes), contents, "", measures)

    # -- checks ----------------------------------------------------------------------------

    @staticmethod
    def _text_arg(
        args: Mapping[str, object], name: str, command: str, required: bool = True
    ) -> str:
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

    def _existing(self, path: str) -> _File:
        f = self._live(path)
        if f is None and (path == ROOT or path in self._dirs):
            raise BoardError("invalid", text.is_directory(path))
        if f is None:
            raise BoardError("not_found", text.not_found(path))
        return f

    def _targets(self, path: str, done: str) -> tuple[list[_File], bool]:
        """The live file at ``path``, or every live file under the directory ``path``."""
        if path == ROOT:
            raise BoardError("path", f"The root {ROOT} cannot be {done}.")
        f = self._live(path)
        if f is not None:
            return [f], False
        if path not in self._dirs:
            raise BoardError("not_found", text.not_found(path))
        under = sorted(p for p in self._paths if p.startswith(path + "/"))
        return [self._files[self._paths[p]] for p in under], True

    def _check_free(self, path: str) -> None:
        """A new file may go at ``path``: not a directory, not under another file."""
        if path == ROOT or path in self._dirs:
            raise BoardError(
                "exists", f"The path {path} is a directory; a file cannot be created there."
            )
        for d in _parents(path):
            if d in self._paths:
                raise BoardError("exists", f"{d} is a file, so {path} cannot be created under it.")

    @staticmethod
    def _need_view(lp: _Loop, f: _File, action: str) -> None:
        if lp.seen.get(f.id, 0) < f.version:
            raise BoardError("unviewed", text.unviewed(f.id, f.version, f.writer, action))

    def _check_content(
        self, path: str, new_text: str, measure: tuple[int, int], f: _File | None
    ) -> None:
        """Bounds and fences for a file's new content, of ``measure`` (bytes, lines), whose
        text not checked before is ``new_text`` (an append's: what it adds)."""
        if (marker := text.fence_marker(new_text)) is not None:
            raise BoardError("fence", text.fenced(marker, path))
        b, (size, lines) = self.bounds, measure
        total = self._bytes + size - (0 if f is None else f.size)
        if f is None and len(self._paths) >= b.max_files:
            raise BoardError("max_files", text.too_many_files(len(self._paths), b.max_files))
        if size > b.max_file_bytes:
            raise BoardError("max_file_bytes", text.file_too_big(path, size, b.max_file_bytes))
        if lines > b.max_file_lines:
            raise BoardError("max_file_lines", text.file_too_long(path, lines, b.max_file_lines))
        if total > b.max_board_bytes:
            raise BoardError("max_board_bytes", text.board_too_big(total, b.max_board_bytes))

    # -- reads -----------------------------------------------------------------------------

    def view(
        self,
        path_or_id: str | None,
        *,
        member: str,
        loop: str,
        view_range: Sequence[int] | None = None,
    ) -> Viewed:
        """View a file (by path or id), a tombstone (by id) or a directory listing.

        Viewing a file or tombstone marks its version seen by ``loop``; a listing marks nothing.
        """
        lp = self._loop(loop, member)
        if not path_or_id:
            raise BoardError("invalid", "Path is required for view command")
        if not isinstance(path_or_id, str):
            raise BoardError("invalid", f"path must be a string, not {type(path_or_id).__name__}")
        if ID_RE.fullmatch(path_or_id):
            f = self._files.get(path_or_id)
            if f is None:
                raise BoardError("not_found", f"There is no file {shortened(path_or_id)}.")
        else:
            if (problem := path_error(path_or_id)) is not None:
                raise BoardError("path", problem)
            f = self._live(path_or_id)
            if f is None:
                return self._listing(path_or_id)
        read = FileRead(file=f.id, path=f.path, version=f.version, record=f.record)
        if f.content is None:
            result = Viewed(
                text=f"{f.id} was deleted by {f.writer}.", files=(attrs.evolve(read, deleted=True),)
            )
        else:
            lines, first = edit.lines(f.content), 1
            if view_range is not None:
                lines, first = edit.view_slice(lines, view_range)
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
        # versions only grow, so this is never below what the loop saw, and it is no news now
        lp.seen[f.id] = f.version
        lp.pending.discard(f.id)
        lp.unnotified.discard(f.id)
        return result

    def _listing(self, path: str) -> Viewed:
        if path != ROOT and path not in self._dirs:
            raise BoardError("not_found", text.not_found(path))
        under = [self._files[self._paths[p]] for p in sorted(self._paths) if _under(p, path)]
        if not under:
            return Viewed(text=text.EMPTY_BOARD, files=(), listing=True)
        rows = [(f.id, f.version, f.writer, f.path) for f in under]
        reads = tuple(
            FileRead(file=f.id, path=f.path, version=f.version, record=f.record) for f in under
        )
        return Viewed(text=text.listing_fence(path, rows), files=reads, listing=True)

    # -- news ------------------------------------------------------------------------------

    def _named(
        self, loop: str, lp: _Loop, ids: set[str]
    ) -> tuple[list[_File], list[str], list[str], str]:
        """Files, labels, writers and the first id to view, for the news ``ids`` of a loop."""
        files = [self._files[i] for i in sorted(ids, key=_key)]
        kinds = [
            " deleted" if f.content is None else "" if lp.seen.get(f.id) else " new" for f in files
        ]
        labels = [f.id + kind for f, kind in zip(files, kinds, strict=True)]
        writers = sorted({f.writer if f.loop != loop else f.other_writer for f in files} - {""})
        first = next((f.id for f in files if f.content is not None), files[0].id)
        lp.told.update(ids)
        lp.unnotified.difference_update(ids)  # a notice does not repeat what a result said
        return files, labels, writers, first

    def status_line(self, loop: str) -> str | None:
        """``Shared memory: N files changed since you last viewed them (...)``, or ``None``.

        Names every file that is news to ``loop``; they count as told (so a deletion is news)
        and covered (the next notice omits them until they change again).  The loop has then
        been told the board's news in this turn: its next ``notice`` is skipped.
        """
        lp = self._loop(loop)
        lp.informed = True
        if not lp.pending:
            return None
        _, labels, _, _ = self._named(loop, lp, lp.pending)
        return text.status_text(labels)

    def notice(self, loop: str) -> BoardNotice | None:
        """The notice line for what changed since the last notice, or ``None``.

        A notice covers what it names: the next one omits a file until another loop changes it
        again.  Named files count as told (so a deletion is news).  A turn whose results ended
        with the board's news (a ``status_line``) gets no notice: at most one summary of the
        board per turn; what changed since stays news for the next status line or notice.
        """
        lp = self._loop(loop)
        informed, lp.informed = lp.informed, False
        if informed or not lp.unnotified:  # at most one summary of the board per turn
            return None
        files, labels, writers, first = self._named(loop, lp, lp.unnotified)
        lp.unnotified.clear()
        refs = tuple(FileRef(file=f.id, version=f.version, record=f.record) for f in files)
        return BoardNotice(text=text.notice_text(labels, writers, first), files=refs)

    def wait_news(self, loop: str, path_filter: str | None) -> BoardNews | None:
        """News for a wait on a path, directory or id (``None``: the whole board), or ``None``.

        Reports until ``loop`` views what it names, and covers it for notices.  An invalid
        filter raises ``BoardError`` (``path``, or ``not_found`` for an unknown id).
        """
        lp = self._loop(loop)
        if path_filter is not None and ID_RE.fullmatch(path_filter):
            if path_filter not in self._files:
                raise BoardError("not_found", f"There is no file {shortened(path_filter)}.")
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
        return BoardNews(text=text.wait_text(labels, writers, first), files=refs)
