"""The one place records are turned into JSON-ready data and configuration into records.

``make_converter()`` builds a private cattrs converter; nothing in swarm-eval uses cattrs'
global converter.  ``structure()`` turns user input (a topology file, ``-S`` arguments) into
records with unknown keys forbidden, and reports every problem with the path to the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

import cattrs
from cattrs.preconf.json import configure_converter

from swarm.errors import ConfigError

__all__ = ["make_converter", "structure", "unstructure"]

T = TypeVar("T")


def make_converter(*, forbid_extra_keys: bool = True) -> cattrs.Converter:
    """A new converter configured for swarm records (JSON-safe, unknown keys refused)."""
    converter = cattrs.Converter(forbid_extra_keys=forbid_extra_keys)
    configure_converter(converter)
    return converter


@cache
def _converter() -> cattrs.Converter:
    return make_converter()


def unstructure(value: Any) -> Any:
    """JSON-ready data (dicts, lists, scalars) for a record or a container of records."""
    return _converter().unstructure(value)


def structure(data: Any, cls: type[T], *, what: str) -> T:
    """Build a ``cls`` from ``data``, or raise ``ConfigError`` naming each bad field.

    Args:
        data: parsed user input (mappings, lists, scalars).
        cls: the record type to build.
        what: how the input is called in messages (``"topology file x.yaml"``, ``"budget"``).
    """
    try:
        return _converter().structure(data, cls)
    except Exception as ex:  # cattrs raises ExceptionGroups of many kinds
        raise ConfigError(f"invalid {what}:\n" + "\n".join(_describe(ex, what))) from None


def _describe(ex: BaseException, what: str) -> list[str]:
    if isinstance(ex, cattrs.BaseValidationError | cattrs.ForbiddenExtraKeysError):
        lines = cattrs.transform_error(ex, path=what)
    else:
        lines = [f"{what}: {ex}"]
    return [f"  - {line}" for line in lines]


def check_keys(data: Mapping[str, Any], allowed: set[str], *, what: str) -> None:
    """Refuse keys of ``data`` that are not in ``allowed`` with a message naming them."""
    extra = sorted(set(data) - allowed)
    if extra:
        raise ConfigError(
            f"invalid {what}: unknown key(s) {', '.join(repr(k) for k in extra)}; "
            f"expected some of {', '.join(sorted(allowed))}"
        )
