"""Diagnosing two swarms: a fan-out whose lead uses every reply (clean), and a board swarm where
a reader ignores what it read and one member never acts.

Runs on the scripted model (no key).  Every step's usage is set, so the tokens printed are the
same on every run; times are not printed (they vary).  The critical path is the longest chain in
time, and a scripted call takes a few milliseconds (which of two such calls is longer is the
machine's noise), so one call of each run is paused: the path runs through it on every run.
The second run's log is written to diagnosed/, for `inspect score` (docs/diagnosis.md); a log
an earlier run left there is removed first, so the page's `diagnosed/*.eval` names one log
however often it runs.  With
``--pictures DIR`` it also draws each run's timeline (the critical path and the findings on it)
into DIR: the docs' pictures are drawn so (``python docs/examples/diagnose_run.py --pictures
docs/images``).
"""

import shutil
import sys
from pathlib import Path

import attrs
from inspect_ai.agent import Agent, agent, react
from inspect_ai.log import read_eval_log

from swarm import channel, controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.diagnosis import diagnose
from swarm.testing import Step, call, pause, run_eval, scripted_model, submit
from swarm.timeline import timeline


def used(step: Step, tokens: int = 10) -> Step:
    """``step`` reporting ``tokens`` input and 5 output tokens."""
    return attrs.evolve(step, usage=[tokens, 5])


PICTURES = Path(sys.argv[2]) if sys.argv[1:2] == ["--pictures"] else None


def show(log_location: str, picture: str) -> None:
    sample = (read_eval_log(log_location).samples or [])[0]
    if PICTURES is not None:
        timeline(sample).save(PICTURES / f"{picture}.svg")
    found = diagnose(sample)
    f = found.figures
    path = f.critical_path
    print(f"critical path: {path.steps} calls, {path.tokens} tokens, through {path.members}")
    print(f"calls: {f.model_calls}, tokens: {f.tokens}, overhead: {f.overhead_tokens} tokens")
    print(f"writes and messages per call: {f.message_density:.3f}")
    for funnel in f.funnels:
        print(
            f"{funnel.channel}: sent {funnel.sent}, reached {funnel.reached}, "
            f"read {funnel.read}, acted on {funnel.acted}"
        )
    for finding in found.findings or ():
        print(f"finding: {finding.check} [{finding.mode}] {finding.member}: {finding.why}")
    if not found.findings:
        print("no findings")


print("== a fan-out of three")
children = ["north", "south", "east"]
lead = [used(call("spawn_child", name=n, task=f"Count the {n} shard."), 100) for n in children]
lead += [pause(0.3, used(call("wait_for_children"), 100))]  # this call takes 0.3 s
lead += [used(call("read_messages"), 100)]
lead += [used(submit("north 3, south 5, east 8"), 100)]
scripts = {"lead": lead}
for n, count in zip(children, ("3", "5", "8"), strict=True):
    scripts[n] = [used(call("send_message", to="parent", text=f"{n} {count}")), used(submit(count))]
fan_out = swarm(
    members=member("swarm/worker", name="lead", can_spawn=["worker"]),
    templates={"worker": member("swarm/worker")},
)
show(run_eval(fan_out, model=scripted_model(scripts)).location, "diagnosis-fan-out")


@agent
def board_worker() -> Agent:
    return react(tools=[swarm_tools()], on_continue=swarm_on_continue())


print("== a reader that ignores the board, and a member that never acts")
board = swarm(
    members=[member(board_worker, name=n) for n in ("writer", "reader", "broken")],
    channels=[channel("shared_memory")],
    controller=controller("leaderless", stop_on_submission=False),
)
# steps as mappings (Step values work as well: the log keeps either as the model's
# arguments, so `inspect score` can build the model again)
usage = {"usage": [10, 5]}
write = {"command": "create", "path": "/shared_memory/count.md", "file_text": "17"}
model = scripted_model(
    {
        "writer": [{"tool": "shared_memory", "args": write, **usage}, {"submit": "17", **usage}],
        "reader": [
            {"tool": "swarm_wait", "args": {"path": "/shared_memory/count.md"}, **usage},
            {
                "tool": "shared_memory",
                "args": {"command": "view", "path": "f-1"},
                "sleep": 0.3,  # this call takes 0.3 s
                **usage,
            },
            {"submit": "42", **usage},
        ],
        "broken": [{"fail": "model API down"}],
    }
)
shutil.rmtree("diagnosed", ignore_errors=True)  # the example's own folder, fresh each run
show(run_eval(board, model=model, log_dir="diagnosed").location, "diagnosis-board")
