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
    "verified_quiescence.py": [
        "stop reason: verified",
        "  hasty     submitted  gate checks 1, passes 0",
        "  careful   submitted  gate checks 1, passes 1",
        "answer: careful (controller, verified)",
        "stop reason: quiescence",
        "  worker-1  stopped    gate checks 0, passes 0",
    ],
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
        "error: members[0].count: expected a whole number in [1, 10000], got 0",
    ],
    "read_result.py": ['  "version": 1,', "result event == store: True"],
    "scripted_testing.py": ["total tokens: 590", "multiply results: ['42', '42']"],
    "budget_caps.py": [
        "caps: {'cost': 0.006, 'tokens': None, 'time': None}",
        "stop reason: swarm_cap",
        "  greedy    share                11000 tokens",
        "  capped    member_limit:token    3300 tokens",
        "  quick     submitted             1100 tokens",
        "preamble: The swarm's token budget is split equally between the members; you stop "
        "when your share is used up.",
        "caps: {'cost': None, 'tokens': 18000, 'time': None}",
        "error: budget.cost: a cost cap or cost limit needs prices, and model(s) "
        "swarm/scripted "
        "have none. Give them with inspect_ai.model.set_model_info(name, "
        "ModelInfo(cost=ModelCost(...))) or set_model_cost(), or `inspect eval "
        "--model-cost-config prices.yaml`; or drop the cost cap.",
    ],
    "read_ledger.py": [
        '  "caps": {"cost": 1.0, "tokens": null, "time": 600.0},',
        '      "calls": {"calls": 1, "cache_replays": 0, "errored": 0, "no_usage": 0, '
        '"unpriced": 0},',
        '  "attribution_complete": true',
        "ledger event == store: True",
        "react-1: submitted, 1 call(s), $0.00810",
        "react-2: submitted, 1 call(s), $0.00765",
        "members: $0.01575  swarm: $0.01575",
        "complete: True True",
        "schema fields: 22",
    ],
    "analysis_columns.py": [
        "columns: swarm_cost, swarm_complete, swarm_members, swarm_resumed, swarm_cost_cap, "
        "swarm_token_cap, swarm_time_cap, swarm_errored, swarm_no_usage, swarm_unpriced, "
        "swarm_unpriced_models",
        'unpriced  1               4    ["swarm/scripted"]',
    ],
    "shared_memory_board.py": [
        "  1 shared memory file changed where you waited (f-1 new; by writer). View one with "
        'shared_memory(command="view", path="f-1").',
        "  Created /shared_memory/answer.md (f-1, version 1).",
        '  <peer_file id="f-1" path="/shared_memory/answer.md" version="1" writer="writer" '
        'record="w-1">',
        "  Shared memory: 1 file changed since you last viewed it (f-1 new).",
        "poller  poll    {'records': 0, 'record_bytes': 0, 'rejections': {}, 'reads': 0, "
        "'listings': 1, 'notices': 0}",
        "        waits {'news': 1}",
        "  f-1 is at version 1, last written by first, which you have not viewed; view it "
        "before replacing it.  <- refused",
        "second: {'records': 2, 'record_bytes': 6, 'rejections': {'unviewed': 1, 'path': 1, "
        "'fence': 1, 'rate': 1}, 'reads': 0, 'listings': 0, 'notices': 1}",
    ],
    "custom_channel.py": [
        "delivered v-1 seq=1 sender=alice op={'answer': '42'}",
        "[bob] swarm_wait(): New votes: v-1 by alice: 42.",
        "[carol] vote('42'): carol has already voted.",
        "carol  {'records': 1, 'record_bytes': 2, 'rejections': {'one_vote': 1}, 'reads': 0, "
        "'listings': 0, 'notices': 1}",
    ],
    "fanout_fixture.py": [
        "shipped: csv-metrics, json-events",
        "csv-metrics: 8 shards, artifact combined-index.md",
        "  metrics-01.csv (worker-metrics-01): What is the maximum value of the cpu column? -> 96",
        "my-metrics: metrics-01.csv now expects 99",
        "refused: my-metrics/task.txt: shards[0]: the prompt has no line '- shards/metrics-01.csv: "
        "What is the minimum value of the cpu column?'; it must list every shard with its "
        "question as in the manifest",
    ],
    "fanout_rubric_rule.py": [
        "honest: {'coverage': True, 'delegation': True, 'dedup': True, 'receipts': True, "
        "'provenance': True, 'answer_not_in_task': True, 'resolved': True}",
        "answer in the task: resolved False",
        "answer_not_in_task: FAIL",
        "  - events-02.jsonl worker-events-02: its task holds the answer 1482368",
        "plugin: proof_of_work",
    ],
    "timeline_demo.py": [
        "writer   submitted  model calls 4, tool calls 3, writes 2 (+0 refused), waits 0, notices 0",
        "waiter   cancelled  model calls 4, tool calls 3, writes 0 (+1 refused), waits 2, notices 1",
        "crasher  errored    model calls 1, tool calls 0, writes 0 (+0 refused), waits 0, notices 0",
        "stop: submitted (recorded)",
        "answer: writer",
        "wrote timeline.html and timeline.svg",
        "self-contained: True",
    ],
    "fanout_run.py": [
        "coverage: True",
        "provenance: True",
        "resolved: True",
        "children: 8, their model calls: 24",
    ],
    "fan_out.py": [
        "spawned: red (by lead), blue (by lead), gray (by lead)",
        "ended: gray errored",
        "message: blue -> lead (child) 'sky', seen by read",
        "receipt: gray -> lead (child) '[Receipt] Your child gray errored (ScriptedModelError).', "
        "seen by notice",
    ],
    "read_metrics.py": [
        '  "steps_to_answer": 3,',
        "notify_unwired: ['unwired']",
        "tools_unwired: ['no_tools']",
        "comm: {} waits: None wait_time: None",
        "gate checks: 2 passes: 1",
    ],
}

# Examples that run no eval, so write no log.
NO_LOG = {"fanout_fixture.py", "fanout_rubric_rule.py"}

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
    if name not in NO_LOG:
        assert list((tmp_path / "logs").glob("*.eval")), "the example wrote no log"


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
        "budgets.md",
        "ledger.md",
        "channels.md",
        "metrics.md",
    ):
        assert page in names


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if p.name not in ("index.md", "hooks.md", "architecture.md")],
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
