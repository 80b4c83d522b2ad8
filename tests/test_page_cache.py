"""The docs checker remembers a page's pass by content (tests/page_cache.py): an unchanged page
is not run again; any change to the page, the files it reaches or its environment runs it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests import page_cache
from tests.page_cache import page_key, passed_before, remember_pass

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    page_cache.sources_digest.cache_clear()
    monkeypatch.delenv("SWARM_DOCS_FRESH", raising=False)
    monkeypatch.delenv("SWARM_DOCS_TWICE", raising=False)


def test_a_page_that_passed_is_not_run_again_until_something_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = ROOT / "docs" / "budgets.md"
    key = page_key(page, {"PYTHONPATH": "x"})
    assert not passed_before(page, key)
    remember_pass(page, key)
    assert passed_before(page, key)
    # the same content, computed again: the same key
    assert page_key(page, {"PYTHONPATH": "x"}) == key
    # another environment for the page: another key
    assert page_key(page, {"PYTHONPATH": "y"}) != key
    # a file the page's blocks can reach changes: another key
    tree = tmp_path / "tree"
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / "page.md").write_text("# Page\n")
    (tree / "docs" / "example.py").write_text("print(1)\n")
    for name in ("pyproject.toml", "conftest.py", "swarm_eval_pytest.py"):
        (tree / name).write_text("")
    (tree / "tests").mkdir()
    (tree / "tests" / "page_env.py").write_text("")
    monkeypatch.setattr(page_cache, "ROOT", tree)
    monkeypatch.setattr(page_cache, "TREES", ("docs",))
    monkeypatch.setattr(page_cache, "FILES", ("pyproject.toml", "conftest.py", "tests/page_env.py"))
    page_cache.sources_digest.cache_clear()
    before = page_key(tree / "docs" / "page.md", {})
    # what tools write beside the sources does not count (a page's own pytest run once wrote
    # docs/examples/plugin_tests/.pytest_cache, and every page ran again the next time)
    for cache in (".pytest_cache", "__pycache__"):
        (tree / "docs" / cache).mkdir()
        (tree / "docs" / cache / "v").write_text("x")
    page_cache.sources_digest.cache_clear()
    assert page_key(tree / "docs" / "page.md", {}) == before
    (tree / "docs" / "example.py").write_text("print(2)\n")
    page_cache.sources_digest.cache_clear()
    assert page_key(tree / "docs" / "page.md", {}) != before


def test_fresh_and_twice_always_run(monkeypatch: pytest.MonkeyPatch) -> None:
    page = ROOT / "docs" / "budgets.md"
    key = page_key(page, {})
    remember_pass(page, key)
    assert passed_before(page, key)
    monkeypatch.setenv("SWARM_DOCS_FRESH", "1")
    assert not passed_before(page, key)
    monkeypatch.delenv("SWARM_DOCS_FRESH")
    monkeypatch.setenv("SWARM_DOCS_TWICE", "1")
    assert not passed_before(page, key)


def test_one_entry_a_page_in_each_checkout(tmp_path: Path) -> None:
    page = ROOT / "docs" / "budgets.md"
    other = tmp_path / "clone" / "docs" / "budgets.md"  # the same page in another checkout
    other.parent.mkdir(parents=True)
    other.write_text(page.read_text())
    remember_pass(page, "a" * 64)
    remember_pass(other, "c" * 64)
    remember_pass(page, "b" * 64)
    assert passed_before(page, "b" * 64) and not passed_before(page, "a" * 64)
    assert passed_before(other, "c" * 64)
    assert len(list(tmp_path.rglob("*.passed"))) == 2
