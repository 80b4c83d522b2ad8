"""The keyless demonstration of the fan-out eval: an honest lead and honest children, scripted
for the ``swarm/scripted`` model from the fixture's manifest.

This is the one place the manifest (the expected answers and worker names) reaches agents: a
scripted model cannot compute, so its children are told the answers here.  It demonstrates the
harness (spawning, replies, receipts, the artifact, the rubric) with no model key; it measures
nothing about a model.  A real run (``--model``) never sees the manifest.
"""

from __future__ import annotations

import copy
import shlex
from typing import TYPE_CHECKING, Any

from ._fixture import Fixture
from ._subagents import subagent_type

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = [
    "as_codex_child",
    "codex_children_scripts",
    "codex_subagent_task",
    "demo_model",
    "honest_codex_scripts",
    "honest_deepagent_scripts",
    "honest_scripts",
]


def _step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def write_artifact(fixture: Fixture) -> str:
    """The shell command an honest lead writes the artifact with: a bullet per shard."""
    bullets = "".join(f"- {s.file}: {s.expected}\n" for s in fixture.shards)
    return f"printf %s {shlex.quote(bullets)} > {shlex.quote(fixture.artifact)}"


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
    write = write_artifact(fixture)
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
    write = write_artifact(fixture)
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


def codex_subagent_task(worker: str, file: str, question: str) -> str:
    """What a Codex lead asks a shard's sub-agent to do (``You are <worker>,`` keys its script:
    ``lead/<worker>``)."""
    return (
        f"You are {worker}, the fan-out child for shards/{file}. Read that file in the working "
        f"directory and answer this question: {question} Compute the answer with a command; "
        "do not guess. Then answer with the bare integer."
    )


def honest_codex_scripts(fixture: Fixture) -> dict[str, list[dict[str, Any]]]:
    """Scripts for a Codex lead (``lead="codex"``) and its own sub-agents, one per shard: the
    lead spawns every shard's sub-agent, keeps its turn (a poll) until each has told it its
    answer (Codex's ``<subagent_notification>``), writes the artifact and answers; each
    sub-agent reads its shard and answers its expected integer (keyed ``lead/<worker>``)."""
    lead = [
        _step("spawn_agent", message=codex_subagent_task(s.worker, s.file, s.question))
        for s in fixture.shards
    ]
    heard = sorted({f'{{"completed":"{s.expected}"}}' for s in fixture.shards})
    write = write_artifact(fixture)
    lead += [
        {"tool": "exec_command", "args": {"cmd": "true"}, "sleep": 0.5, "until": heard},
        _step("exec_command", cmd=write),
        {"reply": f"Wrote {fixture.artifact}."},
    ]
    scripts: dict[str, list[dict[str, Any]]] = {"lead": lead}
    for s in fixture.shards:
        scripts[f"lead/{s.worker}"] = [
            _step("exec_command", cmd=f"wc -l shards/{shlex.quote(s.file)}"),
            {"reply": str(s.expected)},
        ]
    return scripts


def as_codex_child(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A fan-out child's script as a Codex CLI child plays it: ``bash`` is Codex's
    ``exec_command``, the swarm's tools keep their names (Inspect's bridge drops the MCP
    namespace), and a submission is Codex's last answer."""
    played: list[dict[str, Any]] = []
    for step in copy.deepcopy(steps):
        if "submit" in step:
            played.append({"reply": step["submit"]})
        elif step.get("tool") == "bash":
            played.append(
                {**step, "tool": "exec_command", "args": {"cmd": step["args"]["command"]}}
            )
        else:
            played.append(step)
    return played


def codex_children_scripts(
    fixture: Fixture, scripts: dict[str, list[dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """``scripts`` (the lead's and its children's, such as ``honest_scripts``) with every
    shard worker's script as a Codex CLI child plays it (``as_codex_child``); the lead's is
    kept, other keys are dropped."""
    workers = {s.worker for s in fixture.shards}
    return {
        key: steps if key == "lead" else as_codex_child(steps)
        for key, steps in scripts.items()
        if key == "lead" or key in workers
    }


def demo_model(fixture: Fixture, lead: str = "worker", child: str = "worker") -> Model:
    """The demonstration's model: ``swarm/scripted`` with ``honest_scripts(fixture)`` (or
    ``honest_deepagent_scripts`` for a deepagent lead, ``honest_codex_scripts`` for a Codex
    lead; with ``child="codex"``, the children's as Codex CLI children play them)."""
    from inspect_ai.model import get_model

    build = {"deepagent": honest_deepagent_scripts, "codex": honest_codex_scripts}
    scripts = build.get(lead, honest_scripts)(fixture)
    if child == "codex":
        scripts = codex_children_scripts(fixture, scripts)
    answer = f"Wrote {fixture.artifact}."  # a Codex lead's turns after its script: the same
    return get_model("swarm/scripted", scripts=scripts, answer=answer, memoize=False)
