"""Built-in answer normalisers, the names a topology file can give ``normalize:``.

- ``default``: ``swarm.normalize_answer`` (whitespace made single spaces, case-folded);
- ``exact``: the answer with whitespace stripped from both ends, nothing else;
- ``number``: the last number in the answer, written plainly (``"The total is 1,200.50."``
  -> ``"1200.5"``; digits of any script are read as the digits they are); ``""`` (no vote) when
  the answer has no number.
"""

from __future__ import annotations

import re
import unicodedata

from swarm import Register, hookimpl, normalize_answer

__all__ = ["exact", "number"]

# a number: a sign (not after a word or a point: "3-5" is 3 and 5), digits (with commas between
# groups of three, or none), an optional fraction; ``\d`` is any script's decimal digit, each
# read with unicodedata below
_NUMBER = re.compile(r"(?:(?<![\w.])[-+])?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?")


def exact(text: str) -> str:
    """The answer with whitespace stripped from both ends, case and inner spacing kept."""
    return text.strip()


def _ascii_digits(text: str) -> str:
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def number(text: str) -> str:
    """The last number in ``text``, plainly: no sign for zero or ``+``, no thousands commas, no
    leading zeros, no trailing zeros after the point (``"-0.50"`` -> ``"-0.5"``, ``"007"`` ->
    ``"7"``, ``"+3.000"`` -> ``"3"``); ``""`` when there is none.  Only text is handled, never
    converted to a float or an int, so a number of any length is kept exactly."""
    found = _NUMBER.findall(text)
    if not found:
        return ""
    raw = _ascii_digits(found[-1]).replace(",", "")
    sign = "-" if raw.startswith("-") else ""
    whole, _, fraction = raw.lstrip("+-").partition(".")
    whole = whole.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    plain = f"{whole}.{fraction}" if fraction else whole
    return "0" if plain == "0" else sign + plain


@hookimpl
def swarm_register_normalizers(register: Register) -> None:
    register("default", normalize_answer)
    register("exact", exact)
    register("number", number)
