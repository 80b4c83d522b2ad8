"""Read the inspect_swarm:result record back from an eval log on disk.

The record is in the sample's store under "inspect_swarm:result" (`swarm.RESULT_KEY`) and, with
the same fields and "type": "result", in an info event with source "inspect_swarm".  A member
that errored also gets a "member_error" info event.
"""

import json

from inspect_ai.agent import react
from inspect_ai.log import read_eval_log

from swarm import RESULT_KEY, controller, member, swarm
from swarm.testing import fail, reply, run_eval, scripted_model, submit

SCRIPTS = {
    "solver": [reply("warming up"), submit("42")],
    "checker": [reply("warming up"), fail("model API down")],
}
log = run_eval(
    swarm(
        members=[member(react, name="solver"), member(react, name="checker", role="checks")],
        controller=controller("leaderless", stop_on_submission=False),
    ),
    model=scripted_model(SCRIPTS),
)

sample = read_eval_log(log.location).samples[0]
record = sample.store[RESULT_KEY]
print(json.dumps(record, indent=2))

swarm_events = [e.data for e in sample.events if e.event == "info" and e.source == "inspect_swarm"]
print("info events:", ", ".join(data["type"] for data in swarm_events))
result_event = next(data for data in swarm_events if data["type"] == "result")
print("result event == store:", {k: v for k, v in result_event.items() if k != "type"} == record)

answer = sample.messages[-1]
print("answer message metadata:", answer.metadata["inspect_swarm"])
