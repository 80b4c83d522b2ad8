"""Seen means seen: a message, a receipt or a notice counts as seen only when it is in the input
of a model call that was sent.  ``read_messages`` pages to what Inspect shows whole (the tool
output limit); what it does not show stays unread; a result no later call carries is never seen;
no notice is built for a member whose next call is refused (the swarm is stopping, or the member
is torn down)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments

from swarm import controller, member, swarm
from swarm.plugins.channels._board_text import FILE_HEADER, LISTING_HEADER
from swarm.testing import Step, call, pause, run_eval, scripted_model, submit

from helpers import (
    BOARD,
    board,
    comm_events,
    notice_in,
    notice_messages,
    run_scripted,
    shm_comm,
    shm_worker,
    sm,
    statuses,
    tool_results,
)

SEQ = re.compile(r'<peer_message from="[^"]+" relationship="[^"]+" kind="[^"]+" seq="(\d+)">')


def run(
    scripts: dict[str, list[Step]], eval_args: dict[str, Any] | None = None, **swarm_args: Any
) -> EvalSample:
    args = {
        "members": member("swarm/worker", name="lead", can_spawn=["worker"]),
        "templates": {"worker": member("swarm/worker")},
        **swarm_args,
    }
    log = run_eval(swarm(**args), model=scripted_model(scripts), **(eval_args or {}))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def messages(sample: EvalSample) -> list[dict[str, Any]]:
    return sample.store["inspect_swarm:messages"]["messages"]  # type: ignore[no-any-return]


def fence(sender: str, seq: int, text: str) -> str:
    """A message as read_messages shows it (the format, written out here on purpose)."""
    return (
        f'<peer_message from="{sender}" relationship="child" kind="message" seq="{seq}">\n'
        f"{text}\n</peer_message>"
    )


def model_calls(sample: EvalSample, name: str) -> list[ModelEvent]:
    """The model calls of member ``name``'s own loop, in order (found by its preamble)."""
    return [
        e
        for e in resolve_sample_attachments(sample).events
        if isinstance(e, ModelEvent) and any(f"You are {name}," in m.text for m in e.input)
    ]


# -- paging -----------------------------------------------------------------------------------


def fan_in(n: int, k: int, limit: int | None) -> tuple[EvalSample, list[list[int]]]:
    """``n`` children send the lead ``k`` replies each; the lead reads three pages (a tool
    output limit of ``limit`` bytes, Inspect's default of 16 KiB when ``None``) and submits.
    Checks every page against the format and the limit, and returns the sample and the seqs
    each page showed."""
    lead = [call("spawn_child", name=f"w{i:03}", task="t") for i in range(n)]
    lead += [call("wait_for_children"), *[call("read_messages")] * 3, submit("done")]
    worker = [call("send_message", to="parent", text=f"reply {j}") for j in range(k)]
    scripts: dict[str, list[Step]] = {"lead": lead}
    scripts.update({f"w{i:03}": [*worker, submit("ok")] for i in range(n)})
    sample = run(
        scripts,
        eval_args={} if limit is None else {"max_tool_output": limit},
        spawning={"max_children": n, "max_live": n + 1, "max_spawns": n},
        controller=controller("leaderless", stop_on_submission=False),
    )
    cap = 16 * 1024 if limit is None else limit
    log = messages(sample)
    assert len(log) == n * k and all(m["kind"] == "message" for m in log)
    pages = [text for text, _ in tool_results(sample, "read_messages")]
    assert len(pages) == 3
    by_seq = {m["seq"]: m for m in log}
    order = [m["seq"] for m in log]  # oldest first: the pages are consecutive
    shown = [[int(s) for s in SEQ.findall(p)] for p in pages]
    flat = [s for page in shown for s in page]
    assert flat == order[: len(flat)]
    for page, seqs in zip(pages, shown, strict=True):
        body = "\n\n".join(fence(by_seq[s]["sender"], s, by_seq[s]["text"]) for s in seqs)
        done = order.index(seqs[-1]) + 1
        assert page == f"{body}\n\n{n * k - done} more messages: call read_messages again."
        assert len(page.encode()) <= cap
        # one message more would not have fitted
        nxt = by_seq[order[done]]
        more = f"{body}\n\n{fence(nxt['sender'], nxt['seq'], nxt['text'])}"
        rest = f"\n\n{n * k - done - 1} more messages: call read_messages again."
        assert len((more + rest).encode()) > cap
    # exactly what was shown is seen, each page when the lead's next call (whose input holds
    # it) was sent; every other reply is unread and unseen
    assert {m["seq"] for m in log if m["seen"] is not None} == set(flat)
    assert all(by_seq[s]["seen"]["via"] == "read" for s in flat)
    times = [{by_seq[s]["seen"]["time"] for s in seqs} for seqs in shown]
    assert all(len(t) == 1 for t in times)
    assert min(times[0]) < min(times[1]) < min(times[2])
    counted = sample.store["inspect_swarm:metrics"]["messages"]
    assert counted == {"messages": n * k, "receipts": 0, "unseen": n * k - len(flat)}
    return sample, shown


def test_a_lead_is_shown_pages_of_160_replies_and_only_what_it_was_shown_is_seen() -> None:
    _, shown = fan_in(32, 5, 2048)
    assert [len(s) for s in shown] == [20, 20, 20]


@pytest.mark.large
def test_a_lead_is_shown_pages_of_1280_replies_and_only_what_it_was_shown_is_seen() -> None:
    # 256 children x 5 replies under Inspect's default limit (16 KiB): ~50 s (1,500 calls)
    _, shown = fan_in(256, 5, None)
    assert [len(s) for s in shown] == [167, 166, 166]


def test_a_page_that_fits_exactly_and_one_byte_more(log_dir: Any) -> None:
    # a limit of 600 bytes: two messages and the line for the third fit exactly; one byte more
    # in the second and it waits for the next page
    limit = 600
    first = "a" * 100
    head = fence("a", 1, first) + "\n\n" + fence("a", 2, "")
    tail = "\n\n1 more message: call read_messages again."
    second = "b" * (limit - len(head) - len(tail))
    for grow, pages in ((0, [[1, 2], [3]]), (1, [[1], [2, 3]])):
        texts = [first, second + "b" * grow, "c"]
        lead = [
            call("spawn_child", name="a", task="t"),
            call("wait_for_children"),
            call("read_messages"),
            call("read_messages"),
            call("read_messages"),
            submit("done"),
        ]
        child = [*[call("send_message", to="parent", text=t) for t in texts], submit("ok")]
        sample = run({"lead": lead, "a": child}, eval_args={"max_tool_output": limit})
        results = [text for text, _ in tool_results(sample, "read_messages")]
        assert [[int(s) for s in SEQ.findall(r)] for r in results[:2]] == pages
        assert results[2] == "No unread messages."
        if grow == 0:
            assert len(results[0].encode()) == limit
            assert results[0] == fence("a", 1, first) + "\n\n" + fence("a", 2, texts[1]) + tail
        else:
            assert (
                results[0]
                == fence("a", 1, first) + "\n\n2 more messages: call read_messages again."
            )
        # every message was shown and a later call carried it
        assert [m["seen"]["via"] for m in messages(sample)] == ["read"] * 3


def test_a_message_that_no_page_could_show_whole_is_refused() -> None:
    limit = 600
    lead = [call("spawn_child", name="a", task="t"), call("wait_for_children"), submit("done")]
    child = [call("send_message", to="parent", text="x" * 500), submit("ok")]
    sample = run({"lead": lead, "a": child}, eval_args={"max_tool_output": limit})
    [(_, error)] = tool_results(sample, "send_message")
    assert error == (
        "the message, with its fence, is over the 600 bytes a tool result shows whole; send less."
    )
    assert messages(sample)[0]["kind"] == "receipt"  # no message: the child did not reply
    metrics = sample.store["inspect_swarm:metrics"]
    comm = {m["name"]: m["comm"]["messages"] for m in metrics["members"]}
    assert comm["a"]["rejections"] == {"output_limit": 1} and comm["a"]["records"] == 0


# -- a result or a notice that no model call carries --------------------------------------------


def stopping_swarm(
    lead_call: Step, scripts: dict[str, list[Step]], children: tuple[str, ...] = ("a", "b")
) -> EvalSample:
    """A lead with children and a second roster member, ``quick``, whose submission stops the
    swarm at 2 s while the lead's ``lead_call`` is in flight (it returns at 4 s from its start,
    after the spawns: a loaded machine, a mutation run's tracing, must not let the stop come
    before the call is sent)."""
    lead = [
        *[call("spawn_child", name=c, task="t") for c in children],
        pause(4.0, lead_call),
        submit("never sent"),
    ]
    return run(
        {"lead": lead, "quick": [pause(2.0, submit("42"))], **scripts},
        members=[
            member("swarm/worker", name="lead", can_spawn=["worker"]),
            member("swarm/worker", name="quick"),
        ],
    )


def test_a_read_whose_result_no_model_call_carries_is_not_seen() -> None:
    sample = stopping_swarm(
        call("read_messages"),
        {
            "a": [call("send_message", to="parent", text="1"), submit("ok")],
            "b": [call("send_message", to="parent", text="2"), submit("ok")],
        },
    )
    assert sample.store["inspect_swarm:result"]["stop_reason"] == "submitted"
    [(text, _)] = tool_results(sample, "read_messages")
    assert SEQ.findall(text) == ["1", "2"]  # shown to the tool, after the stop
    # the lead's next call was refused: the result never reached its model
    assert statuses(sample)["lead"] == "stopped"
    assert [(m["seq"], m["seen"]) for m in messages(sample)] == [(1, None), (2, None)]
    assert sample.store["inspect_swarm:metrics"]["messages"]["unseen"] == 2


def test_no_notice_is_built_once_the_swarm_is_stopping() -> None:
    # b ends without replying (a receipt for the lead); the stop comes before the lead's turn
    # boundary, so no notice is built, counted or marks the receipt seen
    sample = stopping_swarm(call("list_children"), {"b": [pause(0.2, submit("ok"))]}, ("b",))
    assert sample.store["inspect_swarm:result"]["stop_reason"] == "submitted"
    assert notice_messages(sample) == []
    assert comm_events(sample, "notified") == []
    metrics = sample.store["inspect_swarm:metrics"]
    lead = next(m for m in metrics["members"] if m["name"] == "lead")
    assert lead["comm"]["messages"]["notices"] == 0
    receipt = next(m for m in messages(sample) if m["kind"] == "receipt")
    assert receipt["about"] == "b" and receipt["seen"] is None


def test_no_notice_is_built_for_a_torn_down_member() -> None:
    # a's child g ends without replying (a receipt for a); the lead ends while a's call is in
    # flight, so a is torn down: at a's turn boundary no notice is built, counted or seen
    lead = [call("spawn_child", name="a", task="t"), pause(0.4, submit("done"))]
    a = [call("spawn_child", name="g", task="t"), pause(0.8, call("list_children")), submit("x")]
    sample = run(
        {"lead": lead, "a": a, "g": [submit("ok")]},
        templates={"worker": member("swarm/worker", can_spawn=["worker"])},
        controller=controller("leaderless", stop_on_submission=False),
    )
    assert statuses(sample) == {"lead": "submitted", "a": "stopped", "g": "submitted"}
    assert [n.text for n in notice_messages(sample)] == []
    assert comm_events(sample, "notified") == []
    metrics = sample.store["inspect_swarm:metrics"]
    a_row = next(m for m in metrics["members"] if m["name"] == "a")
    assert a_row["comm"]["messages"]["notices"] == 0
    receipt = next(m for m in messages(sample) if m["about"] == "g")
    assert receipt["recipient"] == "a" and receipt["seen"] is None


def test_a_notice_is_counted_and_its_receipt_seen_when_the_call_that_carries_it_is_sent() -> None:
    lead = [call("spawn_child", name="b", task="t"), pause(0.5, call("list_children"))]
    lead += [call("list_children"), submit("d")]
    sample = run(
        {"lead": lead, "b": [submit("ok")]},
        controller=controller("leaderless", stop_on_submission=False),
    )
    [notice] = list({n.text: n for n in notice_messages(sample)}.values())
    assert notice.text == "[Swarm notice] [Receipt] Your child b finished without replying to you."
    [receipt] = messages(sample)
    # seen at the start of the lead's third call: the first whose input holds the notice
    calls = model_calls(sample, "lead")
    carrying = [i for i, e in enumerate(calls) if any(notice_in(m) == notice for m in e.input)]
    assert carrying[0] == 2
    [notified] = comm_events(sample, "notified")
    # seen.call: that third call's number (the first carrying call, index 2, is call 3)
    assert receipt["seen"] == {"time": notified["time"], "via": "notice", "call": carrying[0] + 1}
    metrics = sample.store["inspect_swarm:metrics"]
    row = next(m for m in metrics["members"] if m["name"] == "lead")
    assert row["comm"]["messages"]["notices"] == 1


# -- shared memory views -------------------------------------------------------------------------


def test_a_shared_memory_view_that_would_be_cut_is_paged_and_only_the_shown_lines_are_read(
    log_dir: Any,
) -> None:
    # 40 lines of 20 bytes and a limit of 600 bytes: the view shows the lines that fit, as a
    # ranged view of them, says which remain, and the evidence reads only those lines
    limit = 600
    content = "".join(f"line {n:02} ..........\n" for n in range(1, 41))
    script = [
        sm("create", path=f"{BOARD}/big.md", file_text=content),
        sm("view", path=f"{BOARD}/big.md"),
        submit("done"),
    ]
    sample = run_scripted(
        board(member(shm_worker, name="a")),
        {"a": script},
        log_dir,
        max_tool_output=limit,
    )
    [(text, error)] = [r for r in tool_results(sample, "shared_memory")][1:]
    assert error is None
    [read] = comm_events(sample, "read")
    [f] = read["files"]
    first, last = f["lines"]
    assert (f["file"], f["version"], first) == ("f-1", 1, 1)
    body = "".join(f"{n:6}\tline {n:02} ..........\n" for n in range(1, last + 1))
    opening = (
        f'<peer_file id="f-1" path="{BOARD}/big.md" version="1" writer="a" record="w-1" '
        f'lines="1-{last}">'
    )
    rest = (
        f"Lines {last + 1}-40 of f-1 are not shown: the view would be over the {limit} bytes a "
        f"tool result shows whole. View them with view_range=[{last + 1}, 40]."
    )
    assert text == f"{FILE_HEADER}\n\n{opening}\n{body}</peer_file>\n\n{rest}"
    assert len(text.encode()) <= limit
    # one line more would not have fitted (the span and the rest line keep their lengths)
    assert len(text.encode()) + len(f"{last + 1:6}\tline {last + 1:02} ..........\n") > limit
    assert last == 5
    assert shm_comm(sample, "a")["reads"] == 1


def test_a_shared_memory_listing_that_would_be_cut_lists_what_fits(log_dir: Any) -> None:
    limit = 700
    names = [f"{BOARD}/notes-{i:02}.md" for i in range(1, 13)]
    script = [*[sm("create", path=p, file_text="x\n") for p in names], sm("view", path=BOARD)]
    sample = run_scripted(
        board(member(shm_worker, name="a")),
        {"a": [*script, submit("done")]},
        log_dir,
        max_tool_output=limit,
    )
    text, error = tool_results(sample, "shared_memory")[-1]
    assert error is None
    [read] = comm_events(sample, "read")
    listed = [f["file"] for f in read["files"]]
    rows = "".join(f"f-{i}  version 1  a  {names[i - 1]}\n" for i in range(1, len(listed) + 1))
    left = 12 - len(listed)
    assert text == (
        f'{LISTING_HEADER}\n\n<peer_listing path="{BOARD}">\n{rows}</peer_listing>\n\n'
        f"{left} more files are not listed: the listing would be over the {limit} bytes a tool "
        "result shows whole. View a subdirectory, or a file by its id."
    )
    assert len(text.encode()) <= limit
    assert listed == [f"f-{i}" for i in range(1, 7)]
    # one row more would not have fitted
    assert len(text.encode()) + len(f"f-7  version 1  a  {names[6]}\n") > limit


def test_a_receipt_too_big_for_any_page_is_shown_cut_and_never_seen() -> None:
    # a limit of 100 bytes: the receipt's fence alone is over it, so Inspect cuts the read's
    # result and the receipt, though taken, is never marked seen
    lead = [
        call("spawn_child", name="b", task="t"),
        call("wait_for_children"),
        call("read_messages"),
        call("read_messages"),
        submit("done"),
    ]
    sample = run(
        {"lead": lead, "b": [submit("ok")]},
        eval_args={"max_tool_output": 100},
        members=member("swarm/worker", name="lead", can_spawn=["worker"], delivery="poll"),
    )
    first, second = [text for text, _ in tool_results(sample, "read_messages")]
    assert first.startswith("\nThe output of your call to read_messages was too long")
    assert second == "No unread messages."
    [receipt] = messages(sample)
    assert receipt["kind"] == "receipt" and receipt["seen"] is None
