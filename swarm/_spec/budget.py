"""``Budget``: the swarm's caps on cost, tokens and time, how they are split, and the grace."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from swarm._checks import (
    FieldError,
    as_float,
    as_whole,
    number_field,
    number_problem,
    unknown_names,
)
from swarm.errors import ConfigError

__all__ = ["Budget", "Split", "budget_from"]

Split = Literal["pool", "equal"] | tuple[float, ...]


def _check_reserve(_: object, __: attrs.Attribute[Any], value: Any) -> None:
    if number_problem(value) is not None or not 0 <= value < 1:
        raise FieldError("budget", "reserve", f"expected a fraction in [0, 1), got {value!r}")


def _convert_split(value: object) -> object:
    if isinstance(value, list):
        return tuple(value)
    return value


def _check_split(_: object, __: attrs.Attribute[Any], value: Any) -> None:
    if value in ("pool", "equal"):
        return
    if isinstance(value, tuple) and value:
        for i, w in enumerate(value):
            if isinstance(w, bool) or not isinstance(w, int | float):
                raise ConfigError(f"budget.split[{i}]: expected a number, got {w!r}")
            if not math.isfinite(w) or w <= 0:
                raise ConfigError(f"budget.split[{i}]: weights must be finite and > 0, got {w!r}")
        if not math.isfinite(sum(value)):
            raise ConfigError("budget.split: the weights add up to more than a float can hold")
        return
    raise ConfigError(f"budget.split: expected 'pool', 'equal' or a list of weights, got {value!r}")


@attrs.frozen(kw_only=True)
class Budget:
    """The swarm's budget.

    Every number must be finite (NaN and infinity are refused) and booleans are not numbers; a
    bad value raises ``ConfigError`` naming the field (``budget.grace: ...``).

    Attributes:
        cost: cost cap in dollars; ``None`` derives it from the sample's cost limit.
        tokens: token cap; ``None`` derives it from the sample's token limit.
        time: time cap in seconds; ``None`` derives it from the sample's time limit.
        reserve: fraction of each sample limit held back when a cap is derived from it.
        split: ``"pool"`` (one shared budget), ``"equal"`` shares, or one weight per member.
        grace: seconds calls in flight may finish after a stop before members are cancelled
            (clipped to half the sample's remaining time).
    """

    cost: float | None = attrs.field(
        default=None,
        converter=as_float,
        validator=number_field("budget", low=0, low_open=True, unit="dollars"),
    )
    tokens: int | None = attrs.field(
        default=None,
        converter=as_whole,
        validator=number_field("budget", whole=True, low=0, low_open=True),
    )
    time: float | None = attrs.field(
        default=None,
        converter=as_float,
        validator=number_field("budget", low=0, low_open=True, unit="seconds"),
    )
    reserve: float = attrs.field(default=0.05, converter=as_float, validator=_check_reserve)
    split: Split = attrs.field(default="pool", converter=_convert_split, validator=_check_split)
    grace: float = attrs.field(
        default=120.0,
        converter=as_float,
        validator=number_field("budget", low=0, unit="seconds", optional=False),
    )


def budget_from(value: Budget | Mapping[str, Any] | None) -> Budget:
    """A ``Budget`` from a ``Budget``, a mapping of its fields (topology files, ``-S``) or None.

    Any other value is refused before this, where the swarm's arguments are checked.
    """
    if value is None:
        return Budget()
    if isinstance(value, Budget):
        return value
    known = {f.name for f in attrs.fields(Budget)}
    extra = sorted(set(value) - known, key=repr)
    if extra:
        raise ConfigError(f"budget: {unknown_names(extra, sorted(known))}")
    return Budget(**value)
