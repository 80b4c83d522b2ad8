"""The synthesize answer rule: one model call of the swarm's own, after every member has ended,
reads the members' answers and writes the answer.

The scripted model plays the members by name and the synthesis call by "*" (its prompt names
no member).  The call is the final step's: the ledger meters it in `final`, counts it in the
swarm's totals, and its model event is in the swarm's span named "final".
"""

from inspect_ai.agent import react
from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import resolve_sample_attachments

from swarm import LEDGER_KEY, controller, member, swarm
from swarm.testing import run_eval, scripted_model

# each step's usage is given: [input tokens, output tokens]
SCRIPTS = {
    "m1": [{"submit": "42", "usage": [100, 10], "sleep": 0.1}],
    "m2": [{"submit": "6 * 7 = 42", "usage": [100, 10], "sleep": 0.2}],
    "m3": [{"submit": "41", "usage": [100, 10], "sleep": 0.3}],
    "*": [{"reply": "42", "usage": [400, 40]}],  # the synthesis
}

solver = swarm(
    members=[member(react, name=name) for name in ("m1", "m2", "m3")],
    controller=controller("leaderless", final="synthesize"),
)
log = run_eval(solver, model=scripted_model(SCRIPTS))
sample = resolve_sample_attachments(log.samples[0])
ledger = sample.store[LEDGER_KEY]
[final_span] = [e for e in sample.events if isinstance(e, SpanBeginEvent) and e.name == "final"]
[call] = [e for e in sample.events if isinstance(e, ModelEvent) and e.span_id == final_span.id]

print("output:", sample.output.completion)
print("final meter tokens:", ledger["final"]["usage"]["total_tokens"])
final, swarm_meter = ledger["final"]["usage"], ledger["swarm"]["usage"]
print("final meter == the call's usage:", final == call.output.usage.model_dump())
print("calls:", ledger["calls"]["calls"], "| swarm tokens:", swarm_meter["total_tokens"])
print("sample tokens:", sample.model_usage["swarm/scripted"].total_tokens)
print("the prompt's answers:")
prompt = call.input[-1].text
print(prompt[prompt.index("Answer 1") : prompt.index("\n\nRead the answers")])
