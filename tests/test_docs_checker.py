"""The docs checker (``conftest.py`` at the repository's root): a page's blocks run in order in
one directory, every command's exit status is checked, and a block that is meant to fail says
so with ``<!-- exit N -->``.

It once ran each block on its own, in a directory of its own, and never looked at exit
statuses: a page whose blocks failed when followed in order, a command documented with the
wrong exit status, and a command that stops at a question all passed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _checker() -> ModuleType:
    # the root conftest.py, loaded under a name of its own (pytest keeps no stable module name
    # for a conftest outside a package)
    spec = importlib.util.spec_from_file_location("docs_checker", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


checker = _checker()


def run(text: str, workdir: Path) -> None:
    checker.run_blocks(checker.blocks(text), "page.md", workdir)


def failure(text: str, workdir: Path) -> str:
    with pytest.raises(checker.BlockFailed) as caught:
        run(text, workdir)
    return str(caught.value)


def test_markers_are_read_from_the_comment_just_before_a_block() -> None:
    text = (
        "<!-- exit 2 -->\n```console\n$ a\n```\n"
        "<!-- fragment -->\n\n```python\nx = ...\n```\n"
        "<!--exit 0 1-->\n```console\n$ b\n$ c\n```\n"
        # a marker before a block that is not run, or with text after it, marks nothing
        "<!-- exit 1 -->\n```text\nshown\n```\n```console\n$ d\n```\n"
        "<!-- exit 1 -->\nSome text.\n\n```python\nprint(1)\n```\n"
    )
    found = [(b.language, b.line, b.fragment, b.exits) for b in checker.blocks(text)]
    assert found == [
        ("console", 2, False, (2,)),
        ("python", 7, True, ()),
        ("console", 11, False, (0, 1)),
        ("console", 19, False, ()),
        ("python", 25, False, ()),
    ]


def test_blocks_run_in_order_in_one_directory(tmp_path: Path) -> None:
    page = (
        "```console\n$ echo hi > note.txt\n```\n"
        "```python\nfrom pathlib import Path\n"
        "Path('copy.txt').write_text(Path('note.txt').read_text().upper())\n```\n"
        "```console\n$ cat note.txt copy.txt\nhi\nHI\n```\n"
    )
    run(page, tmp_path)
    assert (tmp_path / "copy.txt").read_text() == "HI\n"


def test_a_failing_command_fails_its_page_unless_marked(tmp_path: Path) -> None:
    assert failure("```console\n$ ls missing\n...\n```\n", tmp_path) == (
        "page.md:1: $ ls missing\nexited with status 2, not 0"
    )
    run("<!-- exit 2 -->\n```console\n$ ls missing\n...\n```\n", tmp_path)


def test_a_marked_block_must_fail_with_its_status(tmp_path: Path) -> None:
    assert failure("<!-- exit 2 -->\n```console\n$ true\n```\n", tmp_path) == (
        "page.md:2: $ true\nexited with status 0, not 2"
    )
    assert failure("<!-- exit 2 -->\n```console\n$ (exit 1)\n```\n", tmp_path) == (
        "page.md:2: $ (exit 1)\nexited with status 1, not 2"
    )


def test_one_status_for_every_command_or_one_for_each(tmp_path: Path) -> None:
    run("<!-- exit 3 -->\n```console\n$ (exit 3)\n$ (exit 3)\n```\n", tmp_path)
    run("<!-- exit 0 3 -->\n```console\n$ true\n$ (exit 3)\n```\n", tmp_path)
    assert failure("<!-- exit 3 0 -->\n```console\n$ true\n$ (exit 3)\n```\n", tmp_path) == (
        "page.md:2: $ true\nexited with status 0, not 3"
    )
    with pytest.raises(ValueError) as caught:
        run("<!-- exit 0 1 -->\n```console\n$ true\n$ true\n$ true\n```\n", tmp_path)
    assert str(caught.value) == (
        "<!-- exit 0 1 --> gives 2 exit statuses for a block of 3 command(s); give one for "
        "all, or one for each"
    )


def test_a_command_that_asks_a_question_fails_rather_than_waits(tmp_path: Path) -> None:
    # no stdin: `read` meets the end of its input at once
    assert failure("```console\n$ read answer\n```\n", tmp_path) == (
        "page.md:1: $ read answer\nexited with status 1, not 0"
    )


def test_output_and_status_are_both_reported(tmp_path: Path) -> None:
    assert failure("```console\n$ echo one; exit 4\ntwo\n```\n", tmp_path) == (
        "page.md:1: $ echo one; exit 4\n"
        "exited with status 4, not 0\n"
        "printed other output:\n"
        "--- shown on the page\n+++ printed\n@@ -1 +1 @@\n-two\n+one"
    )


def test_a_program_exits_with_its_marked_status(tmp_path: Path) -> None:
    run("<!-- exit 3 -->\n```python\nraise SystemExit(3)\n```\n", tmp_path)
    message = failure("```python\nimport sys\nsys.exit('no')\n```\n", tmp_path)
    assert message == "page.md:1: the program exited with status 1, not 0:\nno\n"


def test_the_first_failing_block_ends_the_page(tmp_path: Path) -> None:
    failure("```console\n$ false\n```\n```console\n$ touch later\n```\n", tmp_path)
    assert not (tmp_path / "later").exists()
