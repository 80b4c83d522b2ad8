"""The scripted model: per-member scripts, globs, tool calls, usage, and the default answer.

The model is built with Inspect's get_model, which takes the scripts as YAML text (as here), a
mapping, or the path of a YAML/JSON file; `-M scripts=...` takes the same on the command line.
`swarm.testing.scripted_model()` is the shortcut for a mapping.
"""

from inspect_ai.model import get_model

from swarm import RESULT_KEY, member, swarm
from swarm.demo import calculator_worker
from swarm.testing import run_eval

SCRIPTS = """
calc-*:                              # a glob: calc-1 and calc-2
  - {tool: multiply, args: {x: 6, y: 7}, usage: [100, 10]}
  - {submit: "42", usage: [120, 5]}
"*":                                 # every other member
  - {reply: "I will just answer.", usage: [50, 5], sleep: 0.2}
  - {submit: "42", usage: [60, 5]}
"""

log = run_eval(
    swarm(
        members=[member(calculator_worker, name="calc", count=2), member(calculator_worker)],
        controller={"name": "leaderless", "stop_on_submission": False},
    ),
    model=get_model("swarm/scripted", scripts=SCRIPTS, answer="42"),
)
sample = log.samples[0]
result = sample.store[RESULT_KEY]
print("members:", ", ".join(f"{m['name']}={m['status']}" for m in result["members"]))

tool_results = [e.result for e in sample.events if e.event == "tool" and e.function == "multiply"]
print("multiply results:", tool_results)

usage = sample.model_usage["swarm/scripted"]
print("expected tokens:", 2 * (100 + 10 + 120 + 5) + (50 + 5 + 60 + 5))
print("total tokens:", usage.total_tokens)
print("output:", sample.output.completion.splitlines()[-1])
