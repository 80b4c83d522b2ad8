"""Hostile values (issue 21): a channel's ``rate`` checked strictly and the same way for every
built-in channel, a model's negative wait timeouts clamped to the shortest wait, and refusals
that repeat no more than 200 characters of a model's value (nor keep more in a record).

Before the fix ``messages`` took ``rate: [true, 60]`` and ``[1, "60"]``, and refused infinite,
NaN and null counts with a Python exception's text (``OverflowError``, ``ValueError``,
``TypeError``); ``swarm_wait(timeout=-5)`` waited the channel's longest wait and
``wait_for_children(timeout=-5)`` 600 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalSample

from swarm import ConfigError, channel, member, swarm
from swarm.testing import call, submit

from helpers import (
    SLOW,
    WAIT,
    all_ended,
    board,
    comm_events,
    ledger_rows,
    run_scripted,
    shm_worker,
    sm,
    spawn,
    team,
    tool_results,
)

EXPECTED = "expected [count, seconds] (a whole count >= 1, finite seconds > 0) or null"


# -- a channel's rate --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["messages", "shared_memory"])
@pytest.mark.parametrize(
    ("rate", "shown"),
    [
        ("[true, 60]", "[True, 60]"),
        ("[1, '60']", "[1, '60']"),
        ("['1', 60]", "['1', 60]"),
        ("[1, true]", "[1, True]"),
        ("[.inf, 60]", "[inf, 60]"),
        ("[.nan, 60]", "[nan, 60]"),
        ("[null, 60]", "[None, 60]"),
        ("[1, .inf]", "[1, inf]"),
        ("[1, .nan]", "[1, nan]"),
        ("[1, null]", "[1, None]"),
        ("[1.5, 60]", "[1.5, 60]"),
        ("[0, 60]", "[0, 60]"),
        ("[1, 0]", "[1, 0]"),
        ("[1, -1]", "[1, -1]"),
        ("[1]", "[1]"),
        ("{count: 1, seconds: 60}", "{'count': 1, 'seconds': 60}"),
        ("fast", "'fast'"),
    ],
)
def test_a_bad_rate_in_a_topology_file_names_the_field(
    tmp_path: Path, name: str, rate: str, shown: str
) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(f"members: {{factory: react}}\nchannels: [{{name: {name}, rate: {rate}}}]\n")
    with pytest.raises(ConfigError) as info:
        swarm(config=path)
    # a count or seconds given as text gets the note every number field's refusal gets
    note = {
        "[1, '60']": "; that is the text '60' (a number in quotes is text; write 60)",
        "['1', 60]": "; that is the text '1' (a number in quotes is text; write 1)",
    }.get(shown, "")
    assert str(info.value) == (f"{path}: channels[0]: {name}.rate: {EXPECTED}, got {shown}{note}")


@pytest.mark.parametrize("name", ["messages", "shared_memory"])
def test_a_good_rate_is_read_as_a_whole_count_and_float_seconds(name: str) -> None:
    from swarm.plugins.channels.messages import messages
    from swarm.plugins.channels.shared_memory import shared_memory

    make = {"messages": messages, "shared_memory": shared_memory}[name]
    rates = [make(rate=r).rate for r in ([1, 0.5], (3, 2), [2.0, 60.0], None)]
    assert rates == [(1, 0.5), (3, 2.0), (2, 60.0), None]
    assert [type(n).__name__ for rate in rates if rate is not None for n in rate] == [
        "int",
        "float",
    ] * 3


# -- negative wait timeouts --------------------------------------------------------------------


def waited(sample: EvalSample) -> list[tuple[Any, ...]]:
    return [
        (e["member"], e["timeout"]["requested"], e["timeout"]["effective"], e["outcome"])
        for e in comm_events(sample, "waited")
    ]


def test_a_negative_swarm_wait_timeout_is_one_second(log_dir: Path) -> None:
    # a lone member that waits finds everyone waiting at once: the wait reports its timeout
    # without sleeping through it
    scripts = {"waiter": [call("swarm_wait", timeout=-5), submit("w")]}
    sample = run_scripted(
        swarm(
            members=[member(shm_worker, name="waiter")],
            channels=[channel("shared_memory", max_wait=30)],
        ),
        scripts,
        log_dir,
    )
    assert waited(sample) == [("waiter", -5.0, 1.0, "all_waiting")]


def test_a_negative_wait_for_children_timeout_waits_one_second(log_dir: Path) -> None:
    # the child sleeps 5 s: a 1 s wait ends with it running, a 600 s one would see it end
    lead = [
        spawn("a"),
        call("wait_for_children", timeout=-5),
        call("cancel_child", name="a"),
        WAIT,
        submit("done"),
    ]
    sample = run_scripted(team(), {"lead": lead, "a": [SLOW]}, log_dir)
    assert tool_results(sample, "wait_for_children") == [
        ("1 still running after 1 s: a.", None),
        (all_ended(1), None),
    ]


# -- issue 21: what a refusal repeats of a model's value, and what a record keeps ---------------

HUGE = 100_000


def cut(char: str) -> str:
    """A 100,000-character value as every refusal repeats it, and a refused record keeps it."""
    return char * 200 + "... (100,000 characters)"


def test_refusals_repeat_at_most_200_characters_of_what_a_model_gave(log_dir: Path) -> None:
    # before: each refusal repeated the 100,000 characters whole (about 25k tokens of the
    # model's context), and the spawn ledger and the evidence kept them whole
    lead = [
        spawn("a" * HUGE),
        spawn("b", template="T" * HUGE),
        call("cancel_child", name="c" * HUGE),
        call("send_message", to="d" * HUGE, text="hi"),
        submit("done"),
    ]
    sample = run_scripted(team(), {"lead": lead}, log_dir)
    bad = "must start with a letter or digit and use only letters, digits, '.', '_' and '-'"
    assert tool_results(sample, "spawn_child") == [
        ("", f"name: '{cut('a')}' {bad} (at most 64 characters)"),
        ("", f"you may not spawn template '{cut('T')}' (yours: worker)."),
    ]
    assert tool_results(sample, "cancel_child") == [
        ("", f"you have no running child called '{cut('c')}'.")
    ]
    assert tool_results(sample, "send_message") == [
        ("", f"there is no member called '{cut('d')}'.")
    ]
    assert ledger_rows(sample) == [
        (1, "refused", None, cut("a"), "lead", 1, "worker", "t", None, "name"),
        (2, "refused", None, "b", "lead", 1, cut("T"), "t", None, "template"),
    ]
    [sent] = comm_events(sample, "sent")
    assert (sent["op"], sent["rejected"]) == (
        {"to": cut("d")},
        {"control": "recipient", "reason": f"there is no member called '{cut('d')}'."},
    )


def test_the_boards_refusals_repeat_at_most_200_characters(log_dir: Path) -> None:
    # before: a str_replace's old_str and a file id were repeated whole, and a path as its
    # first 200 characters and "..." (with no length); the evidence kept the path whole
    path = "/shared_memory/a.md"
    long_path = "/shared_memory/" + "p" * (HUGE - 15)
    scripts = {
        "w": [
            sm("create", path=path, file_text="x\nx\n"),
            sm("str_replace", path=path, old_str="o" * HUGE, new_str="y"),
            sm("str_replace", path=path, old_str="x", new_str="y"),
            sm("view", path="f-" + "9" * (HUGE - 2)),
            sm("create", path=long_path, file_text="z"),
            submit("w"),
        ]
    }
    sample = run_scripted(board(member(shm_worker, name="w")), scripts, log_dir)
    assert [error for _, error in tool_results(sample, "shared_memory")] == [
        None,
        f"No replacement was performed, old_str `{cut('o')}` did not appear verbatim in {path}.",
        "No replacement was performed. Multiple occurrences of old_str `x` in lines [1, 2]. "
        "Please ensure it is unique",
        f"There is no file f-{'9' * 198}... (100,000 characters).",
        f"Invalid path '/shared_memory/{'p' * 185}... (100,000 characters)': it is 100000 "
        "bytes; the limit is 160.",
    ]
    rejected = [e for e in comm_events(sample, "sent") if e["rejected"]]
    assert [e["op"].get("path") for e in rejected] == [
        path,
        path,
        f"/shared_memory/{'p' * 185}... (100,000 characters)",
    ]
