"""How the diagnosis pairs the records with the tool calls that made them, checked where a
wrong pairing would show: members whose calls interleave, the same text sent by two members, the
same child's name asked for by two parents, and texts long enough that the log keeps them as
attachments (the diagnosis resolves only what it reads, as ``resolve_sample_attachments`` would).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
from inspect_ai.agent import Agent, agent, react
from inspect_ai.event import ToolEvent
from inspect_ai.log import EvalSample, read_eval_log, resolve_sample_attachments

from swarm import channel, controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.analysis import MessageLogEntry, SpawnLedgerEntry
from swarm.diagnosis import diagnose, diagnose_log
from swarm.diagnosis._trace import (
    Tool,
    Trace,
    _pair_evidence,
    _pair_messages,
    _pair_spawns,
    read_trace,
)
from swarm.testing import Step, call, pause, run_eval, scripted_model, submit

BOARD = "/shared_memory"


def u(step: Step) -> Step:
    return attrs.evolve(step, usage=[10, 5])


@agent
def channel_worker() -> Agent:
    return react(tools=[swarm_tools()], on_continue=swarm_on_continue())


def sample_of(solver: Agent, scripts: dict[str, list[Step]], tmp_path: Path) -> EvalSample:
    log = run_eval(solver, model=scripted_model(scripts), log_dir=tmp_path)
    return (read_eval_log(log.location).samples or [])[0]


def channel_swarm(*names: str) -> Agent:
    return swarm(
        members=[member(channel_worker, name=n) for n in names],
        channels=[channel("shared_memory"), channel("messages", routes="all")],
        controller=controller("leaderless", stop_on_submission=False),
    )


def _own(trace: Trace, member: str, function: str, *, failed: bool = False) -> list[str]:
    """``member``'s ``function`` calls, in order: those that succeeded (or every one)."""
    return [
        t.id
        for t in trace.tools
        if t.member == member and t.function == function and (failed or t.error is None)
    ]


def test_interleaved_writes_views_and_messages_pair_with_their_own_members_calls(
    tmp_path: Path,
) -> None:
    # a and b write, view and send the same text to c, their calls interleaved
    def script(me: str, delay: float) -> list[Step]:
        path = f"{BOARD}/{me}.md"
        return [
            pause(delay, u(call("shared_memory", command="create", path=path, file_text=me))),
            u(call("send_message", to="c", text="the same words")),
            u(call("shared_memory", command="view", path=f"{BOARD}")),
            u(call("shared_memory", command="append", path=path, append_text=f"more {me}")),
            u(call("send_message", to="c", text="the same words")),
            u(submit("42")),
        ]

    sample = sample_of(
        channel_swarm("a", "b", "c"),
        {
            "a": script("a", 0.0),
            "b": script("b", 0.05),
            "c": [pause(0.5, u(call("read_messages"))), u(submit("42"))],
        },
        tmp_path,
    )
    trace = read_trace(sample)
    assert trace.unlinked == ()
    for me in ("a", "b"):
        writes = [
            i
            for i, e in enumerate(trace.evidence)
            if e.get("kind") == "delivered" and e.get("member") == me
        ]
        board = [i for i in writes if trace.evidence[i].get("channel") == "shared_memory"]
        views = [
            i
            for i, e in enumerate(trace.evidence)
            if e.get("kind") == "read" and e.get("member") == me and not e.get("listing")
        ]
        # the k-th write of a member is its k-th writing call, never the other member's
        by_id = {t.id: t for t in trace.tools}
        assert [trace.entry_tool[i].id for i in board] == [
            t for t in _own(trace, me, "shared_memory") if by_id[t].arguments["command"] != "view"
        ]
        assert len(board) == 2
        assert all(trace.entry_tool[i].member == me for i in writes + views)
        sent = [m for m in trace.messages if m.sender == me]
        assert len(sent) == 2
        assert [trace.message_send[m.seq].id for m in sent] == _own(trace, me, "send_message")
    # every entry paired with a call of its own loop, no call paired twice
    paired = list(trace.entry_tool.values())
    assert len({t.id for t in paired}) == len(paired)
    for i, t in trace.entry_tool.items():
        assert t.span == trace.evidence[i].get("loop")
    assert {m.seq for m in trace.messages} <= set(trace.message_read)


def test_two_parents_asking_for_the_same_name_pair_with_their_own_spawn_calls(
    tmp_path: Path,
) -> None:
    def lead(delay: float) -> list[Step]:
        return [
            pause(delay, u(call("spawn_child", name="kid", task="say hi"))),
            u(call("spawn_child", name="kid", task="say hi again")),
            u(call("wait_for_children")),
            u(submit("42")),
        ]

    scripts = {"p": lead(0.0), "q": lead(0.05), "*": [u(submit("hi"))]}
    solver = swarm(
        members=[
            member("swarm/worker", name="p", can_spawn=["worker"]),
            member("swarm/worker", name="q", can_spawn=["worker"]),
        ],
        templates={"worker": member("swarm/worker")},
        spawning={"max_children": 4},
        controller=controller("leaderless", stop_on_submission=False),
    )
    trace = read_trace(sample_of(solver, scripts, tmp_path))
    asked = [e for e in trace.spawns if e.op in ("spawn", "refused")]
    assert len(asked) == 4
    for parent in ("p", "q"):
        admitted = [e for e in asked if e.parent == parent]
        calls = _own(trace, parent, "spawn_child", failed=True)  # a refusal is an error
        assert len(calls) == 2
        # the k-th request of a parent is its k-th spawn_child call
        assert [trace.spawn_call[e.seq].id for e in admitted if e.op == "spawn"] == [
            c for c, e in zip(calls, admitted, strict=True) if e.op == "spawn"
        ]


def test_long_texts_kept_as_attachments_are_resolved_where_the_diagnosis_reads_them(
    tmp_path: Path,
) -> None:
    long = "a long line of words about the answer, " * 4  # over Inspect's 100 characters
    sample = sample_of(
        channel_swarm("a", "b"),
        {
            "a": [
                u(call("shared_memory", command="create", path=f"{BOARD}/n.md", file_text=long)),
                u(call("send_message", to="b", text=long)),
                u(submit("42")),
            ],
            "b": [
                pause(0.3, u(call("read_messages"))),
                u(call("shared_memory", command="view", path=f"{BOARD}/n.md")),
                u(submit(long)),
            ],
        },
        tmp_path,
    )
    sends = [e for e in sample.events if isinstance(e, ToolEvent) and e.function == "send_message"]
    assert sends and str(sends[0].arguments["text"]).startswith("attachment://")
    found = diagnose(sample)
    assert found == diagnose(resolve_sample_attachments(sample))
    trace = read_trace(sample)
    [message] = trace.messages
    assert trace.message_send[message.seq].arguments["text"] == long
    [funnel] = [f for f in found.figures.funnels if f.channel == "messages"]
    assert (funnel.sent, funnel.read, funnel.acted) == (1, 1, 1)


# -- the pairings alone, on calls whose order differs from the records' ---------------------


def _tool(index: int, member: str, function: str, **arguments: Any) -> Tool:
    return Tool(
        index=index,
        uuid=None,
        id=f"t{index}",
        member=member,
        span=f"span-{member}",
        function=function,
        arguments=arguments,
        error=None,
        duration=0.0,
        start=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_each_pairing_keeps_to_the_member_whatever_the_order_of_the_calls() -> None:
    # b's calls come first in the transcript, a's records first in the logs
    tools = [
        _tool(0, "b", "shared_memory", command="create", path="/shared_memory/x", file_text="b"),
        _tool(1, "b", "send_message", to="c", text="same"),
        _tool(2, "b", "spawn_child", name="kid"),
        _tool(3, "a", "shared_memory", command="create", path="/shared_memory/y", file_text="a"),
        _tool(4, "a", "send_message", to="c", text="same"),
        _tool(5, "a", "spawn_child", name="kid"),
    ]
    evidence = [
        {"kind": "delivered", "member": m, "loop": f"span-{m}", "channel": "shared_memory"}
        for m in ("a", "b")
    ]
    paired, unlinked = _pair_evidence(evidence, tools)
    assert unlinked == [] and {i: t.member for i, t in paired.items()} == {0: "a", 1: "b"}

    def message(seq: int, sender: str) -> MessageLogEntry:
        return MessageLogEntry(
            seq=seq,
            time=float(seq),
            kind="message",
            sender=sender,
            recipient="c",
            relationship="other",
            size=4,
            text="same",
            about=None,
            status=None,
            seen=None,
        )

    send, _ = _pair_messages([message(1, "a"), message(2, "b")], [], tools)
    assert {seq: t.id for seq, t in send.items()} == {1: "t4", 2: "t1"}

    def spawn(seq: int, parent: str) -> SpawnLedgerEntry:
        return SpawnLedgerEntry(
            seq=seq,
            time=float(seq),
            op="spawn",
            member=f"kid-{parent}",
            requested="kid",
            parent=parent,
            depth=1,
            template="worker",
            task=None,
            status=None,
            reason=None,
        )

    spawned = _pair_spawns([spawn(1, "a"), spawn(2, "b")], tools)
    assert {seq: t.id for seq, t in spawned.items()} == {1: "t5", 2: "t2"}


def test_diagnose_log_reads_one_sample_at_a_time_in_the_logs_order(tmp_path: Path) -> None:
    write = u(call("shared_memory", command="create", path=f"{BOARD}/n.md", file_text="x"))
    scripts = {"a": [write, u(submit("42"))], "b": [u(submit("42"))]}
    log = run_eval(
        channel_swarm("a", "b"),
        model=scripted_model(scripts),
        log_dir=tmp_path,
        samples=11,  # ids 1..11: "10" and "11" sort after "9" as numbers, not as text
        epochs=2,
    )
    samples = read_eval_log(log.location).samples or []
    expected = [diagnose(s) for s in samples]
    assert [(d.sample_id, d.epoch) for d in expected][:3] == [(1, 1), (2, 1), (3, 1)]
    assert list(diagnose_log(log.location)) == expected
    assert list(diagnose_log(tmp_path)) == expected


def test_a_receipt_in_a_notice_that_rides_on_a_tool_result_links_to_the_call_holding_it(
    tmp_path: Path,
) -> None:
    # b ends without replying; its receipt's notice rides on the lead's list_children result,
    # so the lead's third call (the first whose input holds it) depends on b's last call
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        controller=controller("leaderless", stop_on_submission=False),
    )
    lead = [u(call("spawn_child", name="b", task="t")), pause(0.5, u(call("list_children")))]
    lead += [u(call("list_children")), u(submit("d"))]
    trace = read_trace(sample_of(solver, {"lead": lead, "b": [u(submit("ok"))]}, tmp_path))
    [receipt] = [link for link in trace.links if link.via == "receipt"]
    calls = {c.index: c for c in trace.calls}
    source, target = calls[receipt.source], calls[receipt.target]
    assert (source.member, source.step) == ("b", 1)
    assert (target.member, target.step) == ("lead", 3)
    assert target.notices == {"n-1"}
