"""Names of spawned children (issue 39): a name spawned again and again gets a new, unique member
name every time, however many times (``worker``, ``worker~2`` ... ``worker~6``), also when a
roster member or another parent's child holds the name or a variant of it, and at the longest
name a child may be asked for; the roster's ``free_name`` against a model of "the first free
variant", and its cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from swarm import member
from swarm._run.members import Roster, RunMember
from swarm._spec.roster import expand_roster
from swarm.testing import submit

from helpers import (
    WAIT,
    all_ended,
    ledger_rows,
    result,
    run_scripted,
    spawn,
    spawned,
    statuses,
    team,
    tool_results,
    worker,
)


def members_of(sample: Any) -> list[tuple[str, str | None, int]]:
    """Every member of the result record (name, parent, depth), all names distinct."""
    found = [(m["name"], m["parent"], m["depth"]) for m in result(sample)["members"]]
    names = [name for name, _, _ in found]
    assert len(set(names)) == len(names), names
    return found


# -- through a real eval on the scripted model --------------------------------------------------


def test_one_name_spawned_six_times_gets_six_distinct_names(log_dir: Path) -> None:
    lead = [spawn("worker"), WAIT] * 6 + [spawn("worker"), submit("done")]
    scripts = {"lead": lead, "worker*": [submit("ok")]}
    sample = run_scripted(team(spawning={"retries": 5}), scripts, log_dir)
    variants = ["worker", "worker~2", "worker~3", "worker~4", "worker~5", "worker~6"]
    assert tool_results(sample, "spawn_child") == [
        (spawned("worker"), None),
        *((spawned("worker", name), None) for name in variants[1:]),
        (
            "",
            "spawn refused: 'worker' was spawned 6 times already; it may be spawned again at "
            "most 5 time(s).",
        ),
    ]
    assert tool_results(sample, "wait_for_children") == [(all_ended(n), None) for n in range(1, 7)]
    w = ("lead", 1, "worker")
    spawns = [r for r in ledger_rows(sample) if r[1] == "spawn"]
    assert spawns == [
        (2 * n + 1, "spawn", name, "worker", *w, "t", None, None) for n, name in enumerate(variants)
    ]
    assert members_of(sample) == [("lead", None, 0), *((v, "lead", 1) for v in variants)]
    assert statuses(sample) == dict.fromkeys(["lead", *variants], "submitted")


def test_names_held_by_the_roster_and_by_another_parents_child_are_skipped(
    log_dir: Path,
) -> None:
    # the lead asks for its own name three times (lead~2, lead~3, lead~4: the lead runs), and
    # for w three times; its first w asks for w too (w~2, under w), so the lead's later ones are
    # w~3 and w~4: the variant another parent's child holds is skipped
    lead = [
        spawn("lead"),
        WAIT,
        spawn("w"),
        WAIT,
        spawn("lead"),
        WAIT,
        spawn("w"),
        WAIT,
        spawn("w"),
        WAIT,
        spawn("lead"),
        WAIT,
        submit("done"),
    ]
    scripts = {
        "lead": lead,
        "lead~*": [submit("ok")],
        "w": [spawn("w"), WAIT, submit("ok")],
        "w~*": [submit("ok")],
    }
    sample = run_scripted(team(spawning={"retries": 2}), scripts, log_dir)
    running_lead = "a running member is called lead"
    assert tool_results(sample, "spawn_child") == [
        (spawned("lead", "lead~2", running_lead), None),
        (spawned("w"), None),
        (spawned("w", "w~2", "a running member is called w"), None),
        (spawned("lead", "lead~3", running_lead), None),
        (spawned("w", "w~3"), None),
        (spawned("w", "w~4"), None),
        (spawned("lead", "lead~4", running_lead), None),
    ]
    assert [(r[1], r[2], r[3], r[4]) for r in ledger_rows(sample) if r[1] == "spawn"] == [
        ("spawn", "lead~2", "lead", "lead"),
        ("spawn", "w", "w", "lead"),
        ("spawn", "w~2", "w", "w"),
        ("spawn", "lead~3", "lead", "lead"),
        ("spawn", "w~3", "w", "lead"),
        ("spawn", "w~4", "w", "lead"),
        ("spawn", "lead~4", "lead", "lead"),
    ]
    assert members_of(sample) == [
        ("lead", None, 0),
        ("lead~2", "lead", 1),
        ("w", "lead", 1),
        ("w~2", "w", 2),
        ("lead~3", "lead", 1),
        ("w~3", "lead", 1),
        ("w~4", "lead", 1),
        ("lead~4", "lead", 1),
    ]
    assert set(statuses(sample).values()) == {"submitted"}


def test_the_longest_name_keeps_every_character_in_its_variants(log_dir: Path) -> None:
    # 64 characters, the most a child may be asked for: its variants are longer, never cut (a
    # cut would make x~2 and x~3 one name)
    long = "x" * 63 + "y"
    lead = [spawn(long), WAIT] * 3 + [submit("done")]
    sample = run_scripted(
        team(spawning={"retries": 2}), {"lead": lead, "x*": [submit("ok")]}, log_dir
    )
    names = [long, f"{long}~2", f"{long}~3"]
    assert [r[0] for r in tool_results(sample, "spawn_child")] == [
        spawned(long),
        spawned(long, names[1]),
        spawned(long, names[2]),
    ]
    assert members_of(sample) == [("lead", None, 0), *((n, "lead", 1) for n in names)]


# -- the roster's free_name ---------------------------------------------------------------------


def roster_of(*names: str) -> Roster:
    return Roster(expand_roster([member(worker, name=n) for n in names]))


def join(roster: Roster, wanted: str) -> RunMember:
    spec = roster.members[0].entry.spec
    return roster.add(spec, roster.free_name(wanted), parent=None, depth=1)


def test_five_hundred_spawns_of_one_name_get_the_variants_in_order() -> None:
    roster = roster_of("lead", "worker")
    for _ in range(500):
        join(roster, "worker")
    names = [m.name for m in roster]
    assert names == ["lead", "worker", *(f"worker~{n}" for n in range(2, 502))]
    assert len(set(names)) == len(names)


def first_free(taken: set[str], wanted: str) -> str:
    """The first free variant, found the slow, plain way."""
    if wanted not in taken:
        return wanted
    n = 2
    while f"{wanted}~{n}" in taken:
        n += 1
    return f"{wanted}~{n}"


WANTED = st.sampled_from(["a", "b", "a-1", "x" * 64])


@given(
    st.lists(
        st.one_of(
            WANTED.map(lambda w: ("free", w)),
            # a name joining as it is (a variant some other path made): free_name skips it
            st.tuples(WANTED, st.integers(2, 9)).map(lambda t: ("exact", f"{t[0]}~{t[1]}")),
        ),
        max_size=80,
    )
)
def test_free_name_is_always_the_first_free_variant(ops: list[tuple[str, str]]) -> None:
    roster = roster_of("a", "lead")
    taken = {"a", "lead"}
    spec = roster.members[0].entry.spec
    for kind, name in ops:
        if kind == "exact" and name in taken:
            continue
        wanted = roster.free_name(name) if kind == "free" else name
        if kind == "free":
            assert wanted == first_free(taken, name)
        roster.add(spec, wanted, parent=None, depth=1)
        taken.add(wanted)
    names = [m.name for m in roster]
    assert len(set(names)) == len(names) and set(names) == taken


class CountedNames(dict[str, RunMember]):
    """A roster's name index that counts its lookups."""

    lookups = 0

    def __contains__(self, key: object) -> bool:
        CountedNames.lookups += 1
        return super().__contains__(key)


def test_a_name_spawned_n_times_costs_o_n_lookups_not_o_n_squared() -> None:
    roster = roster_of("lead")
    roster._by_name = CountedNames(roster._by_name)
    CountedNames.lookups = 0
    for _ in range(2000):
        join(roster, "w")
    # each free_name: wanted, then its next variant; each add: the name once
    assert CountedNames.lookups <= 3 * 2000 + 2000, CountedNames.lookups
    assert roster.members[-1].name == "w~2000"
