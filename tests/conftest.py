"""Shared fixtures: every test runs offline on the scripted model, logs in a temp dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("INSPECT_DISPLAY", "none")


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
