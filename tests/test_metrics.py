"""Metrics, gate checks, and the verified and quiescence controllers, on real evals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.agent import Agent, agent, react
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample
from inspect_ai.scorer import match

from swarm import Budget, channel, controller, hookimpl, member, swarm, swarm_tools
from swarm.testing import call, pause, reply, run_eval, scripted_model, submit

from helpers import catalog, noop, result, shm_worker, statuses, worker

SWARM_KEYS = {
    "version",
    "tokens",
    "cost",
    "wall_clock",
    "members",
    "never_acted",
    "notify_unwired",
    "tools_unwired",
    "steps_to_answer",
    "longest_member_steps",
}
MEMBER_KEYS = {
    "name",
    "tokens",
    "cost",
    "running_time",
    "longest_identical_tool_run",
    "gate_checks",
    "gate_passes",
    "first_pass_time",
    "delivery_effective",
    "comm",
    "waits",
    "waits_by_outcome",
    "wait_time",
    "idle_time",
}
COMM_KEYS = {"records", "record_bytes", "rejections", "reads", "listings", "notices"}


def sample_of(log: Any) -> EvalSample:
    assert log.status == "success", log.error
    return log.samples[0]  # type: ignore[no-any-return]


def metrics_of(sample: EvalSample) -> dict[str, Any]:
    return sample.store["inspect_swarm:metrics"]  # type: ignore[no-any-return]


def rows(sample: EvalSample) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in metrics_of(sample)["members"]}


def test_metrics_keys_with_shared_memory(log_dir: Path) -> None:
    model = scripted_model(
        {
            "*": [
                call(
                    "shared_memory", command="append", path="/shared_memory/a.md", append_text="x"
                ),
                call("swarm_wait", timeout=1),
                submit("42"),
            ]
        }
    )
    solver = swarm(
        members=member(shm_worker, count=2),
        channels=["shared_memory"],
        controller=controller("leaderless", stop_on_submission=False),
    )
    metrics = metrics_of(sample_of(run_eval(solver, model=model, log_dir=log_dir)))
    assert set(metrics) == SWARM_KEYS
    assert metrics["version"] == 1
    for m in metrics["members"]:
        assert set(m) == MEMBER_KEYS
        assert set(m["comm"]) == {"shared_memory"}
        assert set(m["comm"]["shared_memory"]) == COMM_KEYS
        assert m["waits"] == 1 and m["wait_time"] > 0
        assert sum(m["waits_by_outcome"].values()) == 1


def test_metrics_keys_with_no_channels(log_dir: Path) -> None:
    model = scripted_model({"*": [call("noop", i=1), submit("42")]})
    metrics = metrics_of(
        sample_of(run_eval(swarm(members=member(worker, count=2)), model=model, log_dir=log_dir))
    )
    assert set(metrics) == SWARM_KEYS
    for m in metrics["members"]:
        assert set(m) == MEMBER_KEYS
        assert m["comm"] == {}
        assert (m["waits"], m["waits_by_outcome"], m["wait_time"], m["idle_time"]) == (
            None,
            None,
            None,
            None,
        )
    assert metrics["tools_unwired"] == [] and metrics["notify_unwired"] == []


def test_filesystem_only_swarm_has_empty_comm_and_no_waits(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("42")]})
    solver = swarm(members=member(worker, count=2), channels=["filesystem"])
    for m in metrics_of(sample_of(run_eval(solver, model=model, log_dir=log_dir)))["members"]:
        assert m["comm"] == {} and m["waits"] is None


def test_scripted_scenarios_with_known_answers(log_dir: Path) -> None:
    same = [call("noop", i=7)] * 5
    model = scripted_model(
        {
            "looper": [call("noop", i=1), *same, call("noop", i=2), submit("42")],
            "idle": [pause(5, reply("never"))],
        }
    )
    solver = swarm(
        members=[member(worker, name="looper"), member(worker, name="idle")],
        budget=Budget(grace=0.2),
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    metrics = metrics_of(sample)
    r = rows(sample)
    assert r["looper"]["longest_identical_tool_run"] == 5
    assert metrics["never_acted"] == ["idle"]
    assert metrics["steps_to_answer"] == 8
    assert metrics["longest_member_steps"] == 8
    assert r["idle"]["running_time"] is not None and r["idle"]["tokens"] == 0


@agent
def no_continue() -> Agent:
    """Channel tools but no swarm_on_continue: notify mode unwired."""
    return react(tools=[noop(), swarm_tools()])


@agent
def no_tools() -> Agent:
    """No swarm_tools at all."""
    return react(tools=[noop()])


def test_wiring_checks(log_dir: Path) -> None:
    steps = [pause(0.15, call("noop", i=i)) for i in range(5)]
    model = scripted_model(
        {
            "writer": [
                call(
                    "shared_memory",
                    command="append",
                    path="/shared_memory/x.md",
                    append_text="news",
                ),
                submit("w"),
            ],
            "unwired": [*steps, submit("u")],
            "toolless": [*steps, submit("t")],
            "wired": [*steps, submit("ok")],
        }
    )
    solver = swarm(
        members=[
            member(shm_worker, name="writer"),
            member(no_continue, name="unwired"),
            member(no_tools, name="toolless"),
            member(shm_worker, name="wired"),
        ],
        channels=["shared_memory"],
        controller=controller("leaderless", stop_on_submission=False),
    )
    metrics = metrics_of(sample_of(run_eval(solver, model=model, log_dir=log_dir)))
    # a member without swarm_on_continue() misses its notices, whatever its tools
    assert metrics["notify_unwired"] == ["unwired", "toolless"]
    assert metrics["tools_unwired"] == ["toolless"]


def test_verified_stops_at_the_first_passing_submission(log_dir: Path) -> None:
    model = scripted_model(
        {
            "worker-1": [submit("41")],
            "worker-2": [pause(0.4, submit("42"))],
            "worker-3": [pause(10, submit("42"))],
        }
    )
    solver = swarm(members=member(worker, count=3), controller="verified", budget=Budget(grace=0.5))
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir, scorer=match()))
    record = result(sample)
    assert record["stop_reason"] == "verified"
    assert record["final"] == {
        "mode": "controller",
        "member": "worker-2",
        "reason": "verified",
        "provisional": False,
        "answer": "42",
        "answer_chars": 2,
    }
    assert statuses(sample) == {
        "worker-1": "submitted",
        "worker-2": "submitted",
        "worker-3": "cancelled",
    }
    r = rows(sample)
    assert (r["worker-1"]["gate_checks"], r["worker-1"]["gate_passes"]) == (1, 0)
    assert (r["worker-2"]["gate_checks"], r["worker-2"]["gate_passes"]) == (1, 1)
    assert r["worker-2"]["first_pass_time"] is not None and r["worker-1"]["first_pass_time"] is None
    assert sample.output.completion == "42"
    assert sample.scores is not None and sample.scores["match"].value == "C"


def test_verified_falls_back_to_all_done(log_dir: Path) -> None:
    model = scripted_model({"*": [submit("41")]})
    solver = swarm(
        members=member(worker, count=2), controller={"name": "verified", "verifier": "match"}
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    record = result(sample)
    assert record["stop_reason"] == "all_done"
    assert record["final"]["mode"] == "first"
    assert all(
        m["gate_checks"] == 1 and m["gate_passes"] == 0 for m in metrics_of(sample)["members"]
    )


class QuiescenceSeen:
    """Asked first at every quiescence (decides nothing): why nothing could change."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    @hookimpl(tryfirst=True)
    def swarm_on_quiescence(self, view: Any, event: Any) -> None:
        self.reasons.append(event.reason)


def test_quiescence_stops_members_waiting_on_each_other(log_dir: Path) -> None:
    model = scripted_model({"*": [call("swarm_wait"), submit("never")]})
    seen = QuiescenceSeen()
    solver = swarm(
        members=member(shm_worker, count=3),
        channels=["shared_memory"],
        controller=controller("quiescence", idle_seconds=60),
        budget=Budget(time=120),
        plugins=catalog(seen),
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    record = result(sample)
    assert record["stop_reason"] == "quiescence"
    # at once, because every member waits; not after the 60 idle seconds (no clock compared)
    assert seen.reasons == ["all_waiting"]
    outcomes = [m["waits_by_outcome"] for m in metrics_of(sample)["members"]]
    assert all(o == {"stopping": 1} for o in outcomes), outcomes


def test_quiescence_after_idle_seconds(log_dir: Path) -> None:
    model = scripted_model({"*": [pause(30, reply("thinking"))]})
    solver = swarm(
        members=member(worker, count=2),
        controller=controller("quiescence", idle_seconds=1),
        budget=Budget(grace=0.2),
    )
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    assert result(sample)["stop_reason"] == "quiescence"
    # the 30 s calls were cut off by the stop, not waited for (no clock compared)
    replies = [e.output.completion for e in sample.events if isinstance(e, ModelEvent)]
    assert "thinking" not in replies


class Veto:
    """Vetoes every stop at a submission (overrides one decision of the controller)."""

    @hookimpl(tryfirst=True)
    def swarm_on_submission(self, view: Any, event: Any) -> Any:
        from swarm import Decision

        return Decision()


class Counter:
    """Adds its own figures to the metrics record."""

    @hookimpl
    def swarm_extra_metrics(self, view: Any) -> dict[str, Any]:
        return {"submissions": len(view.submissions)}


def test_a_plugin_vetoes_one_decision_and_adds_metrics(log_dir: Path) -> None:
    from swarm import PluginCatalog, get_plugin_manager

    pm, sources = get_plugin_manager()
    pm.register(Veto(), name="veto")
    pm.register(Counter(), name="counter")
    catalog = PluginCatalog(pm, sources)
    model = scripted_model({"worker-1": [submit("42")], "*": [pause(0.3, submit("43"))]})
    solver = swarm(members=member(worker, count=3), plugins=catalog)
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir))
    assert result(sample)["stop_reason"] == "all_done"
    assert set(statuses(sample).values()) == {"submitted"}
    assert metrics_of(sample)["counter"] == {"submissions": 3}


def test_third_party_channel_metrics(log_dir: Path) -> None:
    model = scripted_model({"*": [call("bulletin_post", text="hi"), submit("42")]})
    solver = swarm(
        members=member(shm_worker, count=2),
        channels=[channel("bulletin")],
        controller=controller("leaderless", stop_on_submission=False),
    )
    metrics = metrics_of(sample_of(run_eval(solver, model=model, log_dir=log_dir)))
    assert metrics["swarm-fixture-plugin/bulletin"] == {"posts": 2}


@agent
def retrying() -> Agent:
    """A react member that checks its own answers (react's attempts call the task scorer)."""
    return react(tools=[noop()], attempts=3)


def test_in_loop_checks_are_gate_checks(log_dir: Path) -> None:
    # react checks each submission while it has attempts left: 41 fails, 42 passes
    model = scripted_model({"*": [submit("41"), submit("42")]})
    solver = swarm(members=member(retrying, name="checker"))
    sample = sample_of(run_eval(solver, model=model, log_dir=log_dir, scorer=match()))
    [row] = metrics_of(sample)["members"]
    assert (row["gate_checks"], row["gate_passes"]) == (2, 1)
    assert row["first_pass_time"] is not None
    [member_result] = result(sample)["members"]
    assert (member_result["gate_checks"], member_result["gate_passes"]) == (2, 1)
