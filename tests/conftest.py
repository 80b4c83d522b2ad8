"""Shared fixtures: every test runs offline on the scripted model, logs in a temp dir."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("INSPECT_DISPLAY", "none")


@pytest.fixture(autouse=True, scope="session")
def _inspect_logs_in_a_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """An eval given no ``log_dir`` logs under a temp dir, never ``./logs`` of the checkout."""
    before = os.environ.get("INSPECT_LOG_DIR")
    os.environ["INSPECT_LOG_DIR"] = str(tmp_path_factory.mktemp("inspect-logs"))
    yield
    if before is None:
        os.environ.pop("INSPECT_LOG_DIR", None)
    else:
        os.environ["INSPECT_LOG_DIR"] = before


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    path = tmp_path / "logs"
    path.mkdir()
    return path


# Mutation runs (scripts/mutation.sh) must classify a mutant the same way every time: the
# property tests then draw the same examples on every run, and keep no example database.
settings.register_profile("mutation", derandomize=True, database=None, deadline=None)
if "MUTANT_UNDER_TEST" in os.environ:
    settings.load_profile("mutation")


@pytest.fixture
def priced() -> Iterator[None]:
    """The scripted model priced at $1 per million input and $2 per million output tokens, so
    that 250,000 input tokens cost exactly $0.25."""
    from inspect_ai.model import ModelCost, ModelInfo, set_model_info

    price = ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)
    set_model_info("swarm/scripted", ModelInfo(cost=price))
    yield
    set_model_info("swarm/scripted", ModelInfo())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a mutation run, the tests a mutant runs go fastest first (by their time in mutmut's
    clean run), so that a killed mutant is found killed as soon as possible."""
    stats = Path("mutmut-stats.json")
    if "MUTANT_UNDER_TEST" not in os.environ or not stats.exists():
        return
    durations: dict[str, float] = json.loads(stats.read_text())["duration_by_test"]
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))
