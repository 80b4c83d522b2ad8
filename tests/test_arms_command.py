"""A user's slips with ``swarm arms`` and ``swarm compare`` (issue 39), and arm logs that are
damaged: each is one line on stderr and no traceback, with exit status 2 for a wrong option
(naming it) and 1 for anything else a person can fix; nothing is written or run before it.

Before the fixes: a ``-T``/``-M`` value that is not YAML, a task argument the task refuses,
a model argument the model refuses, an unknown task or model provider, a Python tag in a
topology file, an unwritable ``--flow-spec`` or ``-o`` and a damaged arm log escaped as
tracebacks (a truncated log ended ``swarm compare`` and the resume of ``swarm arms`` with
``ValueError: EOCD not found``); ``--k 0`` and ``--budget 0`` exited 1 naming ``k[0]`` and
``budget``; ``--retry-attempts -1`` and ``--max-tasks 0`` were accepted; ``compare --scorer
no_such_scorer`` printed a table of zeros and exited 0; ``--no-run`` wrote a Flow spec for a
topology file it never read; and each refusal that reached the eval set came after the log
directory and the Flow spec were written.
"""

from __future__ import annotations

import io
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from swarm import ConfigError
from swarm.analysis import MixedExperiments, arm_table
from swarm.analysis._arms import UnknownScorer
from swarm.cli import main
from swarm.experiments import Arm, Experiment, SetAside, arm_topology, load_task, run_arms

ARMS = ["arms", "swarm/arms_demo", "--model", "swarm/noisy", "--budget", "240", "--k", "1,2"]
ARMS += ["-T", "samples=2", "-M", "seed=3"]
TABLE_HEAD = (
    "arm                 k  budget    n  chosen         95% CI  oracle   mean  pass^k   tokens"
    "       cost  tok/succ"
)
LEGEND = (
    "chosen: the answer the arm gives (attempts: the majority answer); oracle: some attempt or "
    "member right (pass@k, best member); mean: the mean attempt or member"
)


def swarm(*args: str) -> tuple[int, str, str]:
    """``swarm ARGS`` as its entry point runs it: the status, stdout and stderr."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["swarm", *args])
        with pytest.raises(SystemExit) as info, redirect_stdout(io.StringIO()) as out:
            with redirect_stderr(io.StringIO()) as err:
                main()
    code = info.value.code
    return (code if isinstance(code, int) else 0), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three arms (single, attempts-2, swarm-2) of two samples, run once for the module."""
    logs = tmp_path_factory.mktemp("sweep") / "logs"
    code, out, err = swarm(*ARMS, "--log-dir", str(logs))
    assert (code, err) == (0, ""), out + err
    return logs


def copy_of(sweep: Path, tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    shutil.copytree(sweep, logs)
    return logs


def arm_log(logs: Path, arm: str) -> Path:
    (found,) = logs.glob(f"*_{arm}_*.eval")
    return found


def truncate(log: Path) -> None:
    """Cut the log in half, as a full disk or an interrupted copy leaves it."""
    data = log.read_bytes()
    log.write_bytes(data[: len(data) // 2])


def rewrite(log: Path, change: Any) -> None:
    """The log read whole, changed by ``change(log)``, written back in its place."""
    whole = read_eval_log(str(log))
    change(whole)
    write_eval_log(whole, str(log))


# -- a wrong option: status 2, naming it; nothing is made ------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--k", "0"],
            "--k: expected whole numbers >= 1 separated by commas (such as 1,2,4), got '0'",
        ),
        (
            ["--k", "1,-2"],
            "--k: expected whole numbers >= 1 separated by commas (such as 1,2,4), got '1,-2'",
        ),
        (["--budget", "0"], "--budget: expected a whole number >= 1, got 0"),
        (["--budget", "3", "--k", "4"], "--budget: 3 tokens cannot be split 4 ways (--k 4)"),
        (["--retry-attempts", "-1"], "--retry-attempts: expected a whole number >= 0, got -1"),
        (["--max-tasks", "0"], "--max-tasks: expected a whole number >= 1, got 0"),
        (
            ["-T", "samples=[2"],
            "-T: samples: not a YAML value (expected ',' or ']', but got '<stream end>'), got '[2'",
        ),
        (
            ["-M", "seed={3"],
            "-M: seed: not a YAML value (expected ',' or '}', but got '<stream end>'), got '{3'",
        ),
        (
            ["--topology", "a/ring.yaml", "--topology", "b/ring.yaml"],
            "--topology: two files share a name (['ring', 'ring']); rename one",
        ),
    ],
    ids=[
        "k-0",
        "k-negative",
        "budget-0",
        "budget-unsplittable",
        "retry-attempts-negative",
        "max-tasks-0",
        "task-arg-not-yaml",
        "model-arg-not-yaml",
        "topology-names-clash",
    ],
)
def test_a_wrong_option_is_one_line_naming_it_and_status_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    logs = tmp_path / "logs"
    code, out, err = swarm(*ARMS, *args, "--log-dir", str(logs))
    assert (code, out, err) == (2, "", f"error: {message}\n")
    assert not logs.exists()


@pytest.mark.parametrize(
    ("where", "problem"),
    [
        ("a-file/logs", "cannot write in {path}: Not a directory"),
        ("a-file", "{path} is a file, not a directory"),
    ],
    ids=["under-a-file", "a-file"],
)
def test_a_log_dir_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, where: str, problem: str
) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    path = str(tmp_path / where)
    code, out, err = swarm(*ARMS, "--log-dir", path)
    assert (code, out) == (2, "")
    assert err == f"error: --log-dir: {problem.format(path=path)}\n"


def test_a_flow_spec_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    spec = tmp_path / "a-file" / "flow.yaml"
    logs = tmp_path / "logs"
    code, out, err = swarm(*ARMS, "--log-dir", str(logs), "--flow-spec", str(spec), "--no-run")
    assert (code, out, err) == (
        2,
        "",
        f"error: --flow-spec: cannot write {spec}: Not a directory\n",
    )
    assert not list(logs.iterdir())


def test_a_flow_spec_in_a_new_folder_is_written_with_its_folder(tmp_path: Path) -> None:
    spec = tmp_path / "specs" / "flow.yaml"
    code, out, err = swarm(
        *ARMS, "--log-dir", str(tmp_path / "logs"), "--flow-spec", str(spec), "--no-run"
    )
    assert (code, err) == (0, "")
    assert out == f"arms: single, attempts-2, swarm-2\nflow spec: {spec}\n"
    assert spec.read_text().startswith("log_dir: ../logs\n")


# -- what the run would refuse: status 1, before anything is written --------------------------


PY_TAG = "members: !!python/tuple [react, react]\n"
PY_TAG_PROBLEM = (
    "not valid YAML: line 1, column 10: could not determine a constructor for the tag "
    "'tag:yaml.org,2002:python/tuple'"
)


@pytest.mark.parametrize("no_run", [False, True], ids=["run", "no-run"])
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (PY_TAG, PY_TAG_PROBLEM),
        (
            "members: {factory: react}\ncontroller: boss\n",
            "controller: unknown controller 'boss'",
        ),
        (
            "members: {factory: react}\nbudget: {grace: .nan}\n",
            "budget.grace: expected a number of seconds >= 0, got nan: numbers must be finite",
        ),
    ],
    ids=["python-tag", "unknown-controller", "nan-grace"],
)
def test_a_topology_file_is_checked_as_a_run_reads_it(
    tmp_path: Path, text: str, problem: str, no_run: bool
) -> None:
    ring = tmp_path / "ring.yaml"
    ring.write_text(text)
    logs = tmp_path / "logs"
    args = [*ARMS, "--topology", str(ring), "--log-dir", str(logs)]
    code, out, err = swarm(*args, *(["--no-run"] if no_run else []))
    assert (code, out) == (1, "")
    assert err.startswith(f"error: {ring}: {problem}"), err
    assert err.count("\n") == 1
    assert not logs.exists()  # no log directory, no Flow spec


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "members: [{factory: react, count: two}, react]\n",
            "members[0].count: expected a whole number, got 'two'",
        ),
        (
            "members: [react, 7]\n",
            "members[1]: expected a member entry (a mapping, or an agent's name), got 7",
        ),
        ("members: react\nbudget: 5\n", "budget: expected a mapping of budget keys, got 5"),
    ],
    ids=["count-as-text", "entry-a-number", "budget-a-number"],
)
def test_a_topology_file_the_arm_cannot_size_names_the_file_and_field(
    tmp_path: Path, text: str, problem: str
) -> None:
    ring = tmp_path / "ring.yaml"
    ring.write_text(text)
    arm = Arm(kind="swarm", k=2, budget=240, topology=str(ring))
    with pytest.raises(ConfigError) as info:
        arm_topology(arm, "react", 0.05, str(ring))
    assert str(info.value) == f"{ring}: {problem}"


def test_a_member_named_by_its_agent_alone_gets_k_members(tmp_path: Path) -> None:
    # `members: [react]` is a valid topology file; the arm took it apart with dict("react")
    ring = tmp_path / "ring.yaml"
    ring.write_text("members: [react]\n")
    arm = Arm(kind="swarm", k=3, budget=240, topology=str(ring))
    assert arm_topology(arm, "react", 0.05, str(ring)) == {
        "members": [{"factory": "react", "count": 3}],
        "budget": {"reserve": 0.05},
    }
    logs = tmp_path / "logs"
    code, out, err = swarm(*ARMS, "--topology", str(ring), "--log-dir", str(logs), "--no-run")
    assert (code, err) == (0, "")
    assert out == f"arms: single, attempts-2, swarm-ring-2\nflow spec: {logs / 'flow.yaml'}\n"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ["-T", "nosuch=1"],
            "task: 'swarm/arms_demo' could not be made with task_args "
            "{'samples': 2, 'nosuch': 1}: TypeError: arms_demo() got an unexpected keyword "
            "argument 'nosuch'",
        ),
        (
            ["-T", "samples=two"],
            "task: 'swarm/arms_demo' could not be made with task_args "
            "{'samples': 'two'}: TypeError: can only concatenate str (not \"int\") to str",
        ),
        (
            ["-M", "seed=abc"],
            "model: 'swarm/noisy' (model_args {'seed': 'abc'}) could not be "
            "made: ValueError: invalid literal for int() with base 10: 'abc'",
        ),
        (
            ["--model", "nosuch/model"],
            "model: 'nosuch/model' (model_args {'seed': 3}) could "
            "not be made: ValueError: Model API nosuch of model 'nosuch/model' not recognized.",
        ),
    ],
    ids=["unknown-task-arg", "bad-task-arg", "bad-model-arg", "unknown-provider"],
)
def test_a_task_or_model_the_run_cannot_make_is_one_line_and_status_1(
    tmp_path: Path, change: list[str], message: str
) -> None:
    logs = tmp_path / "logs"
    code, out, err = swarm(*ARMS, *change, "--log-dir", str(logs))
    assert (code, out, err) == (1, "", f"error: {message}\n")
    assert not logs.exists()


def test_an_unknown_task_is_one_line_and_status_1(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    args = ["arms", "nosuch/task", "--model", "swarm/noisy", "--budget", "240"]
    for extra in ([], ["--no-run"]):
        code, out, err = swarm(*args, "--log-dir", str(logs), *extra)
        assert (code, out, err) == (1, "", "error: task: no Inspect task named 'nosuch/task'\n")
        assert not logs.exists()


def test_no_run_does_not_need_the_models_key_or_package(tmp_path: Path) -> None:
    # a Flow spec is often run elsewhere: only the arms (task, topology files) are checked
    logs = tmp_path / "logs"
    args = ["arms", "swarm/arms_demo", "--model", "nosuch/model", "--budget", "240", "--k", "1"]
    code, out, err = swarm(*args, "--log-dir", str(logs), "--no-run")
    assert (code, out, err) == (0, f"arms: single\nflow spec: {logs / 'flow.yaml'}\n", "")


def test_load_task_names_the_task_and_its_arguments() -> None:
    with pytest.raises(ConfigError) as info:
        load_task("nosuch/task")
    assert str(info.value) == "task: no Inspect task named 'nosuch/task'"
    with pytest.raises(ConfigError) as info:
        load_task("swarm/arms_demo", {"samples": "two"})
    assert str(info.value) == (
        "task: 'swarm/arms_demo' could not be made with task_args {'samples': 'two'}: "
        'TypeError: can only concatenate str (not "int") to str'
    )


# -- damaged arm logs --------------------------------------------------------------------------


def nan_score(log: Any) -> None:
    log.samples[0].scores["includes"].value = float("nan")


def nan_tokens(log: Any) -> None:
    log.samples[1].store["inspect_swarm:ledger"]["swarm"]["usage"]["total_tokens"] = float("nan")


def infinite_cost(log: Any) -> None:
    log.samples[0].store["inspect_swarm:ledger"]["swarm"]["cost"] = float("inf")


def no_meter(log: Any) -> None:
    log.samples[0].store["inspect_swarm:ledger"] = {"swarm": None}


def k_as_text(log: Any) -> None:
    log.eval.task_args["k"] = "two"


def nan_best_member(log: Any) -> None:
    log.samples[0].scores["member_scores"].value["best"] = float("nan")


@pytest.mark.parametrize(
    ("spoil", "problem"),
    [
        (truncate, "not a readable Inspect log (ValueError: EOCD not found)"),
        (
            lambda p: rewrite(p, nan_score),
            "sample 'sum-1', epoch 1: score 'includes' is nan",
        ),
        (
            lambda p: rewrite(p, nan_tokens),
            "sample 'sum-2', epoch 1: inspect_swarm:ledger: swarm.usage.total_tokens: "
            "expected a finite number >= 0, got nan",
        ),
        (
            lambda p: rewrite(p, infinite_cost),
            "sample 'sum-1', epoch 1: inspect_swarm:ledger: swarm.cost: expected a finite "
            "number >= 0, got inf",
        ),
        (
            lambda p: rewrite(p, no_meter),
            "sample 'sum-1', epoch 1: inspect_swarm:ledger: no swarm meter with its usage",
        ),
        (
            lambda p: rewrite(p, k_as_text),
            "task_args.k: expected a whole number >= 1, got 'two'",
        ),
        (
            lambda p: rewrite(p, nan_best_member),
            "sample 'sum-1', epoch 1: score 'member_scores': best is nan",
        ),
    ],
    ids=[
        "truncated",
        "nan-score",
        "nan-tokens",
        "infinite-cost",
        "no-meter",
        "k-as-text",
        "nan-best-member",
    ],
)
def test_compare_names_a_damaged_arm_log_and_tabulates_the_others(
    sweep: Path, tmp_path: Path, spoil: Any, problem: str
) -> None:
    logs = copy_of(sweep, tmp_path)
    damaged = arm_log(logs, "swarm-2")
    spoil(damaged)
    code, out, err = swarm("compare", str(logs), "-o", str(tmp_path / "out"))
    assert code == 0
    assert err == f"warning: {damaged}: {problem}; left out of the table\n"
    lines = out.splitlines()
    assert lines[0] == TABLE_HEAD
    assert [line.split()[0] for line in lines[1:3]] == ["single", "attempts-2"]
    assert lines[3:] == [LEGEND, f"wrote {tmp_path / 'out' / 'comparison.html'} and its PNGs"]
    table = arm_table(logs)
    assert [r.arm for r in table.rows] == ["single", "attempts-2"]
    assert dict(table.skipped) == {str(damaged): problem}


def test_a_damaged_newest_log_gives_way_to_the_arms_older_one(sweep: Path, tmp_path: Path) -> None:
    logs = copy_of(sweep, tmp_path)
    older = arm_log(logs, "swarm-2")
    newer = older.with_name(older.name.replace("_swarm-2_", "_swarm-2_newer"))
    shutil.copy(older, newer)

    def later_and_nan(log: Any) -> None:
        log.eval.created = "2100-01-01T00:00:00+00:00"
        nan_score(log)

    rewrite(newer, later_and_nan)
    table = arm_table(logs)
    assert dict(table.skipped) == {str(newer): "sample 'sum-1', epoch 1: score 'includes' is nan"}
    assert table.row("swarm-2").log == older.as_uri()


def test_swarm_arms_sets_a_truncated_log_aside_and_runs_its_arm_again(
    sweep: Path, tmp_path: Path
) -> None:
    logs = copy_of(sweep, tmp_path)
    damaged = arm_log(logs, "swarm-2")
    truncate(damaged)
    kept = damaged.read_bytes()
    code, out, err = swarm(*ARMS, "--log-dir", str(logs))
    assert code == 0, out + err
    assert err == (
        f"warning: {damaged}: not a readable Inspect log (ValueError: EOCD not found); "
        f"renamed {damaged}.corrupt, and its arm ran again\n"
    )
    assert out.splitlines()[2:5] == ["ran: swarm-2", "reused: attempts-2, single", TABLE_HEAD]
    assert Path(f"{damaged}.corrupt").read_bytes() == kept  # kept for a person to look at
    assert not damaged.exists()
    assert [r.arm for r in arm_table(logs).rows] == ["single", "attempts-2", "swarm-2"]


def test_run_arms_reports_what_it_set_aside(sweep: Path, tmp_path: Path) -> None:
    logs = copy_of(sweep, tmp_path)
    damaged = arm_log(logs, "single")
    truncate(damaged)
    (logs / "nested").mkdir()  # the eval set reads logs in subdirectories too
    inner = logs / "nested" / "old.eval"
    inner.write_bytes(b"not a zip")
    (logs / "nested" / "old.eval.corrupt").write_bytes(b"set aside before")
    e = Experiment(
        task="swarm/arms_demo",
        task_args={"samples": 2},
        model="swarm/noisy",
        model_args={"seed": 3},
        budget=240,
        k=[1, 2],
    )
    done = run_arms(e, logs)
    assert done.success and done.ran == ("single",)
    assert sorted(done.set_aside, key=lambda s: s.path) == sorted(
        [
            SetAside(
                path=str(damaged),
                moved_to=f"{damaged}.corrupt",
                problem="ValueError: EOCD not found",
            ),
            SetAside(
                path=str(inner),
                moved_to=f"{inner}.corrupt-2",
                problem="ValueError: EOCD not found",
            ),
        ],
        key=lambda s: s.path,
    )
    assert (logs / "nested" / "old.eval.corrupt").read_bytes() == b"set aside before"
    assert (logs / "nested" / "old.eval.corrupt-2").read_bytes() == b"not a zip"


# -- compare's options -------------------------------------------------------------------------


def test_compare_refuses_a_scorer_no_arm_log_has(sweep: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    code, out, err = swarm("compare", str(sweep), "--scorer", "no_such_scorer", "-o", str(out_dir))
    assert (code, out) == (2, "")
    assert err == (
        "error: --scorer: no score named 'no_such_scorer' in the arm logs; their scores: "
        "'includes'\n"
    )
    assert not out_dir.exists()
    with pytest.raises(UnknownScorer) as info:
        arm_table(sweep, scorer="member_scores")  # a swarm's member figures, not a score
    assert str(info.value) == (
        "scorer: no score named 'member_scores' in the arm logs; their scores: 'includes'"
    )
    assert arm_table(sweep, scorer="includes") == arm_table(sweep)


@pytest.mark.parametrize(
    ("where", "problem"),
    [
        ("a-file/out", "cannot write in {path}: Not a directory"),
        ("a-file", "{path} is a file, not a directory"),
    ],
    ids=["under-a-file", "a-file"],
)
def test_compare_refuses_an_output_it_cannot_write(
    sweep: Path, tmp_path: Path, where: str, problem: str
) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    path = str(tmp_path / where)
    code, out, err = swarm("compare", str(sweep), "-o", path)
    assert (code, out) == (2, "")
    assert err == f"error: --output: {problem.format(path=path)}\n"


# -- one experiment per directory (issue 41) ----------------------------------------------------


def test_swarm_arms_refuses_another_experiment_in_the_directory(
    sweep: Path, tmp_path: Path
) -> None:
    """Before: the second sweep at B = 120 replaced the arms it ran, and the table showed them
    beside the first sweep's other arms at B = 240 as one experiment."""
    logs = copy_of(sweep, tmp_path)
    before = sorted(p.name for p in logs.iterdir())
    half = [*ARMS[:5], "120", *ARMS[6:]]
    code, out, err = swarm(*half, "--log-dir", str(logs))
    assert (code, out) == (2, "")
    assert err == (
        f"error: --log-dir: {logs} holds the arms of another experiment (attempts-2: budget "
        "(240 vs 120); single: budget (240 vs 120); swarm-2: budget (240 vs 120), as logged "
        "vs this one): give another --log-dir, or --replace to move those logs aside\n"
    )
    assert sorted(p.name for p in logs.iterdir()) == before  # nothing written
    seeded = [*ARMS[:-1], "seed=4"]
    code, _, err = swarm(*seeded, "--log-dir", str(logs), "--no-run")
    assert code == 2
    assert '(attempts-2: model_args ({"seed": 3} vs {"seed": 4}); single: ' in err


def test_swarm_arms_replace_moves_the_other_experiment_aside(sweep: Path, tmp_path: Path) -> None:
    logs = copy_of(sweep, tmp_path)
    old = sorted(p.name for p in logs.glob("*.eval"))
    half = [*ARMS[:5], "120", *ARMS[6:]]
    code, out, err = swarm(*half, "--log-dir", str(logs), "--replace")
    assert (code, err) == (0, ""), out + err
    [aside] = tmp_path.glob("logs-replaced-*")
    assert sorted(p.name for p in aside.glob("*.eval")) == old
    moved = [line for line in out.splitlines() if line.startswith("replaced: ")]
    assert sorted(moved) == [f"replaced: {logs / n} -> {aside / n}" for n in old]
    table = arm_table(logs)
    assert {r.budget for r in table.rows} == {120}
    assert [r.arm for r in table.rows] == ["single", "attempts-2", "swarm-2"]


def test_compare_refuses_a_directory_holding_two_experiments(sweep: Path, tmp_path: Path) -> None:
    """A log of a B = 120 experiment's attempts-4 copied in beside a B = 240 sweep: before,
    one table and one fit of both."""
    other = tmp_path / "other"
    e = Experiment(
        task="swarm/arms_demo",
        task_args={"samples": 2},
        model="swarm/noisy",
        model_args={"seed": 3},
        budget=120,
        k=[4],
    )
    assert run_arms(e, other).success
    logs = copy_of(sweep, tmp_path)
    stray = arm_log(other, "attempts-4")
    shutil.copy(stray, logs / stray.name)
    files = {arm: arm_log(logs, arm).name for arm in ("single", "attempts-2", "swarm-2")}
    out_dir = tmp_path / "out"
    code, out, err = swarm("compare", str(logs), "-o", str(out_dir))
    assert (code, out) == (1, "")
    mine = ", ".join(f"{arm} ({files[arm]})" for arm in sorted(files))
    [line] = err.splitlines()
    assert line.startswith(
        f"error: {logs}: its arm logs are 2 experiments, not one: {mine} and attempts-4 "
        f"({stray.name}) differ in budget (240 vs 120). "
    )
    assert line.endswith(
        "Compare one at a time: move one experiment's logs into a folder of their own, or run "
        "`swarm arms ... --replace` to set the others aside"
    )
    assert not out_dir.exists()  # no table, no picture
    with pytest.raises(MixedExperiments) as info:
        arm_table(logs)
    assert [list(g) for g in info.value.groups] == [
        ["attempts-2", "single", "swarm-2"],
        ["attempts-4"],
    ]


def test_a_missing_extra_exits_1_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: exit 2, the status of a wrong option, though nothing was wrong with the
    options (issue 42)."""
    monkeypatch.setitem(sys.modules, "inspect_flow", None)  # as if the extra were missing
    logs = tmp_path / "logs"
    code, out, err = swarm(*ARMS, "--log-dir", str(logs), "--no-run")
    assert (code, out) == (1, "")
    assert err == "error: a Flow spec needs inspect-flow: pip install 'swarm-eval[flow]'\n"
    assert not logs.exists()


def test_compare_names_a_directory_that_is_not_there(tmp_path: Path) -> None:
    """Before: "no arm logs (run `swarm arms` first)" for a mistyped path (issue 42)."""
    code, out, err = swarm("compare", str(tmp_path / "logz"))
    assert (code, out) == (2, "")
    assert err == f"error: {tmp_path / 'logz'}: no such directory\n"
