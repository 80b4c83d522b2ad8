"""A topology tested through a real provider: Inspect's openai-api provider and the scripted
server (the `scripted_server` fixture), with a rate limit on one member's call."""

from inspect_ai.agent import react

from swarm import LEDGER_KEY, member, swarm
from swarm.testing import run_eval


def test_a_rate_limited_call_is_one_errored_attempt(scripted_server, swarm_log_dir) -> None:
    rate_limit = {"status": 429, "retry_after": 0.01}  # the client retries in 10 ms
    scripted_server.load(
        {
            "fast": [{"submit": "42", "usage": [100, 10]}],
            "limited": [{"submit": "42", "usage": [100, 10], "faults": [rate_limit]}],
        }
    )
    log = run_eval(
        swarm(
            members=[member(react, name="fast"), member(react, name="limited")],
            controller={"name": "leaderless", "stop_on_submission": False},
        ),
        model="openai-api/scripted/model",  # the fixture set SCRIPTED_BASE_URL for this test
        log_dir=swarm_log_dir,
        max_retries=2,  # Inspect's own retries, bounded (its default is to retry forever)
    )
    ledger = log.samples[0].store[LEDGER_KEY]
    calls = {m["name"]: m["calls"] for m in ledger["members"]}
    assert calls["limited"]["errored"] == 1 and calls["fast"]["errored"] == 0
    # what the server saw: the 429, then the client's retry, answered
    attempts = [(a.attempt, a.status) for a in scripted_server.attempts_of("limited")]
    assert attempts == [(1, 429), (2, 200)]
    assert ledger["members"][1]["meter"]["usage"]["total_tokens"] == 110
