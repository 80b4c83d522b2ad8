"""swarm.diagnosis on scripted runs: each failure mode found by exactly its check, the honest
runs found clean, and the figures of a fan-out of 8 pinned against a hand count from its log."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from inspect_ai.agent import Agent, agent, react
from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalSample, read_eval_log
from inspect_ai.tool import Tool, tool

from swarm import Budget, channel, controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.analysis import swarm_evidence
from swarm.diagnosis import CHECKS, Diagnosis, diagnose, diagnose_log
from swarm.testing import (
    Step,
    call,
    fail,
    pause,
    poll,
    reply,
    run_eval,
    scripted_model,
    submit,
)

BOARD = "/shared_memory"
BIN = Path(sys.executable).parent


def u(step: Step, tokens: tuple[int, int] = (10, 5)) -> Step:
    """``step`` with its usage set (input, output tokens)."""
    return attrs.evolve(step, usage=list(tokens))


@tool
def lookup() -> Tool:
    async def execute(key: str) -> str:
        """Look a key up.

        Args:
            key: the key.
        """
        return f"the value of {key}"

    return execute


@agent
def board_worker() -> Agent:
    """A react agent wired to the channels, with one tool of work (``lookup``)."""
    return react(tools=[swarm_tools(), lookup()], on_continue=swarm_on_continue())


def board_swarm(*names: str, **params: Any) -> Agent:
    return swarm(
        members=[member(board_worker, name=n) for n in names],
        channels=[channel("shared_memory")],
        controller=controller("leaderless", stop_on_submission=False),
        **params,
    )


def sample_of(solver: Agent, scripts: dict[str, list[Step]], tmp_path: Path) -> EvalSample:
    log = run_eval(solver, model=scripted_model(scripts), log_dir=tmp_path)
    return (read_eval_log(log.location).samples or [])[0]


def checks_of(found: Diagnosis) -> list[str]:
    return found.checks_found()


# -- each failure mode, found by exactly its check -----------------------------------------


def test_step_repetition(tmp_path: Path) -> None:
    again = u(call("lookup", key="x"))
    sample = sample_of(
        board_swarm("looper"), {"looper": [again, again, again, u(submit("42"))]}, tmp_path
    )
    found = diagnose(sample)
    assert checks_of(found) == ["step_repetition"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("looper", "FM-1.3 Step repetition")
    repeated = [t.id for t in sample.events if t.event == "tool" and t.function == "lookup"]
    assert finding.evidence == ("member:looper", *(f"tool:{i}" for i in repeated))


def test_a_board_write_nobody_viewed_charges_nobody(tmp_path: Path) -> None:
    # a board write is addressed to no one: that nobody viewed it shows in the funnel, and is
    # no member's failure (the writer shared it; nobody was asked to read it)
    write = call("shared_memory", command="create", path=f"{BOARD}/notes.md", file_text="alpha")
    sample = sample_of(
        board_swarm("writer", "idle"),
        {"writer": [u(write), u(submit("42"))], "idle": [u(submit("42"))]},
        tmp_path,
    )
    found = diagnose(sample)
    assert found.findings == ()
    [board] = found.figures.funnels
    assert (board.channel, board.sent, board.read, board.acted) == ("shared_memory", 1, 0, 0)


def test_information_withholding(tmp_path: Path) -> None:
    # the lead spawns keeper to look a value up; keeper looks it up and submits it without
    # telling the lead, which waited for it
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member(board_worker)},
    )
    lead = [u(call("spawn_child", name="keeper", task="What is the value of alpha?"))]
    lead += [u(call("wait_for_children")), u(submit("unknown"))]
    keeper = [u(call("lookup", key="alpha")), u(submit("the value of alpha"))]
    found = diagnose(sample_of(solver, {"lead": lead, "keeper": keeper}, tmp_path))
    assert checks_of(found) == ["information_withholding"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("keeper", "FM-2.4 Information withholding")
    assert finding.evidence == ("spawn:1", "member:keeper")


def test_unread_message(tmp_path: Path) -> None:
    # c replies to the lead, which waits for it and submits without reading it
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
    )
    lead = [u(call("spawn_child", name="c", task="a word")), u(call("wait_for_children"))]
    lead += [u(submit("42"))]
    child = [u(call("send_message", to="parent", text="forty-two")), u(submit("42"))]
    found = diagnose(sample_of(solver, {"lead": lead, "c": child}, tmp_path))
    assert checks_of(found) == ["unread_message"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("lead", "FM-2.5 Ignored other agent's input")
    assert finding.evidence == ("message:1", "member:lead")


def test_ignored_input(tmp_path: Path) -> None:
    write = call("shared_memory", command="create", path=f"{BOARD}/answer.md", file_text="17")
    reader = [
        u(call("swarm_wait", path=f"{BOARD}/answer.md")),
        u(call("shared_memory", command="view", path="f-1")),
        u(submit("42")),
    ]
    sample = sample_of(
        board_swarm("writer", "reader"),
        {
            "writer": [u(reply("warming up")), pause(0.2, u(write)), u(submit("17"))],
            "reader": reader,
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert checks_of(found) == ["ignored_input"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("reader", "FM-2.5 Ignored other agent's input")
    assert finding.evidence[0] == "w-1"
    [board] = found.figures.funnels
    assert (board.sent, board.reached, board.read, board.acted) == (1, 1, 1, 0)


def test_premature_termination(tmp_path: Path) -> None:
    # slow tells the lead it started, then works on; the lead reads that and submits, which
    # stops the swarm while slow is still working: the lead ended the task too early
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        budget=Budget(grace=0),
    )
    sample = sample_of(
        solver,
        {
            "lead": [
                u(call("spawn_child", name="slow", task="count")),
                poll(u(call("read_messages")), "started"),
                u(submit("started")),
            ],
            "slow": [
                u(call("send_message", to="parent", text="started")),
                pause(5, u(reply("done"))),
            ],
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert checks_of(found) == ["premature_termination"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("lead", "FM-3.1 Premature termination")
    assert finding.evidence == ("member:slow", "spawn:1")


def test_work_after_the_stop(tmp_path: Path) -> None:
    # quick's submission stops the swarm while late's call is in flight: late's call ends
    # after the stop (work after it), and quick stopped the swarm while late worked
    solver = swarm(members=[member(board_worker, name="quick"), member(board_worker, name="late")])
    sample = sample_of(
        solver,
        {"quick": [u(submit("42"))], "late": [pause(0.5, u(call("lookup", key="x")))]},
        tmp_path,
    )
    found = diagnose(sample)
    assert checks_of(found) == ["premature_termination", "work_after_stop"]
    stopped, finding = found.findings
    assert (stopped.member, stopped.evidence) == ("quick", ("member:late",))
    assert (finding.member, finding.mode) == ("late", "FM-1.5 Unaware of termination conditions")
    [late] = [
        e
        for e in sample.events
        if isinstance(e, ModelEvent)
        and any(c.function == "lookup" for c in e.output.message.tool_calls or [])
    ]
    assert finding.evidence == (f"event:{late.uuid}",)
    assert "(15 tokens)" in finding.why


def test_a_member_that_never_acted(tmp_path: Path) -> None:
    sample = sample_of(
        board_swarm("solver", "broken"),
        {"solver": [u(submit("42"))], "broken": [fail("model API down")]},
        tmp_path,
    )
    found = diagnose(sample)
    assert checks_of(found) == ["never_acted"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("broken", "FM-1.2 Disobey role specification")
    assert "model API down" in finding.why


def test_every_check_has_a_scenario() -> None:
    assert list(CHECKS) == [
        "step_repetition",
        "information_withholding",
        "unread_message",
        "ignored_input",
        "premature_termination",
        "work_after_stop",
        "never_acted",
    ]


# -- honest runs are clean -------------------------------------------------------------------


def test_the_shared_memory_example_is_clean(tmp_path: Path) -> None:
    """The coordination run of docs/examples/shared_memory_board.py."""
    create = call("shared_memory", command="create", path=f"{BOARD}/answer.md", file_text="42")
    sample = sample_of(
        board_swarm("writer", "reader"),
        {
            "writer": [reply("warming up"), pause(0.3, create), submit("42")],
            "reader": [
                call("swarm_wait", path=f"{BOARD}/answer.md"),
                call("shared_memory", command="view", path="f-1"),
                submit("42"),
            ],
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert found.findings == () and found.unlinked == ()
    [board] = found.figures.funnels
    assert (board.sent, board.reached, board.read, board.acted) == (1, 1, 1, 1)
    # the reader's wait, as the evidence recorded it (how long it lasted depends on the
    # machine: the write may come before the wait begins)
    waited = [e["duration"] for e in swarm_evidence(sample, "waited")]
    assert len(waited) == 1 and found.figures.peer_wait_time == waited[0]


def test_the_honest_fanout_eval_is_clean(tmp_path: Path) -> None:
    from swarm.plugins.scorers.fanout import run_fanout

    outcome = run_fanout("csv-metrics", None, 600, str(tmp_path))
    [found] = list(diagnose_log(outcome["log"]))
    assert found.findings == ()
    [messages] = found.figures.funnels
    assert (messages.sent, messages.reached, messages.read, messages.acted) == (8, 8, 8, 8)


# -- the figures of a fan-out of 8, against a hand count -------------------------------------

LEAD = (100, 10)
CHILD = (20, 5)
NAMES = [f"c{i}" for i in range(1, 9)]


def fan_out_of_8(tmp_path: Path) -> EvalSample:
    lead = [u(call("spawn_child", name=n, task=f"a word for {n}"), LEAD) for n in NAMES]
    lead += [u(call("wait_for_children"), LEAD), u(call("read_messages"), LEAD)]
    lead += [u(submit(" ".join(f"{n}=w{n}" for n in NAMES)), LEAD)]
    lead[-1] = pause(0.2, lead[-1])  # the lead's answer, and c8's counting, take time
    scripts = {"lead": lead}
    for n in NAMES:
        scripts[n] = [
            u(reply("reading"), CHILD),
            pause(0.3 if n == "c8" else 0.0, u(reply("counting"), CHILD)),
            u(call("send_message", to="parent", text=f"w{n}"), CHILD),
            u(submit(f"w{n}"), CHILD),
        ]
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        spawning={"max_children": 8},
    )
    return sample_of(solver, scripts, tmp_path)


def model_events(sample: EvalSample) -> dict[str, list[ModelEvent]]:
    """Each member's model events in order: those in the agent span named after it."""
    names = {"lead", *NAMES}
    span_of = {
        e.id: e.name for e in sample.events if isinstance(e, SpanBeginEvent) and e.name in names
    }
    found: dict[str, list[ModelEvent]] = {}
    for e in sample.events:
        if isinstance(e, ModelEvent) and e.span_id in span_of:
            found.setdefault(span_of[e.span_id], []).append(e)
    return found


def test_the_critical_path_of_a_fan_out_of_8(tmp_path: Path) -> None:
    sample = fan_out_of_8(tmp_path)
    found = diagnose(sample)
    assert found.findings == ()
    events = model_events(sample)
    assert len(events["lead"]) == 11 and all(len(events[n]) == 4 for n in NAMES)
    # by hand: the longest chain in time runs through the two calls that take time: the
    # lead's 8 spawns, c8's 3 calls up to its reply (its 2nd takes 0.3 s), and the lead's call
    # that holds the replies (its 11th, 0.2 s); every other call takes a few milliseconds
    path = [*events["lead"][:8], *events["c8"][:3], events["lead"][10]]
    path_tokens = sum(e.output.usage.total_tokens for e in path)
    assert path_tokens == 9 * 110 + 3 * 25 == 1065
    cp = found.figures.critical_path
    assert (cp.steps, cp.tokens) == (12, 1065)
    assert cp.calls == (
        *(("lead", i) for i in range(1, 9)),
        ("c8", 1),
        ("c8", 2),
        ("c8", 3),
        ("lead", 11),
    )
    every = [e for calls in events.values() for e in calls]
    total_time = sum(e.working_time or 0.0 for e in every)
    path_time = sum(e.working_time or 0.0 for e in path)
    assert cp.time == pytest.approx(path_time)
    assert found.figures.parallelism == pytest.approx(total_time / path_time)
    assert found.figures.parallelism <= 9  # never more than the members that ran
    figures = found.figures
    assert (figures.model_calls, figures.tokens) == (43, 11 * 110 + 32 * 25)
    # outside the answer's chain: each child's submit, after its reply
    assert (figures.answer_tokens, figures.overhead_tokens) == (11 * 110 + 24 * 25, 8 * 25)
    assert figures.overhead == pytest.approx(200 / 2010)
    assert figures.writes == 8 and figures.message_density == pytest.approx(8 / 43)
    [messages] = figures.funnels
    assert (messages.sent, messages.reached, messages.read, messages.acted) == (8, 8, 8, 8)
    assert (figures.tool_calls, figures.duplicate_tool_calls, figures.redundancy) == (0, 0, None)
    assert figures.peer_wait_time > 0  # the lead's wait_for_children


def test_redundancy_counts_tool_work_two_members_both_did(tmp_path: Path) -> None:
    look = u(call("lookup", key="x"))
    sample = sample_of(
        board_swarm("a", "b"),
        {"a": [look, u(call("lookup", key="y")), u(submit("42"))], "b": [look, u(submit("42"))]},
        tmp_path,
    )
    figures = diagnose(sample).figures
    assert (figures.tool_calls, figures.duplicate_tool_calls) == (3, 1)
    assert figures.redundancy == pytest.approx(1 / 3)


# -- where users look: samples_df and inspect score ----------------------------------------


def test_the_figures_as_samples_df_columns(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from inspect_ai.analysis import SampleSummary, samples_df

    from swarm.diagnosis import DiagnosisColumns

    fan_out_of_8(tmp_path)
    df = samples_df(tmp_path, columns=SampleSummary + DiagnosisColumns)
    [row] = df.to_dict("records")
    assert (row["swarm_critical_path_steps"], row["swarm_critical_path_tokens"]) == (12, 1065)
    assert row["swarm_overhead_tokens"] == 200
    assert json.loads(row["swarm_funnels"]) == {
        "messages": {"sent": 8, "reached": 8, "read": 8, "acted": 8}
    }
    assert json.loads(row["swarm_failures"]) == [] and row["swarm_findings"] == 0


def test_a_member_started_late_is_not_blamed_for_work_after_the_stop(tmp_path: Path) -> None:
    # a loaded machine: each member's span began a second before its recorded start says
    # (the member's start mapped to the records' clock was off by that); every call still
    # ended before the stop, read on the transcript's one clock, so nothing is found
    sample = fan_out_of_8(tmp_path)
    early = [
        e.model_copy(update={"timestamp": e.timestamp - timedelta(seconds=1)})
        if isinstance(e, SpanBeginEvent) and e.type == "agent"
        else e
        for e in sample.events
    ]
    shifted = sample.model_copy(update={"events": early})
    assert (
        sum(isinstance(e, SpanBeginEvent) and e.type == "agent" for e in early) == 10
    )  # the swarm, 9 members
    assert diagnose(shifted).findings == ()


def test_inspect_score_adds_the_findings_to_a_saved_log(tmp_path: Path) -> None:
    # steps as mappings: the log keeps the model's arguments, and `inspect score` builds it again
    again = {"tool": "lookup", "args": {"key": "x"}, "usage": [10, 5]}
    run_eval(
        board_swarm("looper", "broken"),
        model=scripted_model(
            {
                "looper": [again, again, again, {"submit": "42", "usage": [10, 5]}],
                "broken": [{"fail": "down"}],
            }
        ),
        log_dir=tmp_path,
    )
    [path] = sorted(tmp_path.glob("*.eval"))
    done = subprocess.run(
        [
            str(BIN / "inspect"),
            "score",
            str(path),
            "--scorer",
            "swarm/swarm_diagnosis",
            "--action",
            "append",
            "--overwrite",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = read_eval_log(str(path))
    scores = (log.samples or [])[0].scores or {}
    # the score is keyed by the scorer's registered name: swarm/swarm_diagnosis when installed,
    # swarm_diagnosis from an editable install (see swarm/_entry_point.py)
    [score] = [v for k, v in scores.items() if k.split("/")[-1] == "swarm_diagnosis"]
    assert score.value == {
        "step_repetition": 1,
        "information_withholding": 0,
        "unread_message": 0,
        "ignored_input": 0,
        "premature_termination": 0,
        "work_after_stop": 0,
        "never_acted": 1,
    }
    assert [f["check"] for f in score.metadata["findings"]] == ["step_repetition", "never_acted"]
    assert "looper made the same tool call 3 times in a row" in (score.explanation or "")


# -- the timeline: the critical path drawn, the findings marked ------------------------------


def test_the_timeline_draws_the_critical_path(tmp_path: Path) -> None:
    from xml.etree import ElementTree as ET

    from swarm.timeline import timeline

    sample = fan_out_of_8(tmp_path)
    drawn = timeline(sample)
    assert drawn.run.critical == diagnose(sample).figures.critical_path.calls
    assert drawn.run.findings == ()
    svg = ET.fromstring(drawn.to_svg())
    ns = {"s": "http://www.w3.org/2000/svg"}
    [path] = svg.findall(".//s:g[@class='critical-path']", ns)
    assert path.get("data-steps") == "12"
    [line] = path.findall("s:polyline", ns)
    assert len((line.get("points") or "").split()) == 12
    assert svg.findall(".//s:g[@class='findings']/s:g", ns) == []
    # children labelled with their task; the lead's wait for them drawn as a wait
    assert drawn.run.lane("c8").task == "a word for c8"
    labels = [t.text for t in svg.findall(".//s:text[@class='child-label']", ns)]
    assert sorted(labels) == sorted(f"{n} · a word for {n}" for n in NAMES)
    [wait] = drawn.run.lane("lead").waits
    [waited] = [t for t in drawn.run.lane("lead").tool_calls if t.function == "wait_for_children"]
    assert (wait.wait, wait.outcome, wait.start, wait.end) == (
        "wait_for_children",
        "children",
        waited.start,
        waited.end,
    )


def test_the_timeline_marks_each_finding_on_its_members_lane(tmp_path: Path) -> None:
    from xml.etree import ElementTree as ET

    from swarm.timeline import FindingMark, timeline

    sample = sample_of(
        board_swarm("solver", "broken"),
        {"solver": [u(submit("42"))], "broken": [fail("model API down")]},
        tmp_path,
    )
    drawn = timeline(sample)
    [mark] = drawn.run.findings
    assert isinstance(mark, FindingMark)
    assert (mark.member, mark.check) == ("broken", "never_acted")
    svg = ET.fromstring(drawn.to_svg())
    ns = {"s": "http://www.w3.org/2000/svg"}
    [found] = svg.findall(".//s:g[@class='findings']/s:g", ns)
    assert (found.get("data-member"), found.get("data-check")) == ("broken", "never_acted")
    title = found.find("s:title", ns)
    assert title is not None and "FM-1.2 Disobey role specification" in (title.text or "")


def test_the_scorer_scores_during_the_eval_and_a_sample_with_no_swarm(tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    from swarm.diagnosis import swarm_diagnosis

    log = run_eval(
        board_swarm("solver", "broken"),
        model=scripted_model({"solver": [u(submit("42"))], "broken": [fail("model API down")]}),
        scorer=swarm_diagnosis(),
        log_dir=tmp_path,
    )
    [score] = ((log.samples or [])[0].scores or {}).values()
    assert score.value == {name: int(name == "never_acted") for name in CHECKS}
    [plain] = inspect_eval(
        Task(dataset=[Sample(input="hi", target="x")], solver=generate(), scorer=swarm_diagnosis()),
        model=scripted_model(answer="x"),
        log_dir=str(tmp_path / "plain"),
        display="none",
    )
    sample = (plain.samples or [])[0]
    [score] = (sample.scores or {}).values()
    assert score.value == {name: 0 for name in CHECKS} and score.metadata == {"no_swarm": True}
    with pytest.raises(LookupError, match="no swarm ran in it"):
        diagnose(sample)
    assert list(diagnose_log(tmp_path / "plain")) == []
