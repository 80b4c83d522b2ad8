"""The swarm's records, read field by field: every value the timeline takes from a record is
checked here as it is read, so a malformed record (a member without a name, a start given as
text, the metrics as a string) is refused with the field's path, not a traceback from deep in
the drawing.  A missing optional field, or ``null``, reads as ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "MAX_SECONDS",
    "MalformedRecord",
    "MemberRecord",
    "mapping",
    "member_records",
    "seconds",
    "text",
    "whole",
]

MAX_SECONDS = 1e9
"""The largest time, in seconds since the swarm's start, a record may give (some 31 years)."""

_SECONDS = f"a number of seconds in [0, {MAX_SECONDS:g}]"
_NAME = "a member's name (a non-empty string)"


class MalformedRecord(ValueError):
    """A record's field holds what the timeline cannot read.

    Args:
        field: the field's path (``inspect_swarm:result.members[2].started``).
        problem: what is wrong with it (``expected a number..., got 'soon'``).
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


def _refuse(field: str, expected: str, value: object, *, optional: bool = True) -> MalformedRecord:
    either = " or null" if optional else ""
    return MalformedRecord(field, f"expected {expected}{either}, got {value!r}")


def mapping(value: object, field: str, *, optional: bool = True) -> Mapping[str, Any]:
    """``value`` as a mapping (``None``, when ``optional``, as an empty one)."""
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        raise _refuse(field, "a mapping", value, optional=optional)
    return value


def seconds(value: object, field: str) -> float | None:
    """``value`` as a time in seconds, in [0, ``MAX_SECONDS``], or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(field, _SECONDS, value)
    if not math.isfinite(value):
        raise MalformedRecord(
            field, f"expected {_SECONDS} or null, got {value!r}: numbers must be finite"
        )
    if not 0 <= value <= MAX_SECONDS:
        raise _refuse(field, _SECONDS, value)
    return float(value)


def whole(value: object, field: str) -> int | None:
    """``value`` as a whole number >= 0, or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _refuse(field, "a whole number >= 0", value)
    return value


def text(value: object, field: str) -> str | None:
    """``value`` as a string, or ``None``."""
    if value is not None and not isinstance(value, str):
        raise _refuse(field, "a string", value)
    return value


def _name(value: object, field: str, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise _refuse(field, _NAME, value, optional=optional)
    return value


@attrs.frozen(kw_only=True)
class MemberRecord:
    """One member's entry of the result record, every field checked."""

    name: str
    role: str | None
    state: str
    status: str | None
    started: float | None
    time: float | None
    parent: str | None
    depth: int
    error: str | None
    first_pass_time: float | None


def _member(raw: object, field: str) -> MemberRecord:
    if not isinstance(raw, Mapping):
        raise _refuse(field, "a mapping", raw, optional=False)
    if "name" not in raw:
        raise MalformedRecord(f"{field}.name", "missing")
    name = _name(raw["name"], f"{field}.name", optional=False)
    assert name is not None  # not optional
    return MemberRecord(
        name=name,
        role=text(raw.get("role"), f"{field}.role"),
        state=text(raw.get("state"), f"{field}.state") or "pending",
        status=text(raw.get("status"), f"{field}.status"),
        started=seconds(raw.get("started"), f"{field}.started"),
        time=seconds(raw.get("time"), f"{field}.time"),
        parent=_name(raw.get("parent"), f"{field}.parent", optional=True),
        depth=whole(raw.get("depth"), f"{field}.depth") or 0,
        error=text(raw.get("error"), f"{field}.error"),
        first_pass_time=seconds(raw.get("first_pass_time"), f"{field}.first_pass_time"),
    )


def member_records(value: object, field: str) -> tuple[MemberRecord, ...]:
    """The result record's ``members`` (at ``field``): a list of members with distinct names."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise _refuse(field, "a list", value, optional=False)
    found: list[MemberRecord] = []
    first: dict[str, int] = {}
    for index, raw in enumerate(value):
        record = _member(raw, f"{field}[{index}]")
        if record.name in first:
            raise MalformedRecord(
                f"{field}[{index}].name",
                f"{record.name!r} is also members[{first[record.name]}].name",
            )
        first[record.name] = index
        found.append(record)
    return tuple(found)
