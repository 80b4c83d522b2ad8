"""What happens to each member when the swarm stops, and the member statuses that result.

The default controller (leaderless, stop at the first submission) stops the swarm when `fast`
submits.  From then on no new model call starts: `thinker` finishes the call it is in, and its
next call is refused (status `stopped`).  `slow` is still in its call when the grace period
(1.5 seconds here) runs out, so it is cancelled.  Two members ended earlier on their own:
`limited` ran out of its turn limit and `broken`'s model call raised.
"""

from inspect_ai.agent import react

from swarm import RESULT_KEY, member, swarm
from swarm.testing import fail, pause, reply, run_eval, scripted_model, submit

SCRIPTS = {
    "fast": [reply("warming up"), pause(0.5, submit("42"))],
    "thinker": [reply("warming up"), pause(1.0, reply("still thinking")), submit("41")],
    "slow": [reply("warming up"), pause(10, submit("40"))],
    "limited": [reply("one"), reply("two"), submit("39")],
    "broken": [reply("warming up"), fail("model API down")],
}

log = run_eval(
    swarm(
        members=[
            member(react, name="fast"),
            member(react, name="thinker"),
            member(react, name="slow"),
            member(react, name="limited", limits={"turn": 1}),
            member(react, name="broken"),
        ],
        budget={"grace": 1.5},
    ),
    model=scripted_model(SCRIPTS),
)
result = log.samples[0].store[RESULT_KEY]
print("stop reason:", result["stop_reason"])
for m in result["members"]:
    error = f"  ({m['error']})" if m["error"] else ""
    print(f"{m['name']:<8} {m['status']}{error}")
