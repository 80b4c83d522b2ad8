"""Nothing a plugin or a normaliser does can end, hang or silence a run: a ``BaseException``
that is not an ``Exception`` is contained (the plugin named, the sample failed, the records
written), a call that blocks is interrupted at the sample's limit, and a hook's return is
checked as its hookspec types it."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from inspect_ai.agent import Agent, agent, react
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.tool import Tool, tool

from swarm import Decision, MemberSubmitted, controller, hookimpl, member, swarm, swarm_tools
from swarm.testing import Step, call, reply, run_eval, scripted_model, submit

from helpers import catalog, members_in_turn, only_sample, worker

RECORDS = ("inspect_swarm:result", "inspect_swarm:ledger", "inspect_swarm:metrics")


def used(step: Step) -> Step:
    return attrs.evolve(step, usage=(100, 10))


def answers(*texts: str) -> dict[str, list[Step]]:
    return {f"m{i + 1}": [used(reply("warming up")), used(submit(t))] for i, t in enumerate(texts)}


def voted(log_dir: Path, normalize: Any, *, plugins: Any = None, **eval_args: Any) -> EvalLog:
    names = ["m1", "m2"]
    solver = swarm(
        members=members_in_turn(names),
        controller=controller("leaderless", final="vote", normalize=normalize),
        plugins=plugins,
    )
    return run_eval(solver, model=scripted_model(answers("42", "42")), log_dir=log_dir, **eval_args)


def written(sample: EvalSample) -> None:
    """The three records are in the sample's store, the result provisional."""
    assert [key for key in RECORDS if key in sample.store] == list(RECORDS)
    assert sample.store["inspect_swarm:result"]["final"]["provisional"] is True


# -- BaseException ---------------------------------------------------------------------------


def exits(text: str) -> str:
    raise SystemExit(3)


def interrupts(text: str) -> str:
    raise KeyboardInterrupt


def closes(text: str) -> str:
    raise GeneratorExit


@pytest.mark.parametrize(
    ("normalize", "raised"),
    [(exits, "SystemExit(3)"), (interrupts, "KeyboardInterrupt()"), (closes, "GeneratorExit()")],
)
def test_a_normaliser_raising_a_base_exception_fails_the_sample_with_its_records(
    log_dir: Path, normalize: Any, raised: str
) -> None:
    log = voted(log_dir, normalize)
    assert log.status == "error"  # the eval finished: not left "started"
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        f"Plugin 'controller:leaderless', hook 'swarm_choose_answer': raised {raised} (in the "
        f"normaliser test_containment:{normalize.__name__} on the answer of m1)"
    )
    written(sample)


class Exits:
    """A controller-side plugin whose decision hook raises a ``BaseException``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    @hookimpl(tryfirst=True)
    def swarm_on_submission(self, view: Any, event: MemberSubmitted) -> Decision | None:
        raise self.error


@pytest.mark.parametrize(
    ("error", "raised"),
    [
        (SystemExit("bye"), "SystemExit('bye')"),
        (KeyboardInterrupt(), "KeyboardInterrupt()"),
        (GeneratorExit(), "GeneratorExit()"),
    ],
)
def test_a_decision_hook_raising_a_base_exception_fails_the_sample_naming_it(
    log_dir: Path, error: BaseException, raised: str
) -> None:
    solver = swarm(members=member(worker, name="m1"), plugins=catalog(Exits(error)))
    log = run_eval(solver, model=scripted_model(answers("42")), log_dir=log_dir)
    assert log.status == "error"
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        f"Plugin 'test-plugin-0', hook 'swarm_on_submission': raised {raised}"
    )
    assert [key for key in RECORDS if key in sample.store] == list(RECORDS)


class ExitingObserver:
    @hookimpl
    def swarm_member_started(self, view: Any, member: Any) -> None:
        raise SystemExit(1)


def test_an_observer_raising_system_exit_is_logged_and_the_process_runs_on(
    log_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    solver = swarm(members=member(worker, name="m1"), plugins=catalog(ExitingObserver()))
    log = run_eval(solver, model=scripted_model(answers("42")), log_dir=log_dir)
    assert log.status == "success"
    sample = only_sample(log)
    assert sample.store["inspect_swarm:result"]["final"]["answer"] == "42"
    logged = [r for r in caplog.records if r.name == "swarm"]
    assert [r.getMessage().removeprefix("sample=1\n") for r in logged] == [
        "observer plugin 'test-plugin-0' failed in hook 'swarm_member_started' (the run goes on)"
    ]
    assert logged[0].exc_info is not None and logged[0].exc_info[0] is SystemExit
    # the process can run another eval (an escaped SystemExit left it unable to)
    again = run_eval(swarm(members=member(worker)), model=scripted_model(), log_dir=log_dir)
    assert again.status == "success"


# -- blocking ----------------------------------------------------------------------------------


SLEPT: list[str] = []  # the texts whose 20 s sleep ran to its end


def sleeps(text: str) -> str:
    time.sleep(20)
    SLEPT.append(text)
    return text


def test_a_blocking_normaliser_ends_the_sample_at_its_time_limit(log_dir: Path) -> None:
    SLEPT.clear()
    log = voted(log_dir, sleeps, time_limit=5)
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message.startswith(
        "Plugin 'controller:leaderless', hook 'swarm_choose_answer': did not return within "
    )
    assert sample.error.message.endswith(
        " s, the time the sample had left (in the normaliser test_containment:sleeps on the "
        "answer of m1); a hook must return promptly (run slow work in a tool or a task of your "
        "own)"
    )
    written(sample)
    # the normaliser would have held the loop 20 s a call (40 s for both answers): its sleep
    # was interrupted at the sample's limit, not waited for (no clock is compared)
    assert SLEPT == []


class BlockingObserver:
    def __init__(self) -> None:
        self.calls = 0
        self.returned = 0  # calls whose 20 s sleep ran to its end

    @hookimpl
    def swarm_member_ended(self, view: Any, event: Any) -> None:
        self.calls += 1
        time.sleep(20)
        self.returned += 1


def test_a_blocking_observer_is_dropped_and_the_sample_keeps_its_limit(
    log_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    observer = BlockingObserver()
    names = ["m1", "m2", "m3"]
    solver = swarm(
        members=members_in_turn(names),
        controller=controller("leaderless", final="last"),
        plugins=catalog(observer),
    )
    log = run_eval(
        solver, model=scripted_model(answers("1", "2", "3")), log_dir=log_dir, time_limit=4
    )
    [sample] = log.samples or []
    # dropped after it blocked, its one sleep interrupted (three ends would have blocked 60 s)
    assert (observer.calls, observer.returned) == (1, 0)
    logs = [r.getMessage().removeprefix("sample=1\n") for r in caplog.records if r.name == "swarm"]
    [logged] = logs
    # the sample's time limit ended it (Inspect's own limit, not a plugin's fault), the members
    # still running cancelled
    assert sample.limit is not None and (sample.limit.type, sample.limit.limit) == ("time", 4.0)
    members = sample.store["inspect_swarm:result"]["members"]
    assert [(m["name"], m["status"]) for m in members] == [
        ("m1", "submitted"),
        ("m2", "cancelled"),
        ("m3", "cancelled"),
    ]
    assert logged.startswith(
        "observer plugin 'test-plugin-0' blocked in hook 'swarm_member_ended' and is dropped "
        "from this run (the run goes on): it did not return within "
    )
    assert [key for key in RECORDS if key in sample.store] == list(RECORDS)


def test_a_hook_with_no_limit_to_keep_is_not_bounded(log_dir: Path) -> None:
    # without a time or working limit nothing bounds a hook: a slow one is slow, not a fault
    def slow(text: str) -> str:
        time.sleep(1.2)  # over MIN_BOUND, so a bound would have cut it
        return text

    log = voted(log_dir, slow)
    assert log.status == "success"
    assert only_sample(log).store["inspect_swarm:result"]["final"]["member"] == "m1"


# -- return values ---------------------------------------------------------------------------


class RepliesSeven:
    @hookimpl(tryfirst=True)
    def swarm_replied(self, view: Any, child: str, parent: str) -> Any:
        return 7


class ToolsNotTools:
    @hookimpl
    def swarm_member_tools(self, view: Any, member: Any, nested: bool) -> Any:
        return ["bash"]


def test_swarm_replied_returning_seven_fails_the_run_naming_the_plugin(log_dir: Path) -> None:
    from helpers import spawn

    scripts = {
        "lead": [
            used(spawn("c1")),
            used(call("wait_for_children", timeout=30)),
            used(call("list_children")),
            used(submit("42")),
        ],
        "c1": [used(submit("7"))],
    }
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
        plugins=catalog(RepliesSeven()),
    )
    log = run_eval(solver, model=scripted_model(scripts), log_dir=log_dir)
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "Plugin 'test-plugin-0', hook 'swarm_replied': returned int 7; expected bool or None"
    )


def test_swarm_member_tools_holding_a_string_fails_the_run_naming_the_plugin(
    log_dir: Path,
) -> None:
    solver = swarm(members=member(worker, name="m1"), plugins=catalog(ToolsNotTools()))
    log = run_eval(solver, model=scripted_model(answers("42")), log_dir=log_dir)
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "Plugin 'test-plugin-0', hook 'swarm_member_tools': returned a list holding str 'bash' "
        "at [0]; expected Inspect tools (made with @tool)"
    )


def test_no_log_record_is_lost_to_the_containment(caplog: pytest.LogCaptureFixture) -> None:
    # the guard itself: a contained SystemExit keeps its type and message; a nested call is
    # bounded by the outer one only
    from swarm._hooks.guard import Blocked, Contained, guarded_call

    with pytest.raises(Contained) as info:
        guarded_call(exits, ("x",), None)
    assert isinstance(info.value.original, SystemExit)
    assert repr(info.value) == "SystemExit(3)"
    with pytest.raises(Blocked) as blocked:
        guarded_call(time.sleep, (5,), 0.0)  # the floor: a second
    assert blocked.value.bound == 1.0
    assert guarded_call(lambda: guarded_call(str, (7,), 0.0), (), 2.0) == "7"
    caplog.set_level(logging.INFO)


# -- a plugin's tools ------------------------------------------------------------------------


@tool
def exits_the_process() -> Tool:
    async def execute() -> str:
        """End the process."""
        raise SystemExit(5)

    return execute


class GivesAnExitingTool:
    @hookimpl
    def swarm_member_tools(self, view: Any, member: Any, nested: bool) -> Any:
        return [exits_the_process()]


@agent
def tooled() -> Agent:
    return react(tools=[swarm_tools()])


def test_a_plugins_tool_raising_system_exit_fails_the_run_naming_it(log_dir: Path) -> None:
    # before, the SystemExit left the eval and ended the process (exit status 5)
    solver = swarm(members=member(tooled, name="m1"), plugins=catalog(GivesAnExitingTool()))
    scripts = {"m1": [used(call("exits_the_process")), used(submit("42"))]}
    log = run_eval(solver, model=scripted_model(scripts), log_dir=log_dir)
    assert log.status == "error"
    [sample] = log.samples or []
    assert sample.error is not None
    assert sample.error.message == (
        "Plugin 'test-plugin-0', hook 'swarm_member_tools: tool exits_the_process': raised "
        "SystemExit(5)"
    )
    assert [key for key in RECORDS if key in sample.store] == list(RECORDS)


class ExitingFactory:
    @hookimpl
    def swarm_register_controllers(self, register: Any) -> None:
        def quits(**params: Any) -> Any:
            raise SystemExit("the factory quit")

        register("quits", quits)


def test_a_factory_raising_system_exit_is_a_config_error_naming_it() -> None:
    from swarm import ConfigError

    with pytest.raises(ConfigError) as info:
        swarm(members=member(worker), controller="quits", plugins=catalog(ExitingFactory()))
    assert str(info.value) == (
        "controller: controller 'quits' refused its parameters: SystemExit('the factory quit')"
    )


def test_a_rewrapped_tool_keeps_everything_the_model_and_inspect_see() -> None:
    # a plugin's tool wrapped for containment (and a subagent's tool wrapped for its sandbox)
    # keeps its definition whole; the subagent's wrapper dropped max_output and options before
    from inspect_ai.tool import ToolDef

    from swarm._run.wiring import with_execute

    async def other() -> str:
        return "other"

    found = ToolDef(
        exits_the_process(),
        parallel=True,
        max_output=123,
        options={"k": "v"},
    )
    again = ToolDef(with_execute(found, other))
    kept = ("name", "description", "parameters", "parallel", "max_output", "options")
    assert {k: getattr(again, k) for k in kept} == {k: getattr(found, k) for k in kept}
    assert (again.max_output, again.options, again.parallel) == (123, {"k": "v"}, True)
