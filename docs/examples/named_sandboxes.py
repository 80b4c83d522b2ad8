"""Members that name the sample sandbox environment they work in (member(sandbox=...)): two
copies of one member, each in its own environment of the sample (`{member}`), and a lead in
the sample's default one.  The environments are bwrap's, named as a compose file's services."""

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.util import SandboxEnvironmentSpec

from swarm import READS_KEY, BwrapConfig, controller, member, swarm
from swarm.testing import call, reply, scripted_model

tools = {"tools": ["bash"]}
solver = swarm(
    members=[
        member("swarm/worker", name="lead", args=tools, sandbox="default"),
        member("swarm/worker", name="agent", count=2, args=tools, sandbox="{member}"),
    ],
    controller=controller("leaderless", stop_on_submission=False),
)
work = "cat task.txt; echo done > out.txt; ls"
scripts = {
    "lead": [call("bash", command="ls"), reply("done")],
    "agent-1": [call("bash", command=work), reply("done")],
    "agent-2": [call("bash", command=work), reply("done")],
}
files = {  # "name:path" puts a sample file in the environment called name
    "brief.txt": "the whole job\n",
    "agent-1:task.txt": "first half\n",
    "agent-2:task.txt": "second half\n",
}
task = Task(
    dataset=[Sample(input="go", files=files)],
    solver=solver,
    scorer=includes(),
    sandbox=SandboxEnvironmentSpec("bwrap", BwrapConfig(environments=("agent-1", "agent-2"))),
)
[log] = eval(task, model=scripted_model(scripts), display="none")
sample = log.samples[0]
calls = [e for e in sample.events if e.event == "tool" and e.function == "bash"]
for result in sorted(str(e.result).strip() for e in calls):  # members run at once
    print(result.replace("\n", " | "))
for name, info in sorted(sample.store[READS_KEY]["members"].items()):
    print(f"{name} ran in {info['sandbox']}")
