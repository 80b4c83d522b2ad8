"""The integers of a child's reply and of an artifact's answer, read as values.

A text is cut into **words** at whitespace, ``:`` and ``=``, except that a no-break space
(U+00A0), narrow no-break space (U+202F) or thin space (U+2009) between a digit and a group of
three digits joins them (a thousands separator, as in ``59 474`` typeset in French).  Each word
is trimmed of the quotes, brackets and markup around it (``' " ( [ { < * _`` and backticks
before it; those, their closing pairs and ``. , ; ! ?`` after it: ``.5`` keeps its point).
What remains is one of:

- an **integer**: an optional sign (``-``, ``+`` or the minus sign U+2212), then ASCII digits,
  either plain (``59474``, ``007``) or grouped in threes by one separator used throughout
  (``59,474``, ``1,482,368``, or one of the three spaces above): the first group 1 to 3 digits,
  every other exactly 3;
- a **number that is not an integer**: a word with a digit and no letter that is not an
  integer (``16.5``, ``1/2``, ``16%``, ``$16``, ``16-17``, ``1,2345``, ``1.2.3``);
- a **name**, ignored: a word with a letter (``events-03.jsonl``, ``v2``, ``16th``, ``1e5``),
  or one with no digit at all.

A reply's integer (``reply_integer``) is the value of its **last number** when that number is
an integer, else none: ``The answer is 16.`` is 16, ``884`` then ``done.`` is 884, ``20`` then
``Correction: 21`` is 21, ``16 (from events-03.jsonl)`` is 16, while ``16.5`` has none (never 5
or 16) and ``16, or maybe 17`` is 17.  An artifact's answer (``answer_integer``), trimmed of
whitespace, must be one integer and nothing else, not even punctuation: ``59,474`` and
``59474`` are 59474; ``59474.``, ``59474 records``, ``16.5`` and ``59 474`` with an ASCII space
are not integers.

Text the runtime adds is never a reply's number: a **notice** (``[Swarm notice] ...``, which
rides at the end of a tool result, so a child that copies its tool output into its reply copies
it too) is cut out first, from its prefix to the next blank line or the end of the text
(``884`` then ``[Swarm notice] messages: 1 unread`` is 884).

Of a child's replies, the one that **carries its answer** (``answer_reply``) is its last reply
that holds a number: a later reply with no number (a sign-off, ``done.``) does not undo it; a
later reply with a different number (a correction, or a wrong second answer) does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

__all__ = [
    "NOTICE_PREFIX",
    "answer_integer",
    "answer_reply",
    "numbers",
    "reply_integer",
    "without_notices",
]

NOTICE_PREFIX = "[Swarm notice] "
"""How the runtime's notices start (``swarm.records.NOTICE_PREFIX``, which a plugin cannot
import; a test keeps the two equal)."""
_NOTICE = re.compile(re.escape(NOTICE_PREFIX) + r".*?(?=\n[ \t]*\n|\Z)", re.DOTALL)

_JOINERS = "\u00a0\u202f\u2009"
"""Spaces that are thousands separators when a digit and three digits surround them."""
_JOINING = rf"(?<=[0-9])[{_JOINERS}](?=[0-9]{{3}}(?![0-9]))"
_SPLIT = re.compile(rf"(?:(?!{_JOINING})[\s:=])+")
"""A cut between words: a run of whitespace, ``:`` and ``=`` holding no joining space."""
_LEAD = "'\"([{<*_`"
_TRAIL = ".,;!?'\")]}>*_`"
_SIGNS = "-+\u2212"
_SEPARATORS = (",", *_JOINERS)
_GROUPED = {sep: re.compile(rf"[0-9]{{1,3}}(?:{re.escape(sep)}[0-9]{{3}})+") for sep in _SEPARATORS}
_PLAIN = re.compile(r"[0-9]+")


def _words(text: str) -> list[str]:
    trimmed = (raw.lstrip(_LEAD).rstrip(_TRAIL) for raw in _SPLIT.split(text))
    return [word for word in trimmed if word]


def _integer(word: str) -> int | None:
    """The value of ``word`` when it is an integer (see the module), else ``None``."""
    sign = 1
    body = word
    if body[:1] and body[0] in _SIGNS:
        sign = 1 if body[0] == "+" else -1
        body = body[1:]
    if _PLAIN.fullmatch(body):
        return sign * int(body)
    for sep, grouped in _GROUPED.items():
        if grouped.fullmatch(body):
            return sign * int(body.replace(sep, ""))
    return None


def _is_number(word: str) -> bool:
    return any(c.isdigit() for c in word) and not any(c.isalpha() for c in word)


def numbers(text: str) -> list[int | None]:
    """Every number of ``text`` in order: its value when it is an integer, ``None`` when it is
    a number that is not one (names are left out)."""
    return [_integer(word) for word in _words(text) if _is_number(word)]


def without_notices(text: str) -> str:
    """``text`` with every notice the runtime added cut out (from ``[Swarm notice]`` to the
    next blank line or the end)."""
    return _NOTICE.sub(" ", text)


def reply_integer(text: str) -> int | None:
    """The integer a reply gives: its last number (notices left out), when that is an
    integer."""
    found = numbers(without_notices(text))
    return found[-1] if found else None


class _Texted(Protocol):  # what answer_reply reads of a reply
    @property
    def text(self) -> str: ...


M = TypeVar("M", bound=_Texted)


def answer_reply(replies: Sequence[M]) -> M | None:
    """The reply of ``replies`` (in the order they were sent) that carries the answer: the last
    one holding a number (notices left out); else the last one; ``None`` for none."""
    numbered = [m for m in replies if numbers(without_notices(m.text))]
    if numbered:
        return numbered[-1]
    return replies[-1] if replies else None


def answer_integer(text: str) -> int | None:
    """The integer an artifact's answer is: the whole answer (trimmed) is one integer."""
    return _integer(text.strip())
