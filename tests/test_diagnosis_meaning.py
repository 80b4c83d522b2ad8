"""The diagnosis' figures and checks mean what a reader takes them to mean: the critical path is
the longest chain in time (so parallelism never exceeds the members that ran), an unread
message charges its reader, withholding is keeping what another member asked for, waiting is
not repetition, talking without acting is not acting, and a stop that cuts a member short is
the stopper's premature termination.

Each scenario runs on the scripted model; where an order matters it comes from a poll, a
``swarm_wait`` or ``wait_for_children``.  A pause is used only where a call must be slow (the
critical path is about time) or in flight when something happens (a message arriving during a
call): nothing else can hold a scripted model call open.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from inspect_ai.agent import Agent
from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import EvalSample, read_eval_log

from swarm import channel, controller, member, swarm
from swarm.diagnosis import diagnose
from swarm.diagnosis._figures import figures
from swarm.diagnosis._trace import Call, Trace
from swarm.records import METRICS_KEY
from swarm.testing import Step, call, fail, pause, poll, reply, run_eval, scripted_model, submit
from tests.test_diagnosis import board_worker


def u(step: Step) -> Step:
    """``step`` reporting 10 input and 5 output tokens."""
    return attrs.evolve(step, usage=[10, 5])


worker = board_worker  # a react agent with the swarm's tools and lookup, as the other file's


def talking(*names: str, stop_on_submission: bool = False) -> Agent:
    """Roster members with the board and messages to anyone."""
    return swarm(
        members=[member(worker, name=n) for n in names],
        channels=[channel("shared_memory"), channel("messages", routes="all")],
        controller=controller("leaderless", stop_on_submission=stop_on_submission),
    )


def family(**params: Any) -> Agent:
    """A lead that spawns workers (messages to the family)."""
    return swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member(worker)},
        **params,
    )


def sample_of(solver: Agent, scripts: dict[str, list[Step]], tmp_path: Path) -> EvalSample:
    log = run_eval(solver, model=scripted_model(scripts), log_dir=tmp_path)
    return (read_eval_log(log.location).samples or [])[0]


def model_events(sample: EvalSample, name: str) -> list[ModelEvent]:
    """``name``'s model events, in order (those in the agent span named after it)."""
    spans = {e.id for e in sample.events if e.event == "span_begin" and e.name == name}
    return [e for e in sample.events if isinstance(e, ModelEvent) and e.span_id in spans]


def tool_ids(sample: EvalSample, function: str) -> list[str]:
    return [e.id for e in sample.events if isinstance(e, ToolEvent) and e.function == function]


# -- 1. the critical path is the longest chain in time -----------------------------------------


def test_the_critical_path_is_the_longest_chain_in_time(tmp_path: Path) -> None:
    # a: one 1 s call (then its submit); b: three 0.15 s calls (then its submit). The chain
    # with the most calls is b's (0.45 s): model time over it read 3.2 for two members
    sample = sample_of(
        talking("a", "b"),
        {
            "a": [pause(1.0, u(call("lookup", key="slow"))), u(submit("42"))],
            "b": [pause(0.15, u(call("lookup", key=k))) for k in ("k1", "k2", "k3")]
            + [u(submit("42"))],
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert found.findings == ()
    path, f = found.figures.critical_path, found.figures
    assert path.calls == (("a", 1), ("a", 2)) and path.members == ("a",)
    a_time = sum(e.working_time or 0.0 for e in model_events(sample, "a"))
    b_time = sum(e.working_time or 0.0 for e in model_events(sample, "b"))
    assert (path.steps, path.tokens) == (2, 30)
    assert path.time == pytest.approx(a_time)
    assert f.model_time == pytest.approx(a_time + b_time)
    assert f.parallelism == pytest.approx((a_time + b_time) / a_time)
    assert f.parallelism == pytest.approx(1.45, abs=0.1)  # (1 + 3 * 0.15) / 1, never 3.2
    assert f.parallelism is not None and f.parallelism <= 2


def _call(index: int, member: str, step: int, time: float) -> Call:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    return Call(
        index=index,
        uuid=None,
        member=member,
        step=step,
        span=member,
        completed=True,
        tokens=15,
        time=time,
        duration=time,
        issued=(),
        holds=frozenset(),
        notices=frozenset(),
        said=(),
        start=moment,
        end=moment,
    )


def _trace(calls: list[Call]) -> Trace:
    return Trace(
        result={"members": [{"name": "a"}, {"name": "b"}]},
        metrics={},
        stop=None,
        stopped_at=None,
        members=({"name": "a"}, {"name": "b"}),
        calls=tuple(calls),
        tools=(),
        evidence=(),
        messages=(),
        spawns=(),
        entry_tool={},
        message_send={},
        message_read={},
        spawn_call={},
        links=(),
        unlinked=(),
        offsets={},
    )


def test_parallelism_is_undefined_when_the_critical_path_took_no_time() -> None:
    # calls that took no time: no chain is longer in time, so the most calls decide the path,
    # and model time over no time is no figure at all
    zero = _trace([_call(0, "a", 1, 0.0), _call(1, "b", 1, 0.0), _call(2, "b", 2, 0.0)])
    f = figures(zero)
    assert (f.critical_path.calls, f.critical_path.time) == ((("b", 1), ("b", 2)), 0.0)
    assert f.parallelism is None
    # times decide before counts: a's one call of 2 s beats b's two of 0.5 s
    timed = _trace([_call(0, "a", 1, 2.0), _call(1, "b", 1, 0.5), _call(2, "b", 2, 0.5)])
    f = figures(timed)
    assert (f.critical_path.calls, f.critical_path.time) == ((("a", 1),), 2.0)
    assert f.parallelism == 1.5


# -- 2. an unread message charges its reader ---------------------------------------------------


def test_replies_the_lead_never_read_charge_the_lead(tmp_path: Path) -> None:
    children = ["c1", "c2"]
    lead = [u(call("spawn_child", name=n, task=f"a word for {n}")) for n in children]
    lead += [u(call("wait_for_children")), u(submit("w1 w2"))]
    scripts = {"lead": lead}
    for n in children:
        scripts[n] = [u(call("send_message", to="parent", text=f"w{n}")), u(submit(f"w{n}"))]
    found = diagnose(sample_of(family(), scripts, tmp_path))
    assert found.checks_found() == ["unread_message"]
    assert [(f.member, f.mode) for f in found.findings] == [
        ("lead", "FM-2.5 Ignored other agent's input")
    ] * 2
    assert sorted(f.evidence for f in found.findings) == [
        ("message:1", "member:lead"),
        ("message:2", "member:lead"),
    ]
    [messages] = found.figures.funnels
    assert (messages.sent, messages.read) == (2, 0)


def test_a_message_arriving_during_the_recipients_last_call_charges_the_recipient(
    tmp_path: Path,
) -> None:
    # r asks s to go, then submits in a call of 1 s; s reads the go (a poll) and answers while
    # that call runs, so r ends without reading it
    sample = sample_of(
        talking("r", "s"),
        {
            "r": [u(call("send_message", to="s", text="go")), pause(1.0, u(submit("42")))],
            "s": [
                poll(u(call("read_messages")), "go"),
                u(call("send_message", to="r", text="go: late news")),
                u(submit("go")),
            ],
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert found.checks_found() == ["unread_message"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("r", "FM-2.5 Ignored other agent's input")
    assert finding.evidence == ("message:2", "member:r")
    assert "r never read s's message:2" in finding.why


# -- 3. withholding: keeping what another member asked for -------------------------------------


def test_a_child_that_keeps_the_answer_its_parent_asked_for_withholds_it(tmp_path: Path) -> None:
    lead = [u(call("spawn_child", name="keeper", task="What is the value of alpha?"))]
    lead += [u(call("wait_for_children")), u(submit("unknown"))]
    keeper = [u(call("lookup", key="alpha")), u(submit("the value of alpha"))]
    found = diagnose(sample_of(family(), {"lead": lead, "keeper": keeper}, tmp_path))
    assert found.checks_found() == ["information_withholding"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("keeper", "FM-2.4 Information withholding")
    assert finding.evidence == ("spawn:1", "member:keeper")


def test_a_peer_that_keeps_what_it_was_asked_withholds_it(tmp_path: Path) -> None:
    # a asks b, and waits until b has ended; b reads the question, looks it up and submits
    # without telling a
    sample = sample_of(
        talking("a", "b"),
        {
            "a": [
                u(call("send_message", to="b", text="what is alpha?")),
                poll(u(call("swarm_wait")), "b ended"),
                u(submit("unknown")),
            ],
            "b": [
                poll(u(call("read_messages")), "alpha"),
                u(call("lookup", key="alpha")),
                u(submit("the value of alpha")),
            ],
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert found.checks_found() == ["information_withholding"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("b", "FM-2.4 Information withholding")
    assert finding.evidence == ("message:1", "member:b")


def test_a_question_answered_is_not_withheld(tmp_path: Path) -> None:
    sample = sample_of(
        talking("a", "b"),
        {
            "a": [
                u(call("send_message", to="b", text="what is alpha?")),
                poll(u(call("read_messages")), "value of alpha"),
                u(submit("the value of alpha")),
            ],
            "b": [
                poll(u(call("read_messages")), "alpha"),
                u(call("lookup", key="alpha")),
                u(call("send_message", to="a", text="the value of alpha")),
                u(submit("the value of alpha")),
            ],
        },
        tmp_path,
    )
    assert diagnose(sample).findings == ()


# -- 4. waiting is not repetition --------------------------------------------------------------


def test_polling_for_a_message_is_not_step_repetition(tmp_path: Path) -> None:
    # a reads its empty inbox three times, tells b it is ready, and polls for b's answer; b
    # polls for the ready: identical read_messages calls, each a wait
    again = u(call("read_messages"))
    sample = sample_of(
        talking("a", "b"),
        {
            "a": [
                again,
                again,
                again,
                u(call("send_message", to="b", text="ready")),
                poll(again, "hello"),
                u(submit("hello")),
            ],
            "b": [
                poll(again, "ready"),
                u(call("send_message", to="a", text="hello, ready")),
                u(submit("ready")),
            ],
        },
        tmp_path,
    )
    runs = {
        m["name"]: m["longest_identical_tool_run"] for m in sample.store[METRICS_KEY]["members"]
    }
    assert runs["a"] >= 3  # the metrics count the waits as a run
    assert diagnose(sample).findings == ()


def test_waiting_between_identical_calls_does_not_break_their_run(tmp_path: Path) -> None:
    look = u(call("lookup", key="x"))
    sample = sample_of(
        talking("looper"),
        {
            "looper": [
                look,
                u(call("read_messages")),
                look,
                u(call("shared_memory", command="view", path="/shared_memory")),
                look,
                u(submit("42")),
            ]
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert found.checks_found() == ["step_repetition"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("looper", "FM-1.3 Step repetition")
    assert finding.evidence == ("member:looper", *(f"tool:{i}" for i in tool_ids(sample, "lookup")))


# -- 5. a member that only talks never acted ---------------------------------------------------


def test_a_member_that_only_talks_never_acted(tmp_path: Path) -> None:
    sample = sample_of(
        talking("solver", "talker"),
        {"solver": [u(submit("42"))], "talker": [u(reply("let me think")), fail("model down")]},
        tmp_path,
    )
    found = diagnose(sample)
    assert found.checks_found() == ["never_acted"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("talker", "FM-1.2 Disobey role specification")
    [talked, _] = model_events(sample, "talker")
    assert finding.evidence == ("member:talker", f"event:{talked.uuid}")
    assert "made no tool call and gave no answer" in finding.why


# -- 6. a stop that cuts a member short --------------------------------------------------------


def test_a_submission_that_stops_a_working_peer_is_premature_termination(tmp_path: Path) -> None:
    # b tells a it is working and waits; a reads it and submits, which stops the swarm
    sample = sample_of(
        talking("a", "b", stop_on_submission=True),
        {
            "a": [poll(u(call("read_messages")), "seven"), u(submit("seven"))],
            "b": [
                u(call("send_message", to="a", text="seven")),
                poll(u(call("swarm_wait")), "never happens"),
            ],
        },
        tmp_path,
    )
    found = diagnose(sample)
    assert found.checks_found() == ["premature_termination"]
    [finding] = found.findings
    assert (finding.member, finding.mode) == ("a", "FM-3.1 Premature termination")
    assert finding.evidence == ("member:b",)
    assert "a's submission stopped the swarm (submitted) while b was still working" in finding.why
