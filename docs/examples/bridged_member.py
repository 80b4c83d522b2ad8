"""A bridged member: an agent written against the OpenAI Python SDK, in a swarm with a worker.

The lead (swarm/worker) spawns ``helper``, whose agent is plain OpenAI SDK code: Inspect's
``agent_bridge()`` sends its ``chat.completions.create(model="inspect")`` calls to the eval's
model, and ``bridge_tools()`` gives it the swarm's tools in the SDK's format.  The helper writes
the answer to the shared board, replies to its parent and stops; the lead reads the reply and
submits.  Runs offline on the scripted model (needs the ``openai`` package:
``pip install 'swarm-eval[bridge]'``).  Exits 1, saying why, when the bridged member did not
do its part, so a run that failed never looks like one that worked.

    python docs/examples/bridged_member.py
"""

from __future__ import annotations

import sys

from inspect_ai.agent import Agent, AgentState, agent, agent_bridge
from inspect_ai.log import read_eval_log

from swarm import bridge_tools, member, swarm
from swarm.testing import call, reply, run_eval, scripted_model, submit


@agent
def sdk_helper() -> Agent:
    """Chat through the bridge; run each tool call the model makes with the swarm's tools."""

    async def execute(state: AgentState) -> AgentState:
        from openai import AsyncOpenAI

        tools = bridge_tools()  # the member's own loop: every channel's tools
        async with agent_bridge(state) as bridge:
            client = AsyncOpenAI(api_key="unused", base_url="http://unused.invalid/v1")
            messages = [{"role": m.role, "content": m.text} for m in state.messages]
            for _ in range(20):
                out = await client.chat.completions.create(
                    model="inspect",  # the eval's model, through the bridge
                    messages=messages,  # type: ignore[arg-type]
                    tools=tools.openai(),  # type: ignore[arg-type]
                )
                message = out.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for tc in message.tool_calls:
                    fn = tc.function  # type: ignore[union-attr]
                    result = await tools.call(fn.name, fn.arguments, id=tc.id)
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": result})
            return bridge.state

    return execute


SCRIPTS = {
    "lead": [
        call("spawn_child", name="helper", task="Find 6 * 7, put it on the board, tell me."),
        call("wait_for_children"),
        call("read_messages"),
        submit("42"),
    ],
    "helper": [
        call("shared_memory", command="create", path="/shared_memory/answer.md", file_text="42"),
        call("send_message", to="parent", text="42 is on the board"),
        reply("done"),
    ],
}


def main() -> None:
    try:
        import openai  # noqa: F401
    except ImportError:
        sys.exit("bridged_member.py needs the openai package: pip install 'swarm-eval[bridge]'")
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["sdk"]),
        templates={"sdk": member(sdk_helper, bridged=True)},
        channels=["shared_memory", "messages"],
    )
    log = read_eval_log(run_eval(solver, model=scripted_model(SCRIPTS)).location)
    assert log.samples is not None
    sample = log.samples[0]
    ledger = sample.store["inspect_swarm:ledger"]
    metrics = {m["name"]: m for m in sample.store["inspect_swarm:metrics"]["members"]}
    for m in ledger["members"]:
        usage = m["meter"]["usage"]["total_tokens"]
        print(f"{m['name']}: bridged {m['bridged']}, {m['status']}, {usage} tokens")
    statuses = {m["name"]: m["status"] for m in ledger["members"]}
    if statuses.get("helper") != "submitted":
        sys.exit(f"the bridged helper did not finish its part: {statuses}")
    helper = metrics["helper"]
    print(
        f"helper: delivery {helper['delivery_effective']}, "
        f"longest_identical_tool_run {helper['longest_identical_tool_run']}"
    )
    comm = helper["comm"]
    print(f"helper's records: board {comm['shared_memory']['records']}, ", end="")
    print(f"messages {comm['messages']['records']}")
    [message] = sample.store["inspect_swarm:messages"]["messages"]
    print(f"{message['sender']} -> {message['recipient']} ({message['relationship']}): ", end="")
    print(message["text"])
    print(f"answer: {sample.output.completion}")


if __name__ == "__main__":
    main()
