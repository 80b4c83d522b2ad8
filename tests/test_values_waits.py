"""``swarm_wait`` pinned by value on real scripted runs: what a wait says when several things
are news at once, an ended member told once per loop, the wait ids in the evidence, a timed-out
wait that leaves nothing behind, one wait at a time per member, the news a channel reports
when everyone waits, and the stop of a controller that ends the swarm when everyone waits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.log import EvalSample
from inspect_ai.tool import ToolError
from inspect_ai.util import store

from swarm import (
    Decision,
    MemberView,
    PluginCatalog,
    SwarmView,
    WaitNews,
    controller,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
    swarm_wait,
)
from swarm.testing import call, pause, submit

from helpers import (
    BOARD,
    board,
    by_name,
    comm_events,
    metrics,
    result,
    run_scripted,
    shm_worker,
    tool_results,
)

EVERYONE_WAITS = "Nothing can change: every member is waiting, has ended or has not started."


def outcomes(sample: EvalSample) -> dict[str, dict[str, int]]:
    return {row["name"]: row["waits_by_outcome"] for row in metrics(sample)["members"]}


def create(path: str, text: str) -> Any:
    return call("shared_memory", command="create", path=f"{BOARD}/{path}", file_text=text)


def wait(**args: Any) -> Any:
    return call("swarm_wait", **args)


# -- what a wait says ----------------------------------------------------------------------------


def test_news_and_an_end_found_together_are_one_line_each_joined_by_a_space(
    log_dir: Path,
) -> None:
    # the writer writes and ends before the reader waits: both are news at the wait's first look
    scripts = {
        "writer": [create("a.md", "x"), submit("w")],
        "reader": [pause(1.0, wait()), submit("r")],
    }
    sample = run_scripted(
        board(member(shm_worker, name="writer"), member(shm_worker, name="reader")),
        scripts,
        log_dir,
    )
    assert tool_results(sample, "swarm_wait") == [
        (
            "1 shared memory file changed where you waited (f-1 new; by writer). View one with "
            'shared_memory(command="view", path="f-1"). writer ended (submitted).',
            None,
        )
    ]
    assert outcomes(sample) == {"writer": {}, "reader": {"news": 1}}


def test_an_ended_member_is_news_once_to_a_loop(log_dir: Path) -> None:
    # the second wait is not woken by the end the first one told: it times out
    scripts = {
        "quick": [submit("q")],
        "waiter": [pause(0.5, wait()), wait(timeout=1), submit("w")],
        "busy": [pause(3.0, submit("b"))],
    }
    solver = board(
        member(shm_worker, name="quick"),
        member(shm_worker, name="waiter"),
        member(shm_worker, name="busy"),
    )
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "swarm_wait") == [
        ("quick ended (submitted).", None),
        ("Nothing you waited for happened in 1 s.", None),
    ]
    assert outcomes(sample)["waiter"] == {"news": 1, "timeout": 1}
    # each wait has its own id in the evidence, numbered in the run's order
    assert [(e["wait"], e["member"], e["outcome"]) for e in comm_events(sample, "waited")] == [
        ("x-1", "waiter", "news"),
        ("x-2", "waiter", "timeout"),
    ]


# -- a wait leaves nothing behind ----------------------------------------------------------------


def test_a_timed_out_wait_leaves_nothing_behind(log_dir: Path) -> None:
    # a.md changes after the waiter's first wait (on it) timed out: that must neither refuse its
    # next wait ("already waiting") nor wake it, and the next wait still counts as waiting, so
    # when the writer waits too, every member waits
    scripts = {
        "waiter": [
            wait(path=f"{BOARD}/a.md", timeout=1),
            wait(path=f"{BOARD}/b.md"),
            submit("w"),
        ],
        "writer": [pause(2.5, create("a.md", "x")), wait(), submit("x")],
    }
    solver = board(member(shm_worker, name="waiter"), member(shm_worker, name="writer"), max_wait=4)
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "swarm_wait") == [
        ("Nothing you waited for happened in 1 s.", None),
        (EVERYONE_WAITS, None),
        (EVERYONE_WAITS, None),
    ]
    assert outcomes(sample) == {
        "waiter": {"timeout": 1, "all_waiting": 1},
        "writer": {"all_waiting": 1},
    }


@agent
def double_waiter() -> Agent:
    """Calls ``swarm_wait`` (1 s) and, while that sleeps, calls it again; keeps what each
    said in the sample's store under ``said``."""

    async def execute(state: AgentState) -> AgentState:
        tool = swarm_wait()
        said: list[str] = []

        async def first() -> None:
            said.append(str(await tool(timeout=1)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.sleep(0.3)
            try:
                said.append(str(await tool(timeout=1)))
            except ToolError as ex:
                said.append(f"refused: {ex.message}")
        store().set("said", said)
        return state

    return execute


def test_a_member_has_one_wait_at_a_time(log_dir: Path) -> None:
    scripts = {"busy": [pause(2.0, submit("b"))]}
    solver = board(member(double_waiter, name="double"), member(shm_worker, name="busy"))
    sample = run_scripted(solver, scripts, log_dir)
    assert sample.store["said"] == [
        "refused: double is already waiting: one wait at a time.",
        "Nothing you waited for happened in 1 s.",
    ]
    # the refused call was no wait
    row = by_name(metrics(sample)["members"])["double"]
    assert (row["waits"], row["waits_by_outcome"]) == (1, {"timeout": 1})


# -- when everyone waits -------------------------------------------------------------------------


class Arrivals:
    """A channel whose news is who has started running since a loop first looked: it reads
    the run's view, and its news comes from no record (a member start is not a commit)."""

    max_wait = 30

    def __init__(self) -> None:
        self.first_seen: dict[str, set[str]] = {}

    @hookimpl
    def swarm_wait_news(
        self, view: SwarmView, member: MemberView, loop: str, path: str | None
    ) -> WaitNews | None:
        running = {m.name for m in view.running}
        seen = self.first_seen.setdefault(loop, running)
        arrived = sorted(running - seen)
        if not arrived:
            return None
        return WaitNews(channel="arrivals", text=f"{', '.join(arrived)} started.")


class LateStart:
    """Starts ``early-*`` members; once all of them wait, starts ``late``."""

    @hookimpl
    def swarm_start(self, view: SwarmView) -> Decision:
        return Decision(start=[m.name for m in view.pending if m.name != "late"])

    @hookimpl
    def swarm_on_quiescence(self, view: SwarmView, event: Any) -> Decision | None:
        late = view.member("late")
        return Decision(start=["late"]) if late.state == "pending" else None


class ArrivalsPlugin:
    @hookimpl
    def swarm_register_channels(self, register: Any) -> None:
        register("arrivals", Arrivals)

    @hookimpl
    def swarm_register_controllers(self, register: Any) -> None:
        register("late_start", LateStart)


def test_news_found_when_everyone_waits_comes_before_the_all_waiting_line(
    log_dir: Path,
) -> None:
    pm, sources = get_plugin_manager()
    pm.register(ArrivalsPlugin(), name="arrivals-plugin")
    solver = swarm(
        members=[member(shm_worker, name="early", count=2), member(shm_worker, name="late")],
        channels=["arrivals"],
        controller="late_start",
        plugins=PluginCatalog(pm, sources),
    )
    scripts = {"late": [submit("l")], "*": [wait(), submit("e")]}
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "swarm_wait") == [(f"late started. {EVERYONE_WAITS}", None)] * 2
    assert outcomes(sample) == {
        "early-1": {"all_waiting": 1},
        "early-2": {"all_waiting": 1},
        "late": {},
    }
    assert result(sample)["stop_reason"] == "all_done"


def test_a_controller_that_stops_when_everyone_waits_ends_the_waits_stopping(
    log_dir: Path,
) -> None:
    # the stop releases the waits before the all_waiting release: the first release says why
    scripts = {"*": [wait(), submit("late")]}
    solver = board(member(shm_worker, count=2), controller_=controller("quiescence"))
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "swarm_wait") == [("The swarm is stopping.", None)] * 2
    assert outcomes(sample) == {"shm_worker-1": {"stopping": 1}, "shm_worker-2": {"stopping": 1}}
    assert result(sample)["stop_reason"] == "quiescence"


def test_a_member_ending_while_the_others_wait_is_news_not_quiescence(log_dir: Path) -> None:
    # an end while the others wait wakes them with news; it is no quiescence: the quiescence
    # controller does not stop the swarm, which ends all_done once the woken members submit
    scripts = {"worker": [pause(1.0, submit("w"))], "*": [wait(), submit("x")]}
    solver = board(
        member(shm_worker, name="worker"),
        member(shm_worker, name="a"),
        member(shm_worker, name="b"),
        controller_=controller("quiescence"),
    )
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "swarm_wait") == [("worker ended (submitted).", None)] * 2
    assert outcomes(sample) == {"worker": {}, "a": {"news": 1}, "b": {"news": 1}}
    assert result(sample)["stop_reason"] == "all_done"
