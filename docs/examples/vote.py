"""Five members answer 3, 3, 4, 3 and 5: the vote answers 3, and with a verifier that passes only
4, verify_then_vote answers 4.

Each member's answer is the text of its final output (here its submit() call), kept in the
result record with the verifier's verdict on every submission, and read back typed with
swarm.analysis.swarm_result().
"""

from inspect_ai.agent import react

from swarm import controller, member, swarm
from swarm.analysis import swarm_result
from swarm.testing import pause, reply, run_eval, scripted_model, submit

ANSWERS = {"m1": "3", "m2": "3", "m3": "4", "m4": "3", "m5": "5"}
# a quick first reply (a process's first model call includes Inspect's setup), then the
# members submit in roster order
SCRIPTS = {
    name: [reply("thinking"), pause(0.15 * (i + 1), submit(answer))]
    for i, (name, answer) in enumerate(ANSWERS.items())
}
MEMBERS = [member(react, name=name) for name in ANSWERS]

for final, params, target in [
    ("vote", {}, "3"),
    ("verify_then_vote", {"verifier": "match"}, "4"),  # match passes only the target, 4
]:
    solver = swarm(members=MEMBERS, controller=controller("leaderless", final=final, **params))
    log = run_eval(solver, model=scripted_model(SCRIPTS), target=target)
    sample = log.samples[0]
    result = swarm_result(sample)
    print(f"{final}:")
    for s in result.submissions:
        print(f"  {s.member} submitted {s.answer!r}, verified: {s.verified}")
    print(f"  answer: {result.final.answer!r} from {result.final.member} ({result.final.mode})")
    print(f"  output: {sample.output.completion!r}")
