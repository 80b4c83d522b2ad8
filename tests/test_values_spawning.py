"""Spawning pinned at its boundaries, on real scripted evals: every limit at its value and one
past it (the refusal the model reads, what was counted, the records), names, depth and parent in
every record, the relationship of members, receipts, teardown, the tools' texts, and the spawn
ledger with its metrics, field by field.

The run's own counts are read through a plugin that records every ``SpawnRequest`` and every
``Receipt`` (and decides nothing): what the kernel's default decision was given."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from inspect_ai.agent import Agent, agent, as_tool, react
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageUser
from inspect_ai.tool import ToolDef, ToolError

from swarm import (
    PluginCatalog,
    Receipt,
    SpawnDecision,
    SpawnRequest,
    controller,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
    swarm_on_continue,
    swarm_tools,
)
from swarm.testing import Step, call, fail, pause, submit

from helpers import metrics, noop, result, run_scripted, tool_results


class Recorder:
    """Records every spawn request the kernel's limits decide (with the members the swarm's
    view held), every receipt and every question whether a child replied (with the child's
    state in the view); decides nothing."""

    def __init__(self) -> None:
        self.requests: list[SpawnRequest] = []
        self.views: list[tuple[str, ...]] = []
        self.receipts: list[Receipt] = []
        self.receipt_states: list[tuple[str | None, str | None]] = []
        self.replied: list[tuple[str, str, str]] = []

    @hookimpl(tryfirst=True)
    def swarm_admit_spawn(self, view: Any, request: SpawnRequest) -> SpawnDecision | None:
        self.requests.append(request)
        self.views.append(tuple(m.name for m in view.members))
        return None

    @hookimpl(tryfirst=True)
    def swarm_deliver_receipt(self, view: Any, receipt: Receipt) -> bool | None:
        self.receipts.append(receipt)
        child = view.member(receipt.child)
        self.receipt_states.append((child.state, child.status))
        return None

    @hookimpl(tryfirst=True)
    def swarm_replied(self, view: Any, child: str, parent: str) -> bool | None:
        self.replied.append((child, parent, view.member(child).state))
        return None


def catalog(*plugins: object) -> PluginCatalog:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    for i, plugin in enumerate(plugins):
        pm.register(plugin, name=f"test-plugin-{i}")
    return PluginCatalog(pm, sources)


def team(
    recorder: Recorder | None = None,
    *,
    can_spawn: tuple[str, ...] = ("worker",),
    child_can_spawn: tuple[str, ...] = ("worker",),
    others: tuple[Any, ...] = (),
    templates: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A lead that may spawn ``worker`` children (which may spawn ``worker`` in turn)."""
    lead = member("swarm/worker", name="lead", can_spawn=list(can_spawn))
    found = {"worker": member("swarm/worker", can_spawn=list(child_can_spawn))}
    return swarm(
        members=[lead, *others],
        templates=found if templates is None else templates,
        plugins=None if recorder is None else catalog(recorder),
        **kwargs,
    )


def run(solver: Any, scripts: dict[str, list[Step]], log_dir: Path) -> EvalSample:
    return run_scripted(solver, scripts, log_dir)


FIELDS = ("seq", "op", "member", "requested", "parent", "depth", "template", "task", "status")


def ledger_rows(sample: EvalSample) -> list[tuple[Any, ...]]:
    """The spawn ledger's entries, every field but the time (checked here: from 0, in order,
    within the run)."""
    record = sample.store["inspect_swarm:spawns"]
    assert record["version"] == 1
    entries = record["entries"]
    times = [e["time"] for e in entries]
    assert all(isinstance(t, float) for t in times)
    assert times == sorted(times)
    assert all(0 < t <= metrics(sample)["wall_clock"] for t in times)
    for e in entries:
        assert set(e) == {*FIELDS, "time", "reason"}
    return [(*(e[f] for f in FIELDS), e["reason"]) for e in entries]


def of(rows: list[tuple[Any, ...]], name: str) -> list[tuple[Any, ...]]:
    """The rows about member (or requested name) ``name``, without their seq."""
    return [r[1:] for r in rows if r[2] == name or (r[2] is None and r[3] == name)]


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


def spawned(name: str, renamed: str = "") -> str:
    what = f"{name} (as {renamed}: {name} ran before)" if renamed else name
    return (
        f"Spawned {what} from template worker. It works on your task now and reports back to "
        "you; wait_for_children() waits for all of your children."
    )


def all_ended(n: int) -> str:
    return (
        f"All {n} of your children have ended; their replies and receipts are in read_messages()."
    )


def first_call(sample: EvalSample, name: str) -> Any:
    """The first model call of member ``name``'s own loop (its input holds its preamble)."""
    return next(
        e
        for e in sample.events
        if e.event == "model"
        and any(
            isinstance(m, ChatMessageUser) and m.text.startswith(f"You are {name},")
            for m in e.input
        )
    )


def spawn(name: str, task: str = "t", **args: Any) -> Step:
    return call("spawn_child", name=name, task=task, **args)


WAIT = call("wait_for_children")
SLOW = pause(5, submit("late"))  # cancelled long before it completes


# -- the limits: each at exactly its value, and one past it -------------------------------------


def test_max_live_admits_the_child_that_reaches_it_and_refuses_the_next(log_dir: Path) -> None:
    # max_live 2: the lead and a run (2, admitted at 1); b would make 3 (refused at 2); once a
    # has ended (cancelled) b is admitted again, counted at 1: ended members do not count.
    # b's 2 s keep the lead's second wait waiting (it must not return on the first wait's end)
    recorder = Recorder()
    lead = [spawn("a"), spawn("b"), call("cancel_child", name="a"), WAIT, spawn("b"), WAIT]
    sample = run(
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
    sample = run(
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
    sample = run(
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
    sample = run(team(recorder), scripts, log_dir)
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
    sample = run(team(recorder, spawning={"retries": 2}), {"lead": lead, "lead~2": [SLOW]}, log_dir)
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
        (spawned("lead", "lead~2"), None),
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
    sample = run(
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
    sample = run(solver, {"lead": lead}, log_dir)
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
    sample = run(
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
    sample = run(
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
    # peer submits at 2 s and stops the swarm while the lead waits for k and j (in 5 s calls); x's
    # end at once does not end the wait: not every child has ended
    peer = member("swarm/worker", name="peer")
    scripts = {
        "lead": [spawn("x"), spawn("k"), spawn("j"), WAIT, submit("x")],
        "x": [submit("ok")],
        "k": [SLOW],
        "j": [SLOW],
        "peer": [pause(2, submit("42"))],
    }
    sample = run(team(others=(peer,), budget={"grace": 0.5}), scripts, log_dir)
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
    sample = run(team(recorder), {"lead": lead, "a": [SLOW], "b": [SLOW]}, log_dir)
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
        ("2 still running after 0.5 s: a, b.", None),
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
    sample = run(solver, scripts, log_dir)
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
    sample = run(solver, scripts, log_dir)
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

    sample = run(swarm(members=member(shm_worker, name="w")), {"w": [submit("42")]}, log_dir)
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
    sample = run(swarm(members=member(raw_spawner, name="w")), scripts, log_dir)
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
    sample = run(solver, scripts, log_dir)
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
    sample = run(solver, {"lead": lead}, log_dir)
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
