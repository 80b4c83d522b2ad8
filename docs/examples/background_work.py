"""A member that works in the background: it starts two tasks with Inspect's ``background()``,
each calling the model, and makes its own call.  One task finishes; the other is still running
when the second member's submission stops the swarm, so after the grace the swarm cancels it.

Runs on the scripted model (no key) and prints what the ledger and the metrics say of the
member.  The agents wait on each other through events, so every run prints the same.
"""

import anyio
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.util import background

from swarm import Budget, member, swarm
from swarm.analysis import swarm_ledger
from swarm.testing import Step, run_eval, scripted_model

ready = anyio.Event()
never = anyio.Event()


@agent
def researcher() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        async def look_up(topic: str, keep_going: bool) -> None:
            await get_model().generate(f"Look up {topic}.")
            if keep_going:
                ready.set()
                await never.wait()  # still running at the stop: cancelled after the grace

        background(look_up, "prices", False)
        background(look_up, "reviews", True)
        state.output = await get_model().generate(state.messages)
        await never.wait()
        return state

    return execute


@agent
def decider() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        await ready.wait()
        state.output = ModelOutput.from_content("swarm/scripted", "42")
        return state

    return execute


model = scripted_model(
    {
        "researcher": [Step(reply="thinking", usage=(300, 30))],
        "researcher/sub": [Step(reply="found it", usage=(100, 10))],  # its background calls
    }
)
solver = swarm(members=[member(researcher), member(decider)], budget=Budget(grace=0.5))
log = read_eval_log(run_eval(solver, model=model).location)
sample = (log.samples or [])[0]

ledger = swarm_ledger(sample)
assert ledger is not None
m = next(m for m in ledger.members if m.name == "researcher")
print(f"status: {m.status}, cancelled: {m.cancelled}")
print(f"background: {m.background_started} started, {m.background_cancelled} cancelled")
print(f"tokens: {m.meter.usage.total_tokens} in {m.calls.calls} calls")
