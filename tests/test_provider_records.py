"""The records of swarms run through a real provider: Inspect's ``openai-api`` provider talking
to the scripted server, with a failure injected into one member's calls.

Each member's meter equals the usage the server delivered and Inspect logged; ``calls``,
``errored`` (every failed attempt: the OpenAI client's retries inside a call and Inspect's own
retries, each its own model event), ``no_usage`` and ``unpriced`` equal the attempts the server
saw; cache and reasoning tokens land in their fields; cost follows the model's prices; a call in
flight at a stop or a cap is ``errored`` and its member ``cancelled``; the completeness flags
(``total_complete``, ``attribution_complete``, and the analysis column ``swarm_complete``) and
``unattributed`` are right.  Every figure is pinned, and checked against the server's log and
the Inspect log's model events.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import GenerateConfig, ModelCost, ModelInfo, ModelUsage, set_model_info

from swarm import Budget, member, swarm
from swarm._accounts.meter import usage_dict
from swarm.analysis._columns import swarm_complete
from swarm.testing import Attempt, ScriptedServer, StepUsage, run_eval
from swarm.testing._script import script_key
from swarm.testing._scripted import model_usage, said

from helpers import worker

PRICE = ModelCost(input=1.0, output=2.0, input_cache_write=1.5, input_cache_read=0.1)
"""Dollars per million tokens: input, output, cache writes, cache reads."""
PRICED = "openai-api/scripted/priced"
UNPRICED = "openai-api/scripted/unpriced"
FAST = {"status": 429, "retry_after": 0.01}  # a rate limit the client retries in 10 ms
ZERO = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


@pytest.fixture
def prices() -> Iterator[None]:
    set_model_info(PRICED, ModelInfo(cost=PRICE))
    yield
    set_model_info(PRICED, ModelInfo())


def tool(**extra: Any) -> dict[str, Any]:
    return {"tool": "noop", "args": {"i": 1}, "usage": [100, 10], **extra}


SUBMIT = {"submit": "42", "usage": [120, 12]}


def run(
    server: ScriptedServer,
    scripts: dict[str, list[dict[str, Any]]],
    tmp_path: Path,
    *,
    model: str = "priced",
    stop_on_submission: bool = False,
    budget: Budget | None = None,
    config: GenerateConfig | None = None,
    **model_args: Any,
) -> EvalSample:
    server.load(scripts)
    log = run_eval(
        swarm(
            members=[member(worker, name=name) for name in scripts],
            controller={"name": "leaderless", "stop_on_submission": stop_on_submission},
            budget=budget,
        ),
        model=server.model(model, config=config, **model_args),
        log_dir=tmp_path,
    )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def ledger(sample: EvalSample) -> dict[str, Any]:
    found: dict[str, Any] = sample.store["inspect_swarm:ledger"]
    return found


def members(sample: EvalSample) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in ledger(sample)["members"]}


def summed(usages: list[ModelUsage]) -> dict[str, Any]:
    total = ModelUsage()
    for u in usages:
        total = total + u
    return usage_dict(total)


def cost(usage: StepUsage) -> float:
    return (
        usage.input * PRICE.input
        + usage.output * PRICE.output
        + (usage.cache_write or 0) * PRICE.input_cache_write
        + (usage.cache_read or 0) * PRICE.input_cache_read
    ) / 1_000_000


def server_view(
    attempts: list[Attempt], priced: bool = True
) -> tuple[dict[str, Any], dict[str, int]]:
    """A member's meter usage and calls as the server saw them: the usage of every answer it
    delivered (priced at PRICE), every completed answer a call, every other attempt errored."""
    answered = [a for a in attempts if a.status == 200 and a.delivered]
    usages = []
    for a in answered:
        if a.usage is not None:
            found = model_usage(a.usage)
            assert found is not None
            found.total_cost = cost(a.usage) if priced else None
            usages.append(found)
    return summed(usages), {
        "calls": len(answered),
        "cache_replays": 0,
        "errored": len(attempts) - len(answered),
        "no_usage": sum(1 for a in answered if a.usage is None),
        "unpriced": 0 if priced else sum(1 for a in answered if a.usage is not None),
    }


def model_events(sample: EvalSample, key: str) -> list[ModelEvent]:
    """The model events in the Inspect log whose input the server keys ``key``."""
    return [
        e
        for e in resolve_sample_attachments(sample).events
        if isinstance(e, ModelEvent) and script_key(said(e.input), "") == key
    ]


def inspect_view(sample: EvalSample, key: str) -> tuple[dict[str, Any], int]:
    """The summed usage of the member's completed model events in the Inspect log, and the
    failed attempts they record (errored or pending events, and each event's retries)."""
    events = model_events(sample, key)
    done = [e for e in events if e.error is None and not e.pending]
    failed = sum(1 for e in events if e.error is not None or e.pending)
    failed += sum(e.retries or 0 for e in events)
    return summed([e.output.usage for e in done if e.output.usage is not None]), failed


def check_against_server_and_log(
    sample: EvalSample, server: ScriptedServer, priced: bool = True
) -> None:
    for name, entry in members(sample).items():
        usage, calls = server_view(server.attempts_of(name), priced)
        assert entry["meter"]["usage"] == pytest.approx(usage), name
        assert entry["calls"] == calls, name
        logged, failed = inspect_view(sample, name)
        assert entry["meter"]["usage"] == pytest.approx(logged), name
        assert entry["calls"]["errored"] == failed, name


def test_each_members_records_equal_what_the_server_saw_under_its_failure(
    scripted_server: ScriptedServer, tmp_path: Path, prices: None
) -> None:
    """Six members, one failure each in their first call: none, a 429 with Retry-After, a 500
    then a 503, a connection dropped mid-response (each retried by the OpenAI client inside the
    call: one model event with ``retries``), cache and reasoning tokens, no usage."""
    scripts = {
        "steady": [tool(), SUBMIT],
        "limited": [tool(faults=[FAST]), SUBMIT],
        "broken": [
            tool(
                faults=[{"status": 500, "retry_after": 0.01}, {"status": 503, "retry_after": 0.01}]
            ),
            SUBMIT,
        ],
        "dropped": [tool(faults=["drop"]), SUBMIT],
        "cached": [
            tool(
                usage={
                    "input": 40,
                    "output": 10,
                    "cache_read": 60,
                    "cache_write": 20,
                    "reasoning": 4,
                }
            ),
            SUBMIT,
        ],
        "silent": [{"tool": "noop", "args": {"i": 1}, "no_usage": True}, SUBMIT],
    }
    sample = run(scripted_server, scripts, tmp_path)
    found = members(sample)
    plain = {
        "input_tokens": 220,
        "output_tokens": 22,
        "total_tokens": 242,
        "input_tokens_cache_write": None,
        "input_tokens_cache_read": None,
        "reasoning_tokens": None,
        "total_cost": 0.000264,
    }
    for name in ("steady", "limited", "broken", "dropped"):
        assert found[name]["meter"]["usage"] == pytest.approx(plain), name
        assert found[name]["meter"]["cost"] == pytest.approx(0.000264), name
    assert found["cached"]["meter"]["usage"] == pytest.approx(
        {
            "input_tokens": 160,
            "output_tokens": 22,
            "total_tokens": 262,
            "input_tokens_cache_write": 20,
            "input_tokens_cache_read": 60,
            "reasoning_tokens": 4,
            # 40 + 10 * 2 + 20 * 1.5 + 60 * 0.1 for the first call, 120 + 12 * 2 for the second
            "total_cost": 0.000240,
        }
    )
    assert found["silent"]["meter"]["usage"] == pytest.approx(
        {
            **plain,
            "input_tokens": 120,
            "output_tokens": 12,
            "total_tokens": 132,
            "total_cost": 0.000144,
        }
    )
    calls = {name: found[name]["calls"] for name in scripts}
    clean = {"calls": 2, "cache_replays": 0, "errored": 0, "no_usage": 0, "unpriced": 0}
    assert calls == {
        "steady": clean,
        "limited": {**clean, "errored": 1},
        "broken": {**clean, "errored": 2},
        "dropped": {**clean, "errored": 1},
        "cached": clean,
        "silent": {**clean, "no_usage": 1},
    }
    # the client's retries inside one call: a model event each, with its retries
    retries = {
        name: [e.retries for e in model_events(sample, name)]
        for name in ("limited", "broken", "dropped")
    }
    assert retries == {"limited": [1, None], "broken": [2, None], "dropped": [1, None]}
    check_against_server_and_log(sample, scripted_server)
    record = ledger(sample)
    assert record["calls"] == {
        "calls": 12,
        "cache_replays": 0,
        "errored": 4,
        "no_usage": 1,
        "unpriced": 0,
    }
    assert record["swarm"]["cost"] == pytest.approx(4 * 0.000264 + 0.000240 + 0.000144)
    assert record["sample_delta"] == pytest.approx(record["swarm"]["usage"])
    assert {k: record["unattributed"][k] for k in ZERO} == ZERO
    assert record["unattributed"]["total_cost"] == 0.0
    # errored attempts and a call with no usage: the totals are lower bounds
    assert (record["total_complete"], record["attribution_complete"], swarm_complete(sample)) == (
        False,
        False,
        False,
    )
    assert len(scripted_server.attempts) == 16  # 12 answers and 4 failed attempts


def test_a_clean_priced_run_through_the_server_is_complete(
    scripted_server: ScriptedServer, tmp_path: Path, prices: None
) -> None:
    sample = run(scripted_server, {"a": [tool(), SUBMIT], "b": [tool(), SUBMIT]}, tmp_path)
    check_against_server_and_log(sample, scripted_server)
    record = ledger(sample)
    assert record["swarm"]["cost"] == pytest.approx(2 * 0.000264)
    assert record["calls"] == {
        "calls": 4,
        "cache_replays": 0,
        "errored": 0,
        "no_usage": 0,
        "unpriced": 0,
    }
    assert (record["total_complete"], record["attribution_complete"], swarm_complete(sample)) == (
        True,
        True,
        True,
    )
    assert record["unattributed"] == {
        **ZERO,
        "input_tokens_cache_write": None,
        "input_tokens_cache_read": None,
        "reasoning_tokens": None,
        "total_cost": 0.0,
    }


def test_an_unpriced_model_counts_every_call_with_usage_as_unpriced(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    scripts = {
        "a": [tool(), SUBMIT],
        "b": [{"tool": "noop", "args": {"i": 1}, "no_usage": True}, SUBMIT],
    }
    sample = run(scripted_server, scripts, tmp_path, model="unpriced")
    check_against_server_and_log(sample, scripted_server, priced=False)
    record = ledger(sample)
    assert {m["name"]: m["calls"]["unpriced"] for m in record["members"]} == {"a": 2, "b": 1}
    assert record["calls"]["unpriced"] == 3 and record["calls"]["no_usage"] == 1
    assert record["unpriced_calls_recorded"] == 3
    assert record["unpriced_models"] == [UNPRICED]
    assert record["swarm"]["cost"] == 0.0 and record["swarm"]["usage"]["total_cost"] is None
    assert (record["total_complete"], record["attribution_complete"], swarm_complete(sample)) == (
        False,
        False,
        False,
    )


def test_streamed_calls_and_inspects_own_retries_each_a_model_event(
    scripted_server: ScriptedServer, tmp_path: Path, prices: None
) -> None:
    """Streaming, with Inspect's attempt timeout at 3 s (well above a call's first-call setup
    under load, so that only the slow attempt reaches it).  A 429 before the stream is retried by
    the client inside the call (the event's retries).  Inspect's own retries are model events of
    their own, the failed one keeping its error: after a connection dropped part way through the
    stream, after three 500s that used up the client's two retries (that event has retries 2),
    and after an attempt slower than the attempt timeout.  Usage comes on the last chunk, cache
    and reasoning tokens included.  (Inspect waits 3 to 6 s before its own retry; the members'
    waits overlap.)"""
    failing = {"status": 500, "retry_after": 0.01}
    scripts = {
        "limited": [tool(faults=[FAST]), SUBMIT],
        "dropped": [tool(faults=["drop"]), SUBMIT],
        "exhausted": [tool(faults=[failing] * 3), SUBMIT],
        "late": [tool(faults=[{"slow": 8}]), SUBMIT],
        "cached": [
            tool(usage={"input": 40, "output": 10, "cache_read": 60, "reasoning": 4}),
            SUBMIT,
        ],
    }
    sample = run(
        scripted_server, scripts, tmp_path, config=GenerateConfig(attempt_timeout=3), stream=True
    )
    assert all(a.stream for a in scripted_server.attempts)
    check_against_server_and_log(sample, scripted_server)
    found = members(sample)
    assert {n: found[n]["calls"]["errored"] for n in scripts} == {
        "limited": 1,
        "dropped": 1,
        "exhausted": 3,
        "late": 1,
        "cached": 0,
    }
    shapes = {
        n: [(e.error is not None, e.retries) for e in model_events(sample, n)] for n in scripts
    }
    ok = (False, None)
    assert shapes == {
        "limited": [(False, 1), ok],
        "dropped": [(True, None), ok, ok],
        "exhausted": [(True, 2), ok, ok],
        "late": [(True, None), ok, ok],
        "cached": [ok, ok],
    }
    [late, *_] = scripted_server.attempts_of("late")
    assert (late.fault, late.delivered, late.usage) == ("slow", False, None)
    usage = found["cached"]["meter"]["usage"]
    assert (usage["input_tokens_cache_read"], usage["input_tokens_cache_write"]) == (60, None)
    assert usage["reasoning_tokens"] == 4
    assert found["cached"]["meter"]["cost"] == pytest.approx((40 + 20 + 6 + 144) / 1_000_000)
    record = ledger(sample)
    assert record["calls"]["errored"] == 6
    assert {k: record["unattributed"][k] for k in ZERO} == ZERO
    assert record["unattributed"]["total_cost"] == 0.0


def test_a_response_slower_than_the_clients_timeout_is_an_errored_attempt(
    scripted_server: ScriptedServer, tmp_path: Path, prices: None
) -> None:
    """The client times out after 2 s on an answer due in 6 s and retries (inside the call: the
    event's retries); the server, which never delivered that answer, reports no usage for it."""
    scripts = {"slow": [tool(faults=[{"slow": 6}]), SUBMIT]}
    sample = run(scripted_server, scripts, tmp_path, client_timeout=2)
    check_against_server_and_log(sample, scripted_server)
    [first, *_] = scripted_server.attempts_of("slow")
    assert (first.fault, first.status, first.delivered, first.usage) == ("slow", None, False, None)
    assert members(sample)["slow"]["calls"] == {
        "calls": 2,
        "cache_replays": 0,
        "errored": 1,
        "no_usage": 0,
        "unpriced": 0,
    }
    assert members(sample)["slow"]["meter"]["cost"] == pytest.approx(0.000264)


def test_a_call_in_flight_at_a_stop_is_errored_and_its_member_cancelled(
    scripted_server: ScriptedServer, tmp_path: Path, prices: None
) -> None:
    """The first submission stops the swarm with no grace; the other member's call, which the
    server would answer after 30 s, is cancelled in flight: the server sees the client go and
    delivers nothing, the ledger counts the call errored and the member cancelled."""
    scripts = {
        "fast": [tool(), {**SUBMIT, "sleep": 0.5}],
        "stuck": [tool(), {**tool(), "sleep": 30}],
    }
    server = scripted_server
    server.load(scripts)
    log = run_eval(
        swarm(
            members=[member(worker, name=n) for n in scripts],
            budget={"grace": 0},
        ),
        model=server.model("priced"),
        log_dir=tmp_path,
    )
    [sample] = log.samples or []
    found = members(sample)
    assert (found["stuck"]["status"], found["stuck"]["cancelled"]) == ("cancelled", True)
    assert found["stuck"]["calls"] == {
        "calls": 1,
        "cache_replays": 0,
        "errored": 1,
        "no_usage": 0,
        "unpriced": 0,
    }
    assert found["stuck"]["meter"]["usage"]["total_tokens"] == 110
    in_flight = server.attempts_of("stuck")[-1]
    assert (in_flight.index, in_flight.delivered, in_flight.usage, in_flight.done) == (
        1,
        False,
        None,
        True,
    )
    check_against_server_and_log(sample, server)
    record = ledger(sample)
    assert record["stop_reason"] == "submitted"
    assert (record["total_complete"], record["attribution_complete"], swarm_complete(sample)) == (
        False,
        False,
        False,
    )
    assert {k: record["unattributed"][k] for k in ZERO} == ZERO


def test_a_call_in_flight_when_a_cap_is_reached_is_errored(
    scripted_server: ScriptedServer, tmp_path: Path, prices: None
) -> None:
    """A token cap of 1,000: the big member's second call (1,500 tokens) passes it, the swarm
    stops with no grace, and the other member's call in flight is cancelled."""
    scripts = {
        "big": [tool(), {**tool(), "usage": [1400, 100], "sleep": 0.5}, SUBMIT],
        "stuck": [tool(), {**tool(), "sleep": 30}],
    }
    sample = run(scripted_server, scripts, tmp_path, budget=Budget(tokens=1000, grace=0))
    record = ledger(sample)
    assert record["stop_reason"] == "swarm_cap"
    assert record["overshoot"] == {"tokens": 110 + 1500 + 110 - 1000}
    found = members(sample)
    assert found["big"]["calls"] == {
        "calls": 2,
        "cache_replays": 0,
        "errored": 0,
        "no_usage": 0,
        "unpriced": 0,
    }
    assert (found["stuck"]["status"], found["stuck"]["cancelled"]) == ("cancelled", True)
    assert found["stuck"]["calls"]["errored"] == 1
    check_against_server_and_log(sample, scripted_server)
    assert record["total_complete"] is False
