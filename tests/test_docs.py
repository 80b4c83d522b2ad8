"""The documentation: its examples run and print what the pages say, and its links resolve."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
BIN = Path(sys.executable).parent

# One line (or more) each example must print, as the pages quote it.
EXPECTED: dict[str, list[str]] = {
    "task.py": ["members: react-1, react-2, react-3, react-4", "score: C"],
    "leaderless_last.py": ["stop reason: all_done", "answer: thorough (last)"],
    "stop_procedure.py": [
        "stop reason: submitted",
        "fast     submitted",
        "thinker  stopped",
        "slow     cancelled",
        "limited  member_limit:turn",
        "broken   errored  (ScriptedModelError('model API down'))",
    ],
    "custom_controller.py": [
        "stop reason: controller:enough",
        "answer: worker-1 (controller: 2 of 4 submitted)",
    ],
    "veto_plugin.py": [
        "stop reason: submitted",
        "answer: solver",
        "logged: observer plugin 'noisy' failed in hook 'swarm_run_started' (the run goes on)",
    ],
    "run_topology.py": [
        "topology.toml == topology.yaml: True",
        "answer: reviewer (last)",
        "error: members[0].count: expected a whole number >= 1, got 0",
    ],
    "read_result.py": ['  "version": 1,', "result event == store: True"],
    "scripted_testing.py": ["total tokens: 590", "multiply results: ['42', '42']"],
}

PAGES = sorted(DOCS.glob("*.md"))
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["INSPECT_LOG_DIR"] = str(tmp_path / "logs")
    env["INSPECT_DISPLAY"] = "none"
    env.pop("SWARM_DISABLE_PLUGIN_AUTOLOAD", None)
    return env


def _run(
    args: list[str], tmp_path: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd or tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _explain(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit code {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"


def test_every_example_has_expectations() -> None:
    found = {p.name for p in EXAMPLES.glob("*.py")}
    assert found == set(EXPECTED), "add the example's expected output to EXPECTED"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name: str, tmp_path: Path) -> None:
    done = _run([sys.executable, str(EXAMPLES / name)], tmp_path)
    assert done.returncode == 0, _explain(done)
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    for expected in EXPECTED[name]:
        assert expected in lines, f"{name} did not print {expected!r}\n{_explain(done)}"
    assert list((tmp_path / "logs").glob("*.eval")), "the example wrote no log in INSPECT_LOG_DIR"


def test_plugin_test_example_passes(tmp_path: Path) -> None:
    done = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(EXAMPLES / "plugin_tests"),
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        tmp_path,
    )
    assert done.returncode == 0, _explain(done)
    assert "2 passed" in done.stdout, _explain(done)


def _read_result(tmp_path: Path) -> dict[str, Any]:
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = list_eval_logs(str(tmp_path / "logs"))
    assert len(logs) == 1
    log = read_eval_log(logs[0])
    assert log.status == "success", log.error
    assert log.samples
    return dict(log.samples[0].store["inspect_swarm:result"])


@pytest.mark.parametrize(
    "solver_args",
    [
        ["-S", "members={factory: react, count: 4}", "-M", "answer=42"],
        ["-S", "config=docs/examples/topology.yaml"],
    ],
    ids=["members", "config"],
)
def test_quickstart_inspect_cli(solver_args: list[str], tmp_path: Path) -> None:
    # As the quickstart has it: run from the repository root, with relative paths (Inspect
    # does not take an absolute task path).
    done = _run(
        [
            str(BIN / "inspect"),
            "eval",
            "docs/examples/task.py",
            "--solver",
            "swarm/swarm",
            "--model",
            "swarm/scripted",
            "--log-dir",
            str(tmp_path / "logs"),
            *solver_args,
        ],
        tmp_path,
        cwd=ROOT,
    )
    assert done.returncode == 0, _explain(done)
    result = _read_result(tmp_path)
    names = [m["name"] for m in result["members"]]
    if "config" in solver_args[1]:
        assert names == ["react-1", "react-2", "reviewer"]
        assert result["stop_reason"] == "all_done"
    else:
        assert names == ["react-1", "react-2", "react-3", "react-4"]
        assert result["stop_reason"] == "submitted"


def test_quickstart_swarm_demo(tmp_path: Path) -> None:
    done = _run([str(BIN / "swarm"), "demo", "--log-dir", str(tmp_path / "logs")], tmp_path)
    assert done.returncode == 0, _explain(done)
    assert "status: success" in done.stdout, _explain(done)
    assert "sample six-times-seven: stop reason all_done" in done.stdout, _explain(done)


def _anchors(page: Path) -> set[str]:
    """GitHub-style anchors of a Markdown page's headings."""
    found = set()
    for line in page.read_text().splitlines():
        heading = re.match(r"^#{1,6}\s+(.*)$", line)
        if heading:
            text = heading.group(1).strip().lower()
            text = re.sub(r"[^\w\- ]", "", text)
            found.add(text.replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: link {target!r} points to a missing file"
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved), f"{page.name}: no heading for {target!r}"


def test_docs_pages_exist() -> None:
    names = {p.name for p in PAGES}
    for page in (
        "index.md",
        "quickstart.md",
        "topologies.md",
        "controllers.md",
        "records.md",
        "plugins.md",
        "testing.md",
        "hooks.md",
    ):
        assert page in names


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if p.name not in ("index.md", "hooks.md")],
    ids=lambda p: p.name,
)
def test_feature_pages_point_to_a_runnable_example(page: Path) -> None:
    text = page.read_text()
    used = [name for name in EXPECTED if f"examples/{name}" in text]
    assert used, f"{page.name} references no runnable example in docs/examples/"


def test_index_links_every_page() -> None:
    text = (DOCS / "index.md").read_text()
    for page in PAGES:
        if page.name != "index.md":
            assert f"({page.name}" in text, f"index.md does not link {page.name}"
