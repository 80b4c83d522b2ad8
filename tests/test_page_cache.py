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


def _tree(root: Path) -> Path:
    """A checkout of a page and the files it reaches."""
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "page.md").write_text("# Page\n")
    (root / "docs" / "example.py").write_text("print(1)\n")
    for name in ("pyproject.toml", "conftest.py"):
        (root / name).write_text("")
    return root / "docs" / "page.md"


def _checkout(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    monkeypatch.setattr(page_cache, "ROOT", root)
    monkeypatch.setattr(page_cache, "TREES", ("docs",))
    monkeypatch.setattr(page_cache, "FILES", ("pyproject.toml", "conftest.py"))
    page_cache.sources_digest.cache_clear()


def test_a_pass_counts_in_another_checkout_of_the_same_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _tree(tmp_path / "one"), _tree(tmp_path / "two")
    _checkout(monkeypatch, tmp_path / "one")
    key = page_key(first, {"PYTHONPATH": str(tmp_path / "one" / "tests" / "page_site")})
    remember_pass(first, key)
    _checkout(monkeypatch, tmp_path / "two")
    # the same page, files and environment, the checkout's path aside: the same key
    env = {"PYTHONPATH": str(tmp_path / "two" / "tests" / "page_site")}
    assert page_key(second, env) == key and passed_before(second, key)
    # the other checkout's own path in the environment is not the same environment
    assert page_key(second, {"PYTHONPATH": str(tmp_path / "one" / "tests" / "page_site")}) != key
    (tmp_path / "two" / "docs" / "example.py").write_text("print(2)\n")
    page_cache.sources_digest.cache_clear()
    assert page_key(second, env) != key


def test_a_page_keeps_its_newest_passes(tmp_path: Path) -> None:
    page = ROOT / "docs" / "budgets.md"
    keys = [f"{i:064x}" for i in range(page_cache.KEEP + 2)]
    for key in keys:
        remember_pass(page, key)
    assert [passed_before(page, k) for k in keys] == [False, False] + [True] * page_cache.KEEP
    remember_pass(page, keys[2])  # remembered again: the newest, so keys[3] goes next
    remember_pass(page, "f" * 64)
    assert passed_before(page, keys[2]) and not passed_before(page, keys[3])
    assert len(list(tmp_path.rglob("docs-budgets.md-*.passed"))) == page_cache.KEEP


def test_only_the_checkouts_own_path_is_written_as_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page_cache, "ROOT", tmp_path / "main")
    main, longer = str(tmp_path / "main"), str(tmp_path / "main2")
    assert page_cache._in_checkout(f"{main}/tests/page_site:{main}") == (
        "<checkout>/tests/page_site:<checkout>"
    )
    assert page_cache._in_checkout(f"{longer}/tests") == f"{longer}/tests"
