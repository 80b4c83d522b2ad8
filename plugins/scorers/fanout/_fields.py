"""Strict field readers for store records: a wrong type is never coerced, a bool is never a
number, and every refusal says which field and what it got."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["Malformed", "mapping", "number", "optional_number", "optional_text", "text", "whole"]

_MISSING = object()


class Malformed(Exception):
    """An entry (or a record) cannot be used; the message names the field and the value."""


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _get(entry: Mapping[str, Any], key: str) -> Any:
    value = entry.get(key, _MISSING)
    if value is _MISSING:
        raise Malformed(f"{key}: missing")
    return value


def whole(entry: Mapping[str, Any], key: str, low: int | None = None) -> int:
    """An integer field (never a bool), at least ``low`` when given."""
    value = _get(entry, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed(f"{key}: expected an integer, got {_short(value)}")
    if low is not None and value < low:
        raise Malformed(f"{key}: expected an integer >= {low}, got {value}")
    return value


def number(entry: Mapping[str, Any], key: str) -> float:
    """A finite number field (an integer or a float, never a bool)."""
    value = _get(entry, key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Malformed(f"{key}: expected a number, got {_short(value)}")
    if not math.isfinite(value):
        raise Malformed(f"{key}: expected a finite number, got {value!r}")
    return float(value)


def optional_number(entry: Mapping[str, Any], key: str) -> float | None:
    """A finite number or ``null``; the field must be there."""
    return None if _get(entry, key) is None else number(entry, key)


def text(entry: Mapping[str, Any], key: str) -> str:
    """A string field."""
    value = _get(entry, key)
    if not isinstance(value, str):
        raise Malformed(f"{key}: expected a string, got {_short(value)}")
    return value


def optional_text(entry: Mapping[str, Any], key: str) -> str | None:
    """A string or ``null``; the field must be there."""
    return None if _get(entry, key) is None else text(entry, key)


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or ``Malformed`` naming ``what``."""
    if not isinstance(value, Mapping):
        raise Malformed(f"{what}: expected an object, got {_short(value)}")
    return value
