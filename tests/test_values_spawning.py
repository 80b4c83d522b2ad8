"""Spawning pinned at its boundaries, on real scripted evals: every limit at its value and one
past it (the refusal the model reads, what was counted, the records), names and retries, the
refusals made before any plugin decides and a plugin's own decisions, depth and parent of a
grandchild in every record, receipts, and the spawn ledger with its metrics, field by field.

The run's own counts are read through a plugin (``helpers.Recorder``) that records every
``SpawnRequest`` and every ``Receipt`` and decides nothing: what the kernel's default decision
was given.  tests/test_values_spawning_tools.py has the tools, teardown and the roster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from swarm import SpawnDecision, SpawnRequest, hookimpl, member, swarm
from swarm.testing import call, fail, pause, submit

from helpers import (
    SLOW,
    WAIT,
    Recorder,
    all_ended,
    catalog,
    first_call,
    ledger_rows,
    metrics,
    of,
    result,
    run_scripted,
    spawn,
    spawned,
    team,
    tool_results,
)


def requests(recorder: Recorder) -> list[tuple[Any, ...]]:
    """Every request as the decision saw it (its time checked: a float from 0)."""
    assert all(isinstance(r.time, float) and r.time > 0 for r in recorder.requests)
    return [attrs.astuple(attrs.evolve(r, time=0.0)) for r in recorder.requests]


def req(
    parent: str,
    name: str,
    depth: int,
    *,
    task: str = "t",
    template: str = "worker",
    children: int = 0,
    live_children: int = 0,
    live_members: int = 1,
    spawns: int = 0,
    live_with_name: bool = False,
    respawns: int = 0,
) -> tuple[Any, ...]:
    return attrs.astuple(
        SpawnRequest(
            parent=parent,
            name=name,
            template=template,
            task=task,
            depth=depth,
            time=0.0,
            children=children,
            live_children=live_children,
            live_members=live_members,
            spawns=spawns,
            live_with_name=live_with_name,
            respawns=respawns,
        )
    )


# -- the limits: each at exactly its value, and one past it -------------------------------------


def test_max_live_admits_the_child_that_reaches_it_and_refuses_the_next(log_dir: Path) -> None:
    # max_live 2: the lead and a run (2, admitted at 1); b would make 3 (refused at 2); once a
    # has ended (cancelled) b is admitted again, counted at 1: ended members do not count.
    # b's 2 s keep the lead's second wait waiting (it must not return on the first wait's end)
    recorder = Recorder()
    lead = [spawn("a"), spawn("b"), call("cancel_child", name="a"), WAIT, spawn("b"), WAIT]
    sample = run_scripted(
        team(recorder, spawning={"max_live": 2}),
        {"lead": [*lead, submit("done")], "a": [SLOW], "b": [pause(2, submit("ok"))]},
        log_dir,
    )
    refusal = "spawn refused: 2 members are running, the most at once in this swarm."
    assert tool_results(sample, "spawn_child") == [
        (spawned("a"), None),
        ("", refusal),
        (spawned("b"), None),
    ]
    assert tool_results(sample, "wait_for_children") == [(all_ended(1), None), (all_ended(2), None)]
    assert requests(recorder) == [
        req("lead", "a", 1),
        req("lead", "b", 1, children=1, live_children=1, live_members=2, spawns=1),
        req("lead", "b", 1, children=1, live_members=1, spawns=1),
    ]
    assert recorder.views == [("lead",), ("lead", "a"), ("lead", "a")]
    assert ledger_rows(sample) == [
        (1, "spawn", "a", "a", "lead", 1, "worker", "t", None, None),
        (2, "refused", None, "b", "lead", 1, "worker", "t", None, "max_live"),
        (3, "delete", "a", "a", "lead", 1, "worker", None, None, "cancelled"),
        (4, "end", "a", "a", "lead", 1, "worker", None, "cancelled", None),
        (5, "spawn", "b", "b", "lead", 1, "worker", "t", None, None),
        (6, "end", "b", "b", "lead", 1, "worker", None, "submitted", None),
    ]
    assert list(metrics(sample)["spawning"].items()) == [
        ("spawns", 2),
        ("refused", {"max_live": 1}),
        ("ended", {"cancelled": 1, "submitted": 1}),
        ("deleted", {"cancelled": 1}),
        ("max_live_children", 1),  # a ended before b began
    ]


def test_max_spawns_counts_every_spawn_of_the_swarm_grandchildren_included(log_dir: Path) -> None:
    # max_spawns 2: a (the 1st), a's g (the 2nd, at the limit) are admitted; the lead's b would
    # be the 3rd, though the lead has spawned only one child and only the lead runs
    recorder = Recorder()
    sample = run_scripted(
        team(recorder, spawning={"max_spawns": 2}),
        {
            "lead": [spawn("a"), WAIT, spawn("b"), submit("done")],
            "a": [spawn("g"), WAIT, submit("ok")],
            "g": [submit("ok")],
        },
        log_dir,
    )
    refusal = "spawn refused: this swarm has spawned 2 children, the most it may."
    assert tool_results(sample, "spawn_child") == [
        (spawned("a"), None),
        (spawned("g"), None),
        ("", refusal),
    ]
    assert requests(recorder) == [
        req("lead", "a", 1),
        req("a", "g", 2, live_members=2, spawns=1),
        req("lead", "b", 1, children=1, spawns=2),
    ]
    assert of(ledger_rows(sample), "b") == [
        ("refused", None, "b", "lead", 1, "worker", "t", None, "max_spawns")
    ]
    assert metrics(sample)["spawning"]["refused"] == {"max_spawns": 1}
    assert metrics(sample)["spawning"]["max_live_children"] == 2  # a and g at once


def test_max_children_counts_one_parents_children_respawns_included(log_dir: Path) -> None:
    # max_children 2: a, then a again (a~2: a respawn counts) are admitted; b would be the 3rd.
    # a's own child g is a's, not the lead's, and is admitted though the lead has one
    recorder = Recorder()
    lead = [spawn("a"), WAIT, spawn("a"), WAIT, spawn("b"), submit("done")]
    sample = run_scripted(
        team(recorder, spawning={"max_children": 2}),
        {"lead": lead, "a": [spawn("g"), WAIT, submit("ok")], "g": [submit("ok")]},
        log_dir,
    )
    refusal = "spawn refused: you have spawned 2 children, the most one member may."
    assert tool_results(sample, "spawn_child") == [
        (spawned("a"), None),
        (spawned("g"), None),
        (spawned("a", "a~2"), None),
        ("", refusal),
    ]
    assert requests(recorder) == [
        req("lead", "a", 1),
        req("a", "g", 2, live_members=2, spawns=1),
        req("lead", "a", 1, children=1, spawns=2, respawns=1),
        req("lead", "b", 1, children=2, spawns=3),
    ]
    assert of(ledger_rows(sample), "b") == [
        ("refused", None, "b", "lead", 1, "worker", "t", None, "max_children")
    ]


def test_max_depth_admits_a_grandchild_at_it_and_refuses_one_deeper(log_dir: Path) -> None:
    # the default max_depth 2: lead (0) -> a (1) -> g (2) are admitted; g's gg (3) is refused.
    # g replies, then its next call errors: its parent gets a receipt all the same
    recorder = Recorder()
    scripts = {
        "lead": [spawn("a", "Task A."), WAIT, call("read_messages"), submit("done")],
        "a": [
            spawn("g", "Task G."),
            WAIT,
            call("read_messages"),
            call("send_message", to="parent", text="a says"),
            submit("ok"),
        ],
        "g": [
            spawn("gg", "Task GG."),
            call("send_message", to="parent", text="g says"),
            fail("boom"),
        ],
    }
    sample = run_scripted(team(recorder), scripts, log_dir)
    refusal = "spawn refused: a child of yours would be at depth 3; the deepest allowed is 2."
    assert tool_results(sample, "spawn_child")[2] == ("", refusal)
    assert requests(recorder) == [
        req("lead", "a", 1, task="Task A."),
        req("a", "g", 2, task="Task G.", live_members=2, spawns=1),
        req("g", "gg", 3, task="Task GG.", live_members=3, spawns=2),
    ]
    # depth and parent in every record: the spawn ledger...
    assert ledger_rows(sample) == [
        (1, "spawn", "a", "a", "lead", 1, "worker", "Task A.", None, None),
        (2, "spawn", "g", "g", "a", 2, "worker", "Task G.", None, None),
        (3, "refused", None, "gg", "g", 3, "worker", "Task GG.", None, "max_depth"),
        (4, "end", "g", "g", "a", 2, "worker", None, "errored", None),
        (5, "end", "a", "a", "lead", 1, "worker", None, "submitted", None),
    ]
    # ... the result record (in the order they joined) ...
    members = result(sample)["members"]
    assert [(m["name"], m["parent"], m["depth"], m["status"]) for m in members] == [
        ("lead", None, 0, "submitted"),
        ("a", "lead", 1, "submitted"),
        ("g", "a", 2, "errored"),
    ]
    assert [m["name"] for m in sample.store["inspect_swarm:ledger"]["members"]] == [
        "lead",
        "a",
        "g",
    ]
    assert [m["name"] for m in metrics(sample)["members"]] == ["lead", "a", "g"]
    # ... the message log (who sent what to whom, as what) ...
    log = sample.store["inspect_swarm:messages"]["messages"]
    assert [
        (m["seq"], m["kind"], m["sender"], m["recipient"], m["relationship"], m["text"])
        for m in log
    ] == [
        (1, "message", "g", "a", "child", "g says"),
        (2, "receipt", "g", "a", "child", "[Receipt] Your child g errored (ScriptedModelError)."),
        (3, "message", "a", "lead", "child", "a says"),
    ]
    assert [(m["about"], m["status"], m["size"]) for m in log] == [
        (None, None, 6),
        ("g", "errored", 52),
        (None, None, 6),
    ]
    assert [m["seen"]["via"] for m in log] == ["read", "notice", "read"]
    assert all(isinstance(m["time"], float) and 0 < m["time"] < m["seen"]["time"] for m in log)
    # ... and the preamble and input of the grandchild: its task, and who spawned it
    first = first_call(sample, "g")
    assert [m.text for m in first.input[:1]] == ["Task G."]
    assert first.input[1].text.startswith(
        "You are g, a child member spawned by a to do the task above, one of 3 agents"
    )
    assert [(r.child, r.parent, r.status, r.error_type, r.text) for r in recorder.receipts] == [
        ("g", "a", "errored", "ScriptedModelError", log[1]["text"]),
        # a replied and submitted: the runtime writes its receipt, the channel drops it
        (
            "a",
            "lead",
            "submitted",
            None,
            "[Receipt] Your child a finished without replying to you.",
        ),
    ]
    assert recorder.receipts[0].time == log[1]["time"]
    assert metrics(sample)["spawning"] == {
        "spawns": 2,
        "refused": {"max_depth": 1},
        "ended": {"errored": 1, "submitted": 1},
        "deleted": {},
        "max_live_children": 2,
    }
    assert metrics(sample)["messages"] == {"messages": 2, "receipts": 1, "unseen": 0}


def test_retries_live_names_and_refused_names(log_dir: Path) -> None:
    # retries 2: a, a~2, a~3 (a's 3rd spawn is its 2nd retry), then a 4th is refused; names
    # stay unique in every record (a child asking for a roster member's name gets lead~2);
    # a name no member could have is refused before any plugin sees it
    recorder = Recorder()
    lead = [
        spawn("a"),
        WAIT,
        spawn("a"),
        WAIT,
        spawn("a~2"),
        spawn(""),
        spawn("init"),
        spawn("lead"),
        spawn("lead"),
        call("cancel_child", name="lead"),
        WAIT,
        spawn("a"),
        WAIT,
        spawn("a"),
        submit("done"),
    ]
    sample = run_scripted(
        team(recorder, spawning={"retries": 2}), {"lead": lead, "lead~2": [SLOW]}, log_dir
    )
    bad = "must start with a letter or digit and use only letters, digits, '.', '_' and '-'"
    assert tool_results(sample, "spawn_child") == [
        (spawned("a"), None),
        (spawned("a", "a~2"), None),
        ("", f"name: 'a~2' {bad} (at most 64 characters)"),
        ("", "name: a member name must be a non-empty string, got ''"),
        (
            "",
            "name: 'init' is reserved by Inspect (init, solvers and scorers name sample phases)",
        ),
        (spawned("lead", "lead~2", "a running member is called lead"), None),
        (
            "",
            "spawn refused: a child of yours called 'lead' is still running; wait for it or "
            "cancel it first.",
        ),
        (spawned("a", "a~3"), None),
        (
            "",
            "spawn refused: 'a' was spawned 3 times already; it may be spawned again at most 2 "
            "time(s).",
        ),
    ]
    # cancelled by the name the lead asked for
    assert tool_results(sample, "cancel_child") == [
        ("Cancelling lead~2; you get a receipt when it has ended.", None)
    ]
    assert tool_results(sample, "wait_for_children") == [
        (all_ended(1), None),
        (all_ended(2), None),
        (all_ended(3), None),
        (all_ended(4), None),
    ]
    assert requests(recorder) == [
        req("lead", "a", 1),
        req("lead", "a", 1, children=1, spawns=1, respawns=1),
        req("lead", "lead", 1, children=2, spawns=2),
        req(
            "lead",
            "lead",
            1,
            children=3,
            live_children=1,
            live_members=2,
            spawns=3,
            live_with_name=True,
            respawns=1,
        ),
        req("lead", "a", 1, children=3, spawns=3, respawns=2),
        req("lead", "a", 1, children=4, spawns=4, respawns=3),
    ]
    w = ("lead", 1, "worker")
    assert ledger_rows(sample) == [
        (1, "spawn", "a", "a", *w, "t", None, None),
        (2, "end", "a", "a", *w, None, "submitted", None),
        (3, "spawn", "a~2", "a", *w, "t", None, None),
        (4, "end", "a~2", "a", *w, None, "submitted", None),
        (5, "refused", None, "a~2", *w, "t", None, "name"),
        (6, "refused", None, "", *w, "t", None, "name"),
        (7, "refused", None, "init", *w, "t", None, "name"),
        (8, "spawn", "lead~2", "lead", *w, "t", None, None),
        (9, "refused", None, "lead", *w, "t", None, "live_name"),
        (10, "delete", "lead~2", "lead", *w, None, None, "cancelled"),
        (11, "end", "lead~2", "lead", *w, None, "cancelled", None),
        (12, "spawn", "a~3", "a", *w, "t", None, None),
        (13, "end", "a~3", "a", *w, None, "submitted", None),
        (14, "refused", None, "a", *w, "t", None, "retries"),
    ]
    members = result(sample)["members"]
    assert [(m["name"], m["parent"], m["depth"]) for m in members] == [
        ("lead", None, 0),
        ("a", "lead", 1),
        ("a~2", "lead", 1),
        ("lead~2", "lead", 1),
        ("a~3", "lead", 1),
    ]
    # the refusals by reason, sorted by reason (not in the order they happened)
    assert list(metrics(sample)["spawning"]["refused"].items()) == [
        ("live_name", 1),
        ("name", 3),
        ("retries", 1),
    ]
    assert list(metrics(sample)["spawning"]["ended"].items()) == [
        ("cancelled", 1),
        ("submitted", 3),
    ]
    assert metrics(sample)["spawning"]["max_live_children"] == 1  # one at a time


def test_retries_zero_refuses_the_first_respawn(log_dir: Path) -> None:
    sample = run_scripted(
        team(spawning={"retries": 0}),
        {"lead": [spawn("a"), WAIT, spawn("a"), submit("d")]},
        log_dir,
    )
    assert tool_results(sample, "spawn_child")[1] == (
        "",
        "spawn refused: 'a' was spawned 1 times already; it may be spawned again at most 0 "
        "time(s).",
    )
    assert [r[1] for r in ledger_rows(sample)] == ["spawn", "end", "refused"]


class Deciding:
    """Refuses ``p1`` bare and ``p2`` with a reason only; admits ``extra`` past the limits."""

    @hookimpl(tryfirst=True)
    def swarm_admit_spawn(self, view: Any, request: SpawnRequest) -> SpawnDecision | None:
        if request.name == "p1":
            return SpawnDecision(admit=False)
        if request.name == "p2":
            return SpawnDecision.refused("plugin:no")
        if request.name == "extra":
            return SpawnDecision.admitted()
        return None


def test_refusals_before_the_hook_and_a_plugins_own_decisions(log_dir: Path) -> None:
    # two templates: one must be named; a template not in can_spawn is refused; a plugin's
    # refusal without a message or reason gets the default ones; its admission beats the limits
    lead = [
        spawn("a"),
        spawn("b", template="boss"),
        spawn("p1", template="worker"),
        spawn("p2", template="worker"),
        spawn("c", template="worker"),
        spawn("d", template="worker"),
        spawn("extra", template="worker"),
        WAIT,
        submit("done"),
    ]
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker", "helper"]),
        templates={
            "worker": member("swarm/worker"),
            "helper": member("swarm/worker"),
            "boss": member("swarm/worker"),
        },
        spawning={"max_children": 1},
        plugins=catalog(Deciding()),
    )
    sample = run_scripted(solver, {"lead": lead}, log_dir)
    assert tool_results(sample, "spawn_child") == [
        ("", "you may not spawn template '' (yours: worker, helper)."),
        ("", "you may not spawn template 'boss' (yours: worker, helper)."),
        ("", "spawn refused: refused."),
        ("", "spawn refused: plugin:no."),
        (spawned("c"), None),
        ("", "spawn refused: you have spawned 1 children, the most one member may."),
        (spawned("extra"), None),
    ]
    assert [(r[1], r[3], r[6], r[9]) for r in ledger_rows(sample) if r[1] != "end"] == [
        ("refused", "a", "", "template"),
        ("refused", "b", "boss", "template"),
        ("refused", "p1", "worker", "refused"),
        ("refused", "p2", "worker", "plugin:no"),
        ("spawn", "c", "worker", None),
        ("refused", "d", "worker", "max_children"),
        ("spawn", "extra", "worker", None),
    ]
    assert list(metrics(sample)["spawning"]["refused"].items()) == [
        ("max_children", 1),
        ("plugin:no", 1),
        ("refused", 1),
        ("template", 2),
    ]


TINY = {"token": 50}


def test_receipts_say_how_each_child_ended(log_dir: Path) -> None:
    # r replies and submits: no receipt; e1 replies, then errors; e2 errors without replying;
    # s submits without replying; c is cancelled by its parent; m runs out of tokens
    recorder = Recorder()
    lead = [
        *(spawn(n, template="worker") for n in ("r", "e1", "e2", "s", "c")),
        spawn("m", template="tiny"),
        call("cancel_child", name="c"),
        WAIT,
        call("read_messages"),
        submit("done"),
    ]
    scripts = {
        "lead": lead,
        "r": [call("send_message", to="parent", text="r done"), submit("r")],
        "e1": [call("send_message", to="parent", text="e1 done"), fail("e1 broke")],
        "e2": [fail("e2 broke")],
        "s": [submit("s")],
        "c": [SLOW],
        "m": [attrs.evolve(submit("m"), usage=(100, 10))],
    }
    templates = {
        "worker": member("swarm/worker"),
        "tiny": member("swarm/worker", limits=TINY),
    }
    sample = run_scripted(
        team(recorder, can_spawn=("worker", "tiny"), templates=templates), scripts, log_dir
    )
    texts = {
        "c": "[Receipt] Your child c was cancelled.",
        "e1": "[Receipt] Your child e1 errored (ScriptedModelError).",
        "e2": "[Receipt] Your child e2 errored (ScriptedModelError).",
        "m": "[Receipt] Your child m ended: member_limit:token.",
        "r": "[Receipt] Your child r finished without replying to you.",
        "s": "[Receipt] Your child s finished without replying to you.",
    }
    status = {
        "c": "cancelled",
        "e1": "errored",
        "e2": "errored",
        "m": "member_limit:token",
        "r": "submitted",
        "s": "submitted",
    }
    error = {"e1": "ScriptedModelError", "e2": "ScriptedModelError"}
    assert sorted(
        (r.child, r.parent, r.status, r.error_type, r.text) for r in recorder.receipts
    ) == [(c, "lead", status[c], error.get(c), texts[c]) for c in sorted(texts)]
    # each receipt is handed over with a view in which its child has ended, with its status
    children = [r.child for r in recorder.receipts]
    assert sorted(zip(children, recorder.receipt_states, strict=True)) == [
        (c, ("ended", status[c])) for c in sorted(texts)
    ]
    log = sample.store["inspect_swarm:messages"]["messages"]
    assert all(isinstance(m["time"], float) and m["time"] > 0 for m in log)
    receipts = sorted(
        (m["about"], m["sender"], m["recipient"], m["relationship"], m["status"], m["text"])
        for m in log
        if m["kind"] == "receipt"
    )
    assert receipts == [
        (c, c, "lead", "child", status[c], texts[c]) for c in ("c", "e1", "e2", "m", "s")
    ]
    assert all(m["seen"] is not None for m in log)
    ends = {r[2]: r[8] for r in ledger_rows(sample) if r[1] == "end"}
    assert ends == status
    assert metrics(sample)["spawning"]["ended"] == {
        "cancelled": 1,
        "errored": 2,
        "member_limit:token": 1,
        "submitted": 2,
    }
    assert metrics(sample)["messages"] == {"messages": 2, "receipts": 5, "unseen": 0}


# -- issue 21: names send_message reads as relations, and the member cap -------------------------


def test_a_child_is_never_called_parent_or_children(log_dir: Path) -> None:
    # before: both were admitted; a child called "parent" could never be messaged by name (to=
    # "parent" is the sender's parent) and its messages read as from="parent"
    recorder = Recorder()
    lead = [spawn("parent"), spawn("children"), spawn("parents"), WAIT, submit("done")]
    sample = run_scripted(team(recorder), {"lead": lead}, log_dir)
    reserved = (
        "is reserved by swarm-eval (send_message reads 'parent' and 'children' as relations, "
        "not member names)"
    )
    assert tool_results(sample, "spawn_child") == [
        ("", f"name: 'parent' {reserved}"),
        ("", f"name: 'children' {reserved}"),
        (spawned("parents"), None),
    ]
    w = ("lead", 1, "worker")
    assert [r for r in ledger_rows(sample) if r[1] == "refused"] == [
        (1, "refused", None, "parent", *w, "t", None, "name"),
        (2, "refused", None, "children", *w, "t", None, "name"),
    ]
    assert [r.name for r in recorder.requests] == ["parents"]  # refused before any plugin


class AdmitsAll:
    """Admits every spawn request, past every limit."""

    @hookimpl(tryfirst=True)
    def swarm_admit_spawn(self, view: Any, request: SpawnRequest) -> SpawnDecision:
        return SpawnDecision.admitted()


def test_no_plugin_admits_a_member_past_the_swarms_cap(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the cap is 10,000; at 3 the third child would be the fourth member
    import swarm._run.spawning as spawning

    monkeypatch.setattr(spawning, "MAX_MEMBERS", 3, raising=False)
    lead = [spawn("a"), spawn("b"), spawn("c"), WAIT, submit("done")]
    scripts = {"lead": lead, "a": [submit("a")], "b": [submit("b")]}
    sample = run_scripted(team(AdmitsAll(), spawning={"max_children": 1}), scripts, log_dir)
    assert tool_results(sample, "spawn_child") == [
        (spawned("a"), None),
        (spawned("b"), None),
        ("", "the swarm has 3 members, the most a swarm may."),
    ]
    assert [(r[1], r[3], r[9]) for r in ledger_rows(sample) if r[1] != "end"] == [
        ("spawn", "a", None),
        ("spawn", "b", None),
        ("refused", "c", "members"),
    ]
    assert [m["name"] for m in result(sample)["members"]] == ["lead", "a", "b"]
