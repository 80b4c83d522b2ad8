"""The fan-out verdict under each isolating provider, through the real ``swarm/fanout`` task on
the scripted model (the runs and what each must show: tests/fanout_cases.py).

Under ``bwrap`` and under ``docker`` (when an engine answers; ``bash
../shared/docker/start-engine.sh`` brings one up, as ``.ci/run`` does): the honest fan-out,
a retry, out-of-order replies and a lead that ends while its children run resolve on both
shipped fixtures; each cheat of issue 40 fails the rule it must (data carried to the lead raw,
in base64 or in hex, the answer relayed in base64, the board, a reply in the read's own turn,
the artifact written first, a lead that shares its children's sandbox and reads their shards),
and each honest run that used to fail resolves (mmap, a sign-off, a task that describes the
data with the answer's number, a copied notice; two children in one sandbox are each credited
with their own read, and the run is unverified, not resolved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.plugins.scorers.fanout import Fixture, load_fixture
from tests.fanout_cases import (
    CASES,
    SCENARIOS,
    check_scenario,
    run_case,
    run_fanout,
    small_fixture,
)

FIXTURES = ("json-events", "csv-metrics")


@pytest.fixture(
    params=[
        "bwrap",
        # eight containers, and their watchers, start and are brought down around a run
        pytest.param("docker", marks=pytest.mark.timeout(300)),
    ]
)
def provider(request: pytest.FixtureRequest) -> str:
    """The isolating provider a run uses; under docker, the engine (or a skip saying why)."""
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return str(request.param)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize("fixture", FIXTURES)
def test_each_honest_scenario_resolves(
    provider: str, fixture: str, scenario: str, tmp_path: Path
) -> None:
    loaded = load_fixture(fixture)
    sample = run_fanout(loaded, provider, SCENARIOS[scenario](loaded), log_dir=tmp_path)
    check_scenario(scenario, loaded, sample, provider)
    reads = sample.store["inspect_swarm:reads"]
    assert (reads["provider"], reads["watched"]) == (provider, True)


@pytest.fixture(scope="module")
def two_shards(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    """json-events cut to two shards: no case needs more to show what it shows."""
    return small_fixture(tmp_path_factory.mktemp("fixture"))


@pytest.mark.parametrize("case", list(CASES))
def test_each_case_is_judged_as_it_must_be(
    provider: str, case: str, two_shards: Fixture, tmp_path: Path
) -> None:
    run_case(case, two_shards, provider, log_dir=tmp_path)


def test_the_small_fixture_keeps_its_shards_and_describes_the_data_with_an_answer(
    two_shards: Fixture,
) -> None:
    whole = load_fixture("json-events")
    assert [s.file for s in two_shards.shards] == [s.file for s in whole.shards[:2]]
    assert [s.expected for s in two_shards.shards] == [s.expected for s in whole.shards[:2]]
    assert two_shards.task.endswith(f"The records are about {whole.shards[0].expected} ms apart.\n")
    listed = [line for line in two_shards.task.splitlines() if line.strip().startswith("- shards/")]
    assert [line.split(":")[0].strip() for line in listed] == [
        f"- shards/{s.file}" for s in whole.shards[:2]
    ]
