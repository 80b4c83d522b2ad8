"""A scripted step that polls (``until``): the step is played again until its tool calls'
results, since the poll's first turn, hold every one of its texts; then the script moves on.
Orders a test depends on are made this way, by construction, not by sleeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm import ConfigError, member, swarm
from swarm.testing import call, pause, poll, run_eval, scripted_model, submit
from swarm.testing._script import MAX_REPEATS, Said, Step, load_scripts, step_index

from helpers import by_name, ledger, tool_results

POLL = Step(tool="read_messages", until=("from a", "from b"))
STEPS = (Step(tool="bash"), POLL, Step(submit="42"))


def turn(result: str) -> list[Said]:
    """An assistant turn of one tool call, and its result."""
    return [Said("assistant", "", (("read_messages", {}),)), Said("tool", result)]


def test_a_poll_plays_again_until_its_results_hold_every_text() -> None:
    start = [Said("user", "go"), *turn("bash ran")]
    assert step_index(start, STEPS) == 1
    assert step_index(start + turn("nothing yet"), STEPS) == 1
    assert step_index(start + turn("from a: hi"), STEPS) == 1
    # the texts may come in different results of the poll: both are now in
    assert step_index(start + turn("from a: hi") + turn("from b: ho"), STEPS) == 2
    assert step_index(start + turn("from b, and from a"), STEPS) == 2


def test_texts_seen_before_the_poll_began_do_not_count() -> None:
    before = [Said("user", "go"), *turn("from a and from b")]
    assert step_index(before + turn("none"), STEPS) == 1


def test_news_in_user_messages_counts_from_the_agents_first_turn() -> None:
    """An agent CLI puts what reaches it mid-turn (a Codex sub-agent's notification) in a user
    message between any two calls: one that arrived after the agent's first turn counts, even
    before the poll began; the task before it does not, nor an earlier step's tool result."""
    steps = (Step(tool="spawn"), Step(tool="spawn"), POLL, Step(submit="42"))
    early = [Said("user", "go"), *turn("spawned"), Said("user", "<note>from a</note>")]
    early += turn("spawned")
    assert step_index(early + turn("none"), steps) == 2
    assert step_index(early + turn("none") + [Said("user", "from b")], steps) == 3
    assert step_index(early + turn("from b"), steps) == 3
    stale = [Said("user", "go from a"), *turn("from a")]
    assert step_index(stale + turn("from b"), STEPS) == 1


def test_a_poll_gives_up_after_its_most_turns() -> None:
    start = [Said("user", "go"), *turn("bash ran")]
    waiting = start + turn("none") * (MAX_REPEATS - 1)
    assert step_index(waiting, STEPS) == 1
    assert step_index(waiting + turn("none"), STEPS) == 2
    assert MAX_REPEATS == 1_000


def test_a_poll_from_a_scripts_file_and_back() -> None:
    scripts = load_scripts(
        "w:\n  - {tool: swarm_wait, args: {timeout: 5}, until: 'ended', sleep: 0.1}\n"
        "  - {tool: read_messages, until: [a, b]}\n"
    )
    first, second = scripts["w"]
    assert (first.until, first.sleep, second.until) == (("ended",), 0.1, ("a", "b"))
    assert first.as_data() == {
        "tool": "swarm_wait",
        "args": {"timeout": 5},
        "sleep": 0.1,
        "until": ["ended"],
    }
    assert poll(call("read_messages"), "a", "b") == second


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "w: [{tool: bash, until: []}]",
            "scripts['w'][0].until: expected a text, or a list of texts, to wait for in the "
            "call's results (each not empty), got []",
        ),
        (
            "w: [{tool: bash, until: [a, '']}]",
            "scripts['w'][0].until: expected a text, or a list of texts, to wait for in the "
            "call's results (each not empty), got ['a', '']",
        ),
        (
            "w: [{tool: bash, until: 3}]",
            "scripts['w'][0].until: expected a text, or a list of texts, to wait for in the "
            "call's results (each not empty), got 3",
        ),
        (
            "w: [{reply: hi, until: a}]",
            "scripts['w'][0]: until goes with a tool step (a poll waits for the tool's "
            "results), not with reply",
        ),
    ],
)
def test_a_wrong_poll_is_refused_naming_its_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_scripts(text)
    assert str(error.value) == message


def test_a_lead_polls_until_its_childs_message_arrives(log_dir: Path) -> None:
    """The lead spawns a child and polls ``read_messages``; the child replies only after
    0.3 s: the lead's poll plays until the reply is in, however long that takes, and only then
    does it submit (a script that moved on at once would submit before the reply)."""
    scripts = {
        "lead": [
            call("spawn_child", name="w", task="t"),
            poll(call("read_messages"), 'from="w"'),
            submit("got it"),
        ],
        "w": [pause(0.3, call("send_message", to="parent", text="the value is 7")), submit("7")],
    }
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
    )
    log = run_eval(solver, model=scripted_model(scripts), log_dir=log_dir)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    results = [text for text, _ in tool_results(sample, "read_messages")]
    assert "the value is 7" in results[-1]
    assert not any("the value is 7" in r for r in results[:-1])
    members = {m["name"]: m for m in sample.store["inspect_swarm:result"]["members"]}
    assert (members["lead"]["answer"], members["w"]["answer"]) == ("got it", "7")
    calls = by_name(ledger(sample)["members"])["lead"]["calls"]["calls"]
    assert calls == len(results) + 2  # the spawn, each poll, the submit
