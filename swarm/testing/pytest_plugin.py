"""pytest fixtures for swarm-eval plugin authors (loaded through the ``pytest11`` entry point).

- ``swarm_plugins``: a fresh ``PluginCatalog`` with every installed plugin, for one test;
- ``swarm_log_dir``: a temporary Inspect log directory;
- ``scripted``: the ``scripted_model`` factory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import Model

from swarm._hooks.catalog import PluginCatalog
from swarm.testing._runner import scripted_model


@pytest.fixture
def swarm_plugins() -> PluginCatalog:
    """A freshly loaded plugin catalog (entry points read again)."""
    return PluginCatalog.load()


@pytest.fixture
def swarm_log_dir(tmp_path: Path) -> Iterator[Path]:
    """A temporary directory for Inspect logs."""
    path = tmp_path / "logs"
    path.mkdir()
    yield path


@pytest.fixture
def scripted() -> Callable[..., Model]:
    """``scripted(scripts, answer=..., delay=...)`` builds a scripted model."""

    def make(*args: Any, **kwargs: Any) -> Model:
        return scripted_model(*args, **kwargs)

    return make
