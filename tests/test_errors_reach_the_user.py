"""A swarm-eval error raised in a user's script after an eval ran in the same process reaches
the user: one line on stderr and its exit status, whatever the eval's display (issue 42).

Before: Inspect installs its exception hook at its first eval, over swarm-eval's, and prints a
``PrerequisiteError`` (every swarm-eval error is one) through its rich console, which
``display="none"`` mutes: the script exited 1 with nothing on stdout or stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample

from swarm import ConfigError, member, swarm

task = Task(dataset=[Sample(input="6 * 7?", target="42")], solver=swarm(members=member("react")))
[log] = eval(task, model="swarm/scripted", log_dir={log_dir!r}, display={display!r})
print("status", log.status)
raise ConfigError("members[0].count: expected a whole number >= 1, got 0")
"""


@pytest.mark.parametrize("display", ["none", "plain"])
def test_an_error_after_an_eval_is_one_line_on_stderr(tmp_path: Path, display: str) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(log_dir=str(tmp_path / "logs"), display=display))
    env = {k: v for k, v in os.environ.items() if k != "INSPECT_DISPLAY"}
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == "status success"
    assert done.stderr == (
        "\nConfigError: members[0].count: expected a whole number >= 1, got 0\n\n"
    )
