"""The roster can grow while a swarm runs: a member that joins gets a free name, its parent and
depth, the next index, its own account, and (with a split budget) spends from its parent's
share; the swarm's view and every later preamble count it."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.model import ModelUsage

from swarm import Budget, MemberLimits, SwarmView, member, plugin_catalog
from swarm._accounts.accounts import Accounts
from swarm._accounts.caps import Share, SwarmCaps
from swarm._accounts.limit_errors import ShareExhausted
from swarm._run.engine import SwarmRun
from swarm._run.members import Roster
from swarm._spec.roster import expand_roster
from swarm._spec.topology import swarm_spec

from helpers import worker


def usage(tokens: int) -> ModelUsage:
    return ModelUsage(input_tokens=tokens, output_tokens=0, total_tokens=tokens)


def test_a_joining_member_gets_a_free_name_its_parent_depth_and_index() -> None:
    roster = Roster(expand_roster([member(worker, count=2)]))
    spec = roster["worker-1"].entry.spec
    child = roster.add(spec, roster.free_name("helper"), parent="worker-1", depth=1)
    again = roster.add(spec, roster.free_name("helper"), parent="worker-1", depth=1)
    third = roster.add(spec, roster.free_name("helper"), parent="worker-1", depth=1)
    assert [m.name for m in roster] == ["worker-1", "worker-2", "helper", "helper~2", "helper~3"]
    assert (child.info.index, child.info.parent, child.info.depth) == (2, "worker-1", 1)
    assert (again.info.index, third.info.index) == (3, 4)
    assert [v.name for v in roster.views()] == [m.name for m in roster]
    with pytest.raises(ValueError, match="'helper' is taken"):
        roster.add(spec, "helper", parent=None, depth=0)


def test_a_member_view_follows_every_change_without_a_refresh() -> None:
    roster = Roster(expand_roster([member(worker)]))
    m = roster["worker"]
    assert m.view.state == "pending"
    before = roster.views()
    assert roster.views() is before  # unchanged: the same snapshot
    roster.mark_running(m, 1.5)
    assert (m.view.state, m.view.started) == ("running", 1.5)
    assert roster.views() == (m.view,) and roster.views()[0].state == "running"
    m.gate_checks += 1
    assert m.view.gate_checks == 1
    roster.mark_ended(m, "submitted", 2.0)
    assert (m.view.state, m.view.status, m.view.ended, m.view.submitted) == (
        "ended",
        "submitted",
        2.0,
        True,
    )


def test_a_joining_member_spends_from_its_parents_share() -> None:
    accounts = Accounts(Budget(tokens=100, split="equal"))
    accounts.caps = SwarmCaps(tokens=100)
    for name in ("a", "b"):
        accounts.add_member(name, MemberLimits())
    accounts.shares = {"a": Share(tokens=50), "b": Share(tokens=50)}
    accounts.add_member("a-child", MemberLimits(), share_of="a")
    accounts.add_member("a-grandchild", MemberLimits(), share_of="a-child")
    assert accounts.share_owner == {"a": "a", "b": "b", "a-child": "a", "a-grandchild": "a"}
    assert accounts.charge("a-child", usage(20), metered=usage(20)) is None
    assert accounts.charge("a-grandchild", usage(20), metered=usage(20)) is None
    # a has used nothing itself, but its share (50) now holds 40 of its descendants' tokens
    error = accounts.charge("a", usage(10), metered=usage(10))
    assert isinstance(error, ShareExhausted) and (error.value, error.limit) == (50, 50)
    assert accounts.charge("b", usage(49), metered=usage(49)) is None
    assert accounts.swarm.tokens == 99


def test_the_view_and_the_preamble_count_a_member_who_joined() -> None:
    catalog = plugin_catalog()
    spec = swarm_spec(catalog, members=member(worker, count=2))
    run = SwarmRun(spec, catalog, [])

    async def main() -> None:
        lead = run.roster["worker-1"]
        child = run.join(lead.entry.spec, "worker-1", parent="worker-1")
        assert child.name == "worker-1~2"
        view = run.view()
        assert [m.name for m in view.members] == ["worker-1", "worker-2", "worker-1~2"]
        assert (view.member("worker-1~2").parent, view.member("worker-1~2").depth) == (
            "worker-1",
            1,
        )
        assert "worker-1~2" in run.accounts.members
        assert run.preamble(child).startswith(
            "You are worker-1~2, a child member spawned by worker-1 to do the task above, one "
            "of 3 agents in a swarm"
        )
        assert run.preamble(run.roster["worker-2"]).startswith(
            "You are worker-2, one of 3 agents in a swarm working on this task"
        )

    anyio.run(main)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["add", "run", "end", "gate", "look"]), st.integers(0, 9)))
)
def test_the_kept_views_are_every_members_view_after_any_changes(
    steps: list[tuple[str, int]],
) -> None:
    # the roster keeps its views up to date from the members that changed; after any changes,
    # looked at or not in between, they are what every member's view is now, and the view's
    # name index and state counts are what a scan of them finds
    roster = Roster(expand_roster([member(worker, count=2)]))
    spec = roster["worker-1"].entry.spec
    clock = 0.0
    for op, pick in steps:
        members = list(roster)
        m = members[pick % len(members)]
        clock += 1.0
        if op == "add":
            roster.add(spec, roster.free_name("helper"), parent=m.name, depth=1)
        elif op == "run" and m.state == "pending":
            roster.mark_running(m, clock)
        elif op == "end" and m.state == "running":
            roster.mark_ended(m, "submitted" if pick % 2 else "error", clock)
        elif op == "gate":
            m.gate_checks += 1
        elif op == "look":
            roster.views()
    views = roster.views()
    assert views == tuple(m.view for m in roster)
    kept = SwarmView(members=views, time=clock, positions=roster.positions, counts=roster.counts())
    scanned = SwarmView(members=views, time=clock)
    for state in ("pending", "running", "ended"):
        assert kept.count(state) == scanned.count(state) == len(scanned.in_state(state))
    assert roster.running == kept.count("running")
    assert roster.any_pending() == (kept.count("pending") > 0)
    for v in views:
        assert kept.member(v.name) is scanned.member(v.name) is v


def test_a_view_does_not_find_a_member_who_joined_after_it() -> None:
    roster = Roster(expand_roster([member(worker)]))
    spec = roster["worker"].entry.spec
    before = SwarmView(members=roster.views(), time=0.0, positions=roster.positions)
    roster.add(spec, "late", parent="worker", depth=1)
    assert SwarmView(members=roster.views(), time=1.0, positions=roster.positions).member("late")
    with pytest.raises(KeyError, match=r"no member 'late'; the roster is \['worker'\]"):
        before.member("late")
