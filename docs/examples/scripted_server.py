"""A swarm through a real provider: Inspect's openai-api provider and the scripted server.

The server plays the same scripts as swarm/scripted, over HTTP, and the faults a step asks for:
here the first attempt of `b`'s first call gets a 429 with Retry-After (10 ms), which the OpenAI
client retries inside the call, and `c`'s first call is answered with cache and reasoning
tokens.  The ledger's figures are then compared with what the server saw.
"""

from inspect_ai.agent import react
from inspect_ai.model import ModelCost, ModelInfo, set_model_info

from swarm import member, swarm
from swarm.testing import ScriptedServer, run_eval

SCRIPTS = {
    "a": [{"submit": "42", "usage": [100, 10]}],
    "b": [{"submit": "42", "usage": [100, 10], "faults": [{"status": 429, "retry_after": 0.01}]}],
    "c": [{"submit": "42", "usage": {"input": 40, "output": 10, "cache_read": 60, "reasoning": 4}}],
}

# $1 and $2 per million input and output tokens, $0.10 per million cache reads
set_model_info(
    "openai-api/scripted/model",
    ModelInfo(cost=ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)),
)

with ScriptedServer(SCRIPTS) as server:  # on 127.0.0.1, a free port; stopped on leaving
    log = run_eval(
        swarm(
            members=[member(react, name=n) for n in SCRIPTS],
            controller={"name": "leaderless", "stop_on_submission": False},
        ),
        model=server.model("model"),  # openai-api/scripted/model at server.base_url
    )
    attempts = server.attempts

ledger = log.samples[0].store["inspect_swarm:ledger"]
for m in ledger["members"]:
    usage = m["meter"]["usage"]
    print(
        f"{m['name']}: {m['calls']['calls']} call, {m['calls']['errored']} errored, "
        f"{usage['total_tokens']} tokens (cache read {usage['input_tokens_cache_read']}, "
        f"reasoning {usage['reasoning_tokens']}), ${m['meter']['cost']:.6f}"
    )
print("server saw:", [(a.key, a.attempt, a.status) for a in sorted(attempts, key=lambda a: a.key)])
print("unattributed tokens:", ledger["unattributed"]["total_tokens"])
print("complete:", ledger["total_complete"], "(an errored attempt makes the cost a lower bound)")
