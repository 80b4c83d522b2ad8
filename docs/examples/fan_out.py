"""A lead spawns three children from a worker template; each replies to its parent; the lead
waits for all of them, reads the replies and submits.  One child errors: its parent gets a
receipt instead of a reply.

Runs on the scripted model (no key) and prints the spawn ledger and the message log.
"""

from inspect_ai.log import read_eval_log

from swarm import member, swarm
from swarm.analysis import swarm_messages, swarm_spawns
from swarm.testing import call, fail, run_eval, scripted_model, submit

lead = [
    call("spawn_child", name=n, task=f"Give one word for {n}.") for n in ("red", "blue", "gray")
]
lead += [call("wait_for_children"), call("read_messages"), submit("red: cherry, blue: sky")]
model = scripted_model(
    {
        "lead": lead,
        "red": [call("send_message", to="parent", text="cherry"), submit("cherry")],
        "blue": [call("send_message", to="parent", text="sky"), submit("sky")],
        "gray": [fail("model API down")],
    }
)
solver = swarm(
    members=member("swarm/worker", name="lead", can_spawn=["worker"]),
    templates={"worker": member("swarm/worker", role="a worker who answers its parent")},
    spawning={"max_children": 4},
)
log = read_eval_log(run_eval(solver, model=model).location)
sample = (log.samples or [])[0]

spawns = swarm_spawns(sample)
assert spawns is not None
# children run at the same time: the order of their ends (and replies) varies, so print sorted
print(
    "spawned:", ", ".join(f"{e.member} (by {e.parent})" for e in spawns.entries if e.op == "spawn")
)
for e in sorted((e for e in spawns.entries if e.op == "end"), key=lambda e: e.member or ""):
    print(f"ended: {e.member} {e.status}")

messages = swarm_messages(sample)
assert messages is not None
for m in sorted(messages.messages, key=lambda m: m.sender):
    seen = f"seen by {m.seen.via}" if m.seen else "never seen"
    print(f"{m.kind}: {m.sender} -> {m.recipient} ({m.relationship}) {m.text!r}, {seen}")
