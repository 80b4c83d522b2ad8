"""The fan-out workload F(n, k): a lead spawns n children; each makes k ``noop`` calls and
replies to the lead; the lead waits for all of them and submits.

- ``fanout``: swarm-eval: the lead may spawn the ``child`` template (the messages channel
  carries the replies); the lead makes n ``spawn_child`` calls, one ``wait_for_children`` and
  submits (n + 2 model calls); each child makes k ``noop`` calls, one ``send_message`` and
  submits (k + 2).
- ``floor-fanout``: the floor: the same n + 1 ``react()`` agents in one anyio task group, with the
  same numbers of model calls (``noop`` in place of the swarm's tools): the lead n + 1 ``noop``
  calls and submit, each child k + 1 and submit.

Every call reports the same usage as W(n, k)'s.  ``workload.py`` adds these modes to its own.
"""

from typing import Any

from common import (
    ANSWER,
    SUBMITTED_KEY,
    USAGE,
    Mode,
    build_floor_worker_group,
    noop_factory,
    preamble,
)

from swarm.plugins.scorers.fanout._task import DOCKER_COMPOSE

LEAD = "lead"


def _child(i: int) -> str:
    return f"c-{i}"


def _steps(*steps: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**s, "usage": list(USAGE)} for s in steps]


def swarm_script(n: int, k: int) -> dict[str, list[dict[str, Any]]]:
    """The lead spawns, waits and submits; every child works k steps, replies, submits."""
    lead = [
        {"tool": "spawn_child", "args": {"name": _child(i), "task": f"Do part {i}."}}
        for i in range(1, n + 1)
    ]
    lead += [{"tool": "wait_for_children", "args": {}}, {"submit": ANSWER}]
    child = [{"tool": "noop", "args": {"i": j}} for j in range(k)]
    child += [
        {"tool": "send_message", "args": {"to": "parent", "text": ANSWER}},
        {"submit": ANSWER},
    ]
    return {LEAD: _steps(*lead), "c-*": _steps(*child)}


def floor_script(n: int, k: int) -> dict[str, list[dict[str, Any]]]:
    """The same numbers of model calls, every tool call a ``noop``."""
    lead = [{"tool": "noop", "args": {"i": i}} for i in range(n + 1)] + [{"submit": ANSWER}]
    child = [{"tool": "noop", "args": {"i": j}} for j in range(k + 1)] + [{"submit": ANSWER}]
    return {LEAD: _steps(*lead), "c-*": _steps(*child)}


def build_fanout(n: int, k: int) -> Any:
    """swarm-eval: one lead that may spawn n children of the ``child`` template."""
    from inspect_ai.agent import Agent, agent, react

    from swarm import member, swarm, swarm_on_continue, swarm_tools

    noop = noop_factory()

    @agent
    def fan_worker() -> Agent:
        return react(tools=[noop(), swarm_tools()], on_continue=swarm_on_continue())

    return swarm(
        members=member(fan_worker, name=LEAD, can_spawn=["child"]),
        templates={"child": member(fan_worker)},
        spawning={"max_children": n, "max_live": n + 1, "max_spawns": n},
    )


def swarm_tool_schemas(lead: bool) -> list[Any]:
    """Plain tools with exactly the names, descriptions and parameters of the swarm tools a
    fan-out member is offered (read from the tools themselves, so they follow any change):
    the messages channel's and ``swarm_wait``, and the lead's spawning tools.  Each returns
    "ok"; the floor's script never calls them."""
    from inspect_ai.tool import ToolDef

    from swarm._run.spawn_tools import cancel_child, list_children, spawn_child, wait_for_children
    from swarm._run.tools import swarm_wait
    from swarm.plugins.channels.messages import read_messages_tool, send_message_tool

    real = [send_message_tool(), read_messages_tool(), swarm_wait()]
    if lead:
        real += [spawn_child(), list_children(), cancel_child(), wait_for_children()]

    def shaped_like(found: ToolDef) -> Any:
        async def execute(**args: Any) -> str:  # one function per tool: it carries the name
            return "ok"

        shaped = ToolDef(
            execute, name=found.name, description=found.description, parameters=found.parameters
        )
        return shaped.as_tool()

    return [shaped_like(ToolDef(t)) for t in real]


def build_floor_fanout_tools(n: int, k: int) -> Any:
    """The floor with the swarm's tool schemas: the same n + 1 agents and model calls as
    ``floor-fanout``, each also offered plain tools shaped like the swarm tools its fan-out
    member is offered (never called): what Inspect charges for offering them, no swarm."""
    noop = noop_factory()
    lead, child = [noop(), *swarm_tool_schemas(True)], [noop(), *swarm_tool_schemas(False)]
    names = [LEAD, *(_child(i) for i in range(1, n + 1))]
    return build_floor_worker_group(names, tools_for=lambda name: lead if name == LEAD else child)


def build_floor_fanout_staggered(n: int, k: int) -> Any:
    """``floor-fanout`` with the children started when fan-out starts them: the lead's
    ``noop(i)`` starts child c-i (i = 1..n) in the solver's task group, so the children run
    while the lead goes on calling, as spawned children do.  The same agents, messages and
    model calls as ``floor-fanout``; only when each child starts differs; no swarm."""
    import anyio
    from inspect_ai.agent import AgentState, react, run
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import Tool, tool

    child_noop = noop_factory()

    @solver
    def floor() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            results: dict[str, AgentState] = {}

            async def one(name: str, agent: Any) -> None:
                messages = [
                    ChatMessageUser(content=state.input_text, source="input"),
                    ChatMessageUser(content=preamble(name, n + 1), source="input"),
                ]
                results[name] = await run(agent, messages, name=name)

            async with anyio.create_task_group() as tg:

                @tool(name="noop")
                def starting_noop() -> Tool:
                    async def execute(i: int) -> str:
                        """Do nothing.

                        Args:
                            i: a counter
                        """
                        if 1 <= i <= n:
                            tg.start_soon(one, _child(i), react(tools=[child_noop()]))
                        return f"ok {i}"

                    return execute

                tg.start_soon(one, LEAD, react(tools=[starting_noop()]))
            done = sum(s.output.completion.rstrip().endswith(ANSWER) for s in results.values())
            state.store.set(SUBMITTED_KEY, done)
            state.output.completion = ANSWER
            return state

        return solve

    return floor()


def sandboxed_script(n: int, k: int) -> dict[str, list[dict[str, Any]]]:
    """F(n, k) with one ``bash`` call per child first: it reads its own part's file."""
    scripts = swarm_script(n, k)
    children = {}
    for i in range(1, n + 1):
        read = {"tool": "bash", "args": {"command": f"wc -c parts/part-{i}.txt"}}
        children[_child(i)] = _steps(read) + scripts["c-*"]
    return {LEAD: scripts[LEAD], **children}


def part_files(n: int) -> dict[str, str]:
    """One small file per child."""
    return {f"parts/part-{i}.txt": f"part {i}\n" * 100 for i in range(1, n + 1)}


def build_sandboxed_fanout(per_member: bool) -> Any:
    """F(n, k) with ``bash``: every member in its own sandbox (``per_member``, child ``c-i``
    receiving only ``parts/part-i.txt``), or all in the sample's one sandbox."""

    def build(n: int, k: int) -> Any:
        from inspect_ai.agent import Agent, agent, react
        from inspect_ai.tool import bash

        from swarm import member, swarm, swarm_on_continue, swarm_tools

        noop = noop_factory()

        @agent
        def fan_worker() -> Agent:
            tools = [noop(), bash(), swarm_tools()]
            return react(tools=tools, on_continue=swarm_on_continue())

        files = {_child(i): [f"parts/part-{i}.txt"] for i in range(1, n + 1)}
        sandboxes = {"per_member": True, "files": files} if per_member else None
        return swarm(
            members=member(fan_worker, name=LEAD, can_spawn=["child"]),
            templates={"child": member(fan_worker)},
            spawning={"max_children": n, "max_live": n + 1, "max_spawns": n},
            sandboxes=sandboxes,
        )

    return build


def build_floor_fanout(n: int, k: int) -> Any:
    """The floor: n + 1 agents named like the swarm's, in one task group."""
    return build_floor_worker_group([LEAD, *(_child(i) for i in range(1, n + 1))])


def sandboxed_mode(description: str, *, per_member: bool, provider: str = "bwrap") -> Mode:
    """F(n, k) with a bash call per child, in one local sandbox or a sandbox each of
    ``provider`` (``bwrap``; ``docker``: the fan-out eval's compose file, a container and a
    watcher container per member)."""
    sandbox: Any = "local"
    if per_member:
        sandbox = ("docker", str(DOCKER_COMPOSE)) if provider == "docker" else provider
    return Mode(
        description=description,
        build=build_sandboxed_fanout(per_member=per_member),
        script=sandboxed_script,
        calls=lambda n, k: (n + 2) + n * (k + 3),
        tool_calls=lambda n, k: n * k,
        submitted=lambda n: n + 1,
        sandbox=sandbox,
        files=part_files,
        tags=("sandbox",),
    )


def floor_mode(description: str, build: Any) -> Mode:
    """A floor of F(n, k): n + 1 bare agents making fan-out's model calls, every call a noop."""
    return Mode(
        description=description,
        build=build,
        script=floor_script,
        calls=lambda n, k: (n + 2) + n * (k + 2),
        tool_calls=lambda n, k: (n + 1) + n * (k + 1),
        submitted=lambda n: n + 1,
    )


FANOUT_MODES: dict[str, Mode] = {
    "floor-fanout": floor_mode(
        "the floor of F(n, k): n + 1 react() agents (a lead and n children) in one "
        "anyio task group, the same model calls, every tool a noop",
        build_floor_fanout,
    ),
    "floor-fanout-staggered": floor_mode(
        "floor-fanout with each child started when fan-out starts it (the lead's "
        "noop(i) starts child c-i), not all at once: the same agents and model calls with "
        "fan-out's timing, no swarm",
        build_floor_fanout_staggered,
    ),
    "floor-fanout-tools": floor_mode(
        "floor-fanout with the swarm's tool schemas: every agent also offered plain "
        "tools of exactly the names, descriptions and parameters of the swarm tools its fan-out "
        "member gets (the lead 7, each child 3), never called: Inspect's own cost of offering "
        "them",
        build_floor_fanout_tools,
    ),
    "fanout": Mode(
        description="swarm-eval, F(n, k): a lead spawns n children (spawn_child), each makes k "
        "noop calls and replies (send_message); the lead waits (wait_for_children) and submits",
        build=build_fanout,
        script=swarm_script,
        calls=lambda n, k: (n + 2) + n * (k + 2),
        tool_calls=lambda n, k: n * k,
        submitted=lambda n: n + 1,
    ),
    "fanout-local": sandboxed_mode(
        "F(n, k) with one bash call per child (wc of its part file), every member in the "
        "sample's one local sandbox (no isolation)",
        per_member=False,
    ),
    "fanout-bwrap": sandboxed_mode(
        "the same as fanout-local, every member in its own bwrap sandbox (sandboxes.per_member; "
        "child c-i receives only its part file), reads recorded",
        per_member=True,
    ),
    "fanout-docker": sandboxed_mode(
        "the same as fanout-bwrap, every member in a Docker container of its own with a watcher "
        "container beside it (the fan-out eval's compose file: no network), reads recorded; "
        "needs a Docker engine",
        per_member=True,
        provider="docker",
    ),
}
