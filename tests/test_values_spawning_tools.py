"""Spawning's tools, teardown and members, on real scripted evals: a cancelled child and an
orphan, a wait the stop releases, every text of the four tools, what each member is to each
other as the message log stamps it, which loops get the spawning tools, the tools outside a swarm
that spawns, and the roster (unique names, views kept until a change)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.agent import Agent, agent, as_tool, react
from inspect_ai.tool import ToolDef, ToolError

from swarm import Receipt, controller, hookimpl, member, swarm, swarm_on_continue, swarm_tools
from swarm.testing import Step, call, pause, submit

from helpers import (
    SLOW,
    WAIT,
    Recorder,
    all_ended,
    catalog,
    first_call,
    ledger_rows,
    metrics,
    noop,
    of,
    result,
    run_scripted,
    spawn,
    team,
    tool_results,
)

# -- teardown ----------------------------------------------------------------------------------


def test_a_cancelled_child_ends_at_once_and_an_orphan_after_its_call(log_dir: Path) -> None:
    # the lead cancels b (in a 5 s call: cancelled at once); a submits while its child g is in
    # a 2 s call: g is torn down (parent_ended), its call finishes, its next call is refused and
    # it ends "stopped"; g's receipt goes to a, which has ended, so nobody sees it
    lead = [
        spawn("b"),
        spawn("a"),
        call("cancel_child", name="b"),
        WAIT,
        call("read_messages"),
        submit("done"),
    ]
    scripts = {
        "lead": lead,
        "b": [SLOW],
        "a": [spawn("g"), submit("ok")],
        "g": [pause(2, call("list_children")), submit("never")],
    }
    sample = run_scripted(
        team(templates={"worker": member("swarm/worker", can_spawn=["worker"])}), scripts, log_dir
    )
    assert tool_results(sample, "cancel_child") == [
        ("Cancelling b; you get a receipt when it has ended.", None)
    ]
    rows = ledger_rows(sample)
    assert sorted(r[0] for r in rows) == list(range(1, 9))
    assert of(rows, "b") == [
        ("spawn", "b", "b", "lead", 1, "worker", "t", None, None),
        ("delete", "b", "b", "lead", 1, "worker", None, None, "cancelled"),
        ("end", "b", "b", "lead", 1, "worker", None, "cancelled", None),
    ]
    assert of(rows, "g") == [
        ("spawn", "g", "g", "a", 2, "worker", "t", None, None),
        ("delete", "g", "g", "a", 2, "worker", None, None, "parent_ended"),
        ("end", "g", "g", "a", 2, "worker", None, "stopped", None),
    ]
    assert [r[0] for r in of(rows, "a")] == ["spawn", "end"]
    # g is deleted when a ends, after a's end is written
    assert [r[0] for r in rows if r[2] == "a"][1] + 1 == [r[0] for r in rows if r[2] == "g"][1]
    log = sample.store["inspect_swarm:messages"]["messages"]
    assert sorted((m["recipient"], m["text"], m["seen"] is None) for m in log) == [
        ("a", "[Receipt] Your child g was stopped.", True),
        ("lead", "[Receipt] Your child a finished without replying to you.", False),
        ("lead", "[Receipt] Your child b was cancelled.", False),
    ]
    assert metrics(sample)["spawning"]["deleted"] == {"cancelled": 1, "parent_ended": 1}
    assert metrics(sample)["messages"] == {"messages": 0, "receipts": 3, "unseen": 1}
    assert tool_results(sample, "list_children") == [("You have no children.", None)]


def test_a_wait_for_children_returns_when_the_swarm_stops(log_dir: Path) -> None:
    # peer submits at 2 s and stops the swarm while the lead waits for k and j (in 8 s calls); x's
    # end at once does not end the wait: not every child has ended.  The lead's next call is
    # refused (stopped) and its end tears k and j down; the stop cancels them after its 2 s grace
    peer = member("swarm/worker", name="peer")
    longer = pause(8, submit("late"))
    scripts = {
        "lead": [spawn("x"), spawn("k"), spawn("j"), WAIT, submit("x")],
        "x": [submit("ok")],
        "k": [longer],
        "j": [longer],
        "peer": [pause(2, submit("42"))],
    }
    sample = run_scripted(team(others=(peer,), budget={"grace": 2}), scripts, log_dir)
    assert tool_results(sample, "wait_for_children") == [
        ("The swarm is stopping; 2 still running: k, j.", None)
    ]
    assert result(sample)["stop_reason"] == "submitted"
    assert [(m["name"], m["status"]) for m in result(sample)["members"]] == [
        ("lead", "stopped"),
        ("peer", "submitted"),
        ("x", "submitted"),
        ("k", "cancelled"),
        ("j", "cancelled"),
    ]
    assert [(r[0], r[7], r[8]) for r in of(ledger_rows(sample), "k")] == [
        ("spawn", None, None),
        ("delete", None, "parent_ended"),
        ("end", "cancelled", None),
    ]
    # their receipts reach a parent that has ended: never seen
    log = sample.store["inspect_swarm:messages"]["messages"]
    assert sorted(
        (m["kind"], m["sender"], m["recipient"], m["status"], m["text"], m["seen"])
        for m in log
        if m["about"] in ("k", "j")
    ) == [
        ("receipt", c, "lead", "cancelled", f"[Receipt] Your child {c} was cancelled.", None)
        for c in ("j", "k")
    ]


# -- the tools' own texts ------------------------------------------------------------------------


def test_the_tools_texts_before_during_and_after_children(log_dir: Path) -> None:
    recorder = Recorder()
    lead = [
        call("list_children"),
        WAIT,
        call("cancel_child", name="a"),
        spawn("a"),
        spawn("b"),
        call("list_children"),
        call("wait_for_children", timeout=0.5),
        call("cancel_child", name="zz"),
        call("cancel_child", name="lead"),  # its own name is no child's
        call("cancel_child", name="a"),
        call("cancel_child", name="b"),
        WAIT,
        call("list_children"),
        call("cancel_child", name="a"),
        call("wait_for_children", timeout=float("inf")),
        submit("done"),
    ]
    sample = run_scripted(team(recorder), {"lead": lead, "a": [SLOW], "b": [SLOW]}, log_dir)
    assert tool_results(sample, "list_children") == [
        ("You have no children.", None),
        ("- a [worker]: running; has not replied\n- b [worker]: running; has not replied", None),
        (
            "- a [worker]: ended (cancelled); has not replied\n"
            "- b [worker]: ended (cancelled); has not replied",
            None,
        ),
    ]
    assert recorder.replied == [
        ("a", "lead", "running"),
        ("b", "lead", "running"),
        ("a", "lead", "ended"),
        ("b", "lead", "ended"),
    ]
    assert tool_results(sample, "wait_for_children") == [
        ("You have no children.", None),
        ("2 still running after 1 s: a, b.", None),  # 0.5 s is clamped to 1
        (all_ended(2), None),
        ("", "timeout must be a finite number of seconds, got inf"),
    ]
    assert tool_results(sample, "cancel_child") == [
        ("", "you have no running child called 'a'."),
        ("", "you have no running child called 'zz'."),
        ("", "you have no running child called 'lead'."),
        ("Cancelling a; you get a receipt when it has ended.", None),
        ("Cancelling b; you get a receipt when it has ended.", None),
        ("", "you have no running child called 'a'."),
    ]


# -- relationships ------------------------------------------------------------------------------


def test_every_pair_is_stamped_with_what_the_sender_is_to_the_recipient(log_dir: Path) -> None:
    # lead and peer are roster members; b and a are the lead's children, g is a's.  Every send
    # happens in the first steps; every member stays 2 s more, so all recipients are running
    def to(*names: str) -> list[Step]:
        return [call("send_message", to=n, text=f"to {n}") for n in names]

    later = pause(2, submit("ok"))
    scripts = {
        "lead": [spawn("b"), spawn("a"), *to("a", "b", "peer"), WAIT, submit("done")],
        "b": [*to("lead"), later],
        "a": [spawn("g"), *to("b", "lead"), later],
        "g": [*to("a", "lead", "b", "peer"), submit("ok")],
        "peer": [*to("lead"), later],
    }
    templates = {"worker": member("swarm/worker", role="scout", can_spawn=["worker"])}
    solver = team(
        others=(member("swarm/worker", name="peer"),),
        templates=templates,
        channels=[{"name": "messages", "routes": "all"}],
        controller=controller("leaderless", stop_on_submission=False),
    )
    sample = run_scripted(solver, scripts, log_dir)
    log = sample.store["inspect_swarm:messages"]["messages"]
    sent = sorted(
        (m["sender"], m["recipient"], m["relationship"]) for m in log if m["kind"] == "message"
    )
    assert sent == [
        ("a", "b", "sibling"),
        ("a", "lead", "child"),
        ("b", "lead", "child"),
        ("g", "a", "child"),
        ("g", "b", "other"),
        ("g", "lead", "other"),
        ("g", "peer", "other"),
        ("lead", "a", "parent"),
        ("lead", "b", "parent"),
        ("lead", "peer", "other"),
        ("peer", "lead", "other"),
    ]
    members = result(sample)["members"]
    assert [(m["name"], m["role"], m["parent"], m["depth"]) for m in members] == [
        ("lead", None, None, 0),
        ("peer", None, None, 0),
        ("b", "scout", "lead", 1),
        ("a", "scout", "lead", 1),
        ("g", "scout", "a", 2),
    ]


# -- which loops get the spawning tools ----------------------------------------------------------


@agent
def delegating() -> Agent:
    """A member with a subagent that is wired to the swarm too."""
    helper = react(name="helper", description="Helps.", tools=[noop(), swarm_tools()])
    return react(tools=[as_tool(helper), swarm_tools()], on_continue=swarm_on_continue())


def tool_names(event: Any) -> list[str]:
    return [t.name for t in event.tools]


SPAWN_TOOLS = ["spawn_child", "list_children", "cancel_child", "wait_for_children"]
CHANNEL_TOOLS = ["send_message", "read_messages", "swarm_wait"]


def test_only_the_own_loop_of_a_member_that_may_spawn_gets_the_spawning_tools(
    log_dir: Path,
) -> None:
    scripts = {
        "lead": [call("helper", input="help me"), spawn("a"), WAIT, submit("done")],
        "lead/sub": [submit("helped")],
        "a": [submit("ok")],
    }
    solver = swarm(
        members=member(delegating, name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
    )
    sample = run_scripted(solver, scripts, log_dir)
    own = first_call(sample, "lead")
    sub = next(
        e
        for e in sample.events
        if e.event == "model" and any(m.role == "user" and m.text == "help me" for m in e.input)
    )
    assert tool_names(own) == ["helper", *CHANNEL_TOOLS, *SPAWN_TOOLS, "submit"]
    assert tool_names(sub) == ["noop", *CHANNEL_TOOLS, "submit"]
    assert tool_names(first_call(sample, "a")) == [*CHANNEL_TOOLS, "submit"]


def test_a_swarm_without_channels_offers_no_kernel_tools(log_dir: Path) -> None:
    from helpers import shm_worker

    sample = run_scripted(
        swarm(members=member(shm_worker, name="w")), {"w": [submit("42")]}, log_dir
    )
    assert tool_names(first_call(sample, "w")) == ["noop", "submit"]


@agent
def raw_spawner() -> Agent:
    """An agent that carries the spawning tools itself (not through ``swarm_tools()``)."""
    from swarm._run.spawn_tools import spawn_tools

    return react(tools=spawn_tools())


NOT_HERE = "spawning is only available to members of a swarm that allows it"


def test_the_spawning_tools_refuse_outside_a_swarm_that_allows_spawning(log_dir: Path) -> None:
    from swarm._run.spawn_tools import spawn_tools

    async def outside() -> list[str]:
        found = []
        args: list[dict[str, Any]] = [{"name": "a", "task": "t"}, {}, {"name": "a"}, {}]
        for tool, kwargs in zip(spawn_tools(), args, strict=True):
            with pytest.raises(ToolError) as info:
                await tool(**kwargs)
            found.append(info.value.message)
        return found

    assert anyio.run(outside) == [NOT_HERE] * 4
    # a member of a swarm that allows no spawning, with the tools in its own hands
    scripts = {"w": [call("list_children"), spawn("a"), call("wait_for_children"), submit("1")]}
    sample = run_scripted(swarm(members=member(raw_spawner, name="w")), scripts, log_dir)
    for name in ("list_children", "spawn_child", "wait_for_children"):
        assert tool_results(sample, name) == [("", NOT_HERE)]
    assert "inspect_swarm:spawns" not in sample.store


def test_the_spawning_tools_schemas() -> None:
    from swarm._run.spawn_tools import spawn_tools

    defs = [ToolDef(t) for t in spawn_tools()]
    # Inspect runs none of them alongside another call (wait_for_children says so itself)
    assert [(d.name, d.parallel) for d in defs] == [
        ("spawn_child", False),
        ("list_children", False),
        ("cancel_child", False),
        ("wait_for_children", False),
    ]
    [spawn_def] = [d for d in defs if d.name == "spawn_child"]
    assert spawn_def.parameters.required == ["name", "task"]
    assert spawn_def.parameters.properties["template"].default == ""
    [wait_def] = [d for d in defs if d.name == "wait_for_children"]
    assert wait_def.parameters.properties["timeout"].default == 0


def test_a_member_that_may_spawn_nothing_is_refused_every_template(log_dir: Path) -> None:
    # w carries the tools itself in a swarm that spawns (the lead may): it may spawn nothing
    solver = swarm(
        members=[
            member(raw_spawner, name="w"),
            member("swarm/worker", name="lead", can_spawn=["worker"]),
        ],
        templates={"worker": member("swarm/worker")},
        controller=controller("leaderless", stop_on_submission=False),
    )
    scripts = {"w": [spawn("a"), call("list_children"), submit("1")], "lead": [submit("2")]}
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "spawn_child") == [
        ("", "you may not spawn template '' (yours: none).")
    ]
    assert tool_results(sample, "list_children") == [("You have no children.", None)]
    assert ledger_rows(sample) == [(1, "refused", None, "a", "w", 1, "", "t", None, "template")]


class Dropbox:
    """A channel that carries receipts (keeps them) and cannot say whether a child replied."""

    receipts = True

    def __init__(self) -> None:
        self.texts: list[str] = []

    @hookimpl
    def swarm_deliver_receipt(self, view: Any, receipt: Receipt) -> bool:
        self.texts.append(receipt.text)
        return True


class DropboxPlugin:
    def __init__(self) -> None:
        self.channel = Dropbox()

    @hookimpl
    def swarm_register_channels(self, register: Any) -> None:
        register("dropbox", lambda: self.channel)


def test_list_children_says_nothing_of_a_reply_no_channel_knows(log_dir: Path) -> None:
    plugin = DropboxPlugin()
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        channels=["dropbox"],
        plugins=catalog(plugin),
    )
    lead = [spawn("a"), WAIT, call("list_children"), submit("done")]
    sample = run_scripted(solver, {"lead": lead}, log_dir)
    assert tool_results(sample, "list_children") == [("- a [worker]: ended (submitted)", None)]
    assert plugin.channel.texts == ["[Receipt] Your child a finished without replying to you."]


# -- the roster itself (what no run reaches: a taken name, the cached views) ----------------------


def test_the_roster_names_members_uniquely_and_keeps_its_views_until_a_change() -> None:
    from swarm._run.members import Roster
    from swarm._spec.roster import RosterEntry
    from swarm.records import MemberInfo

    assert Roster([]).views() == ()
    spec = member("swarm/worker", role="r0", delivery="poll")
    roster = Roster([RosterEntry(spec=spec, info=MemberInfo(name="a"))])
    assert (roster.free_name("a"), roster.free_name("b")) == ("a~2", "b")
    views = roster.views()
    assert roster.views() is views  # nothing changed
    b = roster.add(spec, "a~2", parent="a", depth=1)
    assert [v.name for v in roster.views()] == ["a", "a~2"]
    assert roster.free_name("a") == "a~3"
    c = roster.add(spec, "c", parent=None, depth=0, role="boss", delivery="notify")
    assert [(m.info.index, m.info.role, m.info.delivery) for m in (b, c)] == [
        (1, "r0", "poll"),
        (2, "boss", "notify"),
    ]
    with pytest.raises(ValueError, match=r"^member name 'c' is taken$"):
        roster.add(spec, "c", parent=None, depth=0)
    assert [m.name for m in roster] == ["a", "a~2", "c"] and len(roster) == 3
    assert (roster.get(None), roster.get("zz"), roster.get("c")) == (None, None, c)
    views = roster.views()
    assert (views[1].parent, views[1].depth, views[1].state, views[1].delivery) == (
        "a",
        1,
        "pending",
        "poll",
    )
    assert roster.any_pending()
    event = b.ended_event()
    assert not event.is_set()
    roster.mark_running(b, 1.5)
    roster.mark_running(c, 2.0)
    assert roster.running == 2
    assert roster.views() is not views
    assert (roster.views()[1].state, roster.views()[1].started) == ("running", 1.5)
    roster.mark_ended(b, "submitted", 3.0)
    assert roster.running == 1 and event.is_set()
    assert (b.view.state, b.view.status, b.view.ended, b.view.submitted) == (
        "ended",
        "submitted",
        3.0,
        True,
    )
    roster.mark_ended(c, "errored", 3.5)  # its event made after its end: set at once
    assert roster.running == 0 and c.ended_event().is_set()
    assert roster.any_pending()  # a
    roster.mark_running(roster["a"], 4.0)
    assert not roster.any_pending()


def test_a_new_member_starts_blank() -> None:
    from swarm._run.members import RunMember
    from swarm._spec.roster import RosterEntry
    from swarm.records import MemberInfo

    m = RunMember(RosterEntry(spec=member("swarm/worker"), info=MemberInfo(name="m", depth=1)))
    blank = [
        "status", "started", "ended", "error", "exception", "first_pass_time", "verified",
        "scope", "agent_state", "delivery", "tap", "task", "done",
    ]  # fmt: skip
    assert [getattr(m, k) for k in blank] == [None] * len(blank)
    assert (m.state, m.gate_checks, m.gate_passes, m.torn_down) == ("pending", 0, 0, False)
    assert re.fullmatch(r"swarm-member-[0-9A-Za-z]{22}", m.span_id)
    assert m.name == "m" and m.view.depth == 1


@pytest.mark.parametrize(
    ("attribute", "value", "shown"),
    [
        ("info", None, ("name", "z")),
        ("state", "running", ("state", "running")),
        ("status", "stopped", ("status", "stopped")),
        ("started", 1.25, ("started", 1.25)),
        ("ended", 2.5, ("ended", 2.5)),
        ("delivery", "notify", ("delivery", "notify")),
        ("gate_checks", 3, ("gate_checks", 3)),
        ("gate_passes", 2, ("gate_passes", 2)),
    ],
)
def test_a_members_view_follows_every_change_of_what_it_shows(
    attribute: str, value: Any, shown: tuple[str, Any]
) -> None:
    from swarm._run.members import Roster
    from swarm._spec.roster import RosterEntry
    from swarm.records import MemberInfo

    spec = member("swarm/worker", delivery="poll")
    roster = Roster([RosterEntry(spec=spec, info=MemberInfo(name="m"))])
    m = roster["m"]
    before = m.view, roster.views()
    assert m.view is before[0]  # kept until a change
    setattr(m, attribute, MemberInfo(name="z") if attribute == "info" else value)
    key, expected = shown
    assert getattr(m.view, key) == expected
    assert getattr(roster.views()[0], key) == expected


def test_the_peak_of_live_children_counts_the_ends_between_spawns() -> None:
    # two run, one ends, two more start: three at once at most (a refusal or a deletion is no
    # end; the ledger's figures count each op by its cause)
    from swarm._report.spawns import SpawnEntry, spawn_figures

    def entry(seq: int, op: Any, **fields: Any) -> SpawnEntry:
        # every field given: the entry is the record's schema, which has no defaults
        fields = {"member": f"c{seq}", "task": None, "status": None, "reason": None, **fields}
        return SpawnEntry(
            seq=seq, time=float(seq), op=op, requested="c", parent="lead", depth=1,
            template="worker", **fields,
        )  # fmt: skip

    entries = [
        entry(1, "spawn"),
        entry(2, "spawn"),
        entry(3, "end", status="submitted"),
        entry(4, "refused", member=None, reason="max_live"),
        entry(5, "delete", reason="cancelled"),
        entry(6, "spawn"),
        entry(7, "spawn"),
    ]
    assert spawn_figures(entries) == {
        "spawns": 4,
        "refused": {"max_live": 1},
        "ended": {"submitted": 1},
        "deleted": {"cancelled": 1},
        "max_live_children": 3,
    }
