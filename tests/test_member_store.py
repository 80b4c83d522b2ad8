"""Members that write the sample store: their spans copy no store and log no ``StoreEvent``
(without that, each of n members' spans copies the whole store twice and logs the writes of
every member running beside it), and the net change is logged once, by the spans around the
swarm; the store keeps every write."""

from __future__ import annotations

from pathlib import Path

import anyio
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.event import SpanBeginEvent, StoreEvent
from inspect_ai.model import ModelOutput
from inspect_ai.util import store

from swarm import member, swarm
from swarm.testing import run_eval, scripted_model

from helpers import all_finish, only_sample

N = 6


@agent
def store_writer(key: str) -> Agent:
    """Writes ``key`` to the sample store, lets the others write, and submits."""

    async def execute(state: AgentState) -> AgentState:
        store().set(key, len(key))
        await anyio.sleep(0.05)  # every member's span is open while the others write
        state.output = ModelOutput.from_content("swarm/scripted", "42")
        return state

    return execute


def test_member_spans_log_no_store_events_and_the_net_change_is_logged_once(
    log_dir: Path,
) -> None:
    keys = [f"written-by-{i}" for i in range(N)]
    members = [member(store_writer(key=k), name=f"w-{i}") for i, k in enumerate(keys)]
    solver = swarm(members=members, controller=all_finish())
    sample = only_sample(run_eval(solver, model=scripted_model({}), log_dir=log_dir))
    assert {k: sample.store[k] for k in keys} == {k: len(k) for k in keys}
    spans = {e.id: e for e in sample.events if isinstance(e, SpanBeginEvent)}
    member_spans = {e.id for e in spans.values() if e.name in {f"w-{i}" for i in range(N)}}
    assert len(member_spans) == N

    def inside_a_member(span_id: str | None) -> bool:
        while span_id is not None:
            if span_id in member_spans:
                return True
            span_id = spans[span_id].parent_id if span_id in spans else None
        return False

    stores = [e for e in sample.events if isinstance(e, StoreEvent)]
    assert [e for e in stores if inside_a_member(e.span_id)] == []
    # each span around the swarm logs the net change once: every key, once per span
    paths = [c.path for e in stores for c in e.changes if c.path.startswith("/written-by-")]
    assert len(stores) == 3  # Inspect's spans around it: the agent, the solver, the solvers
    assert sorted(paths) == sorted([f"/{k}" for k in keys] * len(stores))
