"""An example whose demonstration failed exits non-zero saying why (issue 42): before,
``docs/examples/bridged_member.py`` without the ``openai`` package exited 0 and printed
``answer: 42`` while its bridged member had errored."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "bridged_member.py"

WITHOUT_OPENAI = f"""
import runpy, sys
sys.modules["openai"] = None  # as if it were not installed
runpy.run_path({str(EXAMPLE)!r}, run_name="__main__")
"""


def test_the_bridged_example_without_openai_exits_1_saying_what_to_install(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_OPENAI],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "bridged_member.py needs the openai package: pip install 'swarm-eval[bridge]'\n"
    )
