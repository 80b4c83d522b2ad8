"""member_scores(): every member's answer scored next to the swarm's own score.

With no argument: runs a swarm of four members of which one (m2) is right and two agree on a
wrong answer, which the vote makes the swarm's, scored by member_scores(match()), and prints
its metrics; the log is written under member-scores-logs/
(emptied first: the example's own folder holds one log however often it runs).
With a log file: prints the member_scores metrics of that log (as `inspect score` wrote them).
"""

import shutil
import sys

from inspect_ai.agent import react
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import match

from swarm import controller, member, swarm
from swarm.analysis import member_scores
from swarm.testing import reply, run_eval, scripted_model, submit


def show(log) -> None:
    for score in log.results.scores:
        if score.scorer.startswith("member_scores"):
            print(f"{score.scorer:<15} {score.name:<5} mean {score.metrics['mean'].value:.2f}")


def fresh(folder: str) -> str:
    """``folder``, emptied of an earlier run's logs (it is this example's own)."""
    shutil.rmtree(folder, ignore_errors=True)
    return folder


if len(sys.argv) > 1:
    show(read_eval_log(sys.argv[1]))
    sys.exit()

# the vote's answer is 41 whatever order the members end in (two votes of four)
ANSWERS = {"m1": "41", "m2": "42", "m3": "41", "m4": "43"}
SCRIPTS = {name: [reply("thinking"), submit(answer)] for name, answer in ANSWERS.items()}
solver = swarm(
    members=[member(react, name=name) for name in ANSWERS],
    controller=controller("leaderless", final="vote", stop_on_submission=False),
)
log = run_eval(
    solver,
    model=scripted_model(SCRIPTS),
    scorer=member_scores(match()),
    log_dir=fresh("member-scores-logs"),
)
print(log.samples[0].scores["member_scores"].value)
show(log)
