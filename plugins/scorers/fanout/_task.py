"""The ``swarm/fanout`` Inspect task: one fixture, one sample, scored by the fan-out rubric.

    inspect eval swarm/fanout -T fixture=json-events --model openai/gpt-4o

The fixture's shards are copied into the sample's sandbox (``local``: no Docker) under
``shards/``; the manifest, the prompt file and anything of the harness never are.  The prompt is
the fixture's ``task.txt``.  The solver is a fan-out topology (``fanout_topology``): a lead that
may spawn children from a worker template, the ``messages`` channel, and ``bash`` and ``python``
in the sandbox.  Replace it with ``--solver swarm/swarm -S config=my-topology.yaml`` (or any
solver); the scorer, the rubric, reads only what the runtime recorded and the artifact.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from swarm import channel, controller, member, swarm

from ._fixture import Fixture, load_fixture
from ._scorer import fanout_rubric

__all__ = ["FANOUT_TOOLS", "fanout", "fanout_sample", "fanout_topology"]

FANOUT_TOOLS = ("bash", "python")
"""The Inspect tools the lead and its children have in the sandbox."""


def fanout_topology(fixture: Fixture, **swarm_args: Any) -> Any:
    """The default solver: a lead that may spawn one child per shard (and one retry each) from
    a worker template, the messages channel, and ``bash``/``python`` for everyone."""
    shards = len(fixture.shards)
    tools = {"tools": list(FANOUT_TOOLS)}
    return swarm(
        members=member("swarm/worker", name="lead", args=tools, can_spawn=["worker"]),
        templates={"worker": member("swarm/worker", args=tools)},
        channels=[channel("messages")],
        controller=controller("leaderless", stop_on_submission=True),
        spawning={
            "max_depth": 1,
            "max_children": 2 * shards,
            "max_live": shards + 1,
            "max_spawns": 2 * shards,
            "retries": 1,
        },
        **swarm_args,
    )


def fanout_sample(fixture: Fixture) -> Sample:
    """The fixture's one sample: the prompt, and the shards as the sandbox's files."""
    files = {
        f"shards/{shard.file}": fixture.shard_path(shard).read_text() for shard in fixture.shards
    }
    expected = "\n".join(f"- {s.file}: {s.expected}" for s in fixture.shards)
    return Sample(
        id=fixture.name,
        input=fixture.task,
        target=expected,
        files=files,
        metadata={"fixture": fixture.name, "artifact": fixture.artifact},
    )


@task(name="fanout")
def fanout(fixture: str = "json-events", spawn_factor: int = 2) -> Task:
    """The fan-out eval on one fixture.

    Args:
        fixture: a shipped fixture (``json-events``, ``csv-metrics``) or a fixture directory.
        spawn_factor: depth-1 spawns the rubric allows per shard (2: one retry each).
    """
    loaded = load_fixture(fixture)
    return Task(
        dataset=[fanout_sample(loaded)],
        solver=fanout_topology(loaded),
        scorer=fanout_rubric(fixture=fixture, spawn_factor=spawn_factor),
        sandbox="local",
        name=f"fanout-{loaded.name}",
    )
