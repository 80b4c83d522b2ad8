"""Pure edits of a shared-memory file's text: no board state, only strings and their rules.

Content is text with ``\\n`` line ends (``normal`` converts ``\\r\\n`` and ``\\r``).  A file's
lines are what ``view`` numbers: a final ``\\n`` ends the last line and does not start another,
so ``"a\\nb\\n"`` and ``"a\\nb"`` both have 2 lines and ``""`` has none.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import _board_text as text
from ._board_types import BoardError

__all__ = ["appended", "inserted", "lines", "normal", "replaced", "size", "view_slice"]


def normal(value: str) -> str:
    """``value`` with ``\\r\\n`` and ``\\r`` line ends turned into ``\\n``."""
    return value.replace("\r\n", "\n").replace("\r", "\n")


def lines(content: str) -> list[str]:
    """The lines of ``content`` as ``view`` numbers them."""
    out = content.split("\n")
    if out[-1] == "":
        out.pop()
    return out


def size(value: str) -> int:
    """UTF-8 bytes of ``value``; ``BoardError`` for text that has no UTF-8 form."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise BoardError(
            "invalid", "the text is not valid UTF-8 (it has a lone surrogate)."
        ) from None


def replaced(content: str, old: str, new: str, path: str) -> str:
    """``content`` with its one occurrence of ``old`` (overlaps count) replaced by ``new``."""
    if not old:
        raise BoardError("invalid", text.OLD_STR_EMPTY)
    starts: list[int] = []
    at = content.find(old)
    while at != -1 and len(starts) < 100:
        starts.append(at)
        at = content.find(old, at + 1)
    if not starts:
        raise BoardError("invalid", text.no_match(old, path))
    if len(starts) > 1:
        numbers = sorted({content.count("\n", 0, s) + 1 for s in starts})
        raise BoardError("invalid", text.many_matches(old, numbers))
    return content[: starts[0]] + new + content[starts[0] + len(old) :]


def inserted(content: str, line: int, insert: str) -> str:
    """``insert`` as whole lines after line ``line`` (0 = the start) of ``content``."""
    have = lines(content)
    if not 0 <= line <= len(have):
        raise BoardError("invalid", text.insert_range(line, len(have)))
    added = (insert[:-1] if insert.endswith("\n") else insert).split("\n")
    joined = "\n".join(have[:line] + added + have[line:])
    # the text keeps its final newline, unless the insert became its end
    ends = content.endswith("\n") if line < len(have) else insert.endswith("\n")
    return joined + ("\n" if ends else "")


def appended(content: str, append: str) -> str:
    """``append`` on a new line at the end of ``content`` (a newline added if missing)."""
    return content + ("\n" if content and not content.endswith("\n") else "") + append


def view_slice(all_lines: list[str], view_range: Sequence[int]) -> tuple[list[str], int]:
    """The lines a ``view_range`` shows and the number of the first (``memory()``'s rules)."""
    if (
        isinstance(view_range, str)
        or not isinstance(view_range, Sequence)
        or len(view_range) != 2
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in view_range)
    ):
        raise BoardError("invalid", text.RANGE_SHAPE)
    shown, (start, end), n = list(view_range), view_range, len(all_lines)
    if not 1 <= start <= n:
        raise BoardError("invalid", text.range_first(shown, start, n))
    stop = n if end == -1 else end  # an end past the last line shows to the last line
    if stop < start:
        raise BoardError("invalid", text.range_second(shown, end, start))
    return all_lines[start - 1 : stop], start
