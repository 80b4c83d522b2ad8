"""Inspect's deepagent as a swarm member: its background subagents metered to it, the channels
wired into it, and what the runtime records of its dispatches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from swarm import member
from swarm.testing import Step, call, pause, submit

from helpers import board, by_name, ledger, metrics, notice_messages, run_scripted, shm_worker, sm

BOARD = "/shared_memory"


def used(step: Step, tokens_in: int, tokens_out: int) -> Step:
    return attrs.evolve(step, usage=(tokens_in, tokens_out))


HELPER = {"name": "helper", "description": "adds numbers", "prompt": "You add numbers."}


def deep_lead(**args: Any) -> Any:
    return member(
        "swarm/deepagent",
        {"subagents": [HELPER], "memory": False, "todo_write": False, **args},
        name="lead",
    )


def test_a_deepagent_member_meters_its_background_subagents_and_uses_the_channels(
    log_dir: Path,
) -> None:
    scripts = {
        "peer": [
            used(sm("create", path=f"{BOARD}/peer.md", file_text="hello"), 5, 1),
            used(submit("posted"), 5, 1),
        ],
        "lead": [
            used(pause(1.0, call("agent", prompt="add 2 and 3", background=True)), 10, 1),
            used(call("agent_wait", agent_ids=["AGENT-1"]), 10, 1),
            used(sm("create", path=f"{BOARD}/lead.md", file_text="5"), 10, 1),
            used(submit("5"), 10, 1),
        ],
        "lead/sub": [used(submit("5"), 7, 2)],
    }
    solver = board(deep_lead(), member(shm_worker, name="peer"))
    sample = run_scripted(solver, scripts, log_dir)
    rows = by_name(ledger(sample)["members"])
    assert rows["lead"]["meter"]["usage"]["total_tokens"] == 4 * 11 + 9
    assert rows["lead"]["calls"]["calls"] == 5
    assert rows["peer"]["meter"]["usage"]["total_tokens"] == 12
    total = sum(u.total_tokens for u in sample.model_usage.values())
    assert ledger(sample)["swarm"]["usage"]["total_tokens"] == total == 65
    m = metrics(sample)
    assert m["tools_unwired"] == [] and m["notify_unwired"] == []
    notices = [n.text for n in notice_messages(sample)]
    assert any("peer.md" in n or "f-1" in n for n in notices), notices
    entries = sample.store["inspect_swarm:subagents"]["entries"]
    assert [e["op"] for e in entries] == ["dispatch", "end", "received"]
    dispatch, end, received = entries
    assert (dispatch["name"], dispatch["agent"], dispatch["subagent"]) == (
        "lead/AGENT-1",
        "AGENT-1",
        "helper",
    )
    assert (dispatch["background"], dispatch["parent"], dispatch["depth"]) == (True, "lead", 1)
    assert dispatch["prompt"] == "add 2 and 3"
    spans = [e.id for e in sample.events if e.event == "span_begin" and e.name == "helper"]
    assert [dispatch["span"]] == spans  # the subagent's own agent span in the transcript
    assert (end["status"], end["result"], end["error"]) == ("completed", "5", None)
    assert end["usage"] == {"total_tokens": 9, "calls": 1, "cache_replays": 0, "errored": 0}
    assert (received["via"], received["kind"], received["text"]) == ("agent_wait", "result", "5")
    assert received["seen"] is not None and received["seen"]["time"] >= received["time"]


def inspect_deepagent(wired: bool) -> Any:
    from inspect_ai.agent import deepagent, subagent

    from swarm import swarm_on_continue, swarm_tools

    args: dict[str, Any] = {
        "subagents": [subagent(**HELPER)],
        "background": True,
        "memory": False,
        "todo_write": False,
    }
    if wired:
        args |= {"tools": [swarm_tools()], "on_continue": swarm_on_continue()}
    return member(deepagent, args, name="lead")


def wiring_run(log_dir: Path, wired: bool) -> Any:
    scripts = {
        "peer": [sm("create", path=f"{BOARD}/peer.md", file_text="hello"), submit("posted")],
        "lead": [
            pause(1.0, call("agent", prompt="add 2 and 3", background=True)),
            call("agent_wait", agent_ids=["AGENT-1"]),
            submit("5"),
        ],
        "lead/sub": [submit("5")],
    }
    solver = board(inspect_deepagent(wired), member(shm_worker, name="peer"))
    return run_scripted(solver, scripts, log_dir)


def test_inspects_own_deepagent_unwired_is_named_by_the_wiring_checks(log_dir: Path) -> None:
    m = metrics(wiring_run(log_dir, wired=False))
    assert (m["tools_unwired"], m["notify_unwired"]) == (["lead"], ["lead"])


def test_inspects_own_deepagent_wired_by_its_arguments_passes_the_wiring_checks(
    log_dir: Path,
) -> None:
    sample = wiring_run(log_dir, wired=True)
    m = metrics(sample)
    assert (m["tools_unwired"], m["notify_unwired"]) == ([], [])
    # its own three calls and its subagent's one, all metered to it
    assert by_name(ledger(sample)["members"])["lead"]["calls"]["calls"] == 4
    [end] = [e for e in sample.store["inspect_swarm:subagents"]["entries"] if e["op"] == "end"]
    assert (end["status"], end["result"]) == ("completed", "5")


def test_swarm_deepagent_refuses_bad_arguments_naming_the_field() -> None:
    import pytest

    from swarm import ConfigError
    from swarm._faces.deepagent import deepagent_member

    cases = [
        ({"subagents": ["nope"]}, "deepagent.subagents[0]: 'nope' is not one of"),
        ({"subagents": [{"name": "x"}]}, "deepagent.subagents[0].description"),
        ({"subagents": [{**HELPER, "color": 1}]}, "deepagent.subagents[0]: unknown keys"),
        ({"subagents": [HELPER, HELPER]}, "deepagent.subagents: the names ['helper']"),
        ({"max_depth": 0}, "deepagent.max_depth"),
        ({"background": 0}, "deepagent.background"),
        ({"tools": ["no_such_tool"]}, "deepagent.tools: no Inspect tool 'no_such_tool'"),
    ]
    for args, message in cases:
        with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
            deepagent_member(**args)


def test_a_cancelled_subagent_and_a_refused_dispatch_are_recorded_as_the_runtime_saw_them(
    log_dir: Path,
) -> None:
    """A dispatch that fails (an unknown subagent type) opened no span: it is not a dispatch.
    A subagent the lead cancels ends
    ``cancelled``, and the lead's agent_cancel result is its status, received."""
    two = [HELPER, {**HELPER, "name": "slow"}]
    scripts = {
        "lead": [
            call("agent", subagent_type="slow", prompt="take your time", background=True),
            call("agent", subagent_type="nope", prompt="x", background=True),
            call("agent_cancel", agent_id="AGENT-1"),
            submit("stopped"),
        ],
        "lead/sub": [pause(30.0, submit("late"))],
    }
    solver = board(deep_lead(subagents=two))
    sample = run_scripted(solver, scripts, log_dir)
    entries = sample.store["inspect_swarm:subagents"]["entries"]
    assert [(e["op"], e["name"]) for e in entries] == [
        ("dispatch", "lead/AGENT-1"),
        ("end", "lead/AGENT-1"),
        ("received", "lead/AGENT-1"),
    ]
    _, end, received = entries
    assert (end["status"], end["result"]) == ("cancelled", None)
    assert (received["via"], received["kind"]) == ("agent_cancel", "status")
    assert received["text"] == "**AGENT-1** (slow) \u2014 cancelled"


def test_deepagent_by_name_is_inspects_and_swarm_deepagent_is_the_wired_one() -> None:
    """An editable install registers swarm-eval's agents under bare names too; the bare
    ``deepagent`` would hide Inspect's own, so it is left to Inspect."""
    from inspect_ai.agent import deepagent

    import swarm._entry_point  # noqa: F401  (what Inspect loads)
    from swarm._faces.deepagent import deepagent_member
    from swarm._inspect.private import registry_lookup

    assert registry_lookup("agent", "deepagent") is deepagent
    assert registry_lookup("agent", "swarm/deepagent") is deepagent_member


SLOW = {"name": "slow", "description": "takes its time", "prompt": "You are slow, and patient."}


def test_a_deepagent_leads_background_subagents_are_its_background_work(log_dir: Path) -> None:
    """Two background dispatches are the lead's background work: both counted started; the one
    still running when the lead's agent returns gets the grace and is then cancelled, so the
    lead ends ``submitted`` with ``cancelled`` set, and deepagent's registry saw it cancelled."""
    from swarm import Budget

    scripts = {
        "lead": [
            used(call("agent", subagent_type="helper", prompt="add", background=True), 10, 1),
            used(call("agent", subagent_type="slow", prompt="wait", background=True), 10, 1),
            used(call("agent_wait", agent_ids=["AGENT-1"]), 10, 1),
            used(submit("5"), 10, 1),
        ],
        "lead/sub": [used(submit("5"), 7, 2)],
        "lead/slow": [used(pause(60.0, submit("late")), 3, 1)],
    }
    solver = board(deep_lead(subagents=[HELPER, SLOW]), budget=Budget(grace=0.1))
    sample = run_scripted(solver, scripts, log_dir)
    row = by_name(ledger(sample)["members"])["lead"]
    assert (row["background_started"], row["background_cancelled"]) == (2, 1)
    assert (row["status"], row["cancelled"]) == ("submitted", True)
    assert row["calls"]["calls"] == 4 + 1  # the slow subagent's call never returned
    assert row["meter"]["usage"]["total_tokens"] == 4 * 11 + 9
    ends = {
        e["name"]: e["status"]
        for e in sample.store["inspect_swarm:subagents"]["entries"]
        if e["op"] == "end"
    }
    assert ends == {"lead/AGENT-1": "completed", "lead/AGENT-2": "cancelled"}


def test_a_stop_cancels_a_deepagent_leads_running_background_subagent(log_dir: Path) -> None:
    """The peer's submission stops the swarm while the lead waits on its slow subagent: the
    lead is cancelled, and so is its background work."""
    scripts = {
        "peer": [used(pause(1.0, submit("done")), 5, 1)],
        "lead": [  # with one subagent, deepagent's agent tool takes no subagent_type
            used(call("agent", prompt="wait", background=True), 10, 1),
            used(call("agent_wait", agent_ids=["AGENT-1"], timeout=120), 10, 1),
            used(submit("never"), 10, 1),
        ],
        "lead/slow": [used(pause(60.0, submit("late")), 3, 1)],
    }
    from swarm import Budget, controller

    solver = board(
        deep_lead(subagents=[SLOW]),
        member(shm_worker, name="peer"),
        controller_=controller("leaderless"),
        budget=Budget(grace=0.1),
    )
    sample = run_scripted(solver, scripts, log_dir)
    rows = by_name(ledger(sample)["members"])
    lead = rows["lead"]
    assert (lead["background_started"], lead["background_cancelled"]) == (1, 1)
    assert (lead["status"], lead["cancelled"]) == ("cancelled", True)
    assert rows["peer"]["status"] == "submitted"
    assert ledger(sample)["stop_reason"] == "submitted"
    assert ledger(sample)["total_complete"] is False  # the slow call was cut in flight


def test_the_subagents_record_reads_back_typed_as_it_was_written(log_dir: Path) -> None:
    """swarm.analysis reads the record through the schema it was written through: each entry
    is the class of its op, with the stored values."""
    from inspect_ai.log import read_eval_log

    from swarm.analysis import SubagentDispatch, SubagentEnd, SubagentReceived, swarm_subagents

    scripts = {
        "lead": [
            used(call("agent", prompt="add 2 and 3", background=True), 10, 1),
            used(call("agent_wait", agent_ids=["AGENT-1"]), 10, 1),
            used(submit("5"), 10, 1),
        ],
        "lead/sub": [used(submit("5"), 7, 2)],
    }
    run_scripted(board(deep_lead()), scripts, log_dir)
    [path] = log_dir.glob("*.eval")
    [sample] = read_eval_log(str(path)).samples or []
    record = swarm_subagents(sample)
    assert record is not None
    assert [type(e) for e in record.entries] == [SubagentDispatch, SubagentEnd, SubagentReceived]
    dispatch, end, received = record.entries
    assert isinstance(dispatch, SubagentDispatch) and isinstance(end, SubagentEnd)
    assert (dispatch.seq, dispatch.name, dispatch.subagent, dispatch.depth) == (
        0,
        "lead/AGENT-1",
        "helper",
        1,
    )
    assert (end.status, end.usage.total_tokens, end.usage.calls) == ("completed", 9, 1)
    assert isinstance(received, SubagentReceived)
    assert (received.via, received.kind, received.text) == ("agent_wait", "result", "5")
    assert record.model_dump() == sample.store["inspect_swarm:subagents"]
