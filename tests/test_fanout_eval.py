"""The swarm-fanout eval end to end, on the scripted model: the runner, the Inspect task from the
command line, a fixture of one's own, re-scoring a log, and cheating leads that fail on the rule
that catches them."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample, list_eval_logs, read_eval_log
from inspect_ai.model import get_model

from swarm import ConfigError, PluginCatalog, SpawnDecision, get_plugin_manager, hookimpl
from swarm.plugins.scorers.fanout import (
    fanout_rubric,
    fanout_sample,
    fanout_topology,
    honest_scripts,
    load_fixture,
    manifest_digest,
    run_fanout,
)

RULES = ("coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work")
BIN = Path(sys.executable).parent


@pytest.mark.parametrize("fixture", ["json-events", "csv-metrics"])
def test_the_runner_resolves_each_shipped_fixture_with_no_key(fixture: str, tmp_path: Path) -> None:
    outcome = run_fanout(fixture, None, 600, str(tmp_path))
    assert outcome["resolved"] is True, outcome
    assert all(outcome[rule] is True for rule in RULES)
    assert outcome["failures"] == {rule: [] for rule in RULES}
    assert outcome["efficiency"]["children"]["members"] == 8
    assert outcome["efficiency"]["total"]["members"] == 9
    assert "keyless demonstration" in outcome["model"]
    assert (outcome["isolation"]["provider"], outcome["isolation"]["isolated"]) == ("bwrap", True)
    assert Path(outcome["log"]).exists()


LOCAL_RUN = (str(BIN / "swarm"), "fanout", "--fixture", "csv-metrics", "--sandbox", "local")
"""The keyless run with no isolation (its log directory follows)."""


def test_the_command_prints_json_and_exits_by_resolution(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BIN / "swarm"), "fanout", "--fixture", "csv-metrics", "--log-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout[done.stdout.index("{") :])
    assert (outcome["fixture"], outcome["resolved"]) == ("csv-metrics", True)
    assert outcome["isolation"]["provider"] == "bwrap"
    local = subprocess.run(
        [*LOCAL_RUN, "--log-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert local.returncode == 1, local.stderr[-2000:]  # not resolved: not isolated
    outcome = json.loads(local.stdout[local.stdout.index("{") :])
    assert (outcome["resolved"], outcome["unverified"]) == (False, True)
    assert (outcome["isolation"]["provider"], outcome["isolation"]["isolated"]) == ("local", False)
    bad = subprocess.run(
        [str(BIN / "swarm"), "fanout", "--fixture", "no-such-fixture"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0 and "no-such-fixture" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_inspect_eval_runs_the_task_by_name(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps(honest_scripts(load_fixture("json-events"))))
    done = subprocess.run(
        [
            str(BIN / "inspect"),
            "eval",
            "swarm/fanout",
            "-T",
            "fixture=json-events",
            "--model",
            "swarm/scripted",
            "-M",
            f"scripts={scripts}",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    [sample] = read_eval_log(info).samples or []
    [score] = (sample.scores or {}).values()
    assert score.value == {**{rule: True for rule in (*RULES, "resolved")}, "unverified": False}


def test_the_task_runs_the_keyless_demonstration_with_demo_true(tmp_path: Path) -> None:
    """``inspect eval swarm/fanout -T demo=true --model swarm/scripted``: the task brings the
    demonstration's scripts (the model ``swarm fanout`` runs with no --model) itself."""
    [log] = inspect_eval(
        "swarm/fanout",
        task_args={"demo": True},
        model="swarm/scripted",
        display="none",
        log_dir=str(tmp_path),
    )
    assert (log.status, log.eval.model, log.eval.task_args["demo"]) == (
        "success",
        "swarm/scripted",
        True,
    )
    [sample] = log.samples or []
    [score] = (sample.scores or {}).values()
    assert score.value == {**{rule: True for rule in (*RULES, "resolved")}, "unverified": False}
    metadata = score.metadata or {}
    assert metadata["efficiency"]["children"]["members"] == 8
    assert (metadata["isolation"]["provider"], metadata["isolation"]["isolated"]) == ("bwrap", True)


def test_without_demo_the_scripted_model_has_no_script_and_is_not_resolved(
    tmp_path: Path,
) -> None:
    """What issue 21 found: ``--model swarm/scripted`` alone runs members with no script (the
    lead submits ``done`` at once): no spawn, no artifact, not resolved (the rules about
    children hold vacuously)."""
    [log] = inspect_eval(
        "swarm/fanout",
        task_args={"sandbox": "local"},
        model="swarm/scripted",
        display="none",
        log_dir=str(tmp_path),
    )
    [sample] = log.samples or []
    [score] = (sample.scores or {}).values()
    assert score.value == {
        "coverage": False,
        "delegation": False,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": False,
        "resolved": False,
        "unverified": False,  # rules failed: neither resolved nor unverified
    }
    assert score.answer == ""


@pytest.mark.parametrize(
    ("task_args", "model", "message"),
    [
        (
            {"demo": True},
            "mockllm/model",
            "fanout.demo: the keyless demonstration runs on its own scripted model "
            "(swarm/scripted with the fixture's scripts), not on mockllm/model; drop "
            "-T demo=true to evaluate mockllm/model",
        ),
        ({"demo": "maybe"}, "swarm/scripted", "fanout.demo: expected true or false, got 'maybe'"),
    ],
    ids=["another-model", "not-a-bool"],
)
def test_demo_is_refused_with_another_model_or_a_value_not_a_bool(
    tmp_path: Path, task_args: dict[str, Any], model: str, message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        inspect_eval(
            "swarm/fanout", task_args=task_args, model=model, display="none", log_dir=str(tmp_path)
        )
    assert str(info.value) == message
    assert list(tmp_path.iterdir()) == []


def _copy(fixture: str, to: Path) -> Path:
    shutil.copytree(load_fixture(fixture).directory, to)
    return to


def test_a_fixture_of_ones_own_runs_and_a_log_is_rescored_against_another(tmp_path: Path) -> None:
    mine = _copy("json-events", tmp_path / "mine")
    manifest = json.loads((mine / "fixture.json").read_text())
    first = manifest["shards"][0]  # events-01: how many records have action "deploy"
    with (mine / "shards" / first["file"]).open("a") as f:
        f.write(
            json.dumps(
                {
                    "ts": "2026-01-01T00:00:00Z",
                    "user": "zed",
                    "action": "deploy",
                    "bytes": 1,
                    "service": "x",
                }
            )
            + "\n"
        )
    first["expected"] += 1
    (mine / "fixture.json").write_text(json.dumps(manifest, indent=2))
    outcome = run_fanout(str(mine), None, 600, str(tmp_path / "logs"))
    assert outcome["resolved"] is True, outcome
    # a copy whose expected value for one shard differs: re-scoring the log against it is
    # refused, as the manifest is not the one the sample was scored with...
    wrong = _copy(str(mine), tmp_path / "wrong")
    manifest["shards"][0]["expected"] += 100
    (wrong / "fixture.json").write_text(json.dumps(manifest, indent=2))
    rescore = [str(BIN / "inspect"), "score", outcome["log"], "--scorer", "swarm/fanout_rubric"]
    rescore += ["-S", f"fixture={wrong}", "--action", "overwrite", "--overwrite"]
    run = functools.partial(
        subprocess.run, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    refused = run(rescore)
    assert refused.returncode != 0
    message = " ".join(refused.stderr.split())
    assert (
        f"fanout_rubric: refusing to re-score sample 'json-events': the fixture's manifest "
        f"{wrong / 'fixture.json'} is not the one it was scored with"
    ) in message, refused.stderr[-3000:]
    assert "to judge it against this fixture on purpose, pass -S rescore_fixture=true" in message
    [sample] = read_eval_log(outcome["log"]).samples or []
    [score] = (sample.scores or {}).values()
    assert isinstance(score.value, dict) and score.value["resolved"] is True  # unchanged
    # ... unless asked to on purpose: then coverage fails, and only coverage
    done = run([*rescore, "-S", "rescore_fixture=true"])
    assert done.returncode == 0, done.stderr[-3000:]
    [sample] = read_eval_log(outcome["log"]).samples or []
    [score] = (sample.scores or {}).values()
    assert score.value == {
        "coverage": False,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        # the children replied the old value: under the corrected fixture it is not the answer
        "proof_of_work": False,
        "resolved": False,
        "unverified": False,
    }
    digests = (score.metadata or {})["digests"]
    assert digests["fixture"] == manifest_digest(load_fixture(str(wrong)))
    assert digests["judged"] == (
        "the last score's records, against a new fixture (was "
        f"{manifest_digest(load_fixture(str(mine)))})"
    )


# -- cheating leads, through the real task --------------------------------------------------


class AdmitEverything:
    """A plugin that admits every spawn the limits would refuse (so a double spawn happens)."""

    @hookimpl(tryfirst=True)
    def swarm_admit_spawn(self, view: Any, request: Any) -> SpawnDecision:
        return SpawnDecision.admitted()


def run_task(
    scripts: dict[str, list[dict[str, Any]]], plugins: PluginCatalog | None = None
) -> EvalSample:
    fixture = load_fixture("json-events")
    extra = {} if plugins is None else {"plugins": plugins}
    task = Task(
        dataset=[fanout_sample(fixture)],
        solver=fanout_topology(fixture, **extra),
        scorer=fanout_rubric(fixture="json-events"),
        sandbox="bwrap",
    )
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = inspect_eval(task, model=model, display="none", log_dir=None)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def failing(sample: EvalSample) -> set[str]:
    [score] = (sample.scores or {}).values()
    assert isinstance(score.value, dict)
    return {rule for rule in RULES if score.value[rule] is not True}


def honest() -> dict[str, list[dict[str, Any]]]:
    return honest_scripts(load_fixture("json-events"))


def _write(scripts: dict[str, list[dict[str, Any]]], answers: dict[str, int]) -> None:
    """Make the lead's artifact hold ``answers`` (by file) instead of the honest ones."""
    fixture = load_fixture("json-events")
    bullets = "".join(f"- {s.file}: {answers.get(s.file, s.expected)}\n" for s in fixture.shards)
    for step in scripts["lead"]:
        if step.get("tool") == "bash":
            step["args"] = {"command": f"printf '%s' '{bullets}' > combined-index.md"}


def test_an_honest_lead_resolves() -> None:
    assert failing(run_task(honest())) == set()


def test_cheat_no_spawn_fails_delegation() -> None:
    scripts = honest()
    scripts["lead"] = [s for s in scripts["lead"] if s.get("tool") == "bash" or "submit" in s]
    # without children there are no replies either: provenance and proof of work fail too
    assert failing(run_task(scripts)) == {"delegation", "provenance", "proof_of_work"}


def test_cheat_double_spawn_fails_dedup() -> None:
    scripts = honest()
    first = scripts["lead"][0]
    scripts["lead"].insert(1, dict(first))  # the same worker again while it runs
    shard = load_fixture("json-events").shards[0]
    scripts[f"{shard.worker}~2"] = scripts[shard.worker]
    pm, sources = get_plugin_manager()
    pm.register(AdmitEverything(), name="admit_everything")
    assert failing(run_task(scripts, PluginCatalog(pm, sources))) == {"dedup"}


def test_cheat_fabricated_answer_fails_coverage() -> None:
    scripts = honest()
    _write(scripts, {"events-03.jsonl": 999999})
    # the artifact's value is not what the shard's child replied: provenance fails too
    assert failing(run_task(scripts)) == {"coverage", "provenance"}


def test_cheat_decoy_children_fail_provenance() -> None:
    scripts = honest()
    for shard in load_fixture("json-events").shards:
        for step in scripts[shard.worker]:
            if step.get("tool") == "send_message":
                step["args"] = {"to": "parent", "text": "0"}
    assert failing(run_task(scripts)) == {"provenance", "proof_of_work"}
