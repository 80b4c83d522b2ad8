"""The inspect_swarm:ledger record of a two-member swarm, read back from the log on disk.

The swarm has a cost cap of $1 and a time cap of 600 seconds.  The scripted model reports
1,200 + 300 tokens for react-1's one call and 1,150 + 280 for react-2's, and is priced at $3
per million input tokens and $15 per million output tokens, so react-1 costs $0.0081 and
react-2 $0.00765.  The ledger is printed as stored, then read with `swarm.analysis.swarm_ledger`.
"""

import json

from inspect_ai.agent import react
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelCost, ModelInfo, set_model_info

from swarm import Budget, controller, member, swarm
from swarm.analysis import SwarmLedger, swarm_ledger
from swarm.testing import Step, run_eval, scripted_model

set_model_info(
    "swarm/scripted",
    ModelInfo(cost=ModelCost(input=3.0, output=15.0, input_cache_write=0.0, input_cache_read=0.0)),
)
SCRIPTS = {
    "react-1": [Step(submit="42", usage=(1200, 300))],
    "react-2": [Step(submit="42", usage=(1150, 280))],
}
log = run_eval(
    swarm(
        members=member(react, count=2),
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(cost=1.0, time=600.0),
    ),
    model=scripted_model(SCRIPTS),
)


def layout(ledger: dict) -> str:
    """The ledger as JSON, one line per field and per member field (as the docs show it)."""
    lines = []
    for key, value in ledger.items():
        if key == "members":
            members = []
            for m in value:
                fields = ",\n".join(f"      {json.dumps(k)}: {json.dumps(v)}" for k, v in m.items())
                members.append("    {\n" + fields + "\n    }")
            lines.append('  "members": [\n' + ",\n".join(members) + "\n  ]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}"


sample = read_eval_log(log.location).samples[0]
print(layout(sample.store["inspect_swarm:ledger"]))

swarm_events = [e.data for e in sample.events if e.event == "info" and e.source == "inspect_swarm"]
ledger_event = next(data for data in swarm_events if data["type"] == "ledger")
stored = sample.store["inspect_swarm:ledger"]
print("ledger event == store:", {k: v for k, v in ledger_event.items() if k != "type"} == stored)

ledger = swarm_ledger(sample)
assert ledger is not None
for m in ledger.members:
    print(f"{m.name}: {m.status}, {m.calls.calls} call(s), ${m.meter.cost:.5f}")
members_cost = sum(m.meter.cost for m in ledger.members)
print(f"members: ${members_cost:.5f}  swarm: ${ledger.swarm.cost:.5f}")
print("complete:", ledger.total_complete, ledger.attribution_complete)
print("schema fields:", len(SwarmLedger.model_json_schema()["properties"]))
