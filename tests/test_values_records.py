"""How a run's records are written, pinned on real scripted evals: the records plugins give
(``swarm_records``) and each way one can be refused, plugins' extra metrics next to the record's
own figures, the spawn ledger only when the swarm could spawn, malformed channel calls counted as
rejections, and a record whose builder fails written as an error without costing the others.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import InfoEvent
from inspect_ai.log import EvalSample
from inspect_ai.model import ModelOutput, ModelUsage, get_model, modelapi

from swarm import PluginCatalog, controller, get_plugin_manager, hookimpl, member, swarm
from swarm.testing import call, run_eval, scripted_model, submit

from helpers import FixedModelAPI, ledger, metrics, only_sample, result, shm_worker, worker

ALL_FINISH = controller("leaderless", stop_on_submission=False)

KERNEL = ("inspect_swarm:result", "inspect_swarm:ledger", "inspect_swarm:metrics")


def catalog_with(*plugins: tuple[str, object]) -> PluginCatalog:
    """The built-in plugins and ``plugins``, registered in this order (pluggy calls the last
    registered first)."""
    pm, sources = get_plugin_manager()
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    return PluginCatalog(pm, sources)


def info(sample: EvalSample, kind: str) -> list[dict[str, Any]]:
    """The data of the swarm's transcript InfoEvents of type ``kind``."""
    return [
        e.data
        for e in sample.events
        if isinstance(e, InfoEvent)
        and e.source == "inspect_swarm"
        and isinstance(e.data, dict)
        and e.data.get("type") == kind
    ]


def failed_sample(log: Any) -> EvalSample:
    assert log.status == "error"
    [sample] = log.samples or []
    assert sample.error is not None
    return sample  # type: ignore[no-any-return]


def swarm_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The swarm's error messages (without the sample Inspect names in front of them)."""
    return [
        re.sub(r"^sample=\S+\n", "", r.getMessage())
        for r in caplog.records
        if r.name == "swarm" and r.levelno >= logging.ERROR
    ]


# -- records plugins give --------------------------------------------------------------------------


class Records:
    """Gives ``records``, and one of its own naming how many members the run had."""

    def __init__(self, records: dict[Any, Any]) -> None:
        self.records = records

    @hookimpl
    def swarm_records(self, view: Any) -> dict[Any, Any]:
        return {**self.records, "team:size": {"members": len(view.members)}}


class RaisingRecords:
    @hookimpl
    def swarm_records(self, view: Any) -> dict[str, Any]:
        raise RuntimeError("records service down")


def test_a_plugins_records_are_written_under_their_keys_and_named_by_the_last_part(
    log_dir: Path,
) -> None:
    catalog = catalog_with(("good", Records({"acme:audit:trail": {"n": 1}, "plain": {"n": 2}})))
    solver = swarm(members=member(worker, count=2), plugins=catalog)
    sample = only_sample(run_eval(solver, model=scripted_model(answer="42"), log_dir=log_dir))
    assert sample.store["acme:audit:trail"] == {"n": 1}
    assert sample.store["plain"] == {"n": 2}
    assert sample.store["team:size"] == {"members": 2}  # the plugin saw the run's view
    # the transcript names each by its key's last part (the whole key when it has no colon)
    assert info(sample, "trail") == [{"type": "trail", "n": 1}]
    assert info(sample, "plain") == [{"type": "plain", "n": 2}]
    assert info(sample, "size") == [{"type": "size", "members": 2}]
    assert info(sample, "audit:trail") == info(sample, "acme:audit:trail") == []


def test_each_refused_plugin_record_is_a_fault_and_the_others_are_written(
    log_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad = Records(
        {
            "inspect_swarm:ledger": {"forged": True},
            7: {"n": 7},
            "acme:list": ["not", "a", "mapping"],
            "acme:nan": {"ratio": float("nan")},
            "acme:set": {"ids": {1}},
            "acme:fine": {"n": 3},
        }
    )
    # pluggy calls the last registered first: the raising plugin's fault comes before the
    # other plugin's records
    catalog = catalog_with(("bad", bad), ("raising", RaisingRecords()))
    solver = swarm(members=member(worker), plugins=catalog)
    with caplog.at_level(logging.ERROR, logger="swarm"):
        sample = failed_sample(run_eval(solver, model=scripted_model(), log_dir=log_dir))
    assert sample.error.message == (  # type: ignore[union-attr]
        "Plugin 'raising', hook 'swarm_records': raised RuntimeError('records service down')"
    )
    further = "swarm: a further failure while the run was failing: Plugin 'bad', hook "
    assert [m for m in swarm_errors(caplog) if "'bad'" in m] == [
        further + "'swarm_records': wrote the store key 'inspect_swarm:ledger', which is not a "
        "plugin's to write",
        further + "'swarm_records': wrote the store key 7, which is not a plugin's to write",
        further + "'swarm_records': gave record 'acme:list' as list, not a mapping",
        further + "'swarm_records': returned data that is not plain JSON: Out of range float "
        "values are not JSON compliant",
        further + "'swarm_records': returned data that is not plain JSON: Object of type set is "
        "not JSON serializable",
    ]
    # the refused records are not written; the kernel's ledger is its own
    assert "forged" not in ledger(sample) and ledger(sample)["version"] == 1
    assert not {7, "7", "acme:list", "acme:nan", "acme:set"} & set(sample.store)
    assert info(sample, "list") == info(sample, "nan") == info(sample, "set") == []
    # the good ones after them are
    assert sample.store["acme:fine"] == {"n": 3}
    assert sample.store["team:size"] == {"members": 1}
    assert info(sample, "fine") == [{"type": "fine", "n": 3}]
    assert [d["version"] for d in info(sample, "ledger")] == [1]


# -- extra metrics ---------------------------------------------------------------------------------


class Extra:
    def __init__(self, value: object) -> None:
        self.value = value

    @hookimpl
    def swarm_extra_metrics(self, view: Any) -> Any:
        return self.value


def test_extra_metrics_are_keyed_by_the_plugin_name_after_its_first_colon(
    log_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = catalog_with(
        ("acme:team:size", Extra({"members": 1})),
        ("acme:tokens", Extra({"members": 1})),  # called first: its key is the record's own
    )
    solver = swarm(members=member(worker), plugins=catalog)
    with caplog.at_level(logging.ERROR, logger="swarm"):
        sample = failed_sample(run_eval(solver, model=scripted_model(), log_dir=log_dir))
    fault = (
        "Plugin 'acme:tokens', hook 'swarm_extra_metrics': metrics key 'tokens' is the record's own"
    )
    assert sample.error.message == fault  # type: ignore[union-attr]
    assert fault in swarm_errors(caplog)
    record = metrics(sample)
    assert record["tokens"] == ledger(sample)["swarm"]["usage"]["total_tokens"] > 0
    assert record["team:size"] == {"members": 1}  # written after the refused one
    assert "size" not in record and "acme:team:size" not in record


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (["not", "a", "dict"], "returned list ['not', 'a', 'dict']; expected dict or None"),
        (
            {"ratio": float("inf")},
            "returned data that is not plain JSON: Out of range float values are not JSON "
            "compliant",
        ),
        (
            {"when": object},
            "returned data that is not plain JSON: Object of type type is not JSON serializable",
        ),
    ],
)
def test_extra_metrics_a_plugin_gets_wrong_are_its_fault_in_the_record(
    log_dir: Path, value: object, problem: str
) -> None:
    catalog = catalog_with(("acme:odd", Extra(value)), ("acme:fine", Extra({"n": 1})))
    solver = swarm(members=member(worker), plugins=catalog)
    sample = failed_sample(run_eval(solver, model=scripted_model(), log_dir=log_dir))
    message = f"Plugin 'acme:odd', hook 'swarm_extra_metrics': {problem}"
    assert sample.error.message == message  # type: ignore[union-attr]
    assert metrics(sample)["odd"] == {"error": message}
    assert metrics(sample)["fine"] == {"n": 1}


# -- the spawn ledger ------------------------------------------------------------------------------


def test_the_spawn_ledger_is_written_only_when_the_swarm_can_spawn(log_dir: Path) -> None:
    lead = [call("spawn_child", name="w1", task="t"), call("wait_for_children"), submit("2")]
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["worker"]),
        templates={"worker": member("swarm/worker")},
    )
    model = scripted_model({"lead": lead, "w1": [submit("2")]})
    sample = only_sample(run_eval(solver, model=model, log_dir=log_dir))
    record = sample.store["inspect_swarm:spawns"]
    assert record["version"] == 1
    assert [(e["op"], e["member"], e["parent"]) for e in record["entries"]] == [
        ("spawn", "w1", "lead"),
        ("end", "w1", "lead"),
    ]
    assert info(sample, "spawns") == [{"type": "spawns", **record}]
    plain = only_sample(run_eval(swarm(members=member(worker)), model=scripted_model()))
    assert "inspect_swarm:spawns" not in plain.store
    assert info(plain, "spawns") == []
    assert set(KERNEL) <= set(plain.store)


# -- malformed channel calls ------------------------------------------------------------------------


def test_malformed_channel_calls_are_rejections_of_the_members_channel(log_dir: Path) -> None:
    unknown = call("shared_memory", command="shout", path="/shared_memory/a.md")
    extra = call("shared_memory", command="view", path="/shared_memory", colour="red")
    # the channel refuses these two when they run: a write by its control, a view not at all
    outside = call("shared_memory", command="create", path="/shared_memory/../x", file_text="x")
    elsewhere = call("shared_memory", command="view", path="/elsewhere")
    model = scripted_model(
        {
            "a": [unknown, outside, extra, elsewhere, submit("42")],
            "b": [call("noop", i="x"), unknown, submit("42")],  # the first is not a channel's tool
        }
    )
    solver = swarm(
        members=[member(shm_worker, name="a"), member(shm_worker, name="b")],
        channels=["shared_memory"],
        controller=ALL_FINISH,
    )
    record = metrics(only_sample(run_eval(solver, model=model, log_dir=log_dir)))
    rejections = {m["name"]: m["comm"]["shared_memory"]["rejections"] for m in record["members"]}
    assert rejections == {"a": {"path": 1, "invalid": 2}, "b": {"invalid": 1}}


# -- a record whose builder fails -------------------------------------------------------------------


def test_a_record_that_cannot_be_built_is_written_as_its_error(
    log_dir: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our own bug in one record's builder costs only that record.  (No public input makes a
    builder fail, so the ledger's is replaced by one that raises.)"""
    import swarm._run.finish as finish

    def broken(*args: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(finish, "ledger_from", broken)
    with caplog.at_level(logging.ERROR, logger="swarm"):
        sample = only_sample(run_eval(swarm(members=member(worker)), model=scripted_model()))
    error = {"version": 1, "error": "the ledger record could not be built: RuntimeError('boom')"}
    assert ledger(sample) == error
    assert info(sample, "ledger") == [{"type": "ledger", **error}]
    assert swarm_errors(caplog) == ["swarm: could not build the ledger record"]
    assert result(sample)["final"]["member"] == "worker"
    assert metrics(sample)["version"] == 1 and info(sample, "metrics") != []


# -- retried calls ---------------------------------------------------------------------------------


class Flaky(Exception):
    pass


@modelapi(name="values-flaky")
class FlakyModel(FixedModelAPI):
    """Every other attempt fails with an error worth retrying (Inspect retries it at once, a
    model event of its own); the others succeed after one retry inside the provider's client
    (counted on their model event, as Inspect's providers report theirs) and submit 42 with 10
    input tokens."""

    def __init__(self, model_name: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(model_name, *args, **kwargs)
        self.attempts = 0

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        self.attempts += 1
        if self.attempts % 2 == 1:
            raise Flaky(f"attempt {self.attempts}")
        from inspect_ai._util.retry import report_http_retry

        report_http_retry()
        output = ModelOutput.for_tool_call(self.model_name, "submit", {"answer": "42"}, content="")
        output.usage = ModelUsage(input_tokens=10, output_tokens=0, total_tokens=10)
        return output

    def should_retry(self, ex: Exception) -> bool:
        return isinstance(ex, Flaky)

    def retry_wait(self) -> Any:
        from tenacity import wait_none

        return wait_none()

    async def count_text_tokens(self, text: str) -> int:
        return 1


def test_retried_attempts_are_errored_calls(log_dir: Path) -> None:
    model = get_model("values-flaky/x", memoize=False)
    sample = only_sample(run_eval(swarm(members=member(worker)), model=model, log_dir=log_dir))
    record = ledger(sample)
    # the failed attempt Inspect retried, and the client's retry inside the call that succeeded
    expected = {"calls": 1, "cache_replays": 0, "errored": 2, "no_usage": 0, "unpriced": 1}
    assert record["calls"] == record["members"][0]["calls"] == expected
    assert record["swarm"]["usage"]["total_tokens"] == 10
