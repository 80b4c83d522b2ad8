"""Checks of the values a user configures: numbers that are finite, whole where they count
things, in range, and never booleans.

Every number swarm-eval takes from a user goes through ``number_problem``, so a value is
refused with the same words wherever it is given (Python, ``-S``, a topology file).  Records
use ``number_field`` as an attrs validator; their problems are ``FieldError``s, which carry the
field's name so that a message built from a nested mapping can give the whole path
(``members[0].limits.time``).
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from swarm.errors import ConfigError

__all__ = ["FieldError", "as_float", "as_whole", "number_field", "number_problem"]


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
        return f"expected {expected}, got {value!r}"
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
