"""The docs checker's memory of pages that passed, by content.

A page's run is a function of its text, the files its blocks can reach (``docs/``, swarm-eval's
sources, the checker itself), the environment the page is given and the distributions installed.
When all of them are as they were when the page last passed on this machine, the checker does
not run it again: a second run of the test command on an unchanged checkout pays nothing for
the pages.  Any change to any of them runs the page.  Only passes are remembered, and they are
kept in the machine's temporary directory (``swarm-eval-docs-<uid>``), never in the checkout.

The key is the content, not the checkout: a clean clone of the same commit, whose virtualenv
holds the same distributions, finds the passes of another clone (``.ci/run`` run again on one
machine runs no page twice).  Paths inside the checkout count relative to it, the page's
environment with the checkout's path written as ``<checkout>``.  Each page keeps its
``KEEP`` newest passes, so checkouts of different commits do not push out each other's.

``SWARM_DOCS_FRESH=1`` runs every page regardless; ``SWARM_DOCS_TWICE=1`` (which checks that a
page can be followed twice) always runs them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import time
from functools import cache
from importlib.metadata import distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what a page's blocks can reach: the linked docs/ and pyproject.toml, the editable install's
# sources, and the checker (conftest.py, the page environment)
TREES = ("docs", "swarm", "plugins", "tests/page_site")
# what tools write beside the sources, which no page reads
CACHES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}
FILES = ("pyproject.toml", "conftest.py", "swarm_eval_pytest.py", "tests/page_env.py", __file__)


def _files() -> list[Path]:
    found = [ROOT / name for name in FILES]
    for tree in TREES:
        found += [
            p
            for p in (ROOT / tree).rglob("*")
            if p.is_file()
            and not any(part in CACHES for part in p.relative_to(ROOT).parts)
            and p.suffix != ".pyc"
        ]
    return sorted(set(found))


@cache
def sources_digest(root: Path) -> str:
    """The digest of the files every page can reach and of the installed distributions: the
    same for every page, so computed once a process (``sources_digest.cache_clear()`` after
    changing them)."""
    digest = hashlib.sha256()
    for path in _files():
        digest.update(str(path.resolve().relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())
    digest.update(json.dumps([installed, sys.version, _in_checkout(sys.executable)]).encode())
    return digest.hexdigest()


def _in_checkout(text: str) -> str:
    """``text`` (a path, or a list of them) with the checkout's own path written as
    ``<checkout>``: where it is a whole path or a path's leading folders, not where a longer
    name begins with it (``/x/main2`` for a checkout at ``/x/main``)."""
    return re.sub(re.escape(str(ROOT)) + r"(?=[/\\:;]|$)", "<checkout>", text)


def page_key(page: Path, env: dict[str, str]) -> str:
    """The digest of everything a page's run depends on (the same in every checkout of the
    same content with the same distributions)."""
    digest = hashlib.sha256(sources_digest(ROOT).encode())
    digest.update(page.read_bytes() + b"\0")
    shown = {name: _in_checkout(value) for name, value in env.items()}
    digest.update(json.dumps(shown, sort_keys=True).encode())
    return digest.hexdigest()


KEEP = 8
"""How many passes a page keeps (the newest): one for each of a few commits checked out."""


def _prefix(page: Path) -> str:
    """A page's entries' name: its path in the checkout (``docs-fanout.md-``)."""
    return "-".join(page.resolve().relative_to(ROOT).parts) + "-"


def _marker(page: Path, key: str) -> Path:
    folder = Path(tempfile.gettempdir()) / f"swarm-eval-docs-{os.getuid()}"
    return folder / f"{_prefix(page)}{key}.passed"


def passed_before(page: Path, key: str) -> bool:
    """Whether this page passed with this content before (never under SWARM_DOCS_FRESH or
    SWARM_DOCS_TWICE)."""
    if os.environ.get("SWARM_DOCS_FRESH") or os.environ.get("SWARM_DOCS_TWICE"):
        return False
    return _marker(page, key).exists()


def remember_pass(page: Path, key: str) -> None:
    """Remember that ``page`` passed with ``key``; forget all but its ``KEEP`` newest passes."""
    marker = _marker(page, key)
    marker.parent.mkdir(parents=True, exist_ok=True)
    others = [p for p in marker.parent.glob(f"{_prefix(page)}*.passed") if p != marker]
    times = {p: _mtime(p) for p in others}
    marker.write_text(page.name + "\n")
    # the newest, strictly (a coarse clock can give two passes one time)
    newest = max([time.time_ns(), *(t + 1 for t in times.values())])
    os.utime(marker, ns=(newest, newest))
    for old in sorted(others, key=lambda p: times[p], reverse=True)[KEEP - 1 :]:
        old.unlink(missing_ok=True)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:  # forgotten by another run meanwhile
        return 0
