"""Budget-matched experiments end to end: the arms from one description, run as an Inspect eval
set on the ``swarm/noisy`` model, written and run as a Flow spec, read back by
``swarm.analysis.arm_table`` (every figure against a direct count from the same logs), and the
``swarm arms`` / ``swarm compare`` commands."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from inspect_ai.log import read_eval_log

from swarm.analysis import arm_table, comparison_figures, frontier, pass_at_k, pass_hat_k
from swarm.cli import cli
from swarm.errors import ConfigError
from swarm.experiments import Arm, Experiment, arm_topology, run_arms, write_flow_spec
from swarm.testing import NoisyModelAPI

NOISY = {"seed": 3, "tokens": [16, 4], "steps": 10}
"""20 tokens a call, 1 to 10 calls a member."""


def experiment(**changes: Any) -> Experiment:
    values: dict[str, Any] = {
        "task": "swarm/arms_demo",
        "task_args": {"samples": 6},
        "model": "swarm/noisy",
        "model_args": NOISY,
        "budget": 240,
        "k": [1, 2, 4],
    }
    values.update(changes)
    return Experiment(**values)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    log_dir = tmp_path_factory.mktemp("arms")
    return log_dir, run_arms(experiment(), log_dir)


# --- the description -------------------------------------------------------------------------


def test_an_experiment_has_the_single_agent_then_attempts_and_a_swarm_for_each_k() -> None:
    arms = experiment(k=[4, 1, 2, 2]).arms()
    assert [a.name for a in arms] == ["single", "attempts-2", "swarm-2", "attempts-4", "swarm-4"]
    assert [(a.epochs, a.token_limit) for a in arms] == [
        (1, 240),
        (2, 120),
        (1, 240),
        (4, 60),
        (1, 240),
    ]
    two = experiment(topologies=["ring.yaml", "star.toml"]).arms()
    assert [a.name for a in two if a.kind == "swarm"] == [
        "swarm-ring-2",
        "swarm-star-2",
        "swarm-ring-4",
        "swarm-star-4",
    ]


def test_a_deepagent_with_k_background_subagents_is_an_arm_of_its_own(tmp_path: Path) -> None:
    e = experiment(k=[1, 2], task_args={"samples": 2}, subagents=True)
    assert [a.name for a in e.arms()] == ["single", "attempts-2", "swarm-2", "subagents-2"]
    assert arm_topology(e.arms()[3], "react", 0.05) == {
        "members": {"factory": "swarm/deepagent", "name": "lead", "args": {"background": 2}},
        "budget": {"reserve": 0.05},
    }
    assert run_arms(e, tmp_path).success
    row = arm_table(tmp_path).row("subagents-2")
    d = direct(row.log)
    assert (row.kind, row.k, row.samples, row.epochs) == ("subagents", 2, 2, 1)
    assert row.tokens == sum(d["spent"].values()) / 2 and row.within_budget
    assert row.chosen == sum(d["values"]) / 2
    assert (
        read_eval_log(row.log).samples[0].store["inspect_swarm:result"]["members"][0]["name"]
        == "lead"
    )


def test_an_arms_budget_is_its_sample_limit_and_the_swarm_caps_derive_from_it() -> None:
    swarm4 = Arm(kind="swarm", k=4, budget=240)
    assert arm_topology(swarm4, "react", 0.05) == {
        "members": {"factory": "react", "name": "worker", "count": 4},
        "controller": {"name": "leaderless", "stop_on_submission": False},
        "budget": {"reserve": 0.05, "split": "equal"},
    }
    single = Arm(kind="single", k=1, budget=240)
    assert arm_topology(single, "react", 0.1) == {
        "members": {"factory": "react", "name": "worker"},
        "budget": {"reserve": 0.1},
    }


def test_a_topology_file_gets_k_members_and_may_not_set_the_budget(tmp_path: Path) -> None:
    ring = tmp_path / "ring.yaml"
    ring.write_text("members: {factory: react, name: w}\nbudget: {grace: 5}\n")
    arm = Arm(kind="swarm", k=3, budget=90, topology=str(ring))
    assert arm_topology(arm, "react", 0.05, str(ring)) == {
        "members": [{"factory": "react", "name": "w", "count": 3}],
        "budget": {"grace": 5, "reserve": 0.05},
    }
    ring.write_text("members: {factory: react}\nbudget: {tokens: 5000}\n")
    with pytest.raises(ConfigError, match=r"ring.yaml: budget.tokens: the arm sets the budget"):
        arm_topology(arm, "react", 0.05, str(ring))
    ring.write_text("members: [{factory: react, count: 2}, {factory: react, name: lead}]\n")
    with pytest.raises(ConfigError, match=r"members: 2 entries make 3 member\(s\), not k = 4"):
        arm_topology(Arm(kind="swarm", k=4, budget=90), "react", 0.05, str(ring))


def test_bad_descriptions_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^budget: expected a whole number >= 1, got 0$"):
        experiment(budget=0)
    with pytest.raises(ConfigError, match=r"^k\[1\]: expected a whole number >= 1, got -2$"):
        experiment(k=[1, -2])
    with pytest.raises(ConfigError, match=r"^budget: 3 tokens cannot be split 4 ways$"):
        experiment(budget=3)


# --- the noisy model ----------------------------------------------------------------------------


def test_the_noisy_model_replays_its_draws_and_refuses_bad_args() -> None:
    model = NoisyModelAPI("noisy", seed=3, skill={"worker-1": 0.9, "*": 0.2}, spread=0.0)
    assert model.chance("worker-1", "sum-1") == 0.9
    assert model.chance("worker-2", "sum-1") == 0.2
    again = NoisyModelAPI("noisy", seed=3, skill={"worker-1": 0.9, "*": 0.2}, spread=0.0)
    draws = [model.calls_needed("worker", f"sum-{i}", 1) for i in range(1, 9)]
    assert draws == [again.calls_needed("worker", f"sum-{i}", 1) for i in range(1, 9)]
    assert all(1 <= d <= 10 for d in draws) and len(set(draws)) > 1
    assert (
        model.calls_needed("worker", "sum-1", 1) != model.calls_needed("worker", "sum-1", 2)
        or (model.right("worker", "sum-1", 1) != model.right("worker", "sum-1", 2))
        or model.calls_needed("worker", "sum-2", 1) != model.calls_needed("worker", "sum-2", 2)
    )
    with pytest.raises(ConfigError, match=r"swarm/noisy: skill\['x'\]: expected a probability"):
        NoisyModelAPI("noisy", skill={"x": 1.5})
    with pytest.raises(ConfigError, match=r"swarm/noisy: unknown model args \['skil'\]"):
        NoisyModelAPI("noisy", skil=0.5)
    with pytest.raises(ConfigError, match=r"swarm/noisy: tokens: expected \[input, output\]"):
        NoisyModelAPI("noisy", tokens=[10])


# --- the sweep and the table ------------------------------------------------------------------


def direct(log_file: str) -> dict[str, Any]:
    """The figures of one arm's log, counted directly from its samples."""
    log = read_eval_log(log_file)
    samples = log.samples or []
    per: dict[Any, list[Any]] = {}
    for s in samples:
        per.setdefault(s.id, []).append(s)
    spent = {
        sid: sum(s.store["inspect_swarm:ledger"]["swarm"]["usage"]["total_tokens"] for s in e)
        for sid, e in per.items()
    }
    costs = {
        sid: sum(s.store["inspect_swarm:ledger"]["swarm"]["cost"] for s in e)
        for sid, e in per.items()
    }
    right = {sid: [s.scores["includes"].value == "C" for s in e] for sid, e in per.items()}
    model_usage = {
        sid: sum(u.total_tokens for s in e for u in s.model_usage.values())
        for sid, e in per.items()
    }
    majority = {}
    for sid, e in per.items():
        votes: dict[str, list[bool]] = {}  # answer: right, in the order first given
        for s in sorted(e, key=lambda s: s.epoch):
            answer = (s.scores["includes"].answer or "").strip()
            if answer:
                votes.setdefault(answer, []).append(s.scores["includes"].value == "C")
        most = max((len(v) for v in votes.values()), default=0)
        top = [v for v in votes.values() if len(v) == most]
        majority[sid] = top[0][0] if top else e[0].scores["includes"].value == "C"
    return {
        "log": log,
        "majority": majority,
        "spent": spent,
        "costs": costs,
        "right": right,
        "model_usage": model_usage,
        "n": len(per),
        "values": [1.0 if s.scores["includes"].value == "C" else 0.0 for s in samples],
    }


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The 95% Wilson interval, by its formula."""
    z = 1.959963984540054
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_the_sweep_runs_every_arm_once_and_a_second_run_reuses_them(sweep: Any) -> None:
    log_dir, first = sweep
    assert first.success
    assert first.ran == ("attempts-2", "attempts-4", "single", "swarm-2", "swarm-4")
    again = run_arms(experiment(), log_dir)
    assert again.success and again.ran == ()
    assert len(list(log_dir.glob("*.eval"))) == 5


def test_every_figure_agrees_with_a_direct_count_from_the_logs(sweep: Any) -> None:
    log_dir, _ = sweep
    table = arm_table(log_dir)
    assert [r.arm for r in table.rows] == [
        "single",
        "attempts-2",
        "swarm-2",
        "attempts-4",
        "swarm-4",
    ]
    for row in table.rows:
        d = direct(row.log)
        assert row.samples == d["n"] == 6
        # realized cost: the ledgers' swarm meters, which reconcile with Inspect's model_usage
        assert d["spent"] == d["model_usage"]
        assert row.tokens == sum(d["spent"].values()) / 6
        assert row.cost == pytest.approx(sum(d["costs"].values()) / 6, abs=1e-15)
        assert row.max_tokens == max(d["spent"].values())
        assert row.over_budget == sum(1 for t in d["spent"].values() if t > 240)
        assert row.within_budget is (row.over_budget == 0)
        solved = sum(any(r) for r in d["right"].values())
        if row.kind == "attempts":
            assert row.epochs == row.k
            assert row.mean_agent == sum(d["values"]) / len(d["values"])
            assert row.pass_at_k == row.oracle == solved / 6
            assert row.pass_hat_k == sum(all(r) for r in d["right"].values()) / 6
            # the arm's own answer: the majority of its attempts' answers
            assert row.chosen == sum(d["majority"].values()) / 6
            chosen_right = sum(d["majority"].values())
        else:
            assert row.epochs == 1 and row.pass_at_k is None
            assert row.chosen == sum(d["values"]) / 6
            chosen_right = solved
        assert (row.ci_lower, row.ci_upper) == pytest.approx(wilson(chosen_right, 6))
        if row.kind == "swarm":
            # best and mean member: each member's kept answer, judged as includes() would
            members = [
                [
                    float(m["status"] == "submitted" and str(s.target) in (m["answer"] or ""))
                    for m in s.store["inspect_swarm:result"]["members"]
                    if m["depth"] == 0
                ]
                for s in d["log"].samples
            ]
            assert all(len(m) == row.k for m in members)
            assert row.oracle == pytest.approx(sum(max(m) for m in members) / 6)
            assert row.mean_agent == pytest.approx(sum(sum(m) / row.k for m in members) / 6)
            assert row.oracle >= row.chosen
        elif row.kind == "single":
            assert (row.oracle, row.mean_agent) == (None, row.chosen)
        successes = row.chosen * 6
        assert row.tokens_per_success == pytest.approx(sum(d["spent"].values()) / successes)
    # the figures of this seed, pinned
    pinned = {
        r.arm: (r.chosen, r.oracle, r.mean_agent, r.tokens, r.max_tokens, r.within_budget)
        for r in table.rows
    }
    assert pinned == PINNED


PINNED: dict[str, tuple[float, float | None, float | None, float, int, bool]] = {
    "single": (3 / 6, None, 3 / 6, 680 / 6, 200, True),
    "attempts-2": (3 / 6, 4 / 6, 5 / 12, 180.0, 240, True),
    "swarm-2": (2 / 6, 3 / 6, 1.5 / 6, 180.0, 240, True),
    "attempts-4": (4 / 6, 4 / 6, 5 / 24, 210.0, 220, True),
    "swarm-4": (3 / 6, 3 / 6, 0.75 / 6, 1300 / 6, 240, True),
}


def test_pass_at_k_and_pass_hat_k_are_the_unbiased_estimators() -> None:
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 1, 2) == 1 - math.comb(3, 2) / math.comb(4, 2) == 0.5
    assert pass_at_k(4, 3, 2) == 1.0
    assert pass_hat_k(4, 3, 2) == math.comb(3, 2) / math.comb(4, 2) == 0.5
    assert pass_hat_k(4, 1, 2) == 0.0


def test_attempts_whose_last_call_overshoots_their_share_are_tabled_apart(tmp_path: Path) -> None:
    # 4 attempts at 120 / 4 = 30 tokens each: the cap (28) is reached by the second call of 20
    # tokens, which ends at 40, past the attempt's 30: both samples spend more than their 120
    e = experiment(budget=120, k=[4], task_args={"samples": 2})
    assert run_arms(e, tmp_path).success
    table = arm_table(tmp_path)
    row = table.row("attempts-4")
    d = direct(row.log)
    assert d["spent"] == {"sum-1": 140, "sum-2": 160}
    assert (row.within_budget, row.over_budget, row.max_tokens) == (False, 2, 160)
    assert table.row("single").within_budget and table.row("swarm-4").within_budget
    lines = table.to_text().splitlines()
    apart = lines.index("over budget (some sample spent more than B; kept out of the fit):")
    assert [line.split()[0] for line in lines[1:apart]] == ["single", "swarm-4"]
    assert lines[apart + 1].startswith("attempts-4")
    assert lines[apart + 1].endswith("2 over, most 160")
    (fit,) = table.fits
    assert fit.left_out == ("attempts-4",)
    # the frontier is drawn among the arms within budget only
    assert "attempts-4" not in [r.arm for r in frontier(table.rows)]


def test_the_scaling_fit_reads_the_single_agents_curve_on_realized_tokens(sweep: Any) -> None:
    log_dir, _ = sweep
    table = arm_table(log_dir)
    (fit,) = table.fits
    assert (fit.topology, fit.left_out) == ("default", ())
    # the curve: the single agent at the tokens it spent, each attempt at the tokens one spent
    curve = sorted(
        [(table.row("single").tokens, table.row("single").chosen)]
        + [
            (table.row(f"attempts-{k}").tokens / k, table.row(f"attempts-{k}").mean_agent)
            for k in (2, 4)
        ]
    )
    assert curve == [(52.5, 5 / 24), (90.0, 5 / 12), (680 / 6, 3 / 6)]
    for k, lam in fit.per_k.items():
        swarm = table.row(f"swarm-{k}")
        b = swarm.tokens / k * k**lam
        # the tokens k**lam times what a member spent sit on the curve at the swarm's accuracy
        below = [p for p in curve if p[0] <= b + 1e-9]
        above = [p for p in curve if p[0] >= b - 1e-9]
        lo, hi = max(below), min(above)
        if hi[0] != lo[0]:
            share = math.log(b / lo[0]) / math.log(hi[0] / lo[0])
            assert lo[1] + share * (hi[1] - lo[1]) == pytest.approx(swarm.chosen)
    # swarm-4 chose right in 3 of 6, the single agent's best: the curve's top, at 680/6 tokens
    # against the 1300/6/4 a member spent; swarm-2's 2 of 6 sits between the attempts' points
    assert fit.per_k[4] == pytest.approx(math.log((680 / 6) / (1300 / 24)) / math.log(4))
    assert sorted(fit.per_k) == [2, 4]
    assert fit.lam == pytest.approx(sum(fit.per_k.values()) / 2)


def test_the_pictures_are_figures_and_the_frontier_is_undominated(sweep: Any) -> None:
    log_dir, _ = sweep
    table = arm_table(log_dir)
    figures = comparison_figures(table)
    assert figures.frontier.axes[0].get_xlabel() == "realized tokens per sample (ledger)"
    assert figures.frontier.axes[0].get_ylabel() == "accuracy of the chosen answer"
    legend = [t.get_text() for t in figures.frontier.axes[0].get_legend().get_texts()]
    assert legend == [
        "the answer the arm chose",
        "oracle: pass@k, best member",
        "over budget: not in the fit",
    ]
    assert figures.by_k.axes[0].get_xlabel() == "k (agents)"
    best = frontier(table.rows)
    for r in table.rows:
        if r not in best:
            assert any(o.tokens <= r.tokens and o.chosen >= r.chosen for o in best)


# --- resuming ---------------------------------------------------------------------------------

FLAKY = """
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, mean, scorer


@scorer(metrics=[accuracy()])
def flaky(marker: str):
    async def score(state, target):
        members = state.store.get("inspect_swarm:result", {}).get("members", [])
        if Path(marker).exists() and len(members) == 4:
            raise RuntimeError("the machine went away")
        right = target.text in state.output.completion
        return Score(value=CORRECT if right else INCORRECT)

    return score


@scorer(metrics={"best": [mean()], "mean": [mean()]})
def member_scores():
    async def score(state, target):
        return Score(value={"team": 1.0, "best": 1.0, "mean": 0.25})

    return score


@task
def flaky_sums(marker: str):
    return Task(
        dataset=[Sample(id=i, input=f"What is {i} + {i}?", target=str(2 * i)) for i in (1, 2, 3)],
        scorer=[flaky(marker), member_scores()],
    )
"""


def test_an_interrupted_sweep_goes_on_without_rerunning_finished_arms(tmp_path: Path) -> None:
    (tmp_path / "flaky.py").write_text(FLAKY)
    marker = tmp_path / "interrupt"
    marker.write_text("")
    e = experiment(task=str(tmp_path / "flaky.py"), task_args={"marker": str(marker)}, k=[1, 2, 4])
    logs = tmp_path / "logs"
    first = run_arms(e, logs)
    assert not first.success
    assert first.ran == ("attempts-2", "attempts-4", "single", "swarm-2", "swarm-4")
    finished = {p.name: p.stat().st_mtime_ns for p in logs.glob("*.eval")}
    marker.unlink()
    second = run_arms(e, logs)
    assert second.success and second.ran == ("swarm-4",)
    for name, mtime in finished.items():
        if "swarm-4" not in name:
            assert (logs / name).stat().st_mtime_ns == mtime
    table = arm_table(logs)
    assert len(table.rows) == 5
    # a swarm's best member and mean member, from a member_scores score
    assert (table.row("swarm-4").oracle, table.row("swarm-4").mean_agent) == (1.0, 0.25)
    assert table.row("single").oracle is None


def test_an_edited_topology_reruns_only_its_arms(tmp_path: Path) -> None:
    ring, star = tmp_path / "ring.yaml", tmp_path / "star.yaml"
    ring.write_text("members: {factory: react, name: r}\n")
    star.write_text("members: {factory: react, name: s}\n")
    e = experiment(k=[1, 2], task_args={"samples": 2}, topologies=[str(ring), str(star)])
    logs = tmp_path / "logs"
    assert run_arms(e, logs).ran == ("attempts-2", "single", "swarm-ring-2", "swarm-star-2")
    ring.write_text("members: {factory: react, name: r}\nbudget: {grace: 5}\n")
    assert run_arms(e, logs).ran == ("swarm-ring-2",)
    table = arm_table(logs)
    assert [r.arm for r in table.rows] == ["single", "attempts-2", "swarm-ring-2", "swarm-star-2"]
    newest = read_eval_log(table.row("swarm-ring-2").log, header_only=True)
    assert (
        newest.eval.task_args["topology_digest"] == e.task_args_of(e.arms()[2])["topology_digest"]
    )


# --- Flow -----------------------------------------------------------------------------------


def test_the_flow_spec_loads_with_flows_loader_and_runs_an_arm_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import inspect_flow._launcher.inproc as inproc
    from inspect_flow.api import load_spec, run

    # Flow records the environment's packages in the log directory with `uv pip compile`,
    # which needs uv and the network; the run itself needs neither
    monkeypatch.setattr(inproc, "write_flow_requirements", lambda *a, **k: None)
    monkeypatch.chdir(tmp_path)
    e = experiment(k=[1, 2], task_args={"samples": 2})
    spec_file = write_flow_spec(e, tmp_path / "flow.yaml", str(tmp_path / "logs"))
    spec = load_spec(str(spec_file))
    assert [t.args["arm"] for t in spec.tasks] == ["single", "attempts", "swarm"]
    one = write_flow_spec(e, tmp_path / "one.yaml", str(tmp_path / "logs"), arms=["single"])
    result = run(load_spec(str(one)), base_dir=str(tmp_path))
    assert result.success
    assert [log.eval.task for log in result.logs] == ["single"]
    # the arm Flow ran is the eval set's arm: the sweep reuses it
    assert run_arms(e, tmp_path / "logs").ran == ("attempts-2", "swarm-2")


# --- the commands ---------------------------------------------------------------------------


def test_swarm_arms_then_swarm_compare(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    args = ["arms", "swarm/arms_demo", "--model", "swarm/noisy", "--budget", "240"]
    args += ["--k", "1,2", "--log-dir", str(logs), "-T", "samples=2", "-M", "seed=3"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0] == "arms: single, attempts-2, swarm-2"
    assert lines[1] == f"flow spec: {logs / 'flow.yaml'}"
    assert lines[2] == "ran: attempts-2, single, swarm-2"
    assert lines[3] == "reused: none"
    assert lines[4].startswith("arm ")
    again = CliRunner().invoke(cli, args)
    assert "ran: none" in again.output and "reused: attempts-2, single, swarm-2" in again.output
    shown = CliRunner().invoke(cli, ["compare", str(logs), "-o", str(tmp_path / "out")])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[0] == lines[4]
    for name in ("comparison-frontier.png", "comparison-by-k.png"):
        assert (tmp_path / "out" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "out" / "comparison.html").read_text()
    assert "data:image/png;base64," in page and "attempts-2" in page


def test_swarm_compare_on_a_directory_without_arms_says_so(tmp_path: Path) -> None:
    done = CliRunner().invoke(cli, ["compare", str(tmp_path)])
    assert done.exit_code != 0
    assert "no arm logs" in str(done.exception) + done.output


def test_without_inspect_flow_the_arms_run_and_the_spec_is_refused_only_when_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a plain install has no inspect-flow (the flow extra): `swarm arms` ran into a
    # ModuleNotFoundError traceback before
    import importlib.util
    import sys

    real = importlib.util.find_spec
    monkeypatch.setitem(sys.modules, "inspect_flow", None)  # import inspect_flow: ImportError
    monkeypatch.setitem(sys.modules, "inspect_flow.api", None)
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "inspect_flow" else real(n, *a)
    )
    logs = tmp_path / "logs"
    args = ["arms", "swarm/arms_demo", "--model", "swarm/noisy", "--budget", "240"]
    args += ["--k", "1", "--log-dir", str(logs), "-T", "samples=1"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[:3] == [
        "arms: single",
        "flow spec: not written (it needs inspect-flow: pip install 'swarm-eval[flow]')",
        "ran: single",
    ]
    assert not (logs / "flow.yaml").exists()
    refused = CliRunner().invoke(cli, [*args, "--no-run"])
    assert refused.exit_code != 0
    assert "a Flow spec needs inspect-flow: pip install 'swarm-eval[flow]'" in (
        refused.output + str(refused.exception)
    )
