"""Bridged agents for the tests, and the sandbox-bridge run (``python bridge_agents.py``).

``sdk_agent``: an agent written against the OpenAI Python SDK, talking to the eval's model
through ``agent_bridge()`` and running the swarm's tools with ``bridge_tools()``.  ``cli_agent``:
a "CLI agent" in the member's sandbox (a stdlib-only Python script: urllib to the bridge's
proxy, its Chat Completions endpoint and its MCP endpoint for the swarm's tools), started by
``sandbox_agent_bridge()`` with the swarm's tools as bridged host tools.

Run as a script, it runs the sandbox-bridge eval under Inspect's ``local`` sandbox and writes
its log under the directory it is given (see ``test_bridged_members``: it is run in a mount
namespace whose ``/var/tmp`` is a temporary directory, since Inspect's sandbox tools install
there).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.agent import Agent, AgentState, agent, agent_bridge, sandbox_agent_bridge
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.util import sandbox

from swarm import bridge_tools, member, swarm
from swarm.testing import call, reply, scripted_model, submit


def _openai_messages(state: AgentState) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.text} for m in state.messages]


@agent
def sdk_agent() -> Agent:
    """An OpenAI-SDK agent: chat, run every tool call the model makes, until it calls none."""

    async def execute(state: AgentState) -> AgentState:
        from openai import AsyncOpenAI

        tools = bridge_tools()
        async with agent_bridge(state) as bridge:
            client = AsyncOpenAI(api_key="unused", base_url="http://unused.invalid/v1")
            messages = _openai_messages(state)
            for _ in range(20):
                out = await client.chat.completions.create(
                    model="inspect",
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


CLI = r"""
import json, os, time, urllib.error, urllib.request

BASE = os.environ["SWARM_BRIDGE_URL"]


def post(path, body):
    data = json.dumps(body).encode()
    for _ in range(400):  # the proxy may not listen yet
        try:
            request = urllib.request.Request(
                BASE + path, data=data, headers={"Content-Type": "application/json"}
            )
            return json.loads(urllib.request.urlopen(request).read().decode())
        except urllib.error.URLError as ex:
            if "refused" not in str(ex):
                raise
            time.sleep(0.05)
    raise SystemExit("the bridge never answered")


def mcp(method, params):
    return post("/mcp/swarm", {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


served = mcp("tools/list", {})["result"]["tools"]
tools = [
    {
        "type": "function",
        "function": {
            "name": "mcp__swarm__" + t["name"],
            "description": t["description"],
            "parameters": t["inputSchema"],
        },
    }
    for t in served
]
messages = json.load(open("conversation.json"))
for _ in range(20):
    out = post("/v1/chat/completions", {"model": "inspect", "messages": messages, "tools": tools})
    if "choices" not in out:
        print("REFUSED", json.dumps(out)[:300])
        break
    message = out["choices"][0]["message"]
    messages.append(message)
    if not message.get("tool_calls"):
        break
    for tc in message["tool_calls"]:
        name = tc["function"]["name"].removeprefix("mcp__swarm__")
        arguments = json.loads(tc["function"]["arguments"])
        res = mcp("tools/call", {"name": name, "arguments": arguments})
        if "error" in res:
            text = "Error: " + res["error"]["message"]
        else:
            text = "".join(c.get("text", "") for c in res["result"]["content"])
        messages.append({"role": "tool", "tool_call_id": tc["id"], "content": text})
"""


@agent
def cli_agent(port: int = 13131) -> Agent:
    """A CLI agent in the member's sandbox, bridged with the swarm's tools as host tools."""

    async def execute(state: AgentState) -> AgentState:
        tools = bridge_tools()
        async with sandbox_agent_bridge(state, port=port, bridged_tools=[tools.spec()]) as bridge:
            env = sandbox()
            await env.write_file("conversation.json", json.dumps(_openai_messages(state)))
            await env.write_file("cli_agent.py", CLI)
            url = f"http://127.0.0.1:{port}"
            result = await env.exec(["python3", "cli_agent.py"], env={"SWARM_BRIDGE_URL": url})
            if not result.success:
                raise RuntimeError(f"the CLI agent failed: {result.stderr[-2000:]}")
            return bridge.state

    return execute


def child_scripts(prefix: str = "") -> dict[str, list[Any]]:
    """The lead spawns ``b``; ``b`` writes the answer to the board, makes one malformed board
    call, replies to its parent and stops; the lead reads the reply and the board, submits."""
    return {
        "lead": [
            call("spawn_child", name="b", task="Put the answer on the board and tell me."),
            call("wait_for_children"),
            call("read_messages"),
            call("shared_memory", command="view", path="/shared_memory/answer.md"),
            submit("42"),
        ],
        "b": [
            call(
                f"{prefix}shared_memory",
                command="create",
                path="/shared_memory/answer.md",
                file_text="42\n",
            ),
            call(f"{prefix}shared_memory", command="bogus"),
            call(f"{prefix}send_message", to="parent", text="the answer is on the board"),
            reply("done"),
        ],
    }


def sandbox_run(log_dir: str, port: int, limits: dict[str, Any] | None) -> EvalLog:
    """A worker lead that spawns a child bridged from its ``local`` sandbox."""
    solver = swarm(
        members=member("swarm/worker", name="lead", can_spawn=["cli"]),
        templates={
            "cli": member(cli_agent, {"port": port}, bridged="sandbox", limits=limits),
        },
        channels=["shared_memory", "messages"],
    )
    task = Task(dataset=[Sample(input="What is 6 * 7?", target="42")], solver=solver)
    model = scripted_model(child_scripts("mcp__swarm__"))
    [log] = eval(task, model=model, sandbox="local", display="none", log_dir=log_dir)
    return log


if __name__ == "__main__":
    sandbox_run(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]) or None)
