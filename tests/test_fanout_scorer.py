"""The fan-out rubric as an Inspect scorer: inside a real Inspect eval of synthetic records (a
solver that writes them and seals them as the kernel does, standing in for a swarm; the same
solver without the seal is a solver of one's own), and re-scoring ``.eval`` logs with Inspect's
own ``inspect score`` command, which refuses a log whose records or fixture changed.  Also its
registrations: the ``fanout`` rubric in swarm-eval's catalog and ``swarm plugins``,
``swarm/fanout_rubric`` in Inspect's."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fanout_records import Run, honest, index_text, scored, scores
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalSample,
    EvalSpec,
    read_eval_log,
    write_eval_log,
)

from swarm import ConfigError, plugin_catalog, record_digest
from swarm.cli import cli
from swarm.plugins.scorers.fanout import STORE_KEYS, fanout_rubric, load_fixture, manifest_digest

FIXTURE = load_fixture("json-events")
MESSAGES = "inspect_swarm:messages"
ARTIFACT = "swarm_fanout:artifact"
ARTIFACT_PATH = "combined-index.md"
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


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """One eval of every case below."""
    wrong = index_text(FIXTURE, {FIXTURE.shards[0].file: "7"})
    return scored(
        tmp_path_factory.mktemp("logs"),
        {
            "honest": {"records": honest(FIXTURE).store()},
            "decoys": {"records": decoys().store()},
            "empty": {"records": {}},
            "own-solver": {"records": honest(FIXTURE).store(), "seal": False},
            "tampered": {"records": honest(FIXTURE).store(), "tamper": MESSAGES},
            "stored-artifact": {
                "records": {
                    **honest(FIXTURE).store(),
                    ARTIFACT: {"path": ARTIFACT_PATH, "text": wrong},
                },
                "stored_artifact": index_text(FIXTURE),
            },
        },
    )


# -- in an eval --------------------------------------------------------------------------------


def test_scorer_resolves_an_honest_sample(evaluated: EvalLog) -> None:
    score = scores(evaluated)["honest"]
    assert score.value == {
        "coverage": True,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": True,
        "resolved": True,
        "unverified": False,
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
        "problems": [],
    }
    [sample] = [s for s in evaluated.samples or [] if s.id == "honest"]
    judged = {key: sample.store.get(key) for key in STORE_KEYS}
    assert metadata["digests"] == {
        "fixture": manifest_digest(FIXTURE),
        "records": record_digest(judged),
        "by_key": {key: record_digest(value) for key, value in judged.items()},
        "judged": "sealed by the kernel",
    }
    json.dumps(metadata)  # plain JSON


def test_the_manifest_digest_is_the_sha256_of_its_canonical_json() -> None:
    manifest = json.loads((FIXTURE.directory / "fixture.json").read_text())
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
    assert manifest_digest(FIXTURE) == hashlib.sha256(canonical.encode()).hexdigest()


def test_scorer_explains_a_failure_naming_the_shard_and_member(evaluated: EvalLog) -> None:
    score = scores(evaluated)["decoys"]
    assert isinstance(score.value, dict)
    assert score.value["provenance"] is False
    assert score.value["resolved"] is False
    assert score.explanation is not None
    lines = score.explanation.splitlines()
    shard = FIXTURE.shards[0]
    assert lines[0] == "resolved: no (failed: provenance, proof_of_work)"
    assert "provenance: FAIL" in lines
    assert (
        f"  - {shard.file} {shard.worker}: the child replied 'done' (no number in it), "
        f"the artifact says '{shard.expected}'"
    ) in lines
    assert "  - ... and 3 more (see the metadata)" in lines
    failures = (score.metadata or {})["rules"]["provenance"]["failures"]
    assert failures[0] == {
        "reason": f"the child replied 'done' (no number in it), the artifact says "
        f"'{shard.expected}'",
        "shard": shard.file,
        "member": shard.worker,
    }
    assert len(failures) == 8


def test_scorer_scores_a_sealed_empty_store(evaluated: EvalLog) -> None:
    score = scores(evaluated)["empty"]
    assert isinstance(score.value, dict)
    assert score.value["resolved"] is False
    assert score.reason is None and "unscorable" not in (score.metadata or {})
    assert score.answer == ""


UNSCORABLE = {
    "coverage": False,
    "delegation": False,
    "dedup": False,
    "receipts": False,
    "provenance": False,
    "proof_of_work": False,
    "resolved": False,
    "unverified": False,
}


def test_records_a_solver_of_ones_own_wrote_are_unscorable(evaluated: EvalLog) -> None:
    score = scores(evaluated)["own-solver"]
    why = (
        "no swarm wrote this sample's records in this eval (the kernel sealed none): a solver "
        "that is not a swarm, or records written by something else"
    )
    assert score.value == UNSCORABLE
    assert score.reason == "scoring_failed"
    assert score.explanation == f"unscorable: {why}"
    assert score.metadata == {
        "fixture": "json-events",
        "resolved": False,
        "unverified": False,
        "unscorable": why,
        "digests": {"fixture": manifest_digest(FIXTURE)},
    }


def test_a_record_changed_after_the_seal_is_unscorable(evaluated: EvalLog) -> None:
    score = scores(evaluated)["tampered"]
    assert score.value == UNSCORABLE
    assert (score.metadata or {})["unscorable"] == (
        f"the record {MESSAGES} was changed after the swarm's kernel wrote it"
    )


def test_the_artifact_is_read_from_the_sandbox_never_taken_from_the_store(
    evaluated: EvalLog,
) -> None:
    score = scores(evaluated)["stored-artifact"]
    # the store held the right answers, the sandbox's file a wrong one: the file is judged
    assert isinstance(score.value, dict)
    assert (score.value["coverage"], score.value["resolved"]) == (False, False)
    assert score.answer == index_text(FIXTURE, {FIXTURE.shards[0].file: "7"})


def test_unscorable_values_have_every_rule_so_the_means_count_them_unresolved(
    evaluated: EvalLog,
) -> None:
    assert evaluated.results is not None
    means = {s.name: s.metrics["mean"].value for s in evaluated.results.scores}
    # honest resolves; decoys, empty, own-solver, tampered, stored-artifact do not
    assert means["resolved"] == pytest.approx(1 / 6)


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
        "normalizers": [],
        "error": None,
    }
    text = CliRunner().invoke(cli, ["plugins"]).stdout
    assert "fanout  (swarm-eval 0.1.0, built-in)\n  rubrics: fanout\n" in text


def test_the_inspect_entry_point_is_declared() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="inspect_ai")}
    assert found["swarm_fanout"] == "swarm.plugins.scorers.fanout._inspect_registry"


# -- re-scored by `inspect score` --------------------------------------------------------------


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


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "my-events"
    shutil.copytree(FIXTURE.directory, copy)
    return copy


@pytest.fixture
def two_samples(log_dir: Path, fixture_copy: Path) -> EvalLog:
    """An honest and a decoy sample, scored against a copy of the fixture (so it can be
    rewritten after the run)."""
    samples = {
        "honest": {"records": honest(FIXTURE).store()},
        "decoys": {"records": decoys().store()},
    }
    return scored(log_dir, samples, fixture=str(fixture_copy))


def test_a_log_is_rescored_from_the_scorer_it_recorded(
    two_samples: EvalLog, tmp_path: Path
) -> None:
    assert {k: v["resolved"] for k, v in values(two_samples).items()} == {
        "honest": True,
        "decoys": False,
    }
    out = tmp_path / "rescored.eval"
    done = inspect_score(Path(two_samples.location), out, "--action", "overwrite")
    assert done.returncode == 0, done.stderr
    rescored = read_eval_log(str(out))
    assert values(rescored) == values(two_samples)
    honest_score = next(s for s in rescored.samples or [] if s.id == "honest")
    digests = honest_score.scores["fanout_rubric"].metadata["digests"]  # type: ignore[index]
    first = scores(two_samples)["honest"].metadata["digests"]  # type: ignore[index]
    assert digests == {**first, "judged": "the last score's records"}
    # and the re-scored log re-scores again (its score carries the same digests)
    again = inspect_score(out, tmp_path / "again.eval", "--action", "append")
    assert again.returncode == 0, again.stderr


def test_a_fixture_rewritten_after_the_run_is_refused(
    two_samples: EvalLog, fixture_copy: Path, tmp_path: Path
) -> None:
    manifest = json.loads((fixture_copy / "fixture.json").read_text())
    manifest["shards"][2]["expected"] += 1
    (fixture_copy / "fixture.json").write_text(json.dumps(manifest))
    done = inspect_score(Path(two_samples.location), tmp_path / "out.eval", "--action", "overwrite")
    assert done.returncode != 0
    message = flat(done.stderr)
    assert "fanout_rubric: refusing to re-score sample 'decoys': " in message, done.stderr
    assert (
        f"the fixture's manifest {fixture_copy / 'fixture.json'} is not the one it was scored "
        f"with (sha256 {manifest_digest(load_fixture(str(fixture_copy)))} now, "
        f"{manifest_digest(FIXTURE)} when scored); to judge it against this fixture on purpose, "
        "pass -S rescore_fixture=true"
    ) in message, done.stderr
    assert not (tmp_path / "out.eval").exists()
    # on purpose, against the corrected fixture (-S needs --scorer): coverage fails for the
    # honest sample, and nothing that does not depend on the expected answers changes
    out = tmp_path / "on-purpose.eval"
    args = ["--scorer", "swarm/fanout_rubric", "-S", f"fixture={fixture_copy}"]
    done = inspect_score(
        Path(two_samples.location),
        out,
        "--action",
        "overwrite",
        *args,
        "-S",
        "rescore_fixture=true",
    )
    assert done.returncode == 0, done.stderr
    # proof of work is judged on the corrected answer too: no child replied it
    assert values(read_eval_log(str(out)))["honest"] == {
        "coverage": False,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": False,
        "resolved": False,
        "unverified": False,
    }


@pytest.mark.parametrize("key", [MESSAGES, ARTIFACT])
def test_a_log_whose_records_were_edited_is_refused(
    two_samples: EvalLog, tmp_path: Path, key: str
) -> None:
    sample = next(s for s in two_samples.samples or [] if s.id == "decoys")
    first = sample.scores["fanout_rubric"].metadata["digests"]["records"]  # type: ignore[index]
    if key == MESSAGES:  # the decoys' replies made to match the artifact
        for message in sample.store[MESSAGES]["messages"]:
            shard = next(s for s in FIXTURE.shards if s.worker == message["sender"])
            message["text"] = str(shard.expected)
    else:
        sample.store[ARTIFACT] = {"path": ARTIFACT_PATH, "text": index_text(FIXTURE, {})}
        sample.store[ARTIFACT]["text"] += "\n"
    write_eval_log(two_samples, two_samples.location)
    now = record_digest({k: sample.store.get(k) for k in STORE_KEYS})
    done = inspect_score(Path(two_samples.location), tmp_path / "out.eval", "--action", "overwrite")
    assert done.returncode != 0
    assert (
        "fanout_rubric: refusing to re-score sample 'decoys': its records are not the ones it "
        f"was scored with (changed since: {key}; sha256 {now} now, {first} when scored)"
    ) in flat(done.stderr), done.stderr


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


def test_a_log_no_score_vouches_for_is_unscorable(tmp_path: Path) -> None:
    log = synthetic_log(tmp_path / "synthetic.eval", {"honest": honest(FIXTURE).store()})
    out = tmp_path / "scored.eval"
    done = inspect_score(log, out, "--scorer", "swarm/fanout_rubric", "-S", "fixture=json-events")
    assert done.returncode == 0, done.stderr
    [sample] = read_eval_log(str(out)).samples or []
    score = sample.scores["fanout_rubric"]  # type: ignore[index]
    assert score.value == UNSCORABLE
    assert score.reason == "scoring_failed"
    assert (score.metadata or {})["unscorable"] == (
        "no earlier fan-out score of this sample recorded the digests of its records"
    )
