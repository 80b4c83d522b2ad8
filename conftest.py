"""The code blocks of README.md and docs/*.md, run as tests: one test per page.

A page's blocks run in the order the page shows them, all in one fresh directory that stands for
the repository root (``docs/`` in it is this repository's), so a block sees the files the
blocks above it wrote, as a reader who follows the page does.  Three kinds of fenced block are
run (docs/index.md#writing-the-docs says how to write them):

- ``console``: each ``$ `` line is a command, run by bash with the virtualenv's ``bin`` first
  on ``PATH`` as after activating it, ``INSPECT_LOG_DIR`` in the page's directory, and no
  stdin (a command that asks a question fails instead of waiting).  The lines after a command
  are its whole output (stdout and stderr), compared line by line with trailing spaces ignored;
  ``...`` stands for any text, within a line or across lines (doctest's ELLIPSIS).  Every
  command must exit with status 0, unless an HTML comment ``<!-- exit N -->`` just before the
  block says otherwise: every command of the block then exits with ``N``; ``<!-- exit 0 2 -->``
  gives one status per command, in order.
  With ``SWARM_DOCS_TWICE=1`` each page runs twice in the same directory, as a reader who
  follows it again, and must then have left nothing its repository's ``.gitignore`` does not
  cover (``scripts/docs-twice.sh``).
- ``python``: a complete program, run with the virtualenv's Python in the page's directory; it
  must exit with status 0, or the ``N`` of an ``<!-- exit N -->`` just before it.
- ``python`` after an HTML comment ``<!-- fragment -->``: part of a program (``...`` for
  arguments, names from the surrounding text); it must compile.

The first block that fails ends its page's test (the blocks after it may need what it did).
Pages are independent of each other, so they run in parallel (``pytest -n 2``).

A page runs with only what it says to install: swarm-eval's base install, plus what a
``> Needs `pip install ...` `` line at its top (before its first section) and the ``pip
install`` lines of its blocks install; every other distribution of the test environment is
hidden from the page's interpreters (``tests/page_env.py``, ``tests/page_site/``).  A page that
passed is not run again while nothing it depends on has changed (``tests/page_cache.py``;
``SWARM_DOCS_FRESH=1`` runs every page).
"""

from __future__ import annotations

import difflib
import doctest
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

ROOT = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
PROMPT = "$ "
FENCE = re.compile(
    r"^(?P<fence>```+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
# the HTML comment just before a block (invisible on the site), with nothing but blank space
# between it and the block
MARKER = re.compile(r"<!--\s*(?P<marker>fragment|exit(?:\s+\d+)+)\s*-->\s*\Z")
TIMEOUT = 120  # seconds for one command or program; the slowest example takes about ten

# docs/examples/plugin_tests is a test suite a console block runs (docs/testing.md)
collect_ignore = ["docs/examples"]

# what the page's directory links to in the repository (read, never written, by the blocks)
LINKED = ("docs", "pyproject.toml", "conftest.py")


@attrs.frozen(kw_only=True)
class Block:
    """One runnable fenced block of a page."""

    language: str
    body: str
    line: int  # of the opening fence, from 1
    fragment: bool = False
    exits: tuple[int, ...] = ()  # as the marker gives them; () for none


def blocks(text: str) -> list[Block]:
    """The ``console`` and ``python`` blocks of a page, in order, with their markers."""
    found = []
    end = 0
    for m in FENCE.finditer(text):
        language = m.group("info").strip()
        marker = MARKER.search(text, end, m.start())
        end = m.end()
        if language not in ("console", "python"):
            continue
        word = marker.group("marker").split() if marker else []
        found.append(
            Block(
                language=language,
                body=m.group("body"),
                line=text.count("\n", 0, m.start()) + 1,
                fragment=word == ["fragment"],
                exits=tuple(int(code) for code in word[1:]),
            )
        )
    return found


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


def expected_exits(block: Block, count: int) -> tuple[int, ...]:
    """The exit status each of a block's ``count`` commands must have."""
    if not block.exits:
        return (0,) * count
    if len(block.exits) == 1:
        return block.exits * count
    if len(block.exits) != count:
        raise ValueError(
            f"<!-- exit {' '.join(map(str, block.exits))} --> gives {len(block.exits)} exit "
            f"statuses for a block of {count} command(s); give one for all, or one for each"
        )
    return block.exits


def _normalise(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is ``expected``, where ``...`` in ``expected`` stands for any text."""
    want, got = _normalise(expected), _normalise(actual)
    return doctest.OutputChecker().check_output(want, got, doctest.ELLIPSIS)


def _diff(expected: str, actual: str) -> str:
    """A unified diff in which an output line matched by a shown line with ``...`` in it is not
    a difference (so the diff points at the lines that really differ); a line of ``...`` alone
    matches any line, so it does not count here."""
    want = _normalise(expected).splitlines()
    got = _normalise(actual).splitlines()
    elided = [line for line in want if "..." in line and line.strip() != "..."]
    shown = [next((w for w in elided if matches(w, g)), g) for g in got]
    return "\n".join(difflib.unified_diff(want, shown, "shown on the page", "printed", lineterm=""))


def _env(workdir: Path, page: dict[str, str]) -> dict[str, str]:
    """The environment of a user who activated the virtualenv, with Inspect's logs in workdir,
    and only what the page may use installed (``page``: from ``tests.page_env.environment``)."""
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
    env.update(page)
    return env


def _run(args: list[str], workdir: Path, page: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a command in the page's directory: no stdin, output and errors together."""
    return subprocess.run(
        args,
        cwd=workdir,
        env=_env(workdir, page),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def untracked(workdir: Path) -> list[str]:
    """What the page wrote in ``workdir`` that the repository's .gitignore does not cover, as
    ``git status`` in a checkout would list it."""
    (workdir / ".gitignore").write_text((ROOT / ".gitignore").read_text())  # git reads no link
    subprocess.run(["git", "init", "-q"], cwd=workdir, check=True)
    found = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    shown = (line[3:] for line in found if line.startswith("?? "))
    ours = (*LINKED, ".gitignore", "program.py")  # the checker's own: links, a python block
    return sorted(p for p in shown if p.split("/")[0] not in ours)


class BlockFailed(Exception):
    """A block did not do what its page shows."""


def run_block(block: Block, workdir: Path, page: str, env: dict[str, str] | None = None) -> None:
    """Run one block in ``workdir``; ``BlockFailed`` says how it differs from the page.  ``env``:
    the page's environment variables (``tests.page_env.environment``), none for the full
    install."""
    env = env or {}
    where = f"{page}:{block.line}"
    if block.fragment:
        compile("\n" * block.line + block.body, page, "exec", dont_inherit=True)
        return
    if block.language == "python":
        # blank lines first, so that a traceback's line numbers are the page's
        program = workdir / "program.py"
        program.write_text("\n" * block.line + block.body)
        (want,) = expected_exits(block, 1)
        done = _run([sys.executable, str(program)], workdir, env)
        if done.returncode != want:
            raise BlockFailed(
                f"{where}: the program exited with status {done.returncode}, not {want}:\n"
                f"{done.stdout}"
            )
        return
    pairs = commands(block.body)
    for (command, expected), want in zip(pairs, expected_exits(block, len(pairs)), strict=True):
        done = _run(["bash", "-c", command], workdir, env)
        problems = []
        if done.returncode != want:
            problems.append(f"exited with status {done.returncode}, not {want}")
        if not matches(expected, done.stdout):
            problems.append(f"printed other output:\n{_diff(expected, done.stdout)}")
        if problems:
            raise BlockFailed(f"{where}: $ {command}\n" + "\n".join(problems))


def run_blocks(
    found: list[Block], page: str, workdir: Path, env: dict[str, str] | None = None
) -> None:
    """Run a page's blocks in order in ``workdir``, up to the first that fails."""
    for block in found:
        run_block(block, workdir, page, env)


class PageBlocks(pytest.Item):
    """A page's runnable blocks, run in order in one directory."""

    def __init__(self, *, blocks: list[Block], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.blocks = blocks
        runs = sum(len(commands(b.body)) if b.language == "console" else 1 for b in blocks)
        # pytest-timeout's limit for the page: each command and program within its own
        self.add_marker(pytest.mark.timeout(TIMEOUT * max(runs, 1)))

    def runtest(self) -> None:
        # imported here: a page's own pytest run (testing.md) loads this file where the
        # repository's tests/ is not
        from tests.page_cache import page_key, passed_before, remember_pass
        from tests.page_env import environment

        page = self.path.relative_to(ROOT).as_posix()
        env = environment(self.path.read_text())
        key = page_key(self.path, env)
        if passed_before(self.path, key):  # unchanged since it last passed (tests/page_cache.py)
            self.user_properties.append(("cached", True))
            return
        with tempfile.TemporaryDirectory(prefix="swarm-docs-") as tmp:
            workdir = Path(tmp) / "repo"
            workdir.mkdir()
            for name in LINKED:
                (workdir / name).symlink_to(ROOT / name)
            run_blocks(self.blocks, page, workdir, env)
            if os.environ.get("SWARM_DOCS_TWICE"):  # a reader who follows the page again
                run_blocks(self.blocks, page, workdir, env)
                left = untracked(workdir)
                if left:
                    raise BlockFailed(f"{page}: left files .gitignore does not cover: {left}")
        remember_pass(self.path, key)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, BlockFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.path.name}: {len(self.blocks)} code blocks in order"


class Page(pytest.File):
    """A Markdown page whose console and python blocks are checked."""

    def collect(self) -> Iterator[PageBlocks]:
        found = blocks(self.path.read_text())
        if found:
            yield PageBlocks.from_parent(self, name="blocks", blocks=found)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Page | None:
    if file_path.suffix == ".md" and file_path.parent in (ROOT, ROOT / "docs"):
        if file_path.parent == ROOT / "docs" or file_path.name == "README.md":
            return Page.from_parent(parent, path=file_path)
    return None
