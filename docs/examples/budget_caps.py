"""Budgets: a cost cap, a token budget split equally, a member's own limit, every member held to
its own share, a cap derived from a sample limit, and the error for a cost cap without prices.

The scripted model reports the usage each step gives (1,000 input and 100 output tokens per
call here), and `set_model_info` prices it at $1 per million input tokens and $2 per million
output tokens, so every call costs $0.0012.  The members are react agents with a `multiply`
tool that call it over and over, so only a budget ends them.
"""

from typing import Any

from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ModelCost, ModelInfo, set_model_info

from swarm import RESULT_KEY, Budget, controller, member, swarm
from swarm.demo import calculator_worker
from swarm.testing import Step, run_eval, scripted_model

LEDGER_KEY = "inspect_swarm:ledger"
PRICE = ModelCost(input=1.0, output=2.0, input_cache_write=0.0, input_cache_read=0.0)


def busy(calls: int, sleep: float = 0.02) -> list[Step]:
    """A script of `calls` tool calls, each reporting 1,000 input and 100 output tokens."""
    return [
        Step(tool="multiply", args={"x": 6, "y": i}, usage=(1000, 100), sleep=sleep)
        for i in range(calls)
    ]


def run(title: str, solver: object, scripts: dict[str, list[Step]], **eval_args: object) -> Any:
    log = run_eval(solver, model=scripted_model(scripts), **eval_args)
    sample = log.samples[0]
    print(f"== {title}")
    if sample.error is not None:
        print("error:", sample.error.message)
        return sample
    result, ledger = sample.store[RESULT_KEY], sample.store[LEDGER_KEY]
    print("caps:", ledger["caps"])
    print("stop reason:", result["stop_reason"])
    for m, meter in zip(result["members"], ledger["members"], strict=True):
        tokens = meter["meter"]["usage"]["total_tokens"]
        print(f"  {m['name']:<9} {m['status']:<19} {tokens:>6} tokens")
    swarm_meter = ledger["swarm"]
    print(f"swarm: {swarm_meter['usage']['total_tokens']} tokens, ${swarm_meter['cost']:.4f}")
    print("overshoot:", {k: round(v, 4) for k, v in ledger["overshoot"].items()})
    if any("share" in m for m in ledger["members"]):  # a split budget: each member's share
        print("shares:", {m["name"]: m["share"]["tokens"] for m in ledger["members"]})
    return sample


# 1. A cost cap for the whole swarm.  The call that reaches it ends its member with status
#    swarm_cap and stops the swarm; calls already in flight finish (the overshoot), and the
#    members' next calls are refused.  worker-1 calls quickly; the first calls of worker-2 and
#    worker-3 take 2 s, so they are in flight when worker-1's fifth call reaches the cap (which
#    member's call that is would otherwise depend on timing).
set_model_info("swarm/scripted", ModelInfo(cost=PRICE))
slow = busy(1, sleep=2.0)
run(
    "cost cap",
    swarm(members=member(calculator_worker, name="worker", count=3), budget=Budget(cost=0.006)),
    {"worker-1": busy(100), "worker-2": slow + busy(99), "worker-3": slow + busy(99)},
)

# 2. A token cap split equally: each of the three members gets 10,000 tokens, its own cap.
#    `greedy` uses its share up; `capped` reaches its own token limit first; `quick` submits.
#    A share stops only its member, so the others go on and the swarm ends all_done.
sample = run(
    "equal split",
    swarm(
        members=[
            member(calculator_worker, name="greedy"),
            member(calculator_worker, name="capped", limits={"token": 3000}),
            member(calculator_worker, name="quick"),
        ],
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(tokens=30_000, split="equal"),
    ),
    {"greedy": busy(100), "capped": busy(100), "quick": [Step(submit="42", usage=(1000, 100))]},
)
# Each member's preamble says how the budget is shared (the first model input of any member;
# Inspect stores long texts in a log as attachments).
first_input = next(e.input for e in resolve_sample_attachments(sample).events if e.event == "model")
print("preamble:", first_input[-1].text.split("\n\n")[1])

# 3. Every member wants more than its share.  `first` calls at once; the first calls of
#    `second` and `third` take 1 s, so `first` has passed its share (its last call is metered
#    whole: 1,000 tokens over) before they start.  That overshoot comes out of no one else's
#    share: each member is stopped at its own, and the swarm passes its cap by the three
#    overshoots.
late = busy(1, sleep=1.0)
run(
    "every member its share",
    swarm(
        members=[member(calculator_worker, name=n) for n in ("first", "second", "third")],
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(tokens=30_000, split="equal"),
    ),
    {"first": busy(100), "second": late + busy(99), "third": late + busy(99)},
)

# 4. No cap given: the token cap is derived from the sample's token limit,
#    20,000 * (1 - reserve) = 18,000, so the swarm stops before the sample's limit would.  One
#    member, so that no other member's call is in flight when the cap is reached (how many
#    tokens such a call adds depends on timing).
run(
    "cap from the sample's token limit",
    swarm(members=member(calculator_worker, name="worker"), budget=Budget(reserve=0.1)),
    {"*": busy(100)},
    token_limit=20_000,
)

# 5. A cost cap needs prices for every member's model: without them the sample fails at once.
set_model_info("swarm/scripted", ModelInfo())
run(
    "cost cap without prices",
    swarm(members=calculator_worker, budget=Budget(cost=1.0)),
    {"*": busy(1)},
)
