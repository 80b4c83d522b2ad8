"""The README's commands from swarm-eval's wheel, installed outside the repository and run in an
empty directory, as a user who ran ``pip install swarm-eval`` would.

Before: README said ``inspect eval docs/examples/task.py ... -S config=docs/examples/topology.yaml``,
files that only a checkout has; outside it both failed.  Now the task is registered
(``swarm/arithmetic``) and the example topology ships as package data (``swarm topology
example``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_docs_checker import checker

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "swarm_eval_pytest.py", "swarm", "plugins")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """swarm-eval's wheel, built from a copy of the sources and installed (without its
    dependencies, which the test environment has) into a folder of its own."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run(
        [
            *pip,
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            "dist",
            str(source),
        ],
        cwd=work,
        check=True,
        capture_output=True,
    )
    (wheel,) = (work / "dist").glob("swarm_eval-*.whl")
    site = work / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    return site


def _env(site: Path) -> dict[str, str]:
    """The page environment of the checker, with the wheel's package and scripts first."""
    path = f"{site / 'bin'}{os.pathsep}{checker.BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    return {"PYTHONPATH": str(site), "PATH": path}


def test_the_wheel_is_what_runs(installed: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(installed / "bin" / "swarm"), "topology", "example"],
        cwd=tmp_path,
        env=dict(os.environ, **_env(installed)),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == (ROOT / "docs" / "examples" / "topology.yaml").read_text()
    where = subprocess.run(
        [sys.executable, "-c", "import swarm, swarm.demo; print(swarm.__file__)"],
        cwd=tmp_path,
        env=dict(os.environ, **_env(installed)),
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(installed)


def test_the_readme_runs_in_an_empty_directory(installed: Path, tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Using it from Inspect") : text.index("From Python:")]
    found = [b for b in checker.blocks(section) if b.language == "console"]
    assert len(found) == 2  # the four react agents; the example topology
    empty = tmp_path / "anywhere"
    empty.mkdir()
    checker.run_blocks(found, "README.md", empty, _env(installed))
    assert sorted(p.name for p in empty.iterdir()) == ["logs", "topology.yaml"]
    assert len(list((empty / "logs").glob("*.eval"))) == 2
