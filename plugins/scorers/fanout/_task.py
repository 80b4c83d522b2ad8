"""The ``swarm/fanout`` Inspect task: one fixture, one sample, scored by the fan-out rubric.

    inspect eval swarm/fanout -T fixture=json-events --model openai/gpt-4o
    inspect eval swarm/fanout -T fixture=json-events -T sandbox=local ...   # not isolating
    inspect eval swarm/fanout -T fixture=json-events -T sandbox=docker ...  # a container each
    inspect eval swarm/fanout -T demo=true --model swarm/scripted         # keyless demonstration

The fixture's shards are the sample's files, in its default sandbox environment under
``shards/``: a staging area no member sees.  Every member works in a sandbox of its own
(``sandboxes.per_member``, the ``bwrap`` provider by default: no Docker needed): the lead's has
no shard, and the child spawned as ``worker-<stem>`` (a retry too) receives only
``shards/<file>`` of its shard.  The manifest, the expected answers, the prompt file and
anything of the harness are in no sandbox, nor in the sample's target, metadata or input.  The
prompt is the fixture's ``task.txt``.  The solver is a fan-out topology (``fanout_topology``): a
lead that may spawn children from a worker template, the ``messages`` channel, and ``bash`` and
``python`` in each member's sandbox.  Replace it with ``--solver swarm/swarm -S
config=my-topology.yaml`` (or any solver); the scorer, the rubric, reads only what the runtime
recorded and the artifact in the lead's sandbox.

``-T demo=true`` is ``swarm fanout``'s keyless demonstration the Inspect way: the task carries
its own model, ``swarm/scripted`` with the fixture's honest scripts (``_demo``), as a task's
model wins over the eval's.  It refuses an eval of any other model, so that no log of a real
model's run is the demonstration's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from swarm import AGENT_COMPOSE, ConfigError, channel, controller, member, swarm

from ._demo import demo_model
from ._fixture import Fixture, load_fixture
from ._scorer import fanout_rubric
from ._subagents import subagent_aliases, subagent_type

__all__ = [
    "DOCKER_COMPOSE",
    "FANOUT_LEADS",
    "FANOUT_SANDBOXES",
    "FANOUT_TOOLS",
    "fanout",
    "fanout_codex_topology",
    "fanout_deepagent_topology",
    "fanout_sample",
    "fanout_topology",
    "sandbox_spec",
]

FANOUT_TOOLS = ("bash", "python")
"""The Inspect tools the lead and its children have in the sandbox."""
FANOUT_LEADS = ("worker", "deepagent", "codex")
"""The leads the task runs: ``worker`` (``swarm/worker`` with the spawning tools: its children
are swarm members), ``deepagent`` (Inspect's ``deepagent()``: its children are its background
subagents, one subagent type per shard) and ``codex`` (Codex CLI, ``swarm/codex``: its children
are its own ``spawn_agent`` sub-agents, in its one container; under ``docker`` only)."""
CODEX_INSTRUCTIONS = (
    "In this run your children are your own sub-agents, not spawned members: for each shard, "
    "spawn one sub-agent with spawn_agent, its message naming the one file shards/<file> it "
    "is to read and the question it is to answer (and no other shard file). Wait until every "
    "sub-agent has told you its answer, then write the artifact from their answers. The "
    "spawn_child, wait_for_children and read_messages tools the task names are not yours."
)
DEEPAGENT_INSTRUCTIONS = (
    "In this run your children are your background subagents, not spawned members: there is "
    "one subagent type per shard, named after the shard's worker with '-' and '.' as '_' "
    "(worker_events_01 for worker-events-01). For each shard, dispatch its subagent with the "
    "agent tool (subagent_type that name, "
    "background=true, a prompt that tells it which file to read and which question to answer), "
    "collect their results with agent_wait, then write the artifact from their results. The "
    "spawn_child, wait_for_children and read_messages tools the task names are not yours; use "
    "agent and agent_wait instead."
)
FANOUT_SANDBOXES = ("bwrap", "docker", "local")
"""The sandbox providers the task runs with: ``bwrap`` (the default: isolates every member),
``docker`` (a container of its own per member, its reads watched from a container beside it)
and ``local`` (no isolation: every member can read the host as the evaluating user)."""
DOCKER_COMPOSE = Path(__file__).parent / "docker" / "compose.yaml"
"""The fan-out's compose file (its image built from ``docker/Dockerfile``; no network)."""


FANOUT_CHILDREN = ("worker", "codex")
"""The children a ``worker`` lead spawns: ``swarm/worker`` members, or Codex CLI members
(``swarm/codex``, each in a container of its own; under ``docker`` only)."""


def sandbox_spec(
    provider: str, lead: str = "worker", child: str = "worker"
) -> str | tuple[str, str]:
    """The task's sandbox for ``provider``: ``docker`` with the shipped compose file (the agent
    image's, ``swarm.AGENT_COMPOSE``, for a ``codex`` lead or children)."""
    if provider == "docker" and "codex" in (lead, child):
        return ("docker", str(AGENT_COMPOSE))
    return ("docker", str(DOCKER_COMPOSE)) if provider == "docker" else provider


def shard_files(fixture: Fixture) -> dict[str, list[str]]:
    """Which sample files each member's sandbox receives: ``worker-<stem>`` its own shard,
    nobody else anything (the ``sandboxes.files`` of the fan-out topology)."""
    return {s.worker: [f"shards/{s.file}"] for s in fixture.shards}


def fanout_topology(fixture: Fixture, child: Any = None, **swarm_args: Any) -> Any:
    """The default solver: a lead that may spawn one child per shard (and one retry each) from
    a worker template, the messages channel, and ``bash``/``python`` for everyone, each member
    in its own sandbox with only its shard's file (``shard_files``).  ``child`` replaces the
    children's template (``member("swarm/codex", bridged="sandbox")``: Codex CLI children).
    ``swarm_args`` go to ``swarm()`` and may replace ``sandboxes`` and ``channels`` (a channel
    the rubric does not read leaves the run unverified)."""
    shards = len(fixture.shards)
    swarm_args.setdefault("sandboxes", {"per_member": True, "files": shard_files(fixture)})
    swarm_args.setdefault("channels", [channel("messages")])
    tools = {"tools": list(FANOUT_TOOLS)}
    return swarm(
        members=member("swarm/worker", name="lead", args=tools, can_spawn=["worker"]),
        templates={"worker": member("swarm/worker", args=tools) if child is None else child},
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


def fanout_deepagent_topology(fixture: Fixture, **swarm_args: Any) -> Any:
    """The solver with a deepagent lead (``swarm/deepagent``): one subagent type per shard,
    named after its worker, with ``bash`` and ``python``; its background dispatches are the
    children.  Each dispatch works in a sandbox of its own holding only its shard's file (the
    same ``sandboxes.files``, by subagent type); the lead's own sandbox holds no shard."""
    types = subagent_aliases(fixture)
    if len(types) != len(fixture.shards):
        raise ConfigError(
            f"fanout.lead: a deepagent lead needs one subagent type per shard, its worker name "
            f"with '-' and '.' as '_'; in {fixture.name} two workers give the same one"
        )
    files = {subagent_type(s.worker): [f"shards/{s.file}"] for s in fixture.shards}
    swarm_args.setdefault("sandboxes", {"per_member": True, "files": files})
    subagents = [
        {
            "name": subagent_type(s.worker),
            "description": f"the child for shards/{s.file}: reads it and answers its question",
            "prompt": (
                f"You are {subagent_type(s.worker)}, the fan-out child for shards/{s.file}: "
                "read that file in your working directory with the bash or python tool, answer "
                "the question you are given, and submit the answer as a bare integer."
            ),
            "tools": list(FANOUT_TOOLS),
        }
        for s in fixture.shards
    ]
    args = {
        "tools": list(FANOUT_TOOLS),
        "subagents": subagents,
        "background": len(fixture.shards),
        "memory": False,
        "todo_write": False,
        "instructions": DEEPAGENT_INSTRUCTIONS,
    }
    return swarm(
        members=member("swarm/deepagent", name="lead", args=args),
        channels=[channel("messages")],
        controller=controller("leaderless", stop_on_submission=True),
        **swarm_args,
    )


def fanout_codex_topology(fixture: Fixture, **swarm_args: Any) -> Any:
    """The solver with a Codex CLI lead (``swarm/codex``): its children are its own
    ``spawn_agent`` sub-agents, recorded in the subagents record (each the child of the one
    shard its task names).  They run in Codex's process, in the lead's one container, which
    holds every shard: the run is not isolated, and the rubric says so (a read there is
    credited to the sub-agent whose own command named the file).  Run it under ``docker`` with
    the agent image (``sandbox_spec("docker", "codex")``)."""
    every = [f"shards/{s.file}" for s in fixture.shards]
    swarm_args.setdefault("sandboxes", {"per_member": True, "files": {"lead": every}})
    lead = member(
        "swarm/codex", name="lead", bridged="sandbox", args={"system_prompt": CODEX_INSTRUCTIONS}
    )
    return swarm(
        members=lead,
        channels=[channel("messages")],
        controller=controller("leaderless", stop_on_submission=True),
        **swarm_args,
    )


def fanout_sample(fixture: Fixture) -> Sample:
    """The fixture's one sample: the prompt, and the shards as the staging area's files.  No
    expected answer anywhere in it (the target is empty: the rubric holds the manifest)."""
    files = {
        f"shards/{shard.file}": fixture.shard_path(shard).read_text(encoding="utf-8")
        for shard in fixture.shards
    }
    return Sample(
        id=fixture.name,
        input=fixture.task,
        target="",
        files=files,
        metadata={"fixture": fixture.name, "artifact": fixture.artifact},
    )


def _sandbox(value: Any) -> str:
    if value not in FANOUT_SANDBOXES:
        raise ConfigError(
            f"fanout.sandbox: expected one of {', '.join(FANOUT_SANDBOXES)} (bwrap and docker "
            f"isolate each member; local does not), got {value!r}"
        )
    return str(value)


def _child(value: Any, sandbox: str, lead: str) -> str:
    if value not in FANOUT_CHILDREN:
        raise ConfigError(
            f"fanout.child: expected one of {', '.join(FANOUT_CHILDREN)} (the members a worker "
            f"lead spawns), got {value!r}"
        )
    if value == "codex" and (sandbox != "docker" or lead != "worker"):
        raise ConfigError(
            "fanout.child: Codex CLI children run in the agent image's containers "
            "(`swarm agent-image`), spawned by a worker lead: they need sandbox=docker and "
            f"lead=worker, got sandbox={sandbox!r} and lead={lead!r}"
        )
    return str(value)


_DEMO_MODELS = ("swarm/scripted", "none/none")
"""The eval models ``demo=true`` runs under: the scripted model, or none given."""


def _lead(value: Any, sandbox: str) -> str:
    if value not in FANOUT_LEADS:
        raise ConfigError(
            f"fanout.lead: expected one of {', '.join(FANOUT_LEADS)} (worker spawns members; "
            f"deepagent dispatches background subagents; codex spawns its own sub-agents), "
            f"got {value!r}"
        )
    if value == "codex" and sandbox != "docker":
        raise ConfigError(
            f"fanout.lead: a codex lead runs Codex CLI in the agent image's container "
            f"(`swarm agent-image`): it needs sandbox=docker, got sandbox={sandbox!r}"
        )
    return str(value)


def _demo(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"fanout.demo: expected true or false, got {value!r}")
    if value:
        from inspect_ai.model import get_model

        try:  # the eval's model, when the task is built by an eval (by name)
            evaluated = str(get_model())
        except Exception:  # built outside an eval: no model to compare with
            return value
        if evaluated not in _DEMO_MODELS:
            raise ConfigError(
                "fanout.demo: the keyless demonstration runs on its own scripted model "
                f"(swarm/scripted with the fixture's scripts), not on {evaluated}; drop "
                f"-T demo=true to evaluate {evaluated}"
            )
    return value


@task(name="fanout")
def fanout(
    fixture: str = "json-events",
    spawn_factor: int = 2,
    sandbox: str = "bwrap",
    demo: bool = False,
    lead: str = "worker",
    child: str = "worker",
) -> Task:
    """The fan-out eval on one fixture.

    Args:
        fixture: a shipped fixture (``json-events``, ``csv-metrics``) or a fixture directory.
        spawn_factor: depth-1 spawns the rubric allows per shard (2: one retry each).
        sandbox: the members' sandbox provider: ``bwrap`` (isolated per member, the default),
            ``docker`` (a container per member, from the shipped compose file: no network) or
            ``local`` (per-member directories on the host, not isolating; the score's
            ``isolation`` says which).
        demo: run the keyless demonstration, as ``swarm fanout`` does without ``--model``:
            the task's model is ``swarm/scripted`` with scripts built from the fixture's
            manifest (an honest lead and children); refused when the eval's model is another.
        lead: ``worker`` (the spawning tools: children are swarm members), ``deepagent``
            (Inspect's deepagent: children are its background subagents) or ``codex`` (Codex
            CLI: children are its own sub-agents, in its one container; needs
            ``sandbox=docker`` and the agent image), judged by the same rules.
        child: the members a ``worker`` lead spawns: ``worker`` (``swarm/worker``) or
            ``codex`` (Codex CLI, each in a container of its own; needs ``sandbox=docker`` and
            the agent image).
    """
    provider = _sandbox(sandbox)
    kind = _lead(lead, provider)
    children = _child(child, provider, kind)
    scripted = _demo(demo)
    loaded = load_fixture(fixture)
    if kind == "deepagent":
        solver = fanout_deepagent_topology(loaded)
    elif kind == "codex":
        solver = fanout_codex_topology(loaded)
    else:
        codex = member("swarm/codex", bridged="sandbox") if children == "codex" else None
        solver = fanout_topology(loaded, child=codex)
    return Task(
        dataset=[fanout_sample(loaded)],
        solver=solver,
        scorer=fanout_rubric(fixture=fixture, spawn_factor=spawn_factor),
        sandbox=sandbox_spec(provider, kind, children),
        model=demo_model(loaded, kind, children) if scripted else None,
        name=f"fanout-{loaded.name}",
    )
