"""The leaderless controller letting every member finish and answering with the last submission.

Three react members answer at different times on the scripted model.  With
stop_on_submission=False the swarm stops with reason all_done once nobody is left, and
final="last" makes the latest submission the swarm's answer.
"""

from inspect_ai.agent import react

from swarm import RESULT_KEY, controller, member, swarm
from swarm.testing import pause, reply, run_eval, scripted_model, submit

# The first model call of a process includes Inspect's one-time setup, so every script starts
# with a quick reply and the pauses that order the members come after it.
SCRIPTS = {
    "quick": [reply("warming up"), submit("41")],
    "careful": [reply("warming up"), pause(0.5, submit("42"))],
    "thorough": [reply("warming up"), pause(1.0, submit("42"))],
}

log = run_eval(
    swarm(
        members=[member(react, name=name) for name in SCRIPTS],
        controller=controller("leaderless", stop_on_submission=False, final="last"),
    ),
    model=scripted_model(SCRIPTS),
)
sample = log.samples[0]
result = sample.store[RESULT_KEY]
for m in result["members"]:
    print(f"{m['name']:<9} {m['status']:<10} ended at {m['time']:.1f}s")
print("stop reason:", result["stop_reason"])
print("answer:", result["final"]["member"], f"({result['final']['mode']})")
print("score:", sample.scores["includes"].value)
