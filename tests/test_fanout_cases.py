"""The fan-out verdict under each isolating provider, through the real ``swarm/fanout`` task on
the scripted model (the runs and what each must show: tests/fanout_cases.py).

Under ``bwrap`` and under ``docker`` (when an engine answers; ``bash
../shared/docker/start-engine.sh`` brings one up, as ``.ci/run`` does): the honest fan-out,
a retry, out-of-order replies and a lead that ends while its children run resolve (under bwrap
on both shipped fixtures, under docker each on one of them); each cheat of issue 40 fails the rule it must (data carried to the lead raw,
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


DOCKER = pytest.mark.timeout(300)  # eight containers and their watchers start and stop


def _provider(request: pytest.FixtureRequest, name: str) -> str:
    """The isolating provider a run uses; under docker, the engine (or a skip saying why)."""
    if name == "docker":
        request.getfixturevalue("docker_engine")
    return name


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=DOCKER)])
def provider(request: pytest.FixtureRequest) -> str:
    return _provider(request, str(request.param))


# every scenario on both fixtures under bwrap; under docker, where a run of eight children
# costs 15-20 s of container work, every scenario once, the fixtures taking turns (the
# provider's part of the verdict, the reads its watcher records, does not depend on the
# fixture's data, which bwrap runs cover)
SCENARIO_RUNS = [
    *(("bwrap", fixture, scenario) for fixture in FIXTURES for scenario in sorted(SCENARIOS)),
    *(("docker", FIXTURES[i % 2], scenario) for i, scenario in enumerate(sorted(SCENARIOS))),
]


@pytest.mark.parametrize(
    ("provider_name", "fixture", "scenario"),
    [
        pytest.param(*run, id="-".join(run), marks=[DOCKER] if run[0] == "docker" else [])
        for run in SCENARIO_RUNS
    ],
)
def test_each_honest_scenario_resolves(
    request: pytest.FixtureRequest,
    provider_name: str,
    fixture: str,
    scenario: str,
    tmp_path: Path,
) -> None:
    provider = _provider(request, provider_name)
    loaded = load_fixture(fixture)
    sample = run_fanout(loaded, provider, SCENARIOS[scenario](loaded), log_dir=tmp_path)
    check_scenario(scenario, loaded, sample, provider)
    reads = sample.store["inspect_swarm:reads"]
    assert (reads["provider"], reads["watched"]) == (provider, True)


def test_every_scenario_runs_under_each_provider_and_each_fixture_under_docker() -> None:
    for provider in ("bwrap", "docker"):
        assert {s for p, _, s in SCENARIO_RUNS if p == provider} == set(SCENARIOS)
    assert {f for p, f, _ in SCENARIO_RUNS if p == "docker"} == set(FIXTURES)


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
