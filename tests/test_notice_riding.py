"""Where a notice goes: a turn that ended with tool results gets it at the end of the last
result, as a shared-memory result carries its status line, so it adds no message to the
conversation; a turn that ended without a tool call gets it as a user message.  Either way
the message's metadata names it, and it and the result under it are seen when the call whose
input holds them is sent."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai.agent import Agent, agent, react
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import Content, ContentImage, ContentText
from inspect_ai.tool import Tool, tool

from swarm import channel, controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.testing import Step, call, pause, reply, run_eval, scripted_model, submit

from helpers import BOARD, comm_events, notice_in, notice_messages, sm, tool_results

RECEIPT = "[Swarm notice] [Receipt] Your child b finished without replying to you."


def run(
    scripts: dict[str, list[Step]], lead: Any = "swarm/worker", **swarm_args: Any
) -> EvalSample:
    """A lead (``lead``: its member builder) that may spawn ``swarm/worker`` children."""
    solver = swarm(
        members=member(lead, name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        controller=controller("leaderless", stop_on_submission=False),
        **swarm_args,
    )
    log = run_eval(solver, model=scripted_model(scripts))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return resolve_sample_attachments(sample)


def assert_receipt_seen_by_its_notice(sample: EvalSample) -> None:
    """b's receipt was seen, via the notice, when the call that carried the notice was sent."""
    [receipt] = sample.store["inspect_swarm:messages"]["messages"]
    [notified] = comm_events(sample, "notified")
    assert receipt["seen"] == {"time": notified["time"], "via": "notice", "call": 3}


def lead_calls(sample: EvalSample) -> list[ModelEvent]:
    return [
        e
        for e in sample.events
        if isinstance(e, ModelEvent) and any("You are lead," in m.text for m in e.input)
    ]


def test_a_notice_rides_on_the_last_tool_result_of_its_turn() -> None:
    lead = [call("spawn_child", name="b", task="t"), pause(0.5, call("list_children"))]
    lead += [call("list_children"), submit("d")]
    sample = run({"lead": lead, "b": [submit("ok")]})
    calls = lead_calls(sample)
    carrier = calls[2].input[-1]
    listed = tool_results(sample, "list_children")[0][0]  # the tool's own result, as logged
    assert carrier.role == "tool" and carrier.text == f"{listed}\n\n{RECEIPT}"
    assert RECEIPT not in listed
    # no message was added: the third call's input is the second's plus one turn
    assert [m.role for m in calls[2].input] == [m.role for m in calls[1].input] + [
        "assistant",
        "tool",
    ]
    [notice] = list({n.text: n for n in notice_messages(sample)}.values())
    assert (notice.text, notice.role) == (RECEIPT, "tool")
    [line] = notice.metadata["inspect_swarm"]["lines"]
    assert notice.metadata["inspect_swarm"]["id"] == "n-1" and line["channel"] == "messages"
    assert_receipt_seen_by_its_notice(sample)


def test_a_turn_without_a_tool_call_gets_the_notice_as_a_user_message() -> None:
    lead = [call("spawn_child", name="b", task="t"), pause(0.5, reply("thinking"))]
    lead += [call("list_children"), submit("d")]
    sample = run({"lead": lead, "b": [submit("ok")]})
    calls = lead_calls(sample)
    roles = [m.role for m in calls[2].input]
    # react adds no continue prompt of its own: the notice is the turn's one user message
    assert roles == [m.role for m in calls[1].input] + ["assistant", "user"]
    assert calls[2].input[-1].text == RECEIPT
    assert notice_in(calls[2].input[-1]) is not None
    assert_receipt_seen_by_its_notice(sample)


def test_a_read_that_carries_a_notice_is_seen_with_it() -> None:
    # b writes a file and replies; the lead reads the reply, and the notice of b's file rides
    # on that read's result: the reply is seen when the call holding both is sent
    child = [pause(0.2, sm("create", path=f"{BOARD}/x.md", file_text="x"))]
    child += [call("send_message", to="parent", text="hi"), submit("ok")]
    lead = [call("spawn_child", name="b", task="t"), pause(0.5, call("read_messages"))]
    lead += [call("list_children"), submit("d")]
    sample = run(
        {"lead": lead, "b": child}, channels=[channel("shared_memory"), channel("messages")]
    )
    calls = lead_calls(sample)
    [(read, _)] = tool_results(sample, "read_messages")
    carrier = calls[2].input[-1]
    assert carrier.role == "tool" and carrier.text.startswith(f"{read}\n\n[Swarm notice] 1 shared")
    [notified] = [e for e in comm_events(sample, "notified") if e["member"] == "lead"]
    assert notified["channel"] == "shared_memory"
    [reply_] = sample.store["inspect_swarm:messages"]["messages"]
    assert reply_["seen"] == {"time": notified["time"], "via": "read", "call": 3}


def test_a_failed_result_carries_no_notice_a_user_message_does() -> None:
    # providers send a failed tool result's error message, not its content, so a notice
    # riding on it would never reach the model: it comes as a user message instead
    lead = [call("spawn_child", name="b", task="t"), pause(0.5, call("no_such_tool"))]
    lead += [call("list_children"), submit("d")]
    sample = run({"lead": lead, "b": [submit("ok")]})
    calls = lead_calls(sample)
    failed, notice = calls[2].input[-2:]
    assert failed.role == "tool" and failed.error is not None
    assert notice_in(failed) is None and RECEIPT not in failed.text
    assert (notice.role, notice.text) == ("user", RECEIPT)
    assert_receipt_seen_by_its_notice(sample)


PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@tool
def parts() -> Tool:
    async def execute(image_only: bool) -> list[Content]:
        """A result of several parts.

        Args:
            image_only: only an image, no text.
        """
        image = ContentImage(image=PIXEL)
        return [image] if image_only else [ContentText(text="one"), image, ContentText(text="two")]

    return execute


@agent
def parts_worker() -> Agent:
    return react(tools=[parts(), swarm_tools()], on_continue=swarm_on_continue())


@pytest.mark.parametrize("image_only", [False, True])
def test_a_result_of_several_parts_carries_no_notice_a_user_message_does(image_only: bool) -> None:
    # Inspect moves a result's media to a user message of its own and rebuilds the result
    # without its metadata, so a notice riding on it would not be the one counted
    lead = [call("spawn_child", name="b", task="t")]
    lead += [pause(0.5, call("parts", image_only=image_only)), call("list_children"), submit("d")]
    sample = run({"lead": lead, "b": [submit("ok")]}, lead=parts_worker)
    calls = lead_calls(sample)
    *_, result, media, notice = calls[2].input
    assert result.role == "tool" and RECEIPT not in result.text
    assert media.role == "user" and [type(p).__name__ for p in media.content] == ["ContentImage"]
    assert (notice.role, notice.text) == ("user", RECEIPT)
    assert_receipt_seen_by_its_notice(sample)


@agent
def urged_worker() -> Agent:
    return react(tools=[swarm_tools()], on_continue=swarm_on_continue("Keep going."))


def test_a_message_of_the_agents_own_carries_the_notice_after_it() -> None:
    # swarm_on_continue("Keep going."): react sends that message after every turn; a notice
    # goes at its end, not on the tool result before it
    lead = [call("spawn_child", name="b", task="t"), pause(0.5, call("list_children"))]
    lead += [call("list_children"), submit("d")]
    sample = run({"lead": lead, "b": [submit("ok")]}, lead=urged_worker)
    calls = lead_calls(sample)
    assert [(m.role, m.text) for m in calls[1].input[-1:]] == [("user", "Keep going.")]
    result, urged = calls[2].input[-2:]
    assert result.role == "tool" and notice_in(result) is None
    assert (urged.role, urged.text) == ("user", f"Keep going.\n\n{RECEIPT}")
    found = notice_in(urged)
    assert found is not None and found.text == RECEIPT
    assert_receipt_seen_by_its_notice(sample)


@agent
def stopping_worker() -> Agent:
    return react(
        tools=[swarm_tools()], submit=False, on_continue=swarm_on_continue(no_tool_calls="stop")
    )


def test_a_turn_that_stops_the_agent_builds_no_notice() -> None:
    # no_tool_calls="stop": a reply without a tool call ends the agent, so no notice is built,
    # counted or marks the receipt seen
    lead = [call("spawn_child", name="b", task="t"), pause(0.5, reply("done"))]
    sample = run({"lead": lead, "b": [submit("ok")]}, lead=stopping_worker)
    assert len(lead_calls(sample)) == 2
    assert notice_messages(sample) == [] and comm_events(sample, "notified") == []
    [receipt] = sample.store["inspect_swarm:messages"]["messages"]
    assert receipt["seen"] is None
