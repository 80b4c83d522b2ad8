"""Hostile topology files (issue 21): an alias bomb, bytes that are not UTF-8 text, and nesting
deep enough to exhaust a parser's recursion are each refused with one ``ConfigError`` line naming
the file, by ``swarm(config=FILE)``, by ``-S config=FILE`` (the solver built by name, as
``inspect eval --solver swarm/swarm`` does) and by ``swarm topology check FILE``.

Before the fix the alias bomb (under 400 bytes) used gigabytes and ended in ``MemoryError``; the
other files escaped as a raw ``UnicodeDecodeError`` or ``RecursionError``.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import SolverSpec

from swarm import ConfigError, load_topology, member, swarm
from swarm.cli import main
from swarm.testing import scripted_model


def alias_bomb(levels: int = 9) -> str:
    """A YAML list of ``levels`` anchored lists, each holding nine aliases of the one before:
    ``9 ** levels`` strings at the last level, a few hundred bytes of text."""
    parts = ["&l0 [x, x, x, x, x, x, x, x, x]"]
    parts += [f"&l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]" for n in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


BOMB = alias_bomb()
IN_A_CONTROLLER = f"members: {{factory: react}}\ncontroller:\n  name: leaderless\n  final: {BOMB}\n"
IN_ARGS = f"members:\n  - factory: react\n    args: {{description: {BOMB}}}\n"
TOO_MANY = "holds more than 100000 values (a YAML alias counts at every use)"


def nested_lists(depth: int) -> str:
    return "members: " + "[" * depth + "]" * depth + "\n"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def from_python(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        swarm(config=str(path))
    return str(info.value)


def by_name_on_the_command_line(path: Path) -> str:
    """``inspect eval --solver swarm/swarm -S config=FILE``: the solver built from its name."""
    with pytest.raises(ConfigError) as info:
        eval(
            Task(dataset=[Sample(input="6 * 7?", target="42")]),
            solver=SolverSpec("swarm/swarm", {"config": str(path)}, {"config": str(path)}),
            model=scripted_model(),
            display="none",
        )
    return str(info.value)


def topology_check(path: Path) -> str:
    """``swarm topology check FILE``, as its entry point runs it: one line on stderr, status 1."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["swarm", "topology", "check", str(path)])
        with pytest.raises(SystemExit) as info, redirect_stdout(io.StringIO()) as out:
            with redirect_stderr(io.StringIO()) as err:
                main()
    assert (info.value.code, out.getvalue()) == (1, "")
    text = err.getvalue()
    assert text.startswith("error: ") and text.endswith("\n") and text.count("\n") == 1, text
    return text.removeprefix("error: ").removesuffix("\n")


WAYS = pytest.mark.parametrize(
    "read",
    [from_python, by_name_on_the_command_line, topology_check],
    ids=["swarm(config=)", "-S config=", "topology check"],
)


# -- aliases -----------------------------------------------------------------------------------


@WAYS
@pytest.mark.parametrize("text", [IN_A_CONTROLLER, IN_ARGS], ids=["controller", "args"])
def test_an_alias_bomb_is_refused_naming_the_file(
    tmp_path: Path, text: str, read: Callable[[Path], str]
) -> None:
    path = write(tmp_path, "bomb.yaml", text)
    assert read(path) == f"{path}: {TOO_MANY}"


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("members", lambda b: {"factory": "swarm/worker", "args": {"prompt": b}}),
        ("members", lambda b: member("swarm/worker", args={"prompt": b})),
        ("controller", lambda b: {"name": "leaderless", "final": b}),
        ("templates", lambda b: {"w": {"factory": "swarm/worker", "args": {"prompt": b}}}),
        ("config", lambda b: {"members": {"factory": "swarm/worker"}, "budget": b}),
    ],
    ids=["members", "member()", "controller", "templates", "config mapping"],
)
def test_an_alias_bomb_given_as_a_value_is_refused_naming_the_parameter(
    parameter: str, value: Callable[[object], object]
) -> None:
    # what Inspect's -S parses from YAML (``-S members=...``) reaches swarm() with its aliases
    # kept by reference; before, swarm() expanded them (about 43 million values) and ran past
    # two minutes
    bomb = yaml.safe_load(BOMB)
    with pytest.raises(ConfigError) as info:
        swarm(**{parameter: value(bomb)})
    assert str(info.value) == f"{parameter}: {TOO_MANY}"


def test_aliases_in_a_small_topology_are_read(tmp_path: Path) -> None:
    text = (
        "members:\n  - {factory: react, args: &args {description: helps}}\n"
        "  - {factory: react, args: *args}\n"
    )
    assert load_topology(write(tmp_path, "aliases.yaml", text)) == {
        "members": [
            {"factory": "react", "args": {"description": "helps"}},
            {"factory": "react", "args": {"description": "helps"}},
        ]
    }


def test_the_value_bound_is_exact(tmp_path: Path) -> None:
    """100,000 values in all are read; one more is refused.  Here: the topology mapping, its
    members list, 98 strings in it and 999 uses of an anchored list of 99 strings (100 values
    each) make 2 + 98 + 999 * 100 = 100,000."""

    def text(extra: int) -> str:
        strings = ", ".join(["x"] * (98 + extra))
        return f"members: [{strings}, &a [{', '.join(['x'] * 99)}]{', *a' * 998}]\n"

    data = load_topology(write(tmp_path, "at.yaml", text(0)))
    assert data == {"members": ["x"] * 98 + [["x"] * 99] * 999}
    over = write(tmp_path, "over.yaml", text(1))
    with pytest.raises(ConfigError) as info:
        load_topology(over)
    assert str(info.value) == f"{over}: {TOO_MANY}"


# -- bytes that are not UTF-8 text -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        (
            "junk.yaml",
            bytes(range(256)),
            "not UTF-8 text (byte 0x80 at offset 128); a topology file is YAML or TOML in UTF-8",
        ),
        (
            "utf16.yaml",
            "members: {factory: react}\n".encode("utf-16"),
            "not UTF-8 text (byte 0xff at offset 0); a topology file is YAML or TOML in UTF-8",
        ),
        (
            "latin1.toml",
            "members = [{factory = 'react', args = {description = 'caf\u00e9'}}]\n".encode(
                "latin-1"
            ),
            "not UTF-8 text (byte 0xe9 at offset 57); a topology file is YAML or TOML in UTF-8",
        ),
    ],
)
@WAYS
def test_a_file_that_is_not_utf8_text_is_refused(
    tmp_path: Path, name: str, content: bytes, problem: str, read: Callable[[Path], str]
) -> None:
    path = write(tmp_path, name, content)
    assert read(path) == f"{path}: {problem}"


# -- nesting -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("lists.yaml", nested_lists(20_000)),
        ("maps.yaml", "members: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n"),
        ("lists.toml", "members = " + "[" * 5_000 + "]" * 5_000 + "\n"),
        ("tables.toml", "members = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n"),
        # deep enough to refuse, shallow enough for the parser: the bound, not the recursion
        ("shallow.yaml", nested_lists(100)),
        ("shallow.toml", "members = " + "[" * 100 + "]" * 100 + "\n"),
        ("cycle.yaml", "members: &m [*m]\n"),
    ],
)
@WAYS
def test_deep_nesting_is_refused(
    tmp_path: Path, name: str, text: str, read: Callable[[Path], str]
) -> None:
    path = write(tmp_path, name, text)
    assert read(path) == f"{path}: nested deeper than 100 levels"


def test_nesting_of_99_levels_is_read(tmp_path: Path) -> None:
    # the topology mapping is level 0: members and 98 lists inside it reach level 99
    data = load_topology(write(tmp_path, "deep.yaml", nested_lists(99)))
    inner: object = data["members"]
    depth = 1
    while isinstance(inner, list) and inner:
        inner, depth = inner[0], depth + 1
    assert (inner, depth) == ([], 99)
