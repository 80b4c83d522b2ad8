"""Builders of synthetic fan-out records: a sample's store as the runtime would write it.

``Run`` builds the spawn ledger, the message log, the result record, the ledger, the metrics
record and the stored artifact step by step, on a clock that advances 0.5 s per step, in the
shapes the runtime writes (docs/fanout.md, "The records the rubric reads").  ``honest(fixture)``
is a run that resolves: the lead spawns one child per shard under its worker name, each child
makes two model calls, replies its shard's expected answer and ends, the lead reads every reply,
writes the artifact and ends.  Tests change one thing in it to build a cheat.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.scorer import Score
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox

from swarm import record_digest
from swarm._run.seal import seal_records
from swarm.plugins.scorers.fanout import (
    ARTIFACT_KEY,
    Fixture,
    fanout_rubric,
    load_fixture,
)

RULES = ("coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work")


def run_fixture_task(
    solver: Any,
    scripts: dict[str, list[dict[str, Any]]],
    sandbox: str = "bwrap",
    model: str = "swarm/scripted",
) -> EvalSample:
    """The json-events fan-out task with ``solver`` under the provider ``sandbox``, on the
    scripted model following ``scripts``, scored by the rubric: its one sample."""
    from tests.fanout_cases import run_fanout

    return run_fanout(load_fixture("json-events"), sandbox, scripts, solver=solver, model=model)


def score(sample: EvalSample) -> Any:
    """The sample's one score."""
    [found] = (sample.scores or {}).values()
    return found


def failing(sample: EvalSample) -> set[str]:
    """The rules the sample's score does not pass."""
    value = score(sample).value
    assert isinstance(value, dict)
    return {rule for rule in RULES if value[rule] is not True}


SHARD_FILES = {
    s.worker: s.file for name in ("json-events", "csv-metrics") for s in load_fixture(name).shards
}
"""The shipped fixtures' shard file by worker name (a child's reads of its own shard)."""

LEAD = "lead"
LEAD_TOKENS = 1000
LEAD_CALLS = 3
CHILD_TOKENS = 400
CHILD_CALLS = 2
PRICE = 0.00001
"""Dollars per token, for every member."""


def index_text(fixture: Fixture, answers: dict[str, str] | None = None) -> str:
    """An artifact with one ``- <file>: <answer>`` bullet per shard (expected answers unless
    ``answers`` says otherwise)."""
    answers = answers or {}
    lines = [f"- {s.file}: {answers.get(s.file, str(s.expected))}" for s in fixture.shards]
    return "\n".join(lines) + "\n"


class Run:
    """A synthetic run's records, built step by step."""

    def __init__(self, lead: str = LEAD, *, auto_read: bool = True) -> None:
        self.auto_read = auto_read  # a child reads its shard just before its first reply
        self.lead = lead
        self.clock = 0.0
        self.spawns: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.members: dict[str, dict[str, Any]] = {}
        self.usage: dict[str, dict[str, Any]] = {}
        self.artifact: dict[str, Any] | None = None
        self.wall_clock: float | None = None
        self.reads: list[dict[str, Any]] | None = []  # None: the run wrote no reads record
        self.sandboxes: dict[str, dict[str, Any]] = {lead: {"sandbox": lead, "files": []}}
        self.provider = "bwrap"
        self.add_member(lead, parent=None, depth=0, calls=LEAD_CALLS, tokens=LEAD_TOKENS)

    def tick(self) -> float:
        self.clock += 0.5
        return self.clock

    # -- members ---------------------------------------------------------------------------

    def add_member(
        self,
        name: str,
        *,
        parent: str | None,
        depth: int,
        calls: int = CHILD_CALLS,
        tokens: int = CHILD_TOKENS,
        started: bool = True,
    ) -> None:
        self.members[name] = {
            "name": name,
            "role": None,
            "state": "running" if started else "pending",
            "status": None,
            "submitted": False,
            "started": self.clock if started else None,
            "time": None,
            "parent": parent,
            "depth": depth,
            "sandbox": None,
            "error": None,
            "gate_checks": 0,
            "gate_passes": 0,
            "first_pass_time": None,
        }
        usage = {
            "input_tokens": tokens // 2,
            "output_tokens": tokens - tokens // 2,
            "total_tokens": tokens,
            "input_tokens_cache_write": None,
            "input_tokens_cache_read": None,
            "reasoning_tokens": None,
            "total_cost": tokens * PRICE,
        }
        self.usage[name] = {
            "name": name,
            "status": None,
            "bridged": False,
            "meter": {"usage": usage, "cost": tokens * PRICE, "suspended_cost": 0.0},
            "calls": {
                "calls": calls,
                "cache_replays": 0,
                "errored": 0,
                "no_usage": 0,
                "unpriced": 0,
            },
            "cancelled": False,
            "background_started": 0,
            "background_cancelled": 0,
        }

    def end_member(self, name: str, status: str = "submitted") -> float:
        time = self.tick()
        self.members[name].update(
            state="ended", status=status, submitted=status == "submitted", time=time
        )
        self.usage[name]["status"] = status
        return time

    def finish(self) -> float:
        """The lead ends (submitted)."""
        return self.end_member(self.lead)

    # -- the spawn ledger ------------------------------------------------------------------

    def _spawn_entry(self, op: str, **fields: Any) -> dict[str, Any]:
        entry = {
            "seq": len(self.spawns) + 1,
            "time": self.tick(),
            "op": op,
            "member": None,
            "requested": None,
            "parent": self.lead,
            "depth": 1,
            "template": "worker",
            "task": None,
            "status": None,
            "reason": None,
        }
        entry.update(fields)
        self.spawns.append(entry)
        return entry

    def spawn(
        self,
        requested: str,
        *,
        member: str | None = None,
        parent: str | None = None,
        depth: int = 1,
        task: str | None = None,
        calls: int = CHILD_CALLS,
        tokens: int = CHILD_TOKENS,
        started: bool = True,
        record_member: bool = True,
    ) -> str:
        """A ``spawn`` entry; the child joins the result record and the ledger (unless
        ``record_member`` is false: a spawn entry naming a run that does not exist)."""
        member = member or requested
        parent = parent or self.lead
        self._spawn_entry(
            "spawn",
            member=member,
            requested=requested,
            parent=parent,
            depth=depth,
            task=task if task is not None else f"Answer the question about {requested}.",
        )
        if record_member:
            self.add_member(
                member, parent=parent, depth=depth, calls=calls, tokens=tokens, started=started
            )
        return member

    def refused(self, requested: str, reason: str = "live_name", depth: int = 1) -> None:
        self._spawn_entry("refused", requested=requested, depth=depth, reason=reason, task="...")

    def end(self, member: str, status: str = "submitted") -> None:
        """The child ends: an ``end`` entry, and its result and ledger entries say so."""
        spawn = next(e for e in self.spawns if e["member"] == member and e["op"] == "spawn")
        self._spawn_entry(
            "end",
            member=member,
            requested=spawn["requested"],
            parent=spawn["parent"],
            depth=spawn["depth"],
            status=status,
        )
        if member in self.members:
            self.end_member(member, status)

    def delete(self, member: str, reason: str = "cancelled") -> None:
        spawn = next(e for e in self.spawns if e["member"] == member and e["op"] == "spawn")
        self._spawn_entry(
            "delete",
            member=member,
            requested=spawn["requested"],
            parent=spawn["parent"],
            depth=spawn["depth"],
            reason=reason,
        )

    # -- the reads record ------------------------------------------------------------------

    def read(
        self, member: str, path: str, *, op: str = "read", sandbox: str | None = None
    ) -> float:
        """``member``'s sandbox tools read ``path`` (in its own sandbox unless ``sandbox``)."""
        own = self.sandboxes.setdefault(member, {"sandbox": member, "files": []})
        assert self.reads is not None
        time = self.tick()
        self.reads.append(
            {
                "seq": len(self.reads),
                "time": time,
                "member": member,
                "sandbox": sandbox if sandbox is not None else own["sandbox"],
                "path": path,
                "op": op,
            }
        )
        return time

    # -- the message log -------------------------------------------------------------------

    def _message(self, kind: str, seen: bool | float | None, **fields: Any) -> dict[str, Any]:
        time = self.tick()
        entry = {
            "seq": len(self.messages) + 1,
            "time": time,
            "kind": kind,
            "sender": None,
            "recipient": self.lead,
            "relationship": "child",
            "size": len(fields.get("text", "")),
            "text": "",
            "about": None,
            "status": None,
            "seen": None,
        }
        entry.update(fields)
        if seen is True:
            entry["seen"] = {"time": self.tick(), "via": "read"}
        elif isinstance(seen, float):
            entry["seen"] = {"time": seen, "via": "read"}
        self.messages.append(entry)
        return entry

    def reply(
        self,
        sender: str,
        text: str,
        *,
        recipient: str | None = None,
        relationship: str = "child",
        seen: bool | float | None = True,
    ) -> dict[str, Any]:
        """A ``message`` from ``sender``; by default to the lead, as its child, and read.  With
        ``auto_read``, a child of a shipped fixture's worker name that has not read its shard
        reads it first."""
        file = SHARD_FILES.get(sender.split("~", 1)[0])
        if self.auto_read and file is not None and self.reads is not None:
            if not any(r["member"] == sender and r["op"] == "read" for r in self.reads):
                self.read(sender, f"shards/{file}")
        return self._message(
            "message",
            seen,
            sender=sender,
            recipient=recipient or self.lead,
            relationship=relationship,
            text=text,
            size=len(text),
        )

    def receipt(
        self, about: str, status: str = "errored", seen: bool | float | None = True
    ) -> dict[str, Any]:
        """The runtime's receipt to the lead about a child that ended without replying."""
        text = f"{about} ended without replying: {status}."
        return self._message(
            "receipt", seen, sender=about, about=about, status=status, text=text, size=len(text)
        )

    # -- the artifact and the store --------------------------------------------------------

    def write(self, text: str | None, path: str = "combined-index.md") -> None:
        self.artifact = {"path": path, "text": text}

    def store(self) -> dict[str, Any]:
        """The sample's store: every record the rubric reads (deep copies)."""
        members = list(self.members.values())
        ledger_members = list(self.usage.values())
        store: dict[str, Any] = {
            "inspect_swarm:spawns": {"version": 1, "entries": self.spawns},
            "inspect_swarm:messages": {"version": 1, "messages": self.messages},
            "inspect_swarm:result": {
                "version": 1,
                "members": members,
                "final": {
                    "mode": "first",
                    "member": self.lead,
                    "reason": None,
                    "provisional": False,
                },
                "stop_reason": "all_done",
            },
            "inspect_swarm:ledger": {"version": 1, "members": ledger_members},
        }
        if self.wall_clock is not None:
            store["inspect_swarm:metrics"] = {"version": 1, "wall_clock": self.wall_clock}
        if self.artifact is not None:
            store["swarm_fanout:artifact"] = self.artifact
        if self.reads is not None:
            store["inspect_swarm:reads"] = {
                "version": 1,
                "provider": self.provider,
                "watched": True,
                "members": self.sandboxes,
                "entries": self.reads,
            }
        return copy.deepcopy(store)


def honest(fixture: Fixture, *, finish: bool = True) -> Run:
    """A run that resolves: one child per shard, each reads its shard in its own sandbox, replies
    its expected answer (read by the lead) and ends; the lead writes the artifact and (with ``finish``) ends."""
    run = Run(auto_read=False)
    for shard in fixture.shards:
        run.spawn(shard.worker, task=f"Read shards/{shard.file} and answer: {shard.question}")
    for shard in fixture.shards:
        run.read(shard.worker, f"shards/{shard.file}")
        run.reply(shard.worker, str(shard.expected))
        run.end(shard.worker)
    run.write(index_text(fixture))
    if finish:
        run.finish()
    return run


# -- scoring synthetic records in a real eval --------------------------------------------------


@solver
def replay_records() -> Any:
    """Writes the sample's records (from its metadata) to the store and its artifact to the
    sandbox; with ``seal`` it seals them as the kernel seals what it writes (standing in for a
    swarm), without it it is a solver of one's own.  ``tamper`` changes a record after the
    seal; ``stored_artifact`` puts an artifact in the store too (the scorer must not take it)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        records = {k: v for k, v in meta["records"].items() if k != ARTIFACT_KEY}
        for key, value in records.items():
            state.store.set(key, value)
        if meta.get("seal", True):
            seal_records(state.store, {k: record_digest(v) for k, v in records.items()})
        artifact = meta["records"].get(ARTIFACT_KEY)
        if artifact is not None and artifact["text"] is not None:
            await sandbox().write_file(artifact["path"], artifact["text"])
        if meta.get("stored_artifact") is not None:
            state.store.set(
                ARTIFACT_KEY, {"path": "combined-index.md", "text": meta["stored_artifact"]}
            )
        if meta.get("tamper") is not None:
            state.store.set(meta["tamper"], {**state.store.get(meta["tamper"]), "extra": 1})
        return state

    return solve


def scored(
    log_dir: Path, samples: dict[str, dict[str, Any]], fixture: str = "json-events"
) -> EvalLog:
    """An eval of ``samples`` (id to metadata for ``replay_records``) scored by the rubric."""
    dataset = [Sample(id=name, input="fan out", metadata=meta) for name, meta in samples.items()]
    task = Task(
        dataset=dataset,
        solver=replay_records(),
        scorer=fanout_rubric(fixture=fixture),
        sandbox="local",
    )
    log = eval(task, model="mockllm/model", log_dir=str(log_dir), display="none")[0]
    assert log.status == "success", log.error
    return log


def scores(log: EvalLog) -> dict[str, Score]:
    return {str(s.id): s.scores["fanout_rubric"] for s in log.samples or []}  # type: ignore[index]
