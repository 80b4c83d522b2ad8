"""The keyless demonstration of the fan-out eval: an honest lead and honest children, scripted
for the ``swarm/scripted`` model from the fixture's manifest.

This is the one place the manifest (the expected answers and worker names) reaches agents: a
scripted model cannot compute, so its children are told the answers here.  It demonstrates the
harness (spawning, replies, receipts, the artifact, the rubric) with no model key; it measures
nothing about a model.  A real run (``--model``) never sees the manifest.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from ._fixture import Fixture
from ._subagents import subagent_type

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = ["demo_model", "honest_deepagent_scripts", "honest_scripts"]


def _step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def child_task(fixture: Fixture, file: str, question: str) -> str:
    """What the lead asks a child to do (the same words the prompt's worked example uses)."""
    return (
        f"Read the file shards/{file} in the working directory and answer this question: "
        f"{question} Compute the answer with the bash or python tool; do not guess. Then reply "
        'with send_message(to="parent", text=...) where text is the answer as a bare integer, '
        "and end."
    )


def honest_scripts(fixture: Fixture) -> dict[str, list[dict[str, Any]]]:
    """Scripts for the lead and one child per shard: the lead spawns every worker, waits,
    reads the replies, writes the artifact and submits; each child reads its shard and replies
    with its expected answer."""
    lead = [
        _step("spawn_child", name=s.worker, task=child_task(fixture, s.file, s.question))
        for s in fixture.shards
    ]
    bullets = "".join(f"- {s.file}: {s.expected}\n" for s in fixture.shards)
    write = f"printf %s {shlex.quote(bullets)} > {shlex.quote(fixture.artifact)}"
    lead += [
        _step("wait_for_children"),
        _step("read_messages"),
        _step("bash", command=write),
        {"submit": f"Wrote {fixture.artifact}."},
    ]
    scripts: dict[str, list[dict[str, Any]]] = {"lead": lead}
    for s in fixture.shards:
        scripts[s.worker] = [
            _step("bash", command=f"wc -l shards/{shlex.quote(s.file)}"),
            _step("send_message", to="parent", text=str(s.expected)),
            {"submit": str(s.expected)},
        ]
    return scripts


def subagent_task(file: str, question: str) -> str:
    """What a deepagent lead asks a shard's subagent to do."""
    return (
        f"Read the file shards/{file} in the working directory and answer this question: "
        f"{question} Compute the answer with the bash or python tool; do not guess. Then "
        "submit the answer as a bare integer."
    )


def honest_deepagent_scripts(fixture: Fixture) -> dict[str, list[dict[str, Any]]]:
    """Scripts for a deepagent lead (``lead="deepagent"``) and its background subagents, one
    per shard: the lead dispatches every shard's subagent in the background, waits for them
    all, writes the artifact and submits; each subagent reads its shard and submits its
    expected answer (its script is keyed ``lead/<worker>``)."""
    lead = [
        _step(
            "agent",
            subagent_type=subagent_type(s.worker),
            prompt=subagent_task(s.file, s.question),
            background=True,
        )
        for s in fixture.shards
    ]
    ids = [f"AGENT-{i + 1}" for i in range(len(fixture.shards))]
    bullets = "".join(f"- {s.file}: {s.expected}\n" for s in fixture.shards)
    write = f"printf %s {shlex.quote(bullets)} > {shlex.quote(fixture.artifact)}"
    lead += [
        _step("agent_wait", agent_ids=ids),
        _step("bash", command=write),
        {"submit": f"Wrote {fixture.artifact}."},
    ]
    scripts: dict[str, list[dict[str, Any]]] = {"lead": lead}
    for s in fixture.shards:
        scripts[f"lead/{subagent_type(s.worker)}"] = [
            _step("bash", command=f"wc -l shards/{shlex.quote(s.file)}"),
            {"submit": str(s.expected)},
        ]
    return scripts


def demo_model(fixture: Fixture, lead: str = "worker") -> Model:
    """The demonstration's model: ``swarm/scripted`` with ``honest_scripts(fixture)`` (or
    ``honest_deepagent_scripts`` for a deepagent lead)."""
    from inspect_ai.model import get_model

    scripts = honest_deepagent_scripts(fixture) if lead == "deepagent" else honest_scripts(fixture)
    return get_model("swarm/scripted", scripts=scripts, memoize=False)
