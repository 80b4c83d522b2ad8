"""Each member in a sandbox of its own (bwrap), with only the sample files it is given, and the
runtime's record of what each member's tools read (inspect_swarm:reads)."""

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes

from swarm import READS_KEY, controller, member, swarm
from swarm.testing import call, reply, scripted_model

tools = {"tools": ["bash"]}
solver = swarm(
    members=[
        member("swarm/worker", name="reader", args=tools),
        member("swarm/worker", name="writer", args=tools),
        member("swarm/worker", name="editor", args=tools),
    ],
    controller=controller("leaderless", stop_on_submission=False),
    sandboxes={
        "per_member": True,  # the sample's own sandbox is a staging area nobody sees
        "share": [["writer", "editor"]],  # these two work in one sandbox
        "files": {"reader": ["data/a.txt"], "writer": ["data/b.txt"]},
    },
)
scripts = {
    "reader": [call("bash", command="ls -R; cat data/a.txt; cat data/b.txt"), reply("done")],
    "writer": [call("bash", command="cat data/b.txt > draft.txt"), reply("done")],
    "editor": [call("bash", command="sleep 1; ls; cat draft.txt"), reply("done")],
}
task = Task(
    dataset=[Sample(input="go", files={"data/a.txt": "apples\n", "data/b.txt": "bananas\n"})],
    solver=solver,
    scorer=includes(),
    sandbox="bwrap",
)
[log] = eval(task, model=scripted_model(scripts), display="none")
sample = log.samples[0]
calls = [e for e in sample.events if e.event == "tool" and e.function == "bash"]
for event in sorted(calls, key=lambda e: str(e.arguments["command"])):  # members run at once
    print(f"[{event.arguments['command']}]\n{str(event.result).strip()}")
record = sample.store[READS_KEY]
print("provider:", record["provider"])
for name, info in sorted(record["members"].items()):
    print(f"{name}: sandbox {info['sandbox']}, files {info['files']}")
reads = {(e["member"], e["path"], e["sandbox"]) for e in record["entries"] if e["op"] == "read"}
for who, path, where in sorted(reads):
    print(f"read: {who} {path} (in {where})")
