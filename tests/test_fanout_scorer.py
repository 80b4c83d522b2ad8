"""The fan-out rubric as an Inspect scorer: on a synthetic ``TaskState``, inside a real Inspect
eval, and re-scoring ``.eval`` logs with Inspect's own ``inspect score`` command (no model, no
run: the records are written with Inspect's log API).  Also its registrations: the ``fanout``
rubric in swarm-eval's catalog and ``swarm plugins``, ``swarm/fanout_rubric`` in Inspect's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from fanout_records import Run, honest, index_text
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalSample,
    EvalSpec,
    read_eval_log,
    write_eval_log,
)
from inspect_ai.model import ModelName
from inspect_ai.scorer import Score, Target
from inspect_ai.solver import Generate, TaskState, solver

from swarm import ConfigError, plugin_catalog
from swarm.cli import cli
from swarm.plugins.scorers.fanout import fanout_rubric, load_fixture

FIXTURE = load_fixture("json-events")
INSPECT = Path(sys.executable).with_name("inspect")


def decoys() -> Run:
    """The provenance cheat: right answers in the artifact, junk in every child's reply."""
    run = Run()
    for shard in FIXTURE.shards:
        run.spawn(shard.worker)
        run.reply(shard.worker, "done")
        run.end(shard.worker)
    run.write(index_text(FIXTURE))
    run.finish()
    return run


def score_store(store: dict[str, Any], fixture: str = "json-events") -> Score:
    state = TaskState(
        model=ModelName("none/none"), sample_id=1, epoch=1, input="", messages=[], store=store
    )
    return anyio.run(fanout_rubric(fixture=fixture), state, Target(""))


# -- on a TaskState ----------------------------------------------------------------------------


def test_scorer_resolves_an_honest_store() -> None:
    run = honest(FIXTURE)
    score = score_store(run.store())
    assert score.value == {
        "coverage": True,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": True,
        "resolved": True,
    }
    assert score.answer == index_text(FIXTURE)
    assert score.explanation is not None
    assert score.explanation.splitlines() == [
        "resolved: yes",
        "coverage: pass",
        "delegation: pass",
        "dedup: pass",
        "receipts: pass",
        "provenance: pass",
        "proof_of_work: pass",
        "efficiency: lead 1000 tokens in 3 turns; 8 children 3200 tokens in 16 turns; total "
        "4200 tokens, $0.042000; wall time 24.50 s",
    ]
    metadata = score.metadata or {}
    assert metadata["fixture"] == "json-events"
    assert metadata["lead"] == "lead"
    assert metadata["efficiency"]["total"]["tokens"] == 4200
    assert metadata["efficiency"]["children"]["turns"] == 16
    assert metadata["rules"]["dedup"]["details"]["total_spawns"] == 8
    assert set(metadata["records"]) == {
        "inspect_swarm:spawns",
        "inspect_swarm:messages",
        "inspect_swarm:result",
        "inspect_swarm:ledger",
        "inspect_swarm:metrics",
        "swarm_fanout:artifact",
        "inspect_swarm:reads",
    }
    assert metadata["isolation"] == {
        "provider": "bwrap",
        "isolated": True,
        "note": "each member's tools run in its own bubblewrap sandbox: only its own files and "
        "/usr (read-only) are visible, no network, no host process; it cannot protect what a "
        "member is told (its task, its messages) or what /usr holds",
    }
    json.dumps(metadata)  # plain JSON


def test_scorer_explains_a_failure_naming_the_shard_and_member() -> None:
    score = score_store(decoys().store())
    assert isinstance(score.value, dict)
    assert score.value["provenance"] is False
    assert score.value["resolved"] is False
    assert score.explanation is not None
    lines = score.explanation.splitlines()
    shard = FIXTURE.shards[0]
    assert lines[0] == "resolved: no (failed: provenance, proof_of_work)"
    assert "provenance: FAIL" in lines
    assert (
        f"  - {shard.file} {shard.worker}: the child replied 'done', the artifact says "
        f"'{shard.expected}'"
    ) in lines
    assert "  - ... and 3 more (see the metadata)" in lines
    failures = (score.metadata or {})["rules"]["provenance"]["failures"]
    assert failures[0] == {
        "reason": f"the child replied 'done', the artifact says '{shard.expected}'",
        "shard": shard.file,
        "member": shard.worker,
    }
    assert len(failures) == 8


def test_scorer_scores_an_empty_store() -> None:
    score = score_store({})
    assert isinstance(score.value, dict)
    assert score.value["resolved"] is False
    assert score.answer == ""


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"fixture": "no-such-fixture"}, "fixture 'no-such-fixture': neither a shipped fixture"),
        (
            {"fixture": "json-events", "spawn_factor": 0},
            "spawn_factor: expected a whole number >= 1, got 0",
        ),
        (
            {"fixture": "json-events", "spawn_factor": True},
            "spawn_factor: expected a whole number >= 1, got True",
        ),
    ],
)
def test_scorer_refuses_bad_arguments(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        fanout_rubric(**arguments)


# -- registrations -----------------------------------------------------------------------------


def test_fanout_is_a_builtin_rubric_listed_by_swarm_plugins() -> None:
    registration = plugin_catalog().lookup("rubric", "fanout")
    assert registration.factory is fanout_rubric
    assert registration.plugin == "fanout"
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    row = next(r for r in json.loads(result.stdout) if r["name"] == "fanout")
    assert row == {
        "name": "fanout",
        "distribution": "swarm-eval",
        "version": "0.1.0",
        "builtin": True,
        "entry_point": "swarm.plugins.scorers.fanout.plugin",
        "hooks": ["swarm_register_commands", "swarm_register_rubrics"],
        "controllers": [],
        "channels": [],
        "rubrics": ["fanout"],
        "error": None,
    }
    text = CliRunner().invoke(cli, ["plugins"]).stdout
    assert "fanout  (swarm-eval 0.1.0, built-in)\n  rubrics: fanout\n" in text


def test_the_inspect_entry_point_is_declared() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="inspect_ai")}
    assert found["swarm_fanout"] == "swarm.plugins.scorers.fanout._inspect_registry"


# -- in an eval, and re-scored by `inspect score` ----------------------------------------------


@solver
def replay_records() -> Any:
    """Writes the sample's records (from its metadata) to the store, as a swarm would."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for key, value in state.metadata["records"].items():
            state.store.set(key, value)
        return state

    return solve


def inspect_score(log: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``inspect score LOG ARGS --output-file OUT``, in a subprocess."""
    return subprocess.run(
        [str(INSPECT), "score", str(log), *args, "--output-file", str(out)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        cwd=log.parent,
    )


def values(log: EvalLog) -> dict[str, dict[str, Any]]:
    """Each sample's score value, by sample id."""
    return {
        str(sample.id): sample.scores["fanout_rubric"].value  # type: ignore[misc]
        for sample in log.samples or []
    }


def test_scorer_in_an_eval_and_rescored_from_its_log(log_dir: Path) -> None:
    samples = [
        Sample(id="honest", input="fan out", metadata={"records": honest(FIXTURE).store()}),
        Sample(id="decoys", input="fan out", metadata={"records": decoys().store()}),
    ]
    task = Task(
        dataset=samples, solver=replay_records(), scorer=fanout_rubric(fixture="json-events")
    )
    log = eval(task, model="mockllm/model", log_dir=str(log_dir), display="none")[0]
    assert log.status == "success", log.error
    assert {k: v["resolved"] for k, v in values(log).items()} == {"honest": True, "decoys": False}
    assert log.results is not None
    means = {s.name: s.metrics["mean"].value for s in log.results.scores}
    assert means == {
        "coverage": 1.0,
        "delegation": 1.0,
        "dedup": 1.0,
        "receipts": 1.0,
        "provenance": 0.5,
        "proof_of_work": 0.5,
        "resolved": 0.5,
    }
    # Inspect's own command re-scores the log from the scorer it recorded, reading only the
    # store: nothing runs again.  Change one stored artifact first, to see it re-read.
    honest_sample = next(s for s in log.samples or [] if s.id == "honest")
    wrong = index_text(FIXTURE, {FIXTURE.shards[0].file: "7"})
    honest_sample.store["swarm_fanout:artifact"] = {"path": "combined-index.md", "text": wrong}
    write_eval_log(log, log.location)
    out = log_dir / "rescored.eval"
    done = inspect_score(Path(log.location), out, "--action", "overwrite")
    assert done.returncode == 0, done.stderr
    rescored = values(read_eval_log(str(out)))
    assert rescored["decoys"] == values(log)["decoys"]
    assert rescored["honest"] == {
        "coverage": False,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": False,
        "proof_of_work": True,
        "resolved": False,
    }


def synthetic_log(path: Path, stores: dict[str, dict[str, Any]]) -> Path:
    """An .eval log holding only samples' stores, written with Inspect's log API."""
    samples = [
        EvalSample(id=name, epoch=1, input="fan out", target="", store=store)
        for name, store in stores.items()
    ]
    spec = EvalSpec(
        created=datetime.now(UTC).isoformat(),
        task="fanout",
        dataset=EvalDataset(name="fanout", samples=len(samples), sample_ids=list(stores)),
        model="none/none",
        config=EvalConfig(),
    )
    write_eval_log(EvalLog(status="success", eval=spec, samples=samples), str(path))
    return path


def test_inspect_score_rescores_a_synthetic_log_against_a_fixture_path(tmp_path: Path) -> None:
    log = synthetic_log(
        tmp_path / "synthetic.eval",
        {"honest": honest(FIXTURE).store(), "decoys": decoys().store()},
    )
    out = tmp_path / "scored.eval"
    done = inspect_score(log, out, "--scorer", "swarm/fanout_rubric", "-S", "fixture=json-events")
    assert done.returncode == 0, done.stderr
    scored = read_eval_log(str(out))
    assert {k: (v["resolved"], v["provenance"]) for k, v in values(scored).items()} == {
        "honest": (True, True),
        "decoys": (False, False),
    }
    decoy = next(s for s in scored.samples or [] if s.id == "decoys")
    metadata = decoy.scores["fanout_rubric"].metadata  # type: ignore[index]
    assert metadata["rules"]["provenance"]["details"]["mismatched"][0]["reply"] == "done"

    # a copy of the fixture whose expected answer for one shard is wrong: coverage fails, and
    # nothing that does not depend on the expected answers changes
    copy = tmp_path / "my-events"
    shutil.copytree(FIXTURE.directory, copy)
    manifest = json.loads((copy / "fixture.json").read_text())
    manifest["shards"][2]["expected"] += 1
    (copy / "fixture.json").write_text(json.dumps(manifest))
    out = tmp_path / "scored-against-copy.eval"
    done = inspect_score(log, out, "--scorer", "swarm/fanout_rubric", "-S", f"fixture={copy}")
    assert done.returncode == 0, done.stderr
    honest_value = values(read_eval_log(str(out)))["honest"]
    assert honest_value == {
        "coverage": False,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": False,
        "resolved": False,
    }
