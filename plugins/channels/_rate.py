"""The ``rate`` parameter every built-in channel takes, checked the same way for each."""

from __future__ import annotations

import math

from swarm import ConfigError

__all__ = ["checked_rate"]


def checked_rate(value: object, field: str) -> tuple[int, float] | None:
    """``value`` as ``(count, seconds)``, or ``None`` for no rate control.

    A count is a whole number >= 1 (``2.0`` is read as ``2``, as every count swarm-eval takes)
    and seconds a finite number > 0; neither is a ``bool`` or a string.  Anything else is
    refused with a message naming ``field`` (``messages.rate``).
    """
    if value is None:
        return None
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and isinstance(value[0], int | float)
        and isinstance(value[1], int | float)
        and not isinstance(value[0], bool)
        and not isinstance(value[1], bool)
        and math.isfinite(value[0])
        and math.isfinite(value[1])
        and value[0] == int(value[0]) >= 1
        and value[1] > 0
    ):
        return int(value[0]), float(value[1])
    raise ConfigError(
        f"{field}: expected [count, seconds] (a whole count >= 1, finite seconds > 0) or null, "
        f"got {value!r}"
    )
