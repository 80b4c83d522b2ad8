"""``Budget``: the swarm's caps on cost, tokens and time, how they are split, and the grace."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from swarm.errors import ConfigError

__all__ = ["Budget", "Split", "budget_from"]

Split = Literal["pool", "equal"] | tuple[float, ...]


def _positive_or_none(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"budget.{attribute.name}: expected a finite number, got {value!r}")
    if value <= 0:
        raise ConfigError(f"budget.{attribute.name}: must be > 0, got {value!r}")
    if attribute.name == "tokens" and not isinstance(value, int):
        raise ConfigError(f"budget.tokens: expected a whole number of tokens, got {value!r}")


def _check_reserve(_: object, __: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        raise ConfigError(f"budget.reserve: expected a fraction in [0, 1), got {value!r}")


def _check_grace(_: object, __: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ConfigError(f"budget.grace: expected seconds >= 0, got {value!r}")


def _to_float(value: Any) -> Any:
    """Numbers as floats (dollars, seconds); anything else is left for the validator to
    refuse with the field's name."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return float(value)


def _to_int(value: Any) -> Any:
    """Whole-number floats as ints (token counts); anything else is left for the validator."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


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
        return
    raise ConfigError(f"budget.split: expected 'pool', 'equal' or a list of weights, got {value!r}")


@attrs.frozen(kw_only=True)
class Budget:
    """The swarm's budget.

    Args:
        cost: cost cap in dollars; ``None`` derives it from the sample's cost limit.
        tokens: token cap; ``None`` derives it from the sample's token limit.
        time: time cap in seconds; ``None`` derives it from the sample's time limit.
        reserve: fraction of each sample limit held back when a cap is derived from it.
        split: ``"pool"`` (one shared budget), ``"equal"`` shares, or one weight per member.
        grace: seconds calls in flight may finish after a stop before members are cancelled
            (clipped to half the sample's remaining time).
    """

    cost: float | None = attrs.field(default=None, converter=_to_float, validator=_positive_or_none)
    tokens: int | None = attrs.field(default=None, converter=_to_int, validator=_positive_or_none)
    time: float | None = attrs.field(default=None, converter=_to_float, validator=_positive_or_none)
    reserve: float = attrs.field(default=0.05, converter=_to_float, validator=_check_reserve)
    split: Split = attrs.field(default="pool", converter=_convert_split, validator=_check_split)
    grace: float = attrs.field(default=120.0, converter=_to_float, validator=_check_grace)


def budget_from(value: Budget | Mapping[str, Any] | None) -> Budget:
    """A ``Budget`` from a ``Budget``, a mapping of its fields (topology files, ``-S``) or None."""
    if value is None:
        return Budget()
    if isinstance(value, Budget):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"budget: expected a mapping of Budget fields, got {value!r}")
    known = {f.name for f in attrs.fields(Budget)}
    extra = sorted(set(value) - known)
    if extra:
        raise ConfigError(
            f"budget: unknown key(s) {', '.join(map(repr, extra))}; expected some of "
            f"{', '.join(sorted(known))}"
        )
    return Budget(**value)
