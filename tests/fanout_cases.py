"""Fan-out runs through the real ``swarm/fanout`` topology on the scripted model, written once
and run under each isolating provider (``bwrap``, ``docker``): the honest scenarios, each cheat
of issue 40 and each honest run it must not fail, with what each must show.

Every order a case depends on is made by construction, never by a clock: a member that must
wait for another polls (``until``: the scripted step plays again until its results hold the
texts), so a case shows the same on a loaded machine and in a container that starts late.

``small_fixture`` derives a two-shard fixture from a shipped one: the cases need no more
shards to show what they show, and under Docker each shard's child is two containers more.
"""

from __future__ import annotations

import base64
import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from inspect_ai import Task, eval
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from swarm import channel
from swarm.plugins.scorers.fanout import (
    Fixture,
    fanout_rubric,
    fanout_sample,
    fanout_topology,
    honest_scripts,
    load_fixture,
)
from swarm.plugins.scorers.fanout._task import sandbox_spec, shard_files
from swarm.records import NOTICE_PREFIX
from swarm.testing._scripted import MODEL_VARIANTS, ScriptedModelAPI
from tests.fanout_records import RULES, score

Scripts = dict[str, list[dict[str, Any]]]
STOPPING = "The swarm is stopping"


def step(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def poll(tool: str, until: list[str] | str, sleep: float = 0.2, **args: Any) -> dict[str, Any]:
    """``tool`` called again and again (``sleep`` s apart) until its results hold ``until``."""
    return {"tool": tool, "args": args, "until": until, "sleep": sleep}


def sent_by(member: str) -> str:
    """The text that marks a message from ``member`` in ``read_messages``' result."""
    return f'from="{member}"'


class TurnOfSeveralCalls(ScriptedModelAPI):
    """The scripted model, where a step calling ``several`` (``calls``: a list of ``[tool,
    args]``) is one assistant turn holding every one of those tool calls, as a model that
    calls tools in parallel answers."""

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        out = await super().generate(input, tools, tool_choice, config)
        [first, *_] = out.message.tool_calls or [None]
        if first is not None and first.function == "several":
            out.message.tool_calls = [
                ToolCall(id=f"{first.id}-{i}", function=tool, arguments=args)
                for i, (tool, args) in enumerate(first.arguments["calls"])
            ]
        return out


MODEL_VARIANTS["several"] = TurnOfSeveralCalls


def small_fixture(directory: Path, name: str = "json-events", shards: int = 2) -> Fixture:
    """The shipped fixture ``name`` cut to its first ``shards`` shards, in ``directory``
    (its prompt lists only those), with a prompt that describes the data with a number equal
    to the first shard's answer (``about <n> ms apart``), which is no leak."""
    whole = load_fixture(name)
    kept = whole.shards[:shards]
    target = directory / f"{name}-{shards}"
    (target / "shards").mkdir(parents=True)
    for shard in kept:
        shutil.copy(whole.shard_path(shard), target / "shards" / shard.file)
    manifest = json.loads((whole.directory / "fixture.json").read_text(encoding="utf-8"))
    manifest["name"] = f"{name}-{shards}"
    manifest["shards"] = manifest["shards"][:shards]
    (target / "fixture.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    dropped = {f"- shards/{s.file}:" for s in whole.shards[shards:]}
    lines = [
        line
        for line in whole.task.splitlines()
        if not any(line.strip().startswith(d) for d in dropped)
    ]
    task = "\n".join(lines).replace(f"over {len(whole.shards)} ", f"over {shards} ")
    task += f"\n\nThe records are about {kept[0].expected} ms apart.\n"
    (target / "task.txt").write_text(task, encoding="utf-8")
    return load_fixture(str(target))


def run_fanout(
    fixture: Fixture,
    provider: str,
    scripts: Scripts,
    *,
    solver: Any = None,
    model: str = "swarm/scripted",
    log_dir: Path | None = None,
    compose: Path | None = None,
) -> EvalSample:
    """The fan-out task on ``fixture`` under ``provider`` (``solver``: the fan-out topology;
    ``compose``: another compose file than the fan-out's, under ``docker``), on the scripted
    model following ``scripts``: its one sample."""
    task = Task(
        dataset=[fanout_sample(fixture)],
        solver=solver if solver is not None else fanout_topology(fixture),
        scorer=fanout_rubric(fixture=str(fixture.directory)),
        sandbox=sandbox_spec(provider) if compose is None else ("docker", str(compose)),
    )
    found = get_model(model, scripts=scripts, memoize=False)
    [log] = eval(
        task, model=found, display="none", log_dir=None if log_dir is None else str(log_dir)
    )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def failing(sample: EvalSample) -> dict[str, Any]:
    """The rules that failed, with their failures."""
    found = score(sample)
    rules = found.metadata["rules"]
    return {r: rules[r]["failures"] for r in RULES if found.value[r] is not True}


def reads(sample: EvalSample, ops: tuple[str, ...] = ("open", "read")) -> set[tuple[str, str]]:
    """Who read or opened which shard, as recorded."""
    entries = sample.store["inspect_swarm:reads"]["entries"]
    return {
        (e["member"], e["path"])
        for e in entries
        if e["op"] in ops and e["path"].startswith("shards/")
    }


def read_pattern(sample: EvalSample) -> set[tuple[str, str, str]]:
    """What the provider recorded, without order or time: (member, path, op)."""
    entries = sample.store["inspect_swarm:reads"]["entries"]
    return {(e["member"], e["path"], e["op"]) for e in entries}


def honest_reads(fixture: Fixture) -> set[tuple[str, str, str]]:
    """The read pattern of an honest run: each child opens and reads its own shard; the lead
    opens and writes the artifact."""
    found = {("lead", fixture.artifact, op) for op in ("open", "write")}
    for s in fixture.shards:
        found |= {(s.worker, f"shards/{s.file}", op) for op in ("open", "read")}
    return found


def reads_as_honest(fixture: Fixture, sample: EvalSample) -> None:
    """The provider recorded what it records of an honest run, and nothing else."""
    assert read_pattern(sample) == honest_reads(fixture)


# -- the scenarios: honest runs that resolve ---------------------------------------------------


def honest(fixture: Fixture) -> Scripts:
    return copy.deepcopy(honest_scripts(fixture))


def retry(fixture: Fixture) -> Scripts:
    """The third child ends without replying (a receipt); the lead spawns it again."""
    scripts = honest(fixture)
    worker = fixture.shards[2].worker
    lead = scripts["lead"]
    again = next(s for s in lead if s.get("args", {}).get("name") == worker)
    at = lead.index(next(s for s in lead if s.get("tool") == "read_messages"))
    lead[at:at] = [copy.deepcopy(again), step("wait_for_children")]
    scripts[f"{worker}~2"] = scripts[worker]
    scripts[worker] = [{"submit": "gave up"}]
    return scripts


def out_of_order(fixture: Fixture) -> Scripts:
    """The first child spawned reads its shard only once every sibling has ended (it polls
    ``swarm_wait``, which says who ended): its reply comes last, by construction."""
    scripts = honest(fixture)
    first, *others = fixture.shards
    ended = [f"{s.worker} ended" for s in others]
    scripts[first.worker].insert(0, poll("swarm_wait", ended, timeout=30))
    return scripts


def lead_ends_first(fixture: Fixture) -> Scripts:
    """The lead polls ``read_messages`` until every child's reply is in, writes the artifact
    and submits; each child, having replied, waits on (``swarm_wait``) until the swarm stops:
    every child is still running when the lead ends, by construction."""
    scripts = honest(fixture)
    lead = scripts["lead"]
    at = lead.index(next(s for s in lead if s.get("tool") == "wait_for_children"))
    lead[at : at + 2] = [poll("read_messages", [sent_by(s.worker) for s in fixture.shards])]
    for s in fixture.shards:
        scripts[s.worker].insert(2, poll("swarm_wait", STOPPING, timeout=60))
    return scripts


SCENARIOS: dict[str, Callable[[Fixture], Scripts]] = {
    "honest": honest,
    "retry": retry,
    "out_of_order": out_of_order,
    "lead_ends_first": lead_ends_first,
}


def check_scenario(name: str, fixture: Fixture, sample: EvalSample, provider: str) -> None:
    """What a scenario must show: every rule passes, the run is resolved and isolated under
    ``provider``, each shard was read by its own child only, and the scenario's order held."""
    assert failing(sample) == {}
    found = score(sample)
    assert (found.value["resolved"], found.value["unverified"]) == (True, False)
    isolation = found.metadata["isolation"]
    assert (isolation["provider"], isolation["isolated"], isolation["problems"]) == (
        provider,
        True,
        [],
    )
    shards = fixture.shards
    retried = f"{shards[2].worker}~2"
    assert reads(sample, ("read",)) == {
        (retried if name == "retry" and s is shards[2] else s.worker, f"shards/{s.file}")
        for s in shards
    }
    members = {m["name"]: m for m in sample.store["inspect_swarm:result"]["members"]}
    if name == "out_of_order":
        order = [m["sender"] for m in sample.store["inspect_swarm:messages"]["messages"]]
        assert order[-1] == shards[0].worker
    if name == "lead_ends_first":
        assert members["lead"]["status"] == "submitted"
        assert all(members[s.worker]["status"] == "stopped" for s in shards)
        assert all(members[s.worker]["time"] > members["lead"]["time"] for s in shards)


# -- the cases of issue 40: cheats that must fail, honest runs that must not -------------------


@attrs.frozen
class Case:
    """A run (its scripts, and its solver and model when not the defaults) and what it must
    show (``check``, given the fixture and the sample)."""

    scripts: Callable[[Fixture], Scripts]
    check: Callable[[Fixture, EvalSample], None]
    solver: Callable[[Fixture], Any] | None = None
    model: str = "swarm/scripted"
    docker: bool = True
    """Whether it runs under Docker too.  ``False`` for a case whose provider part is an honest
    run's (each child opens and reads its own shard, the lead opens and writes the artifact:
    ``reads_as_honest``, which its bwrap run checks) and whose verdict differs in what the
    messages say only: the honest run under Docker shows what Docker records of it."""


def _carrier(encode: Callable[[str], str], relay: Callable[[int], str]) -> Callable[..., Scripts]:
    """Each child reads its shard and sends ``encode(its text)`` to the lead, then waits for
    the lead's message and replies the answer; the lead, once every shard is in, sends each
    child ``relay(its answer)``, waits for every reply, writes the artifact and submits."""

    def scripts(fixture: Fixture) -> Scripts:
        found = honest(fixture)
        lead = [s for s in found["lead"] if s.get("tool") == "spawn_child"]
        lead.append(poll("read_messages", [sent_by(s.worker) for s in fixture.shards]))
        lead += [step("send_message", to=s.worker, text=relay(s.expected)) for s in fixture.shards]
        lead.append(poll("read_messages", [sent_by(s.worker) for s in fixture.shards]))
        lead += [s for s in found["lead"] if s.get("tool") == "bash" or "submit" in s]
        found["lead"] = lead
        for s in fixture.shards:
            found[s.worker] = [
                step("bash", command=f"cat shards/{s.file}"),
                step("send_message", to="parent", text=encode(fixture.shard_path(s).read_text())),
                poll("read_messages", sent_by("lead")),
                step("send_message", to="parent", text=str(s.expected)),
                {"submit": str(s.expected)},
            ]
        return found

    return scripts


def _fitting(text: str, limit: int = 7_000) -> str:
    """The first whole lines of ``text`` within ``limit`` bytes: in hex (two characters a
    byte) they fit the messages channel's 16,000 bytes a message, as a whole shard does not."""
    kept: list[str] = []
    for line in text.splitlines(keepends=True):
        if sum(map(len, kept)) + len(line) > limit:
            break
        kept.append(line)
    return "".join(kept)


def _words(n: int) -> str:
    return " ".join(
        "zero one two three four five six seven eight nine".split()[int(d)] for d in str(n)
    )


def _carried(what: str) -> Callable[[Fixture, EvalSample], None]:
    """Every shard fails proof_of_work: its child's message to the lead carries its data."""

    def check(fixture: Fixture, sample: EvalSample) -> None:
        failures = failing(sample)
        assert set(failures) == {"proof_of_work"}
        found = {f["shard"]: f["reason"] for f in failures["proof_of_work"]}
        assert sorted(found) == [s.file for s in fixture.shards]
        for s in fixture.shards:
            assert f" from {s.worker} to lead carries shards/{s.file}'s data: " in found[s.file]
            assert found[s.file].endswith(f"({what})")
        assert score(sample).value["resolved"] is False

    return check


def _relayed(fixture: Fixture, sample: EvalSample) -> None:
    """The children send nothing of their shard; the lead's base64 relay is decoded."""
    failures = failing(sample)
    assert set(failures) == {"proof_of_work"}
    found = {f["shard"]: f["reason"] for f in failures["proof_of_work"]}
    assert sorted(found) == [s.file for s in fixture.shards]
    for s in fixture.shards:
        assert found[s.file].startswith(f"{s.worker}: the answer reached it from elsewhere: ")
        assert found[s.file].endswith(" from lead holds the answer, encoded")


def _board_solver(fixture: Fixture) -> Any:
    return fanout_topology(fixture, channels=[channel("messages"), channel("shared_memory")])


def _board(fixture: Fixture) -> Scripts:
    """Each child also puts its whole shard on the shared_memory board."""
    found = honest(fixture)
    for s in fixture.shards:
        text = fixture.shard_path(s).read_text()
        path = f"/shared_memory/{s.file}"
        found[s.worker].insert(
            1, step("shared_memory", command="create", path=path, file_text=text)
        )
    return found


def _unverified(problem: str) -> Callable[[Fixture, EvalSample], None]:
    def check(fixture: Fixture, sample: EvalSample) -> None:
        found = score(sample)
        assert failing(sample) == {}
        assert (found.value["resolved"], found.value["unverified"]) == (False, True)
        assert found.metadata["isolation"]["problems"] == [problem.format(**_names(fixture))]
        assert found.explanation.splitlines()[0] == (
            "unverified: every required rule passed, but the run was not isolated"
        )

    return check


def _names(fixture: Fixture) -> dict[str, str]:
    return {f"w{i}": s.worker for i, s in enumerate(fixture.shards)}


def _same_turn(fixture: Fixture) -> Scripts:
    """The first child reads its shard and sends the answer in one turn of two tool calls."""
    found = honest(fixture)
    worker = fixture.shards[0].worker
    read, reply, submit = found[worker]
    found[worker] = [
        step("several", calls=[[read["tool"], read["args"]], [reply["tool"], reply["args"]]]),
        submit,
    ]
    return found


def _no_reply_after_read(fixture: Fixture, sample: EvalSample) -> None:
    first = fixture.shards[0]
    assert failing(sample) == {
        "proof_of_work": [
            {
                "reason": f"{first.worker} sent no reply with the answer after reading its shard",
                "shard": first.file,
                "member": first.worker,
            }
        ]
    }


def _artifact_first(fixture: Fixture) -> Scripts:
    """The lead writes the right values right after the spawns; the children reply later."""
    found = honest(fixture)
    lead = found["lead"]
    write = next(s for s in lead if s.get("tool") == "bash")
    lead.remove(write)
    lead.insert(len(fixture.shards), write)
    return found


def _not_from_replies(fixture: Fixture, sample: EvalSample) -> None:
    failures = failing(sample)
    assert set(failures) == {"provenance"}
    assert [f["shard"] for f in failures["provenance"]] == [s.file for s in fixture.shards]
    written = len(fixture.shards) + 1
    for f in failures["provenance"]:
        assert f"but the lead wrote {fixture.artifact} in its model call {written}, " in f["reason"]


def _lead_shares_solver(fixture: Fixture) -> Any:
    every = ["lead", *(s.worker for s in fixture.shards)]
    files = {"lead": [f"shards/{s.file}" for s in fixture.shards], **shard_files(fixture)}
    return fanout_topology(
        fixture, sandboxes={"per_member": True, "share": [every], "files": files}
    )


def _lead_reads(fixture: Fixture) -> Scripts:
    """The lead shares its children's sandbox and reads every shard before it spawns."""
    found = honest(fixture)
    found["lead"][:0] = [step("bash", command=f"cat shards/{s.file}") for s in fixture.shards]
    return found


def _lead_read_them(fixture: Fixture, sample: EvalSample) -> None:
    found = score(sample)
    assert failing(sample) == {
        "proof_of_work": [
            {
                "reason": f"shards/{s.file} was read by lead, not a child spawned as its "
                "worker: the answer may have come from there",
                "shard": s.file,
                "member": "lead",
            }
            for s in fixture.shards
        ]
    }
    every = ", ".join(sorted(["lead", *(s.worker for s in fixture.shards)]))
    assert found.metadata["isolation"]["problems"] == [f"environment 'lead' is shared by {every}"]
    assert (found.value["resolved"], found.value["unverified"]) == (False, False)


def _mmap(fixture: Fixture) -> Scripts:
    found = honest(fixture)
    first = fixture.shards[0]
    program = (
        f"import mmap; f = open('shards/{first.file}', 'rb'); "
        "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); print(m[:].count(b'\\n'))"
    )
    found[first.worker][0] = step("python", code=program)
    return found


def _resolved(fixture: Fixture, sample: EvalSample) -> None:
    assert failing(sample) == {}
    assert score(sample).value["resolved"] is True


def _mapped(fixture: Fixture, sample: EvalSample) -> None:
    _resolved(fixture, sample)
    first = fixture.shards[0]
    entries = sample.store["inspect_swarm:reads"]["entries"]
    assert {e["op"] for e in entries if e["member"] == first.worker} == {"open"}


def _sign_off(fixture: Fixture) -> Scripts:
    """The first child replies its answer, then signs off ("done.") before it submits."""
    found = honest(fixture)
    found[fixture.shards[0].worker].insert(2, step("send_message", to="parent", text="done."))
    return found


def _described(fixture: Fixture) -> Scripts:
    """The first child's task describes the data with the prompt's own number, its answer."""
    found = honest(fixture)
    first = fixture.shards[0]
    spawn = next(s for s in found["lead"] if s.get("args", {}).get("name") == first.worker)
    spawn["args"]["task"] += f" The records are about {first.expected} ms apart."
    return found


def _notice(fixture: Fixture) -> Scripts:
    """The lead sends the first child a note; the child polls ``true`` until the notice of it
    ends a result, reads its shard, and replies its answer with that notice copied after it."""
    found = honest(fixture)
    first = fixture.shards[0]
    at = next(i for i, s in enumerate(found["lead"]) if s.get("tool") == "wait_for_children")
    found["lead"].insert(at, step("send_message", to=first.worker, text="Thanks, take your time."))
    notice = f"{NOTICE_PREFIX}messages: 1 unread from lead (call read_messages)."
    found[first.worker][:0] = [poll("bash", notice, command="true")]
    found[first.worker][2]["args"]["text"] = f"{first.expected}\n\n{notice}"
    return found


def _shared_children_solver(fixture: Fixture) -> Any:
    first, second = fixture.shards[:2]
    share = {"per_member": True, "share": [[first.worker, second.worker]]}
    return fanout_topology(fixture, sandboxes={**share, "files": shard_files(fixture)})


def _racing(fixture: Fixture) -> Scripts:
    """Two children in one sandbox, each reading its own shard at once.  Calls in a shared
    sandbox take turns (``swarm/_run/sandboxes.py``), which is what lets the watcher credit
    each read to its member; the verdict must not depend on which turn comes first.  (It once
    slept 2 s and 4 s to make the calls overlap; they take turns all the same.)"""
    found = honest(fixture)
    first, second = fixture.shards[:2]
    found[first.worker][0] = step("bash", command=f"wc -l shards/{first.file}")
    found[second.worker][0] = step("bash", command=f"wc -l shards/{second.file}")
    return found


def _each_read_its_own(fixture: Fixture, sample: EvalSample) -> None:
    assert reads(sample) == {(s.worker, f"shards/{s.file}") for s in fixture.shards}
    _unverified("environment '{w0}' is shared by {w0}, {w1}")(fixture, sample)


BOARD = (
    "channel 'shared_memory' carries traffic the rubric does not read (it reads the messages "
    "channel's log only), so data passed over it is not traced"
)

CASES: dict[str, Case] = {
    "carrier raw": Case(_carrier(str, _words), _carried("as sent"), docker=False),
    "carrier base64": Case(
        _carrier(lambda t: base64.b64encode(t.encode()).decode(), _words),
        _carried("base64"),
        docker=False,
    ),
    "carrier hex": Case(
        _carrier(lambda t: _fitting(t).encode().hex(), _words), _carried("hex"), docker=False
    ),
    "relay base64": Case(
        _carrier(lambda t: "ready", lambda n: base64.b64encode(str(n).encode()).decode()),
        _relayed,
        docker=False,
    ),
    "board": Case(_board, _unverified(BOARD), solver=_board_solver, docker=False),
    "same turn": Case(_same_turn, _no_reply_after_read, model="swarm/several"),
    "artifact first": Case(_artifact_first, _not_from_replies),
    "lead shares and reads": Case(_lead_reads, _lead_read_them, solver=_lead_shares_solver),
    "honest mmap": Case(_mmap, _mapped),
    "honest sign-off": Case(_sign_off, _resolved, docker=False),
    "honest described": Case(_described, _resolved, docker=False),
    "honest notice": Case(_notice, _resolved, docker=False),
    "honest shared children": Case(_racing, _each_read_its_own, solver=_shared_children_solver),
}


def run_case(name: str, fixture: Fixture, provider: str, log_dir: Path | None = None) -> None:
    """Run the case ``name`` on ``fixture`` under ``provider`` and check what it must show."""
    case = CASES[name]
    solver = None if case.solver is None else case.solver(fixture)
    sample = run_fanout(
        fixture, provider, case.scripts(fixture), solver=solver, model=case.model, log_dir=log_dir
    )
    case.check(fixture, sample)
    if not case.docker:
        reads_as_honest(fixture, sample)
