"""A ``shared_memory`` view that fits in one tool result: what Inspect would cut is not shown.

Inspect truncates a tool result over its output limit (``max_tool_output``, 16 KiB by default),
so a long view would count as read though its model saw only part of it.  A file view over the
limit shows the first lines that fit, as a ranged view of them (the evidence says which lines),
and says which lines remain and how to view them; a directory listing shows the first rows that
fit and says how many files it left out.  Pure, synchronous Python: no Inspect, no anyio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from . import _board_edit as edit
from ._board import Board, BoardError
from ._board_types import Viewed

__all__ = ["fitted_view"]


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def rest_of_file(file: str, start: int, end: int, limit: int) -> str:
    """The line that ends a file view cut to fit: which lines remain and how to view them."""
    return (
        f"Lines {start}-{end} of {file} are not shown: the view would be over the {limit} bytes "
        f"a tool result shows whole. View them with view_range=[{start}, {end}]."
    )


def _last_fitting(low: int, high: int, fits: Callable[[int], bool]) -> int | None:
    """The largest ``n`` in ``[low, high]`` with ``fits(n)`` (``fits`` holds up to some ``n``
    and fails above it), or ``None``."""
    found = None
    while low <= high:
        mid = (low + high) // 2
        if fits(mid):
            found, low = mid, mid + 1
        else:
            high = mid - 1
    return found


def rest_of_listing(n: int, limit: int) -> str:
    """The line that ends a listing cut to fit."""
    files = "file is" if n == 1 else "files are"
    return (
        f"{n} more {files} not listed: the listing would be over the {limit} bytes a tool "
        "result shows whole. View a subdirectory, or a file by its id."
    )


def fitted_view(
    board: Board,
    path_or_id: str | None,
    *,
    member: str,
    loop: str,
    view_range: Sequence[int] | None,
    limit: int | None,
    finish: Callable[[str], str],
) -> tuple[Viewed, str]:
    """The view of ``path_or_id`` (as ``Board.view``) cut to fit ``limit`` bytes once
    ``finish`` (the status line) is applied, and the text to return.  ``BoardError`` when not
    even one line of the file fits."""
    viewed = board.view(path_or_id, member=member, loop=loop, view_range=view_range)
    text = finish(viewed.text)
    if limit is None or _size(text) <= limit:
        return viewed, text
    if viewed.listing:
        return _listing(viewed, limit, finish)
    [read] = viewed.files
    info = board.get(read.file)
    assert info is not None and info.content is not None  # a tombstone is one short line
    first, last = read.lines or (1, len(edit.lines(info.content)))

    def page(end: int) -> tuple[Viewed, str]:
        # a ranged view of the lines that fit: what the evidence records as read
        shown = board.view(read.file, member=member, loop=loop, view_range=[first, end])
        rest = rest_of_file(read.file, end + 1, last, limit)
        return shown, finish(f"{shown.text}\n\n{rest}")

    end = _last_fitting(first, last - 1, lambda n: _size(page(n)[1]) <= limit)
    if end is None:
        raise BoardError(
            "output_limit",
            f"line {first} of {read.file} alone is over the {limit} bytes a tool result shows "
            "whole; it cannot be viewed.",
        )
    return page(end)


def _listing(viewed: Viewed, limit: int, finish: Callable[[str], str]) -> tuple[Viewed, str]:
    head, _, body = viewed.text.partition("\n<peer_listing")
    opening, _, rows_and_close = body.partition("\n")
    rows = rows_and_close.removesuffix("</peer_listing>").splitlines()

    def page(keep: int) -> str:
        return (
            f"{head}\n<peer_listing{opening}\n"
            + "".join(f"{row}\n" for row in rows[:keep])
            + f"</peer_listing>\n\n{rest_of_listing(len(rows) - keep, limit)}"
        )

    keep = _last_fitting(1, len(rows) - 1, lambda n: _size(finish(page(n))) <= limit)
    if keep is not None:
        text = page(keep)
        return attrs.evolve(viewed, text=text, files=viewed.files[:keep]), finish(text)
    raise BoardError(
        "output_limit",
        f"not one row of this listing fits in the {limit} bytes a tool result shows whole.",
    )
