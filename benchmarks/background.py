"""W(n, k) done as background work: each agent starts its react() loop (k ``noop`` calls, then
submit) with Inspect's ``background()`` and waits for it, so every model and tool call of the
workload runs in background work.

- ``floor-background``: the floor's n agents doing so, no swarm: ``background()`` starts the
  work in the sample's task group, unmetered.
- ``swarm-background``: the same agents as swarm members (leaderless, every member finishes):
  each member owns its background work, meters it as its own and drains it.

The model calls, tool calls and usage are W(n, k)'s, so ``swarm-background ÷ floor-background``
is what the swarm's ownership and metering of background work cost, and ``swarm-background ÷
swarm`` what running the same work in the background costs inside a swarm.  ``workload.py``
adds these modes to its own.
"""

from typing import Any

from common import Mode, build_floor_worker_group, worker_factory


def background_worker_factory() -> Any:
    """An ``@agent`` that runs the ``noop`` worker as its background work and waits for it."""
    import anyio
    from inspect_ai.agent import Agent, AgentState, agent
    from inspect_ai.util import background

    inner = worker_factory()

    @agent
    def background_worker() -> Agent:
        async def execute(state: AgentState) -> AgentState:
            done = anyio.Event()
            ended: list[AgentState] = []

            async def work() -> None:
                ended.append(await inner()(state))
                done.set()

            background(work)
            await done.wait()
            return ended[0]

        return execute

    return background_worker


def build_floor_background(n: int, k: int) -> Any:
    """The floor's n agents, each doing its work in the background (no swarm)."""
    return build_floor_worker_group(
        [f"worker-{i + 1}" for i in range(n)], worker=background_worker_factory()
    )


def build_swarm_background(n: int, k: int) -> Any:
    """swarm-eval: n members, each doing its work in the background; every member finishes."""
    from swarm import controller, member, swarm

    return swarm(
        members=member(background_worker_factory(), count=n),
        controller=controller("leaderless", stop_on_submission=False),
    )


def check_background(sample: Any) -> str | None:
    """Every member started exactly one background task and none was cancelled."""
    ledger = (sample.store or {}).get("inspect_swarm:ledger") if sample is not None else None
    members = ledger.get("members", []) if isinstance(ledger, dict) else []
    wrong = [
        m["name"]
        for m in members
        if (m.get("background_started"), m.get("background_cancelled")) != (1, 0)
    ]
    if not members or wrong:
        return f"members without exactly one finished background task: {wrong or 'no ledger'}"
    return None


BACKGROUND_MODES: dict[str, Mode] = {
    "floor-background": Mode(
        description="the floor's n react() agents, each run as background() work its agent "
        "waits for (no swarm: the sample's task group, unmetered)",
        build=build_floor_background,
    ),
    "swarm-background": Mode(
        description="swarm-eval: like 'swarm', each member's react() loop run as its "
        "background() work (owned, metered and drained by the member)",
        build=build_swarm_background,
        check=check_background,
    ),
}
