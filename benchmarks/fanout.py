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

from common import ANSWER, USAGE, Mode, build_floor_worker_group, noop_factory

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


def build_floor_fanout(n: int, k: int) -> Any:
    """The floor: n + 1 agents named like the swarm's, in one task group."""
    return build_floor_worker_group([LEAD, *(_child(i) for i in range(1, n + 1))])


FANOUT_MODES: dict[str, Mode] = {
    "floor-fanout": Mode(
        description="the floor of F(n, k): n + 1 react() agents (a lead and n children) in one "
        "anyio task group, the same model calls, every tool a noop",
        build=build_floor_fanout,
        script=floor_script,
        calls=lambda n, k: (n + 2) + n * (k + 2),
        tool_calls=lambda n, k: (n + 1) + n * (k + 1),
        submitted=lambda n: n + 1,
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
}
