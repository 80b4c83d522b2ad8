"""Faults contained: a misbehaving plugin fails the run (named), never a member; members' own
errors; malformed and invalid channel requests from a model.  Whatever happens, all three records
are written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample

from swarm import (
    PluginCatalog,
    Rejection,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
)
from swarm.testing import call, fail, pause, run_eval, scripted_model, submit

from helpers import result, shm_worker, statuses, worker

RECORDS = ("inspect_swarm:result", "inspect_swarm:ledger", "inspect_swarm:metrics")


def catalog_with(**plugins: object) -> PluginCatalog:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    for name, plugin in plugins.items():
        pm.register(plugin, name=name)
    return PluginCatalog(pm, sources)


def errored_sample(log: EvalLog) -> EvalSample:
    assert log.status == "error"
    [sample] = log.samples or []
    assert sample.error is not None
    for key in RECORDS:
        assert key in sample.store, f"{key} was not written"
        json.dumps(sample.store[key], allow_nan=False)
    return sample


def ledger_of(sample: EvalSample) -> dict[str, Any]:
    return sample.store["inspect_swarm:ledger"]  # type: ignore[no-any-return]


# -- plugins' faults -------------------------------------------------------------------------


class WrongMetrics:
    def __init__(self, value: object) -> None:
        self.value = value

    @hookimpl
    def swarm_extra_metrics(self, view: Any) -> Any:
        return self.value


class GoodMetrics:
    @hookimpl
    def swarm_extra_metrics(self, view: Any) -> dict[str, Any]:
        return {"members": len(view.members)}


def test_extra_metrics_of_the_wrong_type_fail_the_sample_and_lose_no_record(
    log_dir: Path,
) -> None:
    catalog = catalog_with(bad=WrongMetrics(["not", "a", "dict"]), good=GoodMetrics())
    solver = swarm(members=member(worker, count=2), plugins=catalog)
    sample = errored_sample(run_eval(solver, model=scripted_model(answer="42"), log_dir=log_dir))
    message = sample.error.message  # type: ignore[union-attr]
    assert "Plugin 'bad', hook 'swarm_extra_metrics'" in message
    assert "returned list" in message
    metrics = sample.store["inspect_swarm:metrics"]
    assert metrics["bad"] == {"error": message}
    assert metrics["good"] == {"members": 2}  # one plugin's fault loses no other's figures
    assert set(statuses(sample).values()) == {"submitted"}
    assert result(sample)["final"]["member"] == "worker-1"


def test_extra_metrics_that_are_not_json_fail_the_sample(log_dir: Path) -> None:
    catalog = catalog_with(nan=WrongMetrics({"ratio": float("nan")}))
    solver = swarm(members=member(worker), plugins=catalog)
    sample = errored_sample(run_eval(solver, model=scripted_model(), log_dir=log_dir))
    assert "Plugin 'nan', hook 'swarm_extra_metrics'" in sample.error.message  # type: ignore[union-attr]
    assert "not plain JSON" in sample.store["inspect_swarm:metrics"]["nan"]["error"]


class WrongTools:
    @hookimpl
    def swarm_member_tools(self, view: Any, member: Any, nested: bool) -> Any:
        return "shared_memory"


def test_member_tools_of_the_wrong_type_fail_the_run_not_the_member(log_dir: Path) -> None:
    catalog = catalog_with(tools=WrongTools())
    solver = swarm(members=member(shm_worker, count=2), plugins=catalog)
    sample = errored_sample(run_eval(solver, model=scripted_model(), log_dir=log_dir))
    assert sample.error.message.startswith(  # type: ignore[union-attr]
        "Plugin 'tools', hook 'swarm_member_tools': returned str 'shared_memory'; expected list"
    )
    assert "errored" not in statuses(sample).values()
    assert set(statuses(sample).values()) == {"cancelled"}
    ledger = ledger_of(sample)
    assert ledger["interrupted"] is True
    assert ledger["ended_by"] is None  # nothing outside the swarm ended it
    assert result(sample)["final"]["provisional"] is True


class RaisingAdmission:
    @hookimpl
    def swarm_admit_record(self, view: Any, record: Any) -> Rejection | None:
        raise RuntimeError("policy service down")


def test_a_failing_admission_hook_fails_the_run_not_the_writer(log_dir: Path) -> None:
    catalog = catalog_with(policy=RaisingAdmission())
    write = call("shared_memory", command="append", path="/shared_memory/a.md", append_text="x")
    model = scripted_model({"writer": [write, submit("42")], "other": [pause(5, submit("1"))]})
    solver = swarm(
        members=[member(shm_worker, name="writer"), member(shm_worker, name="other")],
        channels=["shared_memory"],
        plugins=catalog,
    )
    sample = errored_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert sample.error.message == (  # type: ignore[union-attr]
        "Plugin 'policy', hook 'swarm_admit_record': raised RuntimeError('policy service down')"
    )
    assert statuses(sample) == {"writer": "cancelled", "other": "cancelled"}
    assert ledger_of(sample)["interrupted"] is True


class RaisingQuiescence:
    @hookimpl(tryfirst=True)
    def swarm_on_quiescence(self, view: Any, event: Any) -> Any:
        raise ValueError("cannot decide")


def test_a_failing_quiescence_hook_fails_the_run_not_the_waiter(log_dir: Path) -> None:
    catalog = catalog_with(judge=RaisingQuiescence())
    model = scripted_model({"*": [call("swarm_wait", timeout=30), submit("42")]})
    solver = swarm(
        members=member(shm_worker, count=2),
        channels=["shared_memory"],
        controller="quiescence",
        plugins=catalog,
    )
    sample = errored_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert sample.error.message == (  # type: ignore[union-attr]
        "Plugin 'judge', hook 'swarm_on_quiescence': raised ValueError('cannot decide')"
    )
    assert "errored" not in statuses(sample).values()


class BadStart:
    @hookimpl(tryfirst=True)
    def swarm_start(self, view: Any) -> Any:
        from swarm import Decision

        return Decision(start=("nobody",))


def test_a_decision_naming_no_member_fails_the_run_with_its_plugin(log_dir: Path) -> None:
    catalog = catalog_with(starter=BadStart())
    solver = swarm(members=member(worker, count=2), plugins=catalog)
    sample = errored_sample(run_eval(solver, model=scripted_model(), log_dir=log_dir))
    assert sample.error.message == (  # type: ignore[union-attr]
        "Plugin 'starter', hook 'swarm_start': asked to start member 'nobody', which is not in "
        "the roster"
    )
    assert statuses(sample) == {"worker-1": None, "worker-2": None}


# -- members' own errors ---------------------------------------------------------------------


def test_on_member_error_fail_stops_the_swarm_at_the_first_error(log_dir: Path) -> None:
    model = scripted_model(
        {
            "worker-1": [pause(0.2, fail("broken"))],
            "*": [pause(0.05, call("noop", i=i)) for i in range(200)],
        }
    )
    solver = swarm(members=member(worker, count=3), on_member_error="fail")
    sample = errored_sample(run_eval(solver, model=model, log_dir=log_dir))
    assert sample.error.message == (  # type: ignore[union-attr]
        "member 'worker-1' errored (the swarm runs with on_member_error='fail'): "
        "worker-1: ScriptedModelError('broken')"
    )
    assert statuses(sample) == {
        "worker-1": "errored",
        "worker-2": "cancelled",
        "worker-3": "cancelled",
    }
    ledger = ledger_of(sample)
    assert ledger["interrupted"] is True
    assert ledger["ended_by"] is None


def test_on_member_error_continue_is_the_default(log_dir: Path) -> None:
    model = scripted_model({"worker-1": [fail("broken")], "*": [call("noop", i=0), submit("42")]})
    log = run_eval(swarm(members=member(worker, count=2)), model=model, log_dir=log_dir)
    assert log.status == "success"
    [sample] = log.samples or []
    assert statuses(sample) == {"worker-1": "errored", "worker-2": "submitted"}


def test_on_member_error_from_a_topology_file_and_a_bad_value(tmp_path: Path) -> None:
    import pytest

    from swarm import ConfigError

    path = tmp_path / "t.yaml"
    path.write_text("members: [{factory: react}]\non_member_error: fail\n")
    swarm(config=str(path))
    with pytest.raises(ConfigError, match="on_member_error: expected 'continue'"):
        swarm(members=member(worker), on_member_error="explode")  # type: ignore[arg-type]


# -- what a model sends a channel ------------------------------------------------------------


def test_channel_calls_inspect_refuses_are_counted_invalid(log_dir: Path) -> None:
    model = scripted_model(
        {
            "*": [
                call("shared_memory", command="bogus", path="/shared_memory/a.md"),
                call("shared_memory", command="view", path=5),
                call("shared_memory", command="view", extra=1),
                call("noop", i="not a number"),  # not a channel tool: not counted
                submit("42"),
            ]
        }
    )
    solver = swarm(members=member(shm_worker), channels=["shared_memory"])
    log = run_eval(solver, model=model, log_dir=log_dir)
    [sample] = log.samples or []
    comm = sample.store["inspect_swarm:metrics"]["members"][0]["comm"]["shared_memory"]
    assert comm["rejections"] == {"invalid": 3}
    assert comm["records"] == 0


SURROGATE_RUN = """
import json, sys
from inspect_ai.util import store
from swarm import PluginCatalog, get_plugin_manager, hookimpl, member, swarm, swarm_tools
from swarm import swarm_on_continue
from swarm.testing import call, run_eval, scripted_model, submit
from inspect_ai.agent import react

RECORDS = ("inspect_swarm:result", "inspect_swarm:ledger", "inspect_swarm:metrics")
kept = {}

class Keeper:
    @hookimpl
    def swarm_run_ended(self, view, result):
        for key in RECORDS:
            kept[key] = store().get(key)

pm, sources = get_plugin_manager(load_entrypoints=False)
pm.register(Keeper(), name="keeper")
bad = "a\\ud800b"
model = scripted_model({"*": [
    call("shared_memory", command="append", path="/shared_memory/a.md", append_text=bad),
    call("shared_memory", command="create", path="/shared_memory/b\\udfff.md", file_text="x"),
    call("shared_memory", command="view", path="/shared_memory"),
    submit("42"),
]})
agent = react(tools=[swarm_tools()], on_continue=swarm_on_continue())
solver = swarm(members=member(agent), channels=["shared_memory"], plugins=PluginCatalog(pm, sources))
log = run_eval(solver, model=model, log_dir=sys.argv[1])
valid = {}
for key in RECORDS:
    text = json.dumps(kept[key], ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
        valid[key] = True
    except UnicodeEncodeError:
        valid[key] = False
print(json.dumps({"status": log.status, "error": str(log.error), "valid": valid,
                  "metrics": kept["inspect_swarm:metrics"]}))
"""


def test_a_lone_surrogate_is_refused_at_the_bus_and_never_recorded(log_dir: Path) -> None:
    # run in its own process: the model's tool call holds a lone surrogate, which neither
    # Inspect's log writer nor pytest-xdist's reports can carry
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", SURROGATE_RUN, str(log_dir)],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    # Inspect itself cannot write a log holding the model's own tool call (a plain Inspect
    # tool fails the same way); the records the swarm wrote are valid all the same
    assert outcome["status"] == "error"
    assert "surrogates not allowed" in outcome["error"]
    assert outcome["valid"] == dict.fromkeys(RECORDS, True)
    comm = outcome["metrics"]["members"][0]["comm"]["shared_memory"]
    assert comm["rejections"] == {"invalid": 2}
    assert comm["records"] == 0
    assert comm["listings"] == 1


def test_a_scripted_log_can_be_scored_again(tmp_path: Path) -> None:
    # the log's model arguments hold the steps as plain data (they were None before), so
    # Inspect's score(), which makes the model again from them as `inspect score` does, reads
    # the script back instead of failing on scripts['*'][0]
    from inspect_ai import score
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import match

    from swarm.testing import Step, StepUsage
    from swarm.testing._script import load_scripts

    steps = [
        call("noop", i=1),
        pause(0.01, Step(reply="hm", usage=StepUsage(input=7, output=3, cache_read=2))),
        Step(submit="42", faults=(429, "drop"), no_usage=True),
    ]
    log = run_eval(
        swarm(members=[member("swarm/worker")]),
        model=scripted_model({"*": steps}),
        log_dir=tmp_path / "logs",
    )
    args = read_eval_log(log.location, header_only=True).eval.model_args
    assert load_scripts(args["scripts"]) == {"*": tuple(steps)}
    scored = score(read_eval_log(log.location), match(), action="overwrite", display="none")
    assert scored.results is not None
    assert [s.name for s in scored.results.scores] == ["match"]
