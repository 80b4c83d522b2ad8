"""Children spawned at run time: a full fan-out through the real tools, refusals, teardown, and the
spawn ledger, message log, ledger and spans agreeing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.event import SpanBeginEvent
from inspect_ai.log import EvalSample
from inspect_ai.scorer import includes

from swarm import (
    PluginCatalog,
    SpawnDecision,
    SpawnRequest,
    controller,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
)
from swarm.analysis import swarm_messages, swarm_spawns
from swarm.testing import Step, call, fail, pause, run_eval, scripted_model, submit

from helpers import result, statuses, tool_results

N = 8


def store(sample: EvalSample, key: str) -> Any:
    return sample.store[f"inspect_swarm:{key}"]


def entries(sample: EvalSample, op: str | None = None) -> list[dict[str, Any]]:
    found = store(sample, "spawns")["entries"]
    return [e for e in found if op is None or e["op"] == op]


def fan_out(log_dir: Path) -> EvalSample:
    """A lead spawns 8 children; each reads its own shard in the sample's sandbox and replies;
    the lead waits for all, reads the replies, writes them to one file and submits."""
    lead = [
        call("spawn_child", name=f"w-{i}", task=f"Count the lines of shards/s{i}.txt.")
        for i in range(1, N + 1)
    ]
    lead += [
        call("wait_for_children"),
        call("read_messages"),
        call("bash", command="printf 'all replied\\n' > combined.md && cat combined.md"),
        submit("done"),
    ]
    scripts: dict[str, list[Step]] = {"lead": lead}
    for i in range(1, N + 1):
        scripts[f"w-{i}"] = [
            call("bash", command=f"wc -l < shards/s{i}.txt"),
            call("send_message", to="parent", text=str(i)),
            submit("ok"),
        ]
    solver = swarm(
        members=member("swarm/worker", name="lead", args={"tools": ["bash"]}, can_spawn=["worker"]),
        templates={"worker": {"factory": "swarm/worker", "args": {"tools": ["bash"]}}},
    )
    files = {f"shards/s{i}.txt": "x\n" * i for i in range(1, N + 1)}
    task = Task(
        dataset=[Sample(input="Fan out.", target="done", files=files)],
        solver=solver,
        scorer=includes(),
        sandbox="local",
    )
    [log] = eval(task, model=scripted_model(scripts), display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def test_a_lead_fans_out_to_eight_children_and_every_record_agrees(log_dir: Path) -> None:
    sample = fan_out(log_dir)
    children = [f"w-{i}" for i in range(1, N + 1)]
    # the children read their own shards in the sandbox. Inspect's bash tool runs a login shell,
    # and the host's profile may print to stderr before the command's output (seen: pyenv's
    # rehash racing between the 8 concurrent shells), so each count is its result's last line
    reads = [r.strip().splitlines()[-1] for r, err in tool_results(sample, "bash") if err is None]
    assert sorted(int(r) for r in reads if r.isdigit()) == list(range(1, N + 1))
    # the spawn ledger: 8 spawns, 8 ends, in order, with parent, depth and template
    spawned = entries(sample, "spawn")
    assert [e["member"] for e in spawned] == children
    assert all((e["parent"], e["depth"], e["template"]) == ("lead", 1, "worker") for e in spawned)
    assert sorted(e["member"] for e in entries(sample, "end")) == children
    assert {e["status"] for e in entries(sample, "end")} == {"submitted"}
    assert entries(sample, "refused") == entries(sample, "delete") == []
    seqs = [e["seq"] for e in entries(sample)]
    assert seqs == list(range(1, 2 * N + 1))
    # the message log: 8 child-to-parent messages, each seen by the lead (read)
    messages = store(sample, "messages")["messages"]
    assert sorted((m["sender"], m["text"]) for m in messages) == sorted(
        (f"w-{i}", str(i)) for i in range(1, N + 1)
    )
    assert {(m["recipient"], m["relationship"], m["kind"]) for m in messages} == {
        ("lead", "child", "message")
    }
    assert all(m["seen"] is not None and m["seen"]["via"] == "read" for m in messages)
    assert all(m["seen"]["time"] >= m["time"] for m in messages)
    # the result record and the ledger: 9 members, children with parent and depth
    members = result(sample)["members"]
    assert [(m["name"], m["parent"], m["depth"]) for m in members] == [("lead", None, 0)] + [
        (c, "lead", 1) for c in children
    ]
    ledger = store(sample, "ledger")
    assert [m["name"] for m in ledger["members"]] == ["lead", *children]
    assert (
        sum(m["meter"]["usage"]["total_tokens"] for m in ledger["members"])
        == (ledger["swarm"]["usage"]["total_tokens"])
    )
    assert ledger["unattributed"]["total_tokens"] == 0
    # every member has its own agent span
    spans = [e.name for e in sample.events if isinstance(e, SpanBeginEvent) and e.type == "agent"]
    assert sorted(s for s in spans if s in {"lead", *children}) == sorted(["lead", *children])
    # the lead's wait ended once all had ended, and its file holds what it wrote
    waited = tool_results(sample, "wait_for_children")
    assert waited == [
        (
            "All 8 of your children have ended; their replies and receipts are in read_messages().",
            None,
        )
    ]
    assert result(sample)["final"]["member"] == "lead"
    # the peak of live children, replayed from the spawn ledger's order (how many of the 8
    # were still running at the last spawn depends on the machine's speed; the value tests pin
    # the peak where the order is fixed)
    live = peak = 0
    for entry in entries(sample):
        live += {"spawn": 1, "end": -1}.get(entry["op"], 0)
        peak = max(peak, live)
    assert 1 <= peak <= 8
    assert store(sample, "metrics")["spawning"] == {
        "spawns": 8,
        "refused": {},
        "ended": {"submitted": 8},
        "deleted": {},
        "max_live_children": peak,
    }
    assert json.dumps(store(sample, "spawns"), allow_nan=False)
    # read back typed
    typed = swarm_spawns(sample)
    assert typed is not None
    assert [(e.op, e.member) for e in typed.entries if e.op == "spawn"] == [
        ("spawn", c) for c in children
    ]
    log = swarm_messages(sample)
    assert log is not None and {m.seen.via for m in log.messages if m.seen} == {"read"}


def lead_and(workers: dict[str, list[Step]], lead: list[Step], **swarm_args: Any) -> EvalSample:
    model = scripted_model({"lead": lead, **workers})
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        **swarm_args,
    )
    log = run_eval(solver, model=model)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def refusals(sample: EvalSample) -> list[tuple[str, str | None]]:
    return [(e["requested"], e["reason"]) for e in entries(sample, "refused")]


def test_a_second_live_child_under_one_name_is_refused() -> None:
    lead = [
        call("spawn_child", name="a", task="t"),
        call("spawn_child", name="a", task="t"),
        call("wait_for_children"),
        submit("done"),
    ]
    sample = lead_and({"a": [pause(0.3, submit("ok"))]}, lead)
    assert refusals(sample) == [("a", "live_name")]
    [(_, error)] = [r for r in tool_results(sample, "spawn_child") if r[1] is not None]
    assert error == (
        "spawn refused: a child of yours called 'a' is still running; wait for it or cancel it "
        "first."
    )


def test_a_third_spawn_of_a_name_with_one_retry_is_refused() -> None:
    lead = [call("spawn_child", name="a", task="t"), call("wait_for_children")] * 2
    lead += [call("spawn_child", name="a", task="t"), submit("done")]
    sample = lead_and({"a*": [submit("ok")]}, lead, spawning={"retries": 1})
    assert [e["member"] for e in entries(sample, "spawn")] == ["a", "a~2"]
    assert [e["requested"] for e in entries(sample, "spawn")] == ["a", "a"]
    assert refusals(sample) == [("a", "retries")]
    assert list(statuses(sample)) == ["lead", "a", "a~2"]


def test_spawns_past_the_children_cap_and_the_depth_cap_are_refused() -> None:
    lead = [call("spawn_child", name=n, task="t") for n in ("a", "b", "c")]
    lead += [call("wait_for_children"), submit("done")]
    workers = {"a": [call("spawn_child", name="deep", task="t"), submit("ok")], "*": [submit("ok")]}
    model = scripted_model({"lead": lead, **workers})
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker", can_spawn=["worker"])},
        spawning={"max_children": 2, "max_depth": 1},
    )
    [sample] = run_eval(solver, model=model).samples or []
    assert sorted(refusals(sample)) == [("c", "max_children"), ("deep", "max_depth")]


def test_a_template_the_member_may_not_use_is_refused() -> None:
    lead = [call("spawn_child", name="a", task="t", template="boss"), submit("done")]
    model = scripted_model({"lead": lead})
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker"), "boss": member("swarm/worker")},
    )
    [sample] = run_eval(solver, model=model).samples or []
    assert refusals(sample) == [("a", "template")]
    [(_, error)] = tool_results(sample, "spawn_child")
    assert error == "you may not spawn template 'boss' (yours: worker)."


def test_a_spawn_after_the_swarm_began_stopping_is_refused() -> None:
    # "quick" submits and stops the swarm; "late"'s call is in flight and asks for a spawn
    model = scripted_model(
        {"quick": [submit("42")], "late": [pause(0.5, call("spawn_child", name="x", task="t"))]}
    )
    solver = swarm(
        members=[
            member("swarm/worker", name="quick"),
            member("swarm/worker", name="late", can_spawn=["worker"]),
        ],
        templates={"worker": member("swarm/worker")},
        budget={"grace": 5},
    )
    [sample] = run_eval(solver, model=model).samples or []
    assert refusals(sample) == [("x", "stopping")]
    assert tool_results(sample, "spawn_child") == [
        ("", "the swarm is stopping; nothing new starts.")
    ]


class NoGrandchildren:
    """A plugin that refuses every spawn deeper than 1, whatever the limits allow."""

    @hookimpl(tryfirst=True)
    def swarm_admit_spawn(self, view: Any, request: SpawnRequest) -> SpawnDecision | None:
        if request.depth > 1:
            return SpawnDecision.refused("plugin:depth", "only the lead may spawn here.")
        return None


def test_a_tryfirst_plugin_refuses_what_the_limits_would_admit() -> None:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(NoGrandchildren(), name="no_grandchildren")
    lead = [call("spawn_child", name="a", task="t"), call("wait_for_children"), submit("done")]
    model = scripted_model(
        {"lead": lead, "a": [call("spawn_child", name="b", task="t"), submit("ok")]}
    )
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker", can_spawn=["worker"])},
        spawning={"max_depth": 3},
        plugins=PluginCatalog(pm, sources),
    )
    [sample] = run_eval(solver, model=model).samples or []
    assert refusals(sample) == [("b", "plugin:depth")]
    assert ("", "only the lead may spawn here.") in tool_results(sample, "spawn_child")


def test_children_still_running_when_their_parent_ends_are_torn_down() -> None:
    lead = [
        call("spawn_child", name="a", task="t"),
        call("spawn_child", name="b", task="t"),
        submit("done"),
    ]
    slow = [pause(0.3, call("bash", command="true"))] * 20
    sample = lead_and(
        {"a": slow, "b": slow},
        lead,
        controller=controller("leaderless", stop_on_submission=False),
        budget={"grace": 0.5},
    )
    deleted = entries(sample, "delete")
    assert [(e["member"], e["reason"]) for e in deleted] == [
        ("a", "parent_ended"),
        ("b", "parent_ended"),
    ]
    ended = {e["member"]: e["status"] for e in entries(sample, "end")}
    assert set(ended) == {"a", "b"} and set(ended.values()) <= {"stopped", "cancelled"}
    lead_end = next(m["time"] for m in result(sample)["members"] if m["name"] == "lead")
    assert all(e["time"] >= lead_end for e in deleted)
    assert result(sample)["stop_reason"] == "all_done"
    for key in ("result", "ledger", "metrics", "spawns", "messages"):
        assert store(sample, key)["version"] == 1


def test_a_torn_down_child_ends_the_sample_with_it_under_the_default_grace() -> None:
    # the default grace (120 s): the teardown waits for the child to end, not for the grace.
    # The child's call in flight finishes, its next one is refused (parent_ended) and it ends
    # "stopped"; the sample ends with it.  A teardown that waited out the grace would hold the
    # sample ~120 s (cut by pytest's timeout).
    lead = [call("spawn_child", name="a", task="t"), submit("done")]
    slow = [pause(0.3, call("bash", command="true"))] * 3
    sample = lead_and(
        {"a": slow}, lead, controller=controller("leaderless", stop_on_submission=False)
    )
    record = result(sample)
    assert record["stop_reason"] == "all_done"
    ended = {m["name"]: (m["status"], m["time"]) for m in record["members"]}
    assert ended["lead"][0] == "submitted" and ended["a"][0] == "stopped"
    assert ended["lead"][1] < ended["a"][1]
    wall_clock = store(sample, "metrics")["wall_clock"]
    assert 0 <= wall_clock - ended["a"][1] < 1.0
    assert wall_clock < 5.0  # one paused call, not the 120 s grace


def test_the_spawning_tools_take_no_identity_from_the_model() -> None:
    from inspect_ai.tool import ToolDef

    from swarm._run.spawn_tools import spawn_tools
    from swarm.plugins.channels.messages import read_messages_tool, send_message_tool

    params = {ToolDef(t).name: set(ToolDef(t).parameters.properties) for t in spawn_tools()}
    params.update(
        {
            ToolDef(t).name: set(ToolDef(t).parameters.properties)
            for t in (send_message_tool(), read_messages_tool())
        }
    )
    assert params == {
        "spawn_child": {"name", "task", "template"},
        "list_children": set(),
        "cancel_child": {"name"},
        "wait_for_children": {"timeout"},
        "send_message": {"to", "text"},
        "read_messages": set(),
    }


def test_a_malformed_spawn_call_is_refused_by_inspect_and_not_written_down() -> None:
    lead = [call("spawn_child", name="a"), submit("done")]  # no task: Inspect refuses the call
    sample = lead_and({}, lead)
    assert entries(sample) == []
    [(_, error)] = tool_results(sample, "spawn_child")
    assert error is not None and "task" in error


def test_list_children_shows_state_status_and_reply() -> None:
    lead = [
        call("spawn_child", name="a", task="t"),
        call("spawn_child", name="b", task="t"),
        call("wait_for_children"),
        call("list_children"),
        submit("done"),
    ]
    sample = lead_and(
        {"a": [call("send_message", to="parent", text="1"), submit("ok")], "b": [fail("x")]}, lead
    )
    [(text, _)] = tool_results(sample, "list_children")
    assert text == (
        "- a [worker]: ended (submitted); replied\n- b [worker]: ended (errored); has not replied"
    )


def test_quiescence_counts_running_children() -> None:
    # the lead waits while its child works: that is not "everyone waits"
    lead = [call("spawn_child", name="a", task="t"), call("swarm_wait", timeout=30)]
    lead += [call("read_messages"), submit("done")]
    sample = lead_and(
        {"a": [pause(0.5, call("send_message", to="parent", text="x")), submit("ok")]},
        lead,
        controller="quiescence",
    )
    [(waited, _)] = tool_results(sample, "swarm_wait")
    assert waited == "1 unread message(s) from a (call read_messages)."
    assert result(sample)["stop_reason"] == "all_done"
    assert statuses(sample) == {"lead": "submitted", "a": "submitted"}


class CountedTools:
    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []

    @hookimpl
    def swarm_member_tools(self, view: Any, member: Any, nested: bool) -> list[Any]:
        self.calls.append((member.name, nested))
        return []


def test_member_tools_are_resolved_once_per_kind_of_loop_not_per_member() -> None:
    counted = CountedTools()
    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(counted, name="counted")
    lead = [call("spawn_child", name=f"w-{i}", task="t") for i in range(1, 5)]
    lead += [call("wait_for_children"), submit("done")]
    children = {f"w-{i}": [submit("ok")] for i in range(1, 5)}
    model = scripted_model({"lead": lead, "other": [submit("1")], **children})
    solver = swarm(
        members=[
            member("swarm/worker", name="lead", can_spawn=["worker"]),
            member("swarm/worker", name="other"),
        ],
        templates={"worker": member("swarm/worker")},
        controller=controller("leaderless", stop_on_submission=False),
        plugins=PluginCatalog(pm, sources),
    )
    log = run_eval(solver, model=model)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    assert statuses(sample)["w-4"] == "submitted"
    # one call for the own loop of a member that may spawn, one for every other own loop:
    # six members' loops, two kinds
    assert len(counted.calls) == 2
    assert counted.calls[0] == ("lead", False)
    assert counted.calls[1][0] in {"other", "w-1", "w-2", "w-3", "w-4"}
