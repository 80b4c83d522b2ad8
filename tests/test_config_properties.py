"""Property tests of configuration: random topologies and budgets, with NaN, infinities,
negative, zero, fractional and huge numbers, booleans and wrong types (strings, lists, dicts,
None) mixed in anywhere a value is taken.

Each topology is either refused when the swarm is built, with a ``ConfigError`` whose message
starts with the path of a field, or it is accepted; an accepted one runs on the scripted model
and writes its three records (``inspect_swarm:result``, ``:ledger``, ``:metrics``) as valid
JSON, with no NaN or Infinity anywhere in them or in the swarm's own events.  The only sample
errors allowed are the budget checks the docs say need the running sample (prices for a cost
cap, a cap to split), and those still write all three records.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st
from inspect_ai.event import InfoEvent

from swarm import ConfigError, swarm
from swarm.testing import call, run_eval, scripted_model, submit

# -- values ------------------------------------------------------------------------------------

SPECIAL_NUMBERS = [math.nan, math.inf, -math.inf, 0, 0.0, -0.0, -1, -1e-9, 0.5, 1.5, 10**30]
SPECIAL_NUMBERS += [1e308, 5e-324, 2**63]

WRONG = st.one_of(
    st.sampled_from(SPECIAL_NUMBERS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.sampled_from(["1e5", "60", "nan", "inf", ""]),
    st.lists(st.integers(-2, 3), max_size=3),
    st.dictionaries(st.sampled_from(["a", "name", "1"]), st.integers(0, 2), max_size=2),
)
"""Values that may or may not fit a field: most should be refused."""


def either(good: st.SearchStrategy[Any], wrong_in: int, *wrong: Any) -> st.SearchStrategy[Any]:
    """``good`` most of the time; about once in ``wrong_in`` draws a ``WRONG`` value or one of
    ``wrong`` (values of the right type that the field refuses)."""
    bad = st.one_of(WRONG, st.sampled_from(wrong)) if wrong else WRONG
    # the wrong branch is the last, not the first: Hypothesis favours the smallest choices
    return st.integers(0, wrong_in - 1).flatmap(lambda i: bad if i == wrong_in - 1 else good)


def some_of(fields: dict[str, st.SearchStrategy[Any]], wrong_in: int) -> st.SearchStrategy[Any]:
    """A mapping holding some of ``fields``; rarely not a mapping, or one with an unknown key."""
    known = st.fixed_dictionaries({}, optional=fields)
    return either(known, wrong_in * 2, {"bogus_key": 1}, {"time": 1, "tme": 2})


def topologies(w: int) -> st.SearchStrategy[dict[str, Any]]:
    """Topology mappings, as a file or ``-S`` would give them; about one value in ``w`` is
    wrong (or extreme)."""

    def pick(good: list[Any], *wrong: Any) -> st.SearchStrategy[Any]:
        """One of ``good`` (extremes first: Hypothesis favours the first), rarely a wrong one."""
        return either(st.sampled_from(good), w, *wrong)

    limits = some_of(
        {
            "token": pick([10**30, 0, 2.0, 1, 10**6]),
            "cost": pick([1e308, 0, 5e-324, 0.01]),
            "turn": pick([2**63, 0, 4.0, 1]),
            "message": pick([10**30, 0, 2, 50]),
            "time": pick([1e308, 5e-324, 0, 30]),
        },
        w,
    )
    member = st.fixed_dictionaries(
        {"factory": pick(["react", "swarm/worker"], "nosuch/agent")},
        optional={
            "count": pick([1, 2, 3, 2.0], 0, 1.5),
            "name": pick(["lead", "x.1"], "init", "a b", ""),
            "role": pick(["checks", ""]),
            "limits": limits,
            "delivery": pick(["notify", "poll", None], "push"),
            "args": pick([{}, {"prompt": "Be brief."}], {"bogus": 1}),
        },
    )
    final = pick(["first", "last"], "lastt")
    controller = either(
        st.one_of(
            st.sampled_from([None, "leaderless", "quiescence", "verified"]),
            st.fixed_dictionaries(
                {"name": st.just("leaderless")},
                optional={"stop_on_submission": pick([True, False], 0, "no"), "final": final},
            ),
            st.fixed_dictionaries(
                {"name": st.just("quiescence")},
                optional={"idle_seconds": pick([1e308, 5e-324, 0.001, 60]), "final": final},
            ),
            st.fixed_dictionaries(
                {"name": st.just("verified")},
                optional={"verifier": pick(["task", "match"], "nosuch", "")},
            ),
        ),
        w,
        "nosuch",
        {"name": "leaderless", "stop": True},
    )
    shared_memory = st.fixed_dictionaries(
        {"name": st.just("shared_memory")},
        optional={
            "rate": either(
                st.one_of(
                    st.none(),
                    st.tuples(pick([10**30, 1, 5]), pick([1e308, 5e-324, 1, 60])).map(list),
                ),
                w,
            ),
            "max_wait": pick([1, 60, 3600], 0.5, 3601),
            "max_files": pick([1, 100, 10_000], 10_001),
            "max_file_bytes": pick([1, 16_000]),
            "max_file_lines": pick([1, 1000]),
            "max_board_bytes": pick([16_000, 400_000, 16_777_216], 16_777_217),
        },
    )
    filesystem = st.fixed_dictionaries(
        {"name": st.just("filesystem")},
        optional={"shared": pick(["/shared", "/team/"]), "scratch": pick(["/s/{member}"], "/s")},
    )
    channels = either(
        st.one_of(
            st.lists(
                st.one_of(
                    shared_memory, filesystem, st.sampled_from(["shared_memory", "filesystem"])
                ),
                max_size=2,
            ),
            st.none(),
        ),
        w,
        "nosuch",
    )
    budget = some_of(
        {
            "cost": pick([1e308, 5e-324, 2.0]),
            "tokens": pick([10**30, 1, 5000.0, 10**6]),
            "time": pick([1e308, 5e-324, 30]),
            "reserve": pick([0.99, 0, 0.05], 1),
            "split": either(
                st.one_of(
                    st.sampled_from(["pool", "equal"]),
                    st.lists(pick([1e308, 5e-324, 1, 2.5]), max_size=4),
                ),
                w,
                "halves",
            ),
            "grace": pick([1e308, 0, 5e-324, 10]),
        },
        w,
    )
    return st.fixed_dictionaries(
        {
            "members": either(st.lists(member, min_size=1, max_size=3), w * 3, []),
            "controller": controller,
            "channels": channels,
            "budget": st.one_of(budget, st.none()),
        }
    )


# -- the property --------------------------------------------------------------------------------

PATH = r"(members|controller|channels|budget|config)(\[\d+\]|\.[A-Za-z_]+)*"
FIELD_FIRST = re.compile(rf"^(invalid )?{PATH}:(\s|$)")


def build(topology: dict[str, Any]) -> Any | None:
    """The swarm, or ``None`` when refused (after checking the message names a field)."""
    try:
        solver = swarm(config=topology)
    except ConfigError as ex:
        note(f"refused: {ex}")
        assert FIELD_FIRST.match(str(ex)), f"no field path first: {ex!r}"
        event("refused at " + str(ex).removeprefix("invalid ").split(":")[0].split("[")[0])
        return None
    event("accepted")
    return solver


def check_json(value: object, what: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError) as ex:
        raise AssertionError(f"{what} is not valid JSON: {ex}: {value!r}") from None


CHECKED_AT_START = re.compile(r"^(budget\.(cost|split|tokens)|members\[\d+\]\.limits\.cost): ")
"""The checks that need the running sample: prices (for a cost cap or a member's cost limit),
and a cap to split (it may come from the sample's limits)."""


def run_and_check(solver: Any, topology: dict[str, Any], log_dir: Path) -> str:
    """Run ``solver`` on the scripted model; check its records. Returns the sample's outcome."""
    channels = json.dumps(topology.get("channels"))
    steps = [submit("42")]
    if "shared_memory" in channels:
        steps.insert(
            0, call("shared_memory", command="create", path="/shared_memory/n.md", file_text="1")
        )
    log = run_eval(solver, model=scripted_model({"*": steps}), log_dir=log_dir)
    assert log.samples, log.error
    sample = log.samples[0]
    outcome = "ran"
    if sample.error is not None:
        # the checks that need the sample (prices, the caps to split) end it at once
        assert CHECKED_AT_START.match(sample.error.message), sample.error.message
        outcome = "refused when the sample started"
    else:
        assert log.status == "success", log.error
    for key in ("result", "ledger", "metrics"):
        assert f"inspect_swarm:{key}" in sample.store, f"no {key} record ({outcome})"
        check_json(sample.store[f"inspect_swarm:{key}"], f"inspect_swarm:{key}")
    for logged in sample.events:
        if isinstance(logged, InfoEvent) and logged.source == "inspect_swarm":
            check_json(logged.data, "an inspect_swarm event")
    return outcome


@settings(
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(topology=topologies(3))
def test_random_topologies_are_refused_with_a_field_or_built(topology: dict[str, Any]) -> None:
    """Construction only (cheap): many topologies, about a third of the values wrong.  Each
    part is also built alone, so that a part checked late is not always hidden behind an
    earlier part's refusal."""
    build(topology)
    for part in ("controller", "channels", "budget"):
        build({"members": {"factory": "react"}, part: topology[part]})


@settings(
    max_examples=16,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,  # refused topologies are checked, then skipped
    ],
)
@given(topology=topologies(6))
def test_accepted_topologies_run_and_write_valid_records(
    topology: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A few whole evals (a fixed, derandomized set): mostly plausible values, some wrong or
    extreme ones (0, 1e308, 10**30, 5e-324...); refused topologies are checked and skipped, so
    every counted example runs."""
    solver = build(topology)
    assume(solver is not None)
    outcome = run_and_check(solver, topology, tmp_path_factory.mktemp("logs"))
    event(outcome)


EXTREMES = [
    {"budget": {"time": 1e308, "grace": 1e308, "tokens": 10**30, "reserve": 0.99}},
    {"budget": {"time": 5e-324, "grace": 5e-324}},
    {"budget": {"tokens": 10**30, "split": [1e308, 1e300]}},
    {"budget": {"tokens": 1, "grace": 0}},
    {
        "channels": [{"name": "shared_memory", "rate": [10**30, 1e308], "max_wait": 3600}],
        "controller": {"name": "quiescence", "idle_seconds": 5e-324},
    },
]


@pytest.mark.parametrize("extra", EXTREMES, ids=lambda e: json.dumps(e)[:60])
def test_extreme_but_valid_values_run_and_write_valid_records(
    extra: dict[str, Any], tmp_path: Path
) -> None:
    """What the random runs meet rarely: accepted extremes of the budget and the channel."""
    topology = {"members": {"factory": "swarm/worker", "count": 2}, **extra}
    assert run_and_check(swarm(config=topology), topology, tmp_path) == "ran"
