"""The verified and quiescence controllers on the scripted model."""

from inspect_ai.agent import Agent, agent, react
from inspect_ai.scorer import match

from swarm import Budget, controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.testing import call, pause, run_eval, scripted_model, submit


@agent
def worker() -> Agent:
    """A react member wired to the swarm's channels."""
    return react(tools=[swarm_tools()], on_continue=swarm_on_continue())


def report(title: str, log: object) -> None:
    sample = log.samples[0]  # type: ignore[attr-defined]
    record = sample.store["inspect_swarm:result"]
    print(f"== {title}")
    print(f"stop reason: {record['stop_reason']}")
    for m in record["members"]:
        gates = f"gate checks {m['gate_checks']}, passes {m['gate_passes']}"
        print(f"  {m['name']:<9} {m['status']:<10} {gates}")
    final = record["final"]
    print(f"answer: {final['member']} ({final['mode']}, {final['reason']})")


# verified: every submission is checked with the task's scorer; the first that passes wins
model = scripted_model(
    {
        "hasty": [submit("41")],
        "careful": [pause(0.5, submit("42"))],
        "slow": [pause(10, submit("42"))],
    }
)
solver = swarm(
    members=[member(worker, name=n) for n in ("hasty", "careful", "slow")],
    controller="verified",
    budget=Budget(grace=0.5),
)
report("verified", run_eval(solver, model=model, scorer=match()))

# quiescence: every member waits on the others, so nothing can change any more
model = scripted_model({"*": [call("swarm_wait"), submit("42")]})
solver = swarm(
    members=member(worker, count=3),
    channels=["shared_memory"],
    controller=controller("quiescence", idle_seconds=60),
)
report("quiescence", run_eval(solver, model=model))
