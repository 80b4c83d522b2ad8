"""Reading scripts given as text or as a file: UTF-8, YAML (safe) or JSON, bounded in depth.

Scripts reach ``load_scripts`` as a mapping, as YAML text (``-M scripts=...``) or as the path of
a ``.yaml``, ``.yml`` or ``.json`` file (``swarm scripted-server --scripts FILE``,
``-M scripts=FILE``).  Text and files come through ``parsed_scripts``, which refuses a file that
cannot be read (missing, a directory), bytes that are not UTF-8, text that does not parse, a
YAML tag that would construct a Python object (the loader is YAML's safe one: such a tag is
refused, never constructed), and nesting deeper than ``MAX_DEPTH`` levels (the parsers recurse
and would end in ``RecursionError``) or more than ``MAX_VALUES`` values, each with one
``ConfigError`` line that names the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from swarm._spec.files import MAX_DEPTH, MAX_VALUES, BoundedLoader, TooDeep, bound_problem
from swarm.errors import ConfigError

__all__ = ["MAX_DEPTH", "MAX_VALUES", "parsed_scripts", "scripts_path"]

SUFFIXES = (".yaml", ".yml", ".json")
"""The names of scripts files end so."""

_TAG = re.compile(r"for the tag '([^']*)'")


def _yaml_problem(ex: yaml.YAMLError) -> str:
    """A YAML error as ``not valid YAML: line L, column C: problem (context)``; a tag the safe
    loader has no constructor for as the tag that is not allowed."""
    if not isinstance(ex, yaml.MarkedYAMLError):
        return f"not valid YAML: {ex}"
    mark = ex.problem_mark or ex.context_mark
    where = "" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}: "
    found = _TAG.search(ex.problem or "")
    if isinstance(ex, yaml.constructor.ConstructorError) and found is not None:
        tag = found.group(1)
        if tag.startswith("tag:yaml.org,2002:"):
            tag = "!!" + tag.removeprefix("tag:yaml.org,2002:")
        return (
            f"{where}the YAML tag '{tag}' is not allowed (scripts are plain data: mappings, "
            "lists, strings, numbers, booleans, null)"
        )
    context = f" ({ex.context})" if ex.context else ""
    return f"not valid YAML: {where}{ex.problem}{context}"


def scripts_path(value: str | Path) -> Path | None:
    """The file ``value`` names, or ``None`` when it is scripts' text: a ``Path`` always names
    a file; a string does when it is one line ending in ``.yaml``, ``.yml`` or ``.json`` (YAML
    text of scripts is a mapping, so it never ends so)."""
    if isinstance(value, Path):
        return value
    if "\n" not in value and value.endswith(SUFFIXES):
        return Path(value)
    return None


def _parsed(text: str, *, as_json: bool) -> object:
    """``text`` parsed (JSON or YAML), checked for depth and size; raises ``ConfigError`` with
    the problem alone (the caller names where the text came from)."""
    try:
        data: object = json.loads(text) if as_json else yaml.load(text, BoundedLoader)
    except yaml.YAMLError as ex:
        raise ConfigError(_yaml_problem(ex)) from None
    except json.JSONDecodeError as ex:
        raise ConfigError(
            f"not valid JSON: line {ex.lineno}, column {ex.colno}: {ex.msg}"
        ) from None
    except (TooDeep, RecursionError):  # json recurses once per level
        raise ConfigError(f"nested deeper than {MAX_DEPTH} levels") from None
    problem = bound_problem(data)
    if problem is not None:
        raise ConfigError(problem)
    return data


def parsed_scripts(value: str | Path) -> tuple[object, Path | None]:
    """What scripts text or a scripts file holds, and the file (``None`` for text).

    Raises:
        ConfigError: the file cannot be read, is not UTF-8 text, or the text does not parse or
            is nested too deep or too large; the message starts with the file's name (with
            ``scripts`` for text).
    """
    path = scripts_path(value)
    if path is None:
        try:
            return _parsed(str(value), as_json=False), None
        except ConfigError as ex:
            raise ConfigError(f"scripts: {ex}") from None
    try:
        raw = path.read_bytes()
    except OSError as ex:
        raise ConfigError(f"{path}: cannot read the scripts file: {ex.strerror}") from None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")  # a byte order mark is allowed
    except UnicodeDecodeError as ex:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{raw[ex.start]:02x} at offset {ex.start}); a "
            "scripts file is YAML or JSON in UTF-8"
        ) from None
    try:
        return _parsed(text, as_json=path.suffix == ".json"), path
    except ConfigError as ex:
        raise ConfigError(f"{path}: {ex}") from None
