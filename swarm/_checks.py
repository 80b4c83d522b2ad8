"""Checks of the values a user configures, and how a refusal repeats what it was given.

Numbers are finite, whole where they count things, in range, and never booleans: every number
swarm-eval takes from a user goes through ``number_problem``, so a value is refused with the
same words wherever it is given (Python, ``-S``, a topology file), and a number YAML read as
text (``1e5``) is refused saying so.  Records use ``number_field`` as an attrs validator; their
problems are ``FieldError``s, which carry the field's name so that a message built from a
nested mapping can give the whole path (``members[0].limits.time``).

A name or key that is not known is refused by ``unknown_names`` (the valid ones, and the closest
as "did you mean"); a value a model gave is repeated by a refusal, and kept by a record of a
refused request, as ``shortened`` makes it (at most ``ECHO_LIMIT`` characters of it).
"""

from __future__ import annotations

import difflib
import inspect
import math
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from swarm.errors import ConfigError, UsageError

__all__ = [
    "check_writable_directory",
    "ECHO_LIMIT",
    "FieldError",
    "as_float",
    "as_whole",
    "did_you_mean",
    "number_field",
    "number_problem",
    "shortened",
    "shown",
    "text_number_note",
    "unknown_names",
    "unknown_parameters",
]

ECHO_LIMIT = 200
"""The most characters of a value a refusal repeats (``shortened``)."""

# a number in exponent form that YAML 1.1 (PyYAML, Inspect's -S) reads as text: no dot in the
# mantissa or no sign in the exponent (it reads 1.0e+5 as a number, and 1e5 and 1.0e5 as text)
_YAML_EXPONENT = re.compile(r"[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?[eE][-+]?[0-9]+")


def shortened(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` as a refusal repeats it: whole when it has at most ``limit`` characters, else
    its first ``limit`` and ``... (N characters)`` (``"aaa... (100,000 characters)"``).

    A refusal that names a value a model or a user gave (``spawn_child``'s name,
    ``send_message``'s ``to``) repeats it so, and a record of a refused request keeps it so: a
    100,000-character value costs the model's context and the log 200 characters.
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def shown(value: object) -> str:
    """``value`` as a refusal names it: the ``repr`` of a string ``shortened``, or the
    ``shortened`` ``repr`` of anything else."""
    return repr(shortened(value)) if isinstance(value, str) else shortened(repr(value))


def did_you_mean(name: object, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the one of ``known`` closest to ``name``, or ``""`` when
    none is close (``difflib.get_close_matches``)."""
    if not isinstance(name, str) or len(name) > ECHO_LIMIT:
        return ""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_names(given: Iterable[object], known: Iterable[str], what: str = "key") -> str:
    """The one line that refuses names nobody knows: ``unknown key(s) 'controler' (did you mean
    'controller'?); expected some of budget, channels, ...``.

    Args:
        given: the unknown names, in the order to name them.
        known: the valid names, in the order to list them.
        what: what the names are (``key``, ``parameter``).
    """
    valid = list(known)
    named = ", ".join(f"{shown(g)}{did_you_mean(g, valid)}" for g in given)
    return f"unknown {what}(s) {named}; expected some of {', '.join(valid)}"


def unknown_parameters(factory: Callable[..., Any], given: Iterable[str]) -> str | None:
    """``unknown_names`` for the parameters of ``given`` that ``factory`` does not have, or
    ``None`` (when it has them all, takes ``**kwargs`` or has no signature to read)."""
    try:
        takes = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in takes):
        return None
    known = [p.name for p in takes if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    extra = [name for name in given if name not in known]
    return unknown_names(extra, sorted(known), "parameter") if extra else None


def text_number_note(value: object) -> str | None:
    """Why ``value`` is text that looks like a number, or ``None`` when it is not such text.

    ``"the text '1e5' (YAML reads 1e5 as text: a number in exponent form needs a dot and a
    signed exponent; write 1.0e+5 or 100000)"``, or for any other text ``float()`` reads as a
    finite number, ``"the text '60' (a number in quotes is text; write 60)"``.
    """
    if not isinstance(value, str) or len(value) > 100:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    plain = str(int(number)) if number.is_integer() else repr(number)
    text = value.strip()
    if _YAML_EXPONENT.fullmatch(text):
        mantissa, exponent = re.split("[eE]", text)
        if "." not in mantissa:
            mantissa += ".0"
        if exponent[0] not in "+-":
            exponent = "+" + exponent
        return (
            f"the text {value!r} (YAML reads {text} as text: a number in exponent form needs a "
            f"dot and a signed exponent; write {mantissa}e{exponent} or {plain})"
        )
    return f"the text {value!r} (a number in quotes is text; write {plain})"


class FieldError(ConfigError):
    """A record refused the value of one of its fields.

    Args:
        record: how the record is called in messages (``"member.limits"``).
        field: the field's name (``"time"``).
        reason: why (``"expected a number of seconds >= 0, got nan: numbers must be finite"``).
    """

    def __init__(self, record: str, field: str, reason: str) -> None:
        self.record = record
        self.field = field
        self.reason = reason
        super().__init__(f"{record}.{field}: {reason}")


def _expected(whole: bool, low: float | None, low_open: bool, high: float | None, unit: str) -> str:
    text = "a whole number" if whole else "a number"
    if unit:
        text += f" of {unit}"
    if low is not None and high is not None:
        return f"{text} in {'(' if low_open else '['}{low:g}, {high:g}]"
    if low is not None:
        return f"{text} {'>' if low_open else '>='} {low:g}"
    return text


def number_problem(
    value: object,
    *,
    whole: bool = False,
    low: float | None = None,
    low_open: bool = False,
    high: float | None = None,
    unit: str = "",
) -> str | None:
    """Why ``value`` is not an acceptable number, or ``None`` when it is.

    A number is an ``int`` or ``float``, never a ``bool``, never NaN or infinite.  With
    ``whole``, a float must be a whole number (``2.0`` is fine, ``1.5`` is not).  ``low`` is
    inclusive unless ``low_open``; ``high`` is inclusive.
    """
    expected = _expected(whole, low, low_open, high, unit)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected {expected}, got {text_number_note(value) or shown(value)}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"expected {expected}, got {value!r}: numbers must be finite"
    if whole and isinstance(value, float) and not value.is_integer():
        return f"expected {expected}, got {value!r}"
    if low is not None and (value <= low if low_open else value < low):
        return f"expected {expected}, got {value!r}"
    if high is not None and value > high:
        return f"expected {expected}, got {value!r}"
    return None


def as_whole(value: Any) -> Any:
    """A whole-number float as an ``int`` (``2.0`` -> ``2``); anything else unchanged, for the
    validator to refuse with the field's name."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def as_float(value: Any) -> Any:
    """An ``int`` as a ``float``; anything else unchanged (booleans too), for the validator."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def number_field(
    record: str,
    *,
    whole: bool = False,
    low: float | None = None,
    low_open: bool = False,
    high: float | None = None,
    unit: str = "",
    optional: bool = True,
) -> Any:
    """An attrs validator refusing what ``number_problem`` refuses (``None`` passes when
    ``optional``), raising ``FieldError`` for ``record``."""

    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None and optional:
            return
        problem = number_problem(
            value, whole=whole, low=low, low_open=low_open, high=high, unit=unit
        )
        if problem is not None:
            raise FieldError(record, attribute.name, problem)

    return check


def check_writable_directory(directory: str, option: str, what: str = "write") -> None:
    """Make ``directory`` if it is missing and check that a file can be written in it, so that a
    command refuses a wrong ``option`` (``--log-dir``) before it runs anything: ``UsageError``
    naming the option (``--log-dir: cannot write logs in DIR: Read-only file system``, with
    ``what="write logs"``).  A remote directory (``s3://...``) is Inspect's to check."""
    if "://" in directory:
        return
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option}: {directory} is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise UsageError(
            f"{option}: cannot {what} in {directory}: {error.strerror or error}"
        ) from None
