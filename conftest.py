"""The code blocks of README.md and docs/*.md, collected as tests with Sybil.

Three kinds of fenced block are checked (docs/index.md#writing-the-docs says how to write them):

- ``console``: each ``$ `` line is a command, run by bash in a fresh directory that stands for the
  repository root (``docs/`` in it is this repository's), with the virtualenv's ``bin`` first on
  ``PATH`` as after activating it, and ``INSPECT_LOG_DIR`` in that directory.  The lines after a
  command are its whole output (stdout and stderr), compared line by line with trailing spaces
  ignored; ``...`` stands for any text, within a line or across lines (doctest's ELLIPSIS).
- ``python``: a complete program, run with the virtualenv's Python in such a directory; it must
  exit with status 0.
- ``python`` after an HTML comment ``<!-- fragment -->``: part of a program (``...`` for
  arguments, names from the surrounding text); it must compile.

Each block runs on its own, in its own directory, so the blocks can run in any order and in
parallel (``pytest -n 2``).
"""

from __future__ import annotations

import difflib
import doctest
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown import CodeBlockParser

ROOT = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
PROMPT = "$ "
FRAGMENT = re.compile(r"<!--\s*fragment\s*-->\s*$")
TIMEOUT = 300  # seconds for one command; the slowest example takes a few

# docs/examples/plugin_tests is a test suite a console block runs (docs/testing.md)
collect_ignore = ["docs/examples"]


# what the fresh directory links to in the repository (read, never written, by the blocks)
LINKED = ("docs", "pyproject.toml", "conftest.py")


def _workdir(example: Example) -> Path:
    """A fresh directory standing for the repository root: ``docs`` in it is ours."""
    tmp = example.namespace["tmp_path"]
    assert isinstance(tmp, Path)
    workdir = tmp / "repo"
    workdir.mkdir()
    for name in LINKED:
        (workdir / name).symlink_to(ROOT / name)
    return workdir


def _env(workdir: Path) -> dict[str, str]:
    """The environment of a user who activated the virtualenv, with Inspect's logs in workdir."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("SWARM_", "INSPECT_", "PYTEST_", "COLUMNS", "LINES"))
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(BIN.parent)
    env["INSPECT_LOG_DIR"] = str(workdir / "logs")
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "80"
    # as after installing swarm-eval alone: the test suite's fixture plugin, installed in the
    # same environment, is not loaded (an empty list allows no third-party distribution)
    env["SWARM_LOAD_PLUGINS"] = ""
    return env


def _normalise(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def commands(source: str) -> list[tuple[str, str]]:
    """A console block as (command, expected output) pairs; ``\\`` continues a command."""
    found: list[tuple[str, list[str]]] = []
    continued = False
    for line in source.splitlines():
        if continued:
            command, _ = found[-1]
            found[-1] = (f"{command}\n{line}", [])
            continued = line.endswith("\\")
        elif line.startswith(PROMPT):
            found.append((line[len(PROMPT) :], []))
            continued = line.endswith("\\")
        elif found:
            found[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"console block: output before the first {PROMPT!r} command: {line}")
    return [(command, "\n".join(output)) for command, output in found]


def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is ``expected``, where ``...`` in ``expected`` stands for any text."""
    want, got = _normalise(expected), _normalise(actual)
    return doctest.OutputChecker().check_output(want, got, doctest.ELLIPSIS)


def _diff(expected: str, actual: str, returncode: int) -> str:
    """A unified diff in which an output line matched by a shown line with ``...`` is not a
    difference (so the diff points at the lines that really differ)."""
    want = _normalise(expected).splitlines()
    got = _normalise(actual).splitlines()
    elided = [line for line in want if "..." in line]
    shown = [next((w for w in elided if matches(w, g)), g) for g in got]
    return "\n".join(
        difflib.unified_diff(
            want, shown, "shown on the page", f"printed (exit code {returncode})", lineterm=""
        )
    )


def _run(args: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    """Run a block's command in its directory: output and errors together, within TIMEOUT."""
    return subprocess.run(
        args,
        cwd=workdir,
        env=_env(workdir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def run_console(example: Example) -> str | None:
    workdir = _workdir(example)
    for command, expected in commands(example.parsed):
        done = _run(["bash", "-c", command], workdir)
        if not matches(expected, done.stdout):
            return f"$ {command}\n{_diff(expected, done.stdout, done.returncode)}"
    return None


def run_program(example: Example) -> str | None:
    workdir = _workdir(example)
    # blank lines first, so that a traceback's line numbers are the page's
    program = workdir / "program.py"
    program.write_text("\n" * (example.line) + example.parsed)
    done = _run([sys.executable, str(program)], workdir)
    if done.returncode != 0:
        return f"the program exited with status {done.returncode}:\n{done.stdout}"
    return None


def compile_fragment(example: Example) -> str | None:
    source = "\n" * example.line + example.parsed
    compile(source, example.path, "exec", dont_inherit=True)
    return None


class PythonParser(CodeBlockParser):
    """``python`` blocks: programs, or fragments when ``<!-- fragment -->`` comes just before."""

    language = "python"

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in super().__call__(document):
            before = document.text[: region.start]
            region.evaluator = compile_fragment if FRAGMENT.search(before) else run_program
            yield region


pytest_collect_file = Sybil(
    parsers=[CodeBlockParser("console", run_console), PythonParser()],
    patterns=["README.md", "docs/*.md"],
    fixtures=["tmp_path"],
).pytest()
