"""The pytest11 plugin costs a pytest run nothing until a test uses its fixtures (issue 42):
before, loading it imported the ``swarm`` package and ``inspect_ai`` (1.68 s of imports) in
every pytest run of an environment with swarm-eval installed, used or not."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

LOADED = (
    "import sys, swarm_eval_pytest\n"
    "print(sorted(m for m in ('swarm', 'inspect_ai') if m in sys.modules))\n"
)


def test_the_entry_point_names_the_top_level_module() -> None:
    [found] = [e for e in entry_points(group="pytest11") if e.name == "swarm"]
    assert found.value == "swarm_eval_pytest"


def test_loading_the_plugin_imports_neither_swarm_nor_inspect() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")


def test_the_fixtures_are_the_same_under_both_names() -> None:
    import swarm_eval_pytest
    from swarm.testing import pytest_plugin

    for name in pytest_plugin.__all__:
        assert getattr(pytest_plugin, name) is getattr(swarm_eval_pytest, name)
