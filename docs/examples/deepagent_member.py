"""Inspect's deepagent as a swarm member (swarm/deepagent): a background subagent metered to
it, the board and its notices wired in, and the runtime's record of its dispatch
(inspect_swarm:subagents)."""

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.scorer import includes

from swarm import LEDGER_KEY, METRICS_KEY, SUBAGENTS_KEY, channel, controller, member, swarm
from swarm.analysis import notice_text
from swarm.testing import call, pause, scripted_model, submit

helper = {"name": "helper", "description": "adds numbers", "prompt": "You add numbers."}
solver = swarm(
    members=[
        member(
            "swarm/deepagent",
            name="lead",
            args={"subagents": [helper], "background": True, "memory": False, "todo_write": False},
        ),
        member("swarm/worker", name="peer"),
    ],
    channels=[channel("shared_memory")],
    controller=controller("leaderless", stop_on_submission=False),
)
board = "/shared_memory"
scripts = {
    "peer": [
        call("shared_memory", command="create", path=f"{board}/peer.md", file_text="hi"),
        submit("posted"),
    ],
    "lead": [
        pause(1.0, call("agent", prompt="What is 2 + 3?", background=True)),
        call("agent_wait", agent_ids=["AGENT-1"]),
        call("shared_memory", command="create", path=f"{board}/sum.md", file_text="5"),
        submit("5"),
    ],
    "lead/sub": [submit("5")],  # the subagent's conversation (it has no preamble of its own)
}
task = Task(dataset=[Sample(input="Add 2 and 3.", target="5")], solver=solver, scorer=includes())
[log] = eval(task, model=scripted_model(scripts), display="none")
sample = resolve_sample_attachments(log.samples[0])
ledger = {m["name"]: m for m in sample.store[LEDGER_KEY]["members"]}
print("lead's tokens:", ledger["lead"]["meter"]["usage"]["total_tokens"])
print("lead's model calls:", ledger["lead"]["calls"]["calls"])
print("swarm tokens:", sample.store[LEDGER_KEY]["swarm"]["usage"]["total_tokens"])
print("log's tokens:", sum(u.total_tokens for u in sample.model_usage.values()))
metrics = sample.store[METRICS_KEY]
print("tools_unwired:", metrics["tools_unwired"], "notify_unwired:", metrics["notify_unwired"])
notices = [
    notice.splitlines()[0]
    for e in sample.events
    if e.event == "model" and e.span_id
    for m in e.input
    if (notice := notice_text(m)) is not None
]
print("a notice the lead got:", notices[0])
for e in sample.store[SUBAGENTS_KEY]["entries"]:
    shown = {k: e[k] for k in ("op", "name", "subagent", "status", "via", "text") if k in e}
    print(shown)
