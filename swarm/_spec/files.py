"""Reading a topology file: UTF-8 text, parsed as YAML or TOML, of a bounded size and depth.

Every way a topology file is read (``swarm(config=FILE)``, ``-S config=FILE``,
``swarm topology check FILE``) comes through ``parsed_topology_file``, so a hostile file is
refused here, in one line naming it, before any other code walks what it holds: bytes that are
not UTF-8, nesting deeper than ``MAX_DEPTH`` levels (the parsers recurse and would end in
``RecursionError``), or more than ``MAX_VALUES`` values once YAML aliases are expanded (an alias
is kept by reference, so a few hundred bytes of nested aliases stand for billions of values
that later code, a ``repr`` or a copy, would walk one by one).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs
import yaml

from swarm.errors import ConfigError

__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "BoundedLoader",
    "TooDeep",
    "bound_problem",
    "parsed_topology_file",
]

MAX_DEPTH = 100
"""The deepest nesting of lists and mappings a topology file may hold."""

MAX_VALUES = 100_000
"""The most values (scalars, lists and mappings, each alias counted at every use) in a file."""


def _yaml_problem(ex: yaml.YAMLError) -> str:
    """A YAML error as ``line L, column C: problem (context)``."""
    if isinstance(ex, yaml.MarkedYAMLError) and ex.problem_mark is not None:
        mark = ex.problem_mark
        context = f" ({ex.context})" if ex.context else ""
        return f"line {mark.line + 1}, column {mark.column + 1}: {ex.problem}{context}"
    return str(ex)


class TooDeep(Exception):
    """A YAML collection nested deeper than ``MAX_DEPTH`` levels."""


class BoundedLoader(yaml.SafeLoader):
    """``yaml.safe_load``'s loader (no tag builds a Python object), refusing a collection at
    level ``MAX_DEPTH`` (the document is level 0) as it is composed: the parser reads only that
    far into the file, instead of recursing (and scanning ahead, at a cost that grows with the
    depth) until Python's recursion limit.  Topology files and scripts files are read with it."""

    _depth = -1

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth >= MAX_DEPTH and self.check_event(
                yaml.SequenceStartEvent, yaml.MappingStartEvent
            ):
                raise TooDeep
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def bound_problem(data: object) -> str | None:
    """Why ``data`` is too deep or too large, or ``None``; walks at most ``MAX_VALUES`` values,
    without recursion, so a cycle or an expanded alias bomb stops at the bound.  Mappings, lists,
    tuples and attrs values (a ``member()``'s spec) are walked."""
    stack: list[tuple[object, int]] = [(data, 0)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            return f"holds more than {MAX_VALUES} values (a YAML alias counts at every use)"
        items: Iterable[object] | None = None
        if isinstance(value, Mapping):
            items = value.values()
        elif isinstance(value, list | tuple):
            items = value
        elif attrs.has(type(value)):
            items = attrs.asdict(value, recurse=False).values()  # type: ignore[arg-type]
        if items is not None:
            if depth >= MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            stack.extend((item, depth + 1) for item in items)
    return None


def parsed_topology_file(p: Path) -> object:
    """What the topology file ``p`` (``.toml`` or YAML) holds, checked for size and depth.

    Raises:
        ConfigError: ``p`` cannot be read, is not UTF-8 text, does not parse, or is nested too
            deep or too large; the message starts with the file's name.
    """
    try:
        raw = p.read_bytes()
    except OSError as ex:
        raise ConfigError(f"{p}: cannot read the topology file: {ex.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as ex:
        raise ConfigError(
            f"{p}: not UTF-8 text (byte 0x{raw[ex.start]:02x} at offset {ex.start}); a topology "
            "file is YAML or TOML in UTF-8"
        ) from None
    try:
        data: object = (
            tomllib.loads(text) if p.suffix == ".toml" else yaml.load(text, BoundedLoader)
        )
    except yaml.YAMLError as ex:
        raise ConfigError(f"{p}: not valid YAML: {_yaml_problem(ex)}") from None
    except tomllib.TOMLDecodeError as ex:
        raise ConfigError(f"{p}: not valid TOML: {ex}") from None
    except (TooDeep, RecursionError):  # tomllib recurses once per level
        raise ConfigError(f"{p}: nested deeper than {MAX_DEPTH} levels") from None
    problem = bound_problem(data)
    if problem is not None:
        raise ConfigError(f"{p}: {problem}")
    return data
