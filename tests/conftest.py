"""Shared fixtures: every test runs offline on the scripted model, logs in a temp dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("INSPECT_DISPLAY", "none")


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    path = tmp_path / "logs"
    path.mkdir()
    return path
