"""Hide installed distributions from this interpreter, as if they had never been installed.

The docs checker (conftest.py at the repository's root) puts this folder first on
``PYTHONPATH`` when it runs a page's blocks, with ``SWARM_PAGE_HIDDEN`` naming the distributions
the page did not ask for (those outside swarm-eval's base install and the extras the page
declares) and ``SWARM_PAGE_HIDDEN_MODULES`` their top-level modules.  Python imports
``sitecustomize`` at start-up, so every interpreter the page starts (a ``python`` block,
``inspect``, ``swarm``, their subprocesses) sees the environment a reader who installed only
that would have: ``import openai`` fails with ``ModuleNotFoundError``,
``importlib.util.find_spec("openai")`` is ``None``, and ``importlib.metadata`` neither finds the
distribution nor its entry points.  ``tests/test_page_environment.py`` checks that it does.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from importlib.machinery import PathFinder
from importlib.metadata import Distribution, DistributionFinder
from types import ModuleType
from typing import Any


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class HidingPathFinder:
    """``PathFinder``, except for the hidden modules and distributions."""

    def __init__(self, modules: frozenset[str], distributions: frozenset[str]) -> None:
        self.modules = modules
        self.distributions = distributions

    def find_spec(self, name: str, path: Any = None, target: ModuleType | None = None) -> Any:
        if name.partition(".")[0] in self.modules:
            return None
        return PathFinder.find_spec(name, path, target)

    def find_distributions(
        self, context: DistributionFinder.Context | None = None
    ) -> Iterator[Distribution]:
        for dist in PathFinder.find_distributions(context or DistributionFinder.Context()):
            if _canonical(dist.metadata["Name"] or "") not in self.distributions:
                yield dist

    def invalidate_caches(self) -> None:
        PathFinder.invalidate_caches()


def _hide() -> None:
    modules = frozenset(filter(None, os.environ.get("SWARM_PAGE_HIDDEN_MODULES", "").split(",")))
    dists = frozenset(filter(None, os.environ.get("SWARM_PAGE_HIDDEN", "").split(",")))
    if not (modules or dists):
        return
    finder = HidingPathFinder(modules, dists)
    sys.meta_path[:] = [finder if f is PathFinder else f for f in sys.meta_path]


_hide()
