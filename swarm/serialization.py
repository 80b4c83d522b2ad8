"""The one place records are turned into JSON-ready data and configuration into records.

``make_converter()`` builds a private cattrs converter; nothing in swarm-eval uses cattrs'
global converter.  ``structure()`` turns user input (a topology file, ``-S`` arguments) into
records with unknown keys forbidden, and reports every problem with the path to the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.preconf.json import configure_converter
from cattrs.v import format_exception

from swarm._checks import FieldError, unknown_names
from swarm.errors import ConfigError

__all__ = ["make_converter", "structure", "unstructure"]

T = TypeVar("T")


def make_converter(*, forbid_extra_keys: bool = True) -> cattrs.Converter:
    """A new converter configured for swarm records (JSON-safe, unknown keys refused).

    Numbers are structured as given: the records validate their own (``swarm._checks``), and
    cattrs' ``int()`` and ``float()`` would first turn ``1.5`` into ``1``, ``True`` into ``1``
    and ``"5"`` into ``5``.  A string field takes only a string.
    """
    converter = cattrs.Converter(forbid_extra_keys=forbid_extra_keys)
    configure_converter(converter)
    converter.register_structure_hook(int, _as_given)
    converter.register_structure_hook(float, _as_given)
    converter.register_structure_hook(str, _string)
    return converter


def _as_given(value: Any, _: type) -> Any:
    return value


def _string(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"expected a string, got {value!r}")
    return value


@cache
def _converter() -> cattrs.Converter:
    return make_converter()


def unstructure(value: Any) -> Any:
    """JSON-ready data (dicts, lists, scalars) for a record or a container of records."""
    return _converter().unstructure(value)


def structure(data: Any, cls: type[T], *, what: str) -> T:
    """Build a ``cls`` from ``data``, or raise ``ConfigError`` naming each bad field.

    Each problem is one line ``<path>: <reason>``, the path starting at ``what``
    (``members[0].limits.time: expected a number of seconds >= 0, got nan: ...``); a record's
    own validators give the reason.

    Args:
        data: parsed user input (mappings, lists, scalars).
        cls: the record type to build.
        what: the path of the input in messages (``"members[0].limits"``, ``"budget"``).
    """
    if attrs.has(cls) and not isinstance(data, Mapping):
        names = ", ".join(f.name for f in attrs.fields(cls))
        raise ConfigError(f"{what}: expected a mapping with some of {names}, got {data!r}")
    try:
        return _converter().structure(data, cls)
    except Exception as ex:  # cattrs raises ExceptionGroups of many kinds
        lines = _describe(ex, what)
    if len(lines) == 1:
        raise ConfigError(lines[0]) from None
    raise ConfigError(f"invalid {what}:\n" + "\n".join(f"  - {line}" for line in lines)) from None


def _describe(ex: BaseException, path: str) -> list[str]:
    """``<path>: <reason>`` for every problem in a cattrs error tree."""
    if isinstance(ex, cattrs.ClassValidationError):
        with_notes, others = ex.group_exceptions()
        lines = [line for sub, note in with_notes for line in _describe(sub, f"{path}.{note.name}")]
        return lines + [line for sub in others for line in _describe(sub, path)]
    if isinstance(ex, cattrs.IterableValidationError):
        items, others = ex.group_exceptions()
        lines = [line for sub, note in items for line in _describe(sub, f"{path}[{note.index!r}]")]
        return lines + [line for sub in others for line in _describe(sub, path)]
    if isinstance(ex, FieldError):
        return [f"{path}.{ex.field}: {ex.reason}"]
    if isinstance(ex, ConfigError):
        return [f"{path}: {ex}"]
    if isinstance(ex, cattrs.ForbiddenExtraKeysError):
        extra = sorted(ex.extra_fields, key=repr)
        if not attrs.has(ex.cl):
            return [f"{path}: unknown key(s) {', '.join(map(repr, extra))}"]
        return [f"{path}: {unknown_names(extra, [f.name for f in attrs.fields(ex.cl)])}"]
    return [f"{path}: {format_exception(ex, None)}"]


def check_keys(data: Mapping[str, Any], allowed: set[str], *, what: str) -> None:
    """Refuse keys of ``data`` that are not in ``allowed`` with a message naming them."""
    extra = sorted(set(data) - allowed)
    if extra:
        raise ConfigError(f"invalid {what}: {unknown_names(extra, sorted(allowed))}")
