"""The fan-out verdict under each isolating provider, through the real ``swarm/fanout`` task on
the scripted model (the runs and what each must show: tests/fanout_cases.py).

Under ``bwrap`` and under ``docker`` (when an engine answers; ``bash
../shared/docker/start-engine.sh`` brings one up, as ``.ci/run`` does): the honest fan-out,
a retry, out-of-order replies and a lead that ends while its children run resolve (under bwrap
on both shipped fixtures; under docker all but out-of-order replies, see ``SCENARIO_RUNS``); each
cheat of issue 40 fails the rule it must (data carried to the lead raw,
in base64 or in hex, the answer relayed in base64, the board, a reply in the read's own turn,
the artifact written first, a lead that shares its children's sandbox and reads their shards),
and each honest run that used to fail resolves (mmap, a sign-off, a task that describes the
data with the answer's number, a copied notice; two children in one sandbox are each credited
with their own read, and the run is unverified, not resolved).  Under docker, the cases whose
provider part differs from an honest run's (see ``Case.docker``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.plugins.scorers.fanout import Fixture, load_fixture
from tests.fanout_cases import (
    CASES,
    SCENARIOS,
    check_scenario,
    reads_as_honest,
    run_case,
    run_fanout,
    small_fixture,
)

FIXTURES = ("json-events", "csv-metrics")


DOCKER = [pytest.mark.timeout(300), pytest.mark.docker]  # eight containers and their watchers


def _provider(request: pytest.FixtureRequest, name: str) -> str:
    """The isolating provider a run uses; under docker, the engine (or a skip saying why)."""
    if name == "docker":
        request.getfixturevalue("docker_engine")
    return name


# Under docker a run costs 8 s (two shards) to 25 s (eight) of CPU in containers and compose
# processes, so a run goes there only for what the provider does in it: the reads its watcher
# records, a member's container made, kept or stopped.  Every scenario runs on both fixtures
# under bwrap.  Under docker: the honest run of eight children on one shipped fixture; a retry
# (a new member's container reads the shard again) and a lead ending while its children run
# (their containers outlive its own) on the other, cut to three shards (``csv-metrics-3``: a
# retry is the third child's), whose containers show what eight would.  ``out_of_order``
# differs from the honest run in the order of the messages only, which its bwrap runs check
# (``BWRAP_ONLY``).
BWRAP_ONLY = {"out_of_order"}
CUT = "csv-metrics-3"
"""csv-metrics cut to its first three shards (``small_fixture``)."""
SCENARIO_RUNS = [
    *(("bwrap", fixture, scenario) for fixture in FIXTURES for scenario in sorted(SCENARIOS)),
    ("docker", "json-events", "honest"),
    ("docker", CUT, "lead_ends_first"),
    ("docker", CUT, "retry"),
]


@pytest.mark.parametrize(
    ("provider_name", "fixture", "scenario"),
    [
        pytest.param(*run, id="-".join(run), marks=DOCKER if run[0] == "docker" else [])
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
    if fixture == CUT:
        loaded = small_fixture(tmp_path / "fixture", "csv-metrics", 3)
    else:
        loaded = load_fixture(fixture)
    sample = run_fanout(loaded, provider, SCENARIOS[scenario](loaded), log_dir=tmp_path)
    check_scenario(scenario, loaded, sample, provider)
    if scenario in BWRAP_ONLY:
        reads_as_honest(loaded, sample)
    reads = sample.store["inspect_swarm:reads"]
    assert (reads["provider"], reads["watched"]) == (provider, True)


def test_every_scenario_runs_under_bwrap_and_all_but_message_order_under_docker() -> None:
    assert sorted((p, f, s) for p, f, s in SCENARIO_RUNS if p == "bwrap") == sorted(
        ("bwrap", f, s) for f in FIXTURES for s in SCENARIOS
    )
    under_docker = [s for p, _, s in SCENARIO_RUNS if p == "docker"]
    assert sorted(under_docker) == ["honest", "lead_ends_first", "retry"]
    # the data of both shipped fixtures, one of them cut
    assert {f.removesuffix("-3") for p, f, _ in SCENARIO_RUNS if p == "docker"} == set(FIXTURES)


def test_the_cases_left_to_bwrap_differ_from_an_honest_run_in_their_messages_only() -> None:
    # which cases the docker runs skip (each one's bwrap run checks its reads are an honest
    # run's: ``reads_as_honest``); the rest each make the provider record something of its own
    assert sorted(name for name, case in CASES.items() if not case.docker) == [
        "board",
        "carrier base64",
        "carrier hex",
        "carrier raw",
        "honest described",
        "honest notice",
        "honest sign-off",
        "relay base64",
    ]


@pytest.fixture(scope="module")
def two_shards(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    """json-events cut to two shards: no case needs more to show what it shows."""
    return small_fixture(tmp_path_factory.mktemp("fixture"))


@pytest.mark.parametrize(
    ("provider_name", "case"),
    [
        *(pytest.param("bwrap", case, id=f"bwrap-{case}") for case in CASES),
        *(
            pytest.param("docker", case, id=f"docker-{case}", marks=DOCKER)
            for case, found in CASES.items()
            if found.docker
        ),
    ],
)
def test_each_case_is_judged_as_it_must_be(
    request: pytest.FixtureRequest,
    provider_name: str,
    case: str,
    two_shards: Fixture,
    tmp_path: Path,
) -> None:
    run_case(case, two_shards, _provider(request, provider_name), log_dir=tmp_path)


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
