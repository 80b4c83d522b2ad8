"""A rule of your own for the fan-out rubric: proof of work.

The rubric's own rules cannot tell a child that computed its answer from one whose parent put
the answer in its task.  This plugin adds a rule, through the ``swarm_rubric_rules`` hook, that
fails when a child's spawn task holds its shard's expected answer.  The example judges two
stores of synthetic records (the shape the runtime writes; see docs/fanout.md): an honest
fan-out, and the same run with the answer handed to one child.
"""

from __future__ import annotations

import re
from typing import Any

from swarm import (
    PluginCatalog,
    RubricRule,
    RuleFailure,
    RuleResult,
    get_plugin_manager,
    hookimpl,
)
from swarm.plugins.scorers.fanout import Evidence, Fixture, judge_store, load_fixture


def answer_not_in_task(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """No child spawned under a shard's worker name was given that shard's answer."""
    failures = []
    for shard in fixture.shards:
        for child in evidence.children:
            task = child.task or ""
            if shard.worker in child.requested and re.search(rf"\b{shard.expected}\b", task):
                failures.append(
                    RuleFailure(
                        reason=f"its task holds the answer {shard.expected}",
                        shard=shard.file,
                        member=child.member,
                    )
                )
    return RuleResult(
        passed=not failures, failures=failures, details={"children": len(evidence.children)}
    )


class ProofOfWork:
    """The plugin: one required rule, for the ``fanout`` rubric only."""

    @hookimpl
    def swarm_rubric_rules(self, rubric: str) -> list[RubricRule] | None:
        if rubric != "fanout":
            return None
        return [RubricRule(name="answer_not_in_task", check=answer_not_in_task, required=True)]


def fan_out(fixture: Fixture, tasks: dict[str, str]) -> dict[str, Any]:
    """A store of records for an honest fan-out: one child per shard spawns, makes one model
    call, reads its shard in its own sandbox, replies its answer and ends; the lead reads every
    reply, writes the artifact and ends.  ``tasks`` replaces the task text of some children."""
    spawns: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    reads: list[dict[str, Any]] = []
    sandboxes = {"lead": {"sandbox": "lead", "files": []}}
    members = [member("lead", parent=None, depth=0, ended=20.0)]
    for n, shard in enumerate(fixture.shards):
        name, time, answer = shard.worker, 1.0 + n, str(shard.expected)
        task = tasks.get(name, f"Read shards/{shard.file} and answer: {shard.question}")
        spawns.append(spawn_entry(len(spawns) + 1, time, "spawn", name, task=task))
        spawns.append(spawn_entry(len(spawns) + 1, time + 0.5, "end", name, status="submitted"))
        path = f"shards/{shard.file}"
        sandboxes[name] = {"sandbox": name, "files": [path]}
        read = {"seq": n, "time": time + 0.2, "member": name, "sandbox": name, "path": path}
        reads.append({**read, "op": "read"})
        messages.append(
            {
                "seq": n + 1,
                "time": time + 0.4,
                "kind": "message",
                "sender": name,
                "recipient": "lead",
                "relationship": "child",
                "size": len(answer),
                "text": answer,
                "about": None,
                "status": None,
                "seen": {"time": 15.0, "via": "wait"},
            }
        )
        members.append(member(name, parent="lead", depth=1, ended=time + 0.5))
    bullets = "".join(f"- {s.file}: {s.expected}\n" for s in fixture.shards)
    return {
        "inspect_swarm:spawns": {"version": 1, "entries": spawns},
        "inspect_swarm:messages": {"version": 1, "messages": messages},
        "inspect_swarm:result": {"version": 1, "members": members},
        "inspect_swarm:ledger": {"version": 1, "members": [usage(m["name"]) for m in members]},
        "swarm_fanout:artifact": {"path": fixture.artifact, "text": bullets},
        "inspect_swarm:reads": {
            "version": 1,
            "provider": "bwrap",
            "watched": True,
            "members": sandboxes,
            "entries": reads,
        },
    }


def spawn_entry(
    seq: int, time: float, op: str, name: str, task: str | None = None, status: str | None = None
) -> dict[str, Any]:
    return {
        "seq": seq,
        "time": time,
        "op": op,
        "member": name,
        "requested": name,
        "parent": "lead",
        "depth": 1,
        "template": "worker",
        "task": task,
        "status": status,
        "reason": None,
    }


def member(name: str, parent: str | None, depth: int, ended: float) -> dict[str, Any]:
    """A result-record member (only the fields the rubric reads)."""
    return {
        "name": name,
        "state": "ended",
        "status": "submitted",
        "started": 0.0,
        "time": ended,
        "parent": parent,
        "depth": depth,
    }


def usage(name: str) -> dict[str, Any]:
    """A ledger member (only the fields the rubric reads): one call, 500 tokens."""
    return {
        "name": name,
        "meter": {"usage": {"total_tokens": 500}, "cost": 0.001},
        "calls": {"calls": 1, "cache_replays": 0, "errored": 0},
    }


def main() -> None:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(ProofOfWork(), name="proof_of_work")
    catalog = PluginCatalog(pm, sources)

    fixture = load_fixture("json-events")
    honest = judge_store(fixture, fan_out(fixture, {}), catalog=catalog)
    print(f"honest: {honest.value()}")

    shard = fixture.shards[1]
    handed = {shard.worker: f"Reply {shard.expected} to your parent."}
    cheat = judge_store(fixture, fan_out(fixture, handed), catalog=catalog)
    print(f"answer in the task: resolved {cheat.resolved}")
    lines = cheat.explanation().splitlines()
    start = lines.index("answer_not_in_task: FAIL")
    print("\n".join(lines[start : start + 2]))
    print(f"plugin: {cheat.rule('answer_not_in_task').plugin}")


if __name__ == "__main__":
    main()
