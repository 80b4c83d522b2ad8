"""Linux ``inotify`` through ``ctypes``: which files under a directory were opened, read or
written, seen by the kernel of the host (so also when the reader runs inside a bubblewrap
sandbox whose working directory is a bind mount of that directory: a bind mount is the same
inode).  The descriptor is non-blocking; ``drain`` returns what is queued now."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys
from pathlib import Path
from typing import NamedTuple

__all__ = ["FileEvent", "Inotify", "inotify_available"]

IN_ACCESS = 0x00000001
IN_MODIFY = 0x00000002
IN_OPEN = 0x00000020
IN_CREATE = 0x00000100
IN_MOVED_TO = 0x00000080
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_MASK = IN_ACCESS | IN_MODIFY | IN_OPEN | IN_CREATE | IN_MOVED_TO
_HEADER = struct.Struct("iIII")


class FileEvent(NamedTuple):
    """One file event: the watched root it happened under, the file's path relative to that
    root, and ``open``, ``read``, ``write`` or ``overflow`` (the kernel's queue overflowed:
    events were lost)."""

    root: str
    path: str
    op: str


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def inotify_available() -> bool:
    """Whether this machine has inotify (Linux)."""
    return _libc() is not None


class Inotify:
    """One inotify instance watching any number of directory trees (new subdirectories are
    watched as they appear)."""

    def __init__(self) -> None:
        libc = _libc()
        if libc is None:
            raise OSError("inotify is available on Linux only")
        self._libc = libc
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._fd: int | None = fd
        self._dirs: dict[int, tuple[str, str]] = {}  # watch -> (root, dir relative to root)

    def watch(self, root: str | Path) -> None:
        """Watch every directory under ``root`` (and ``root``)."""
        base = str(root)
        for current, dirs, _files in os.walk(base):
            self._add(base, os.path.relpath(current, base))
            dirs.sort()

    def _add(self, root: str, rel: str) -> None:
        if self._fd is None:
            return
        path = root if rel == "." else os.path.join(root, rel)
        wd = self._libc.inotify_add_watch(self._fd, path.encode(), _MASK)
        if wd >= 0:
            self._dirs[wd] = (root, "" if rel == "." else rel)

    def drain(self) -> list[FileEvent]:
        """The events queued now, in the order the kernel queued them (directories' own
        opens left out)."""
        found: list[FileEvent] = []
        while self._fd is not None:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + size]
                offset += _HEADER.size + size
                name = raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")
                if mask & IN_Q_OVERFLOW:
                    found.append(FileEvent("", "", "overflow"))
                    continue
                where = self._dirs.get(wd)
                if where is None or mask & IN_IGNORED:
                    continue
                root, rel = where
                path = f"{rel}/{name}" if rel and name else (name or rel)
                if mask & IN_ISDIR:
                    if mask & (IN_CREATE | IN_MOVED_TO):
                        self.watch_new(root, path)
                    continue
                if mask & IN_OPEN:
                    found.append(FileEvent(root, path, "open"))
                elif mask & IN_ACCESS:
                    found.append(FileEvent(root, path, "read"))
                elif mask & IN_MODIFY:
                    found.append(FileEvent(root, path, "write"))
        return found

    def watch_new(self, root: str, rel: str) -> None:
        """Watch a directory that appeared under ``root`` (and what it already holds)."""
        for current, _dirs, _files in os.walk(os.path.join(root, rel)):
            self._add(root, os.path.relpath(current, root))

    def close(self) -> None:
        """Stop watching."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
