"""The inspect_swarm:metrics record: a run on the shared_memory board, the wiring checks, and a
filesystem-only swarm whose member checks its own work.

1. `lead` writes a plan to the board; `follower` waits for it, reads it and submits.  The whole
   record is printed (the scripted model is priced at $1 and $2 per million tokens).
2. Three members that are wired differently: `unwired` has the channels' tools but no
   `swarm_on_continue()`, `no_tools` has neither, `lead` has both.
3. With only the filesystem channel there is nothing to count (`comm` is empty, the waits are
   null).  `checker` scores its own answers with Inspect's `score()` before it returns: the
   metrics count these in-loop checks.
"""

import json

from inspect_ai.agent import Agent, AgentState, agent, react
from inspect_ai.model import ChatMessageUser, ModelCost, ModelInfo, get_model, set_model_info
from inspect_ai.scorer import score, value_to_float

from swarm import controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.testing import call, pause, reply, run_eval, scripted_model, submit

BOARD = "/shared_memory"
set_model_info(
    "swarm/scripted",
    ModelInfo(cost=ModelCost(input=1.0, output=2.0, input_cache_write=0.0, input_cache_read=0.0)),
)


@agent
def board_worker() -> Agent:
    """A react agent wired to the swarm's channels."""
    return react(tools=[swarm_tools()], on_continue=swarm_on_continue())


@agent
def tools_only() -> Agent:
    """The channels' tools, but no notices: react's default on_continue."""
    return react(tools=[swarm_tools()])


@agent
def checker() -> Agent:
    """Answers, scores the answer with the task's scorer, and tries again until it passes."""

    async def execute(state: AgentState) -> AgentState:
        for _ in range(3):
            state.output = await get_model().generate(state.messages)
            state.messages.append(state.output.message)
            scores = await score(state)  # an intermediate ScoreEvent: a gate check
            if value_to_float()(scores[0].value) == 1.0:
                break
            state.messages.append(ChatMessageUser(content="That is not right; try again."))
        return state

    return execute


def metrics_of(solver: object, scripts: dict) -> dict:
    log = run_eval(solver, model=scripted_model(scripts))
    return log.samples[0].store["inspect_swarm:metrics"]


def on_board(*members: object) -> object:
    return swarm(
        members=list(members),
        channels=["shared_memory"],
        controller=controller("leaderless", stop_on_submission=False),
    )


PLAN = call("shared_memory", command="create", path=f"{BOARD}/plan.md", file_text="6 * 7")

print("== coordination")
metrics = metrics_of(
    on_board(member(board_worker, name="lead"), member(board_worker, name="follower")),
    {
        "lead": [reply("warming up"), pause(0.3, PLAN), submit("42")],
        "follower": [
            call("swarm_wait", path=f"{BOARD}/plan.md"),
            call("shared_memory", command="view", path="f-1"),
            submit("42"),
        ],
    },
)
print(json.dumps(metrics, indent=2))

print("== wiring")
metrics = metrics_of(
    on_board(
        member(board_worker, name="lead"),
        member(tools_only, name="unwired"),
        member(react, name="no_tools"),
    ),
    {
        "lead": [PLAN, submit("42")],
        "unwired": [reply("warming up"), pause(0.3, reply("still thinking")), submit("42")],
        "no_tools": [submit("42")],
    },
)
print("notify_unwired:", metrics["notify_unwired"])
print("tools_unwired:", metrics["tools_unwired"])

print("== filesystem only, gate checks")
metrics = metrics_of(
    swarm(members=member(checker), channels=["filesystem"]),
    {"*": [reply("41"), reply("42")]},
)
m = metrics["members"][0]
print("comm:", m["comm"], "waits:", m["waits"], "wait_time:", m["wait_time"])
print("gate checks:", m["gate_checks"], "passes:", m["gate_passes"])
print(f"first pass: {m['first_pass_time']:.2f} s after the swarm started")
print("steps to answer:", metrics["steps_to_answer"])
