"""The fan-out eval through a real provider: the shipped json-events fixture in the default
configuration (bwrap), every call through Inspect's ``openai-api`` provider and the scripted
server, with a lead that behaves as a real model might: a rate-limited first call, a malformed
tool call, a turn ended with text before the fan-in completes, and a child retried after it
gave up without replying; one child's call also hits a 503.  The records and the verdict are
pinned, and the ledger against what the server saw."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalSample
from inspect_ai.model import ModelCost, ModelInfo, set_model_info

from swarm.plugins.scorers.fanout import (
    fanout_rubric,
    fanout_sample,
    fanout_topology,
    honest_scripts,
    load_fixture,
)
from swarm.testing import ScriptedServer
from tests.fanout_records import RULES, failing, score

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
MODEL = "openai-api/scripted/fanout"
FAST = {"status": 429, "retry_after": 0.01}


def step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def misbehaving_lead() -> dict[str, list[dict[str, Any]]]:
    scripts = copy.deepcopy(honest_scripts(FIXTURE))
    lead = scripts["lead"]
    lead[0]["faults"] = [FAST]  # the lead's first call is rate-limited once
    # a malformed tool call: send_message with an argument it does not take and none it needs
    lead.insert(len(SHARDS), step("send_message", to=SHARDS[0].worker, txt="hurry"))
    # the lead ends a turn with text while its children still work (react asks it to go on)
    lead.insert(len(SHARDS) + 1, {"reply": "The children are working; I will wait."})
    # the third child gives up without replying; the lead spawns it again after the wait
    retried = SHARDS[2].worker
    spawn = next(s for s in lead if s.get("args", {}).get("name") == retried)
    read = next(s for s in lead if s.get("tool") == "read_messages")
    lead[lead.index(read) : lead.index(read)] = [copy.deepcopy(spawn), step("wait_for_children")]
    scripts[f"{retried}~2"] = scripts[retried]
    scripts[retried] = [{"submit": "gave up"}]
    scripts[SHARDS[1].worker][0]["faults"] = [{"status": 503, "retry_after": 0.01}]
    return scripts


@pytest.fixture
def priced() -> Any:
    set_model_info(
        MODEL,
        ModelInfo(
            cost=ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)
        ),
    )
    yield
    set_model_info(MODEL, ModelInfo())


def run(server: ScriptedServer, scripts: dict[str, list[dict[str, Any]]]) -> EvalSample:
    server.load(scripts)
    task = Task(
        dataset=[fanout_sample(FIXTURE)],
        solver=fanout_topology(FIXTURE),
        scorer=fanout_rubric(fixture="json-events"),
        sandbox="bwrap",
    )
    [log] = eval(task, model=server.model("fanout"), display="none", log_dir=None)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def test_the_fanout_through_the_server_with_a_misbehaving_lead_resolves(
    scripted_server: ScriptedServer, priced: Any
) -> None:
    sample = run(scripted_server, misbehaving_lead())
    assert failing(sample) == set()
    value = score(sample).value
    assert value["resolved"] is True and all(value[rule] is True for rule in RULES)
    retried = SHARDS[2].worker
    result = sample.store["inspect_swarm:result"]
    statuses = {m["name"]: m["status"] for m in result["members"]}
    assert statuses == {
        "lead": "submitted",
        **{s.worker: "submitted" for s in SHARDS},
        f"{retried}~2": "submitted",
    }
    spawns = sample.store["inspect_swarm:spawns"]
    assert [e["member"] for e in spawns["entries"] if e["op"] == "spawn"] == [
        *(s.worker for s in SHARDS),
        f"{retried}~2",
    ]
    # the malformed call is a rejection by the control `invalid`, on the lead's channel
    metrics = sample.store["inspect_swarm:metrics"]
    lead_metrics = next(m for m in metrics["members"] if m["name"] == "lead")
    assert lead_metrics["comm"]["messages"]["rejections"] == {"invalid": 1}
    # the lead's calls: its 429 is one errored attempt, retried by the client inside the call
    ledger = sample.store["inspect_swarm:ledger"]
    calls = {m["name"]: m["calls"] for m in ledger["members"]}
    lead_steps = len(misbehaving_lead()["lead"])
    assert calls["lead"] == {
        "calls": lead_steps,
        "cache_replays": 0,
        "errored": 1,
        "no_usage": 0,
        "unpriced": 0,
    }
    assert calls[SHARDS[1].worker]["errored"] == 1
    assert calls[retried] == {
        "calls": 1,
        "cache_replays": 0,
        "errored": 0,
        "no_usage": 0,
        "unpriced": 0,
    }
    assert sum(c["errored"] for c in calls.values()) == 2
    # every member's calls and tokens are what the server delivered
    for m in ledger["members"]:
        seen = scripted_server.attempts_of(m["name"])
        answered = [a for a in seen if a.status == 200 and a.delivered]
        assert m["calls"]["calls"] == len(answered), m["name"]
        assert m["calls"]["errored"] == len(seen) - len(answered), m["name"]
        assert m["meter"]["usage"]["total_tokens"] == sum(
            a.usage.total for a in answered if a.usage is not None
        ), m["name"]
    assert ledger["unattributed"]["total_tokens"] == 0
    assert ledger["unattributed"]["total_cost"] == 0.0
    assert (ledger["total_complete"], ledger["attribution_complete"]) == (False, False)
    assert (ledger["stop_reason"], ledger["ended_by"]) == ("submitted", None)
    # one reply per shard (the retried child's from its second spawn) and one receipt
    messages = sample.store["inspect_swarm:messages"]["messages"]
    assert sorted(
        (m["sender"], m["kind"], m["text"]) for m in messages if m["kind"] == "message"
    ) == sorted(
        (f"{s.worker}~2" if s.worker == retried else s.worker, "message", str(s.expected))
        for s in SHARDS
    )
    assert [m["text"] for m in messages if m["kind"] == "receipt"] == [
        f"[Receipt] Your child {retried} finished without replying to you."
    ]
