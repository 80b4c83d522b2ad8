"""Agent CLIs as members (``swarm/codex``, ``swarm/claude_code``): Codex CLI and Claude Code, each
in a Docker container of its own on the image ``swarm agent-image`` builds, reaching the scripted
model through Inspect's sandbox agent bridge and the swarm's channels as bridged MCP tools.

The scripted model plays the tools each CLI offers its model (Codex's ``exec_command``, Claude
Code's ``Bash``, the swarm's tools as ``mcp__swarm__<name>``).  The runs need a Docker engine
and the image: ``.ci/run`` brings up the engine and builds the image (``swarm agent-image``
fetches the CLIs from npm once, then builds from its cache); without them the tests that run
CLIs are skipped, saying which is missing.  The image's recipe, the members' arguments and the
fan-out's Codex children are checked everywhere."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import registry_info

from swarm import (
    Budget,
    ConfigError,
    PluginCatalog,
    channel,
    claude_code_member,
    codex_member,
    controller,
    get_plugin_manager,
    member,
    member_sandbox,
    swarm,
)
from swarm._spec.describe import describe_topology
from swarm._spec.topology import swarm_spec
from swarm.agent_image import (
    AGENT_IMAGE,
    CLAUDE_CODE_VERSION,
    CODEX_VERSION,
    COMPOSE,
    image_present,
    npm_packages,
)
from swarm.agent_image._build import tarball_name
from swarm.plugins.scorers.fanout import (
    codex_children_scripts,
    fanout_codex_topology,
    fanout_topology,
    honest_codex_scripts,
    load_fixture,
)
from swarm.plugins.scorers.fanout._demo import codex_subagent_task
from swarm.testing import call, pause, poll, reply
from tests.fanout_cases import CASES, failing, honest, reads, run_fanout, small_fixture
from tests.fanout_records import score
from tests.helpers import logged_usage

CLI_PROCESSES = {"codex", "claude"}
CODEX_CHILD = member("swarm/codex", bridged="sandbox")
CLIS = pytest.mark.timeout(600)  # a container, a watcher and a CLI per member, on 2 cores


@pytest.fixture
def agent_image(docker_engine: None) -> None:
    """The agent CLIs' image, or the test skipped saying how to build it."""
    if not image_present(AGENT_IMAGE):
        pytest.skip(f"no image {AGENT_IMAGE}: build it with `swarm agent-image` (npm, once)")


# -- everywhere: the recipe and the members' arguments -----------------------------------------


def test_the_image_recipe_pins_the_versions_the_compose_file_runs() -> None:
    assert AGENT_IMAGE == f"swarm-eval-agents:codex-{CODEX_VERSION}-claude-{CLAUDE_CODE_VERSION}"
    service = yaml.safe_load(COMPOSE.read_text())["services"]["default"]
    assert (service["image"], service["network_mode"]) == (AGENT_IMAGE, "none")
    assert npm_packages("x64") == {
        "codex": "@openai/codex@0.171.0-linux-x64",
        "claude": "@anthropic-ai/claude-code-linux-x64@2.1.337",
    }
    assert [tarball_name(s) for s in npm_packages("arm64").values()] == [
        "openai-codex-0.171.0-linux-arm64.tgz",
        "anthropic-ai-claude-code-linux-arm64-2.1.337.tgz",
    ]


@pytest.mark.parametrize("factory", [codex_member, claude_code_member])
@pytest.mark.parametrize("key", ["bridged_tools", "sandbox"])
def test_what_the_swarm_sets_cannot_be_given(factory: Any, key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        factory(**{key: None})
    assert str(raised.value).startswith(f"swarm/{factory.__name__.split('_member')[0]}.{key}: ")
    assert "set by the swarm" in str(raised.value)


def codex_children(fixture: Any, scripts: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return codex_children_scripts(fixture, copy.deepcopy(scripts))


def test_a_fan_out_child_script_as_codex_plays_it() -> None:
    fixture = load_fixture("json-events")
    played = codex_children(fixture, honest(fixture))
    first = fixture.shards[0]
    assert played[first.worker] == [
        {"tool": "exec_command", "args": {"cmd": f"wc -l shards/{first.file}"}},
        {"tool": "send_message", "args": {"to": "parent", "text": str(first.expected)}},
        {"reply": str(first.expected)},
    ]
    assert played["lead"] == honest(fixture)["lead"]


# -- with Docker and the image -------------------------------------------------------------------


@scorer(metrics=[])
def cli_processes() -> Any:
    """Which CLI processes still run in each member's container once the swarm has ended,
    beside the container's own ``tail`` (seen: the listing read that container's processes)."""

    async def score(state: TaskState, target: Target) -> Score:
        found: dict[str, list[str]] = {}
        for name in state.store.get("inspect_swarm:reads")["members"]:
            listed = await member_sandbox(name).exec(["sh", "-c", "cat /proc/[0-9]*/comm"])
            found[name] = sorted(set(listed.stdout.split()) & {*CLI_PROCESSES, "tail"})
        return Score(value=0, metadata=found)

    return score


FILES = {"a.txt": "11\n", "b.txt": "22\n", "c.txt": "33\n", "d.txt": "44\n"}
OWN = {"c1": "a.txt", "c2": "b.txt", "c3": "c.txt", "cc": "d.txt"}
CLAUDE = {"model_config": "claude-sonnet-4-5"}  # an id Claude Code knows; calls go to the model


def cli_swarm(
    scripts: dict[str, list[Any]], log_dir: Path, stop_on_submission: bool, grace: float = 120
) -> EvalSample:
    """Three Codex CLI members and one Claude Code member, each in its own container holding
    only its own file."""
    members = [member("swarm/codex", name=n, bridged="sandbox") for n in ("c1", "c2", "c3")]
    members.append(member("swarm/claude_code", CLAUDE, name="cc", bridged="sandbox"))
    solver = swarm(
        members=members,
        sandboxes={"per_member": True, "files": {m: [f] for m, f in OWN.items()}},
        channels=[channel("messages", routes="all")],
        controller=controller("leaderless", stop_on_submission=stop_on_submission),
        budget=Budget(grace=grace),
    )
    task = Task(
        dataset=[Sample(input="What number is in your file?", target="", files=FILES)],
        solver=solver,
        scorer=cli_processes(),
        sandbox=("docker", str(COMPOSE)),
    )
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = eval(task, model=model, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


@CLIS
def test_three_codex_members_and_claude_code_each_answer_from_their_own_file(
    agent_image: None, log_dir: Path
) -> None:
    scripts = {
        "c1": [
            call("exec_command", cmd="cat a.txt"),
            call("send_message", to="cc", text="c1 has 11"),
            reply("11"),
        ],
        "c2": [call("exec_command", cmd="cat b.txt"), reply("22")],
        "c3": [call("exec_command", cmd="cat c.txt"), reply("33")],
        "cc": [
            call("Bash", command="cat d.txt"),
            poll(pause(0.5, call("mcp__swarm__read_messages")), "c1 has 11"),
            reply("44"),
        ],
    }
    sample = cli_swarm(scripts, log_dir, stop_on_submission=False)
    result = sample.store["inspect_swarm:result"]
    answers = {m["name"]: (m["status"], m["answer"]) for m in result["members"]}
    assert answers == {
        "c1": ("submitted", "11"),
        "c2": ("submitted", "22"),
        "c3": ("submitted", "33"),
        "cc": ("submitted", "44"),
    }
    ledger = {m["name"]: m for m in sample.store["inspect_swarm:ledger"]["members"]}
    read = [e for e in sample.events if e.event == "tool" and e.function == "read_messages"]
    assert {n: (m["bridged"], m["calls"]["calls"]) for n, m in ledger.items()} == {
        "c1": (True, 3),
        "c2": (True, 2),
        "c3": (True, 2),
        "cc": (True, 2 + len(read)),  # it reads until c1's message is in: one call a read
    }
    # the ledger is the log: each member's meter is its span's model events, to the token
    metered = {n: m["meter"]["usage"]["total_tokens"] for n, m in ledger.items()}
    assert metered == {n: u.total_tokens for n, u in logged_usage(sample).items()}
    assert all(t > 0 for t in metered.values())
    metrics = {m["name"]: m for m in sample.store["inspect_swarm:metrics"]["members"]}
    assert {n: (m["tokens"], m["delivery_effective"]) for n, m in metrics.items()} == {
        n: (t, "poll") for n, t in metered.items()
    }
    assert sample.store["inspect_swarm:metrics"]["tokens"] == sum(metered.values())
    # each read its own file, and nothing else in its directory
    entries = sample.store["inspect_swarm:reads"]["entries"]
    assert {(e["member"], e["path"]) for e in entries} == set(OWN.items())
    # the channel reached both CLIs: Codex sent, Claude Code read
    [sent] = sample.store["inspect_swarm:messages"]["messages"]
    assert (sent["sender"], sent["recipient"], sent["text"]) == ("c1", "cc", "c1 has 11")
    assert "c1 has 11" in str(read[-1].result)
    assert all("c1 has 11" not in str(r.result) for r in read[:-1])
    # no CLI still runs once the swarm ended
    assert sample.scores is not None
    assert sample.scores["cli_processes"].metadata == {n: ["tail"] for n in OWN}


def sub_agent_usage(sample: EvalSample) -> dict[str, tuple[int, int]]:
    """Each Codex sub-agent span's (calls, tokens) from the log's model events, by the span's
    tool call's prompt (independently of the subagents record)."""
    spans = {e.id for e in sample.events if e.event == "span_begin" and e.id.startswith("agent-")}
    prompts = {
        f"agent-{c.id}": c.arguments["message"]
        for e in sample.events
        if e.event == "model" and e.output.choices
        for c in e.output.message.tool_calls or []
        if c.function == "spawn_agent"
    }
    found: dict[str, tuple[int, int]] = {}
    for e in sample.events:
        if e.event == "model" and e.span_id in spans and e.output.usage is not None:
            calls, tokens = found.get(prompts[e.span_id], (0, 0))
            found[prompts[e.span_id]] = (calls + 1, tokens + e.output.usage.total_tokens)
    return found


READER = "You are {}, read {} and answer its number."


@CLIS
def test_a_codex_members_own_sub_agents_are_recorded(agent_image: None, log_dir: Path) -> None:
    """A vendor swarm inside one member: Codex's ``spawn_agent`` sub-agents share its
    container; each is recorded (its task, what it ran, what it replied, its calls) and its
    calls stay metered to the member."""
    scripts = {
        "lead": [
            call("spawn_agent", message=READER.format("reader-a", "a.txt")),
            call("spawn_agent", message=READER.format("reader-b", "b.txt")),
            # Codex ends when its turn does: the lead keeps its turn until both have told it
            poll(
                pause(0.5, call("exec_command", cmd="true")),
                '{"completed":"11"}',
                '{"completed":"22"}',
            ),
            reply("33"),
        ],
        "lead/reader-a": [call("exec_command", cmd="cat a.txt"), reply("11")],
        "lead/reader-b": [call("exec_command", cmd="cat b.txt"), reply("22")],
    }
    solver = swarm(
        members=[member("swarm/codex", name="lead", bridged="sandbox")],
        sandboxes={"per_member": True, "files": {"lead": ["a.txt", "b.txt"]}},
    )
    task = Task(
        dataset=[Sample(input="Add the numbers in a.txt and b.txt.", target="33", files=FILES)],
        solver=solver,
        sandbox=("docker", str(COMPOSE)),
    )
    model = get_model("swarm/scripted", scripts=scripts, answer="33", memoize=False)
    [log] = eval(task, model=model, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    assert sample.output.completion == "33"
    entries = sample.store["inspect_swarm:subagents"]["entries"]
    agents = {e["agent"]: e for e in entries if e["op"] == "dispatch"}
    by_prompt = {e["prompt"]: e["name"] for e in agents.values()}
    a, b = (
        by_prompt[READER.format("reader-a", "a.txt")],
        by_prompt[READER.format("reader-b", "b.txt")],
    )
    # Codex's own agent ids, from its spawn_agent results: the record's names
    spawned = [
        json.loads(m.text)["agent_id"]
        for e in sample.events
        if e.event == "model"
        for m in e.input
        if m.role == "tool" and '"agent_id"' in m.text
    ]
    assert sorted(set(spawned)) == sorted(agents) and {a, b} == {f"lead/{x}" for x in agents}
    lives = {
        name: [
            (
                e["op"],
                e.get("tool"),
                e.get("arguments"),
                e.get("via"),
                e.get("text"),
                e.get("status"),
            )
            for e in entries
            if e["name"] == name and e["op"] != "dispatch"
        ]
        for name in (a, b)
    }
    assert lives == {
        a: [
            ("ran", "exec_command", {"cmd": "cat a.txt"}, None, None, None),
            ("received", None, None, "notification", "11", None),
            ("end", None, None, None, None, "completed"),
        ],
        b: [
            ("ran", "exec_command", {"cmd": "cat b.txt"}, None, None, None),
            ("received", None, None, "notification", "22", None),
            ("end", None, None, None, None, "completed"),
        ],
    }
    for e in agents.values():
        assert (e["member"], e["parent"], e["depth"], e["background"]) == ("lead", "lead", 1, True)
    ends = {e["name"]: e for e in entries if e["op"] == "end"}
    assert (ends[a]["result"], ends[b]["result"]) == ("11", "22")
    # each sub-agent's usage is its span's model calls in the log, to the token ...
    logged = sub_agent_usage(sample)
    for name, prompt in (
        (a, READER.format("reader-a", "a.txt")),
        (b, READER.format("reader-b", "b.txt")),
    ):
        usage = ends[name]["usage"]
        assert (usage["calls"], usage["total_tokens"]) == logged[prompt]
        assert usage["calls"] == 2 and usage["errored"] == usage["cache_replays"] == 0
    # ... and stays the member's: the ledger is the log, sub-agents' calls included
    [lead] = sample.store["inspect_swarm:ledger"]["members"]
    assert lead["meter"]["usage"]["total_tokens"] == logged_usage(sample)["lead"].total_tokens
    subs = sum(t for _, t in logged.values())
    assert lead["meter"]["usage"]["total_tokens"] > subs > 0
    # one container: the reads are the member's (its sub-agents cannot be told apart there)
    reads = sample.store["inspect_swarm:reads"]["entries"]
    assert {(e["member"], e["path"]) for e in reads} == {("lead", "a.txt"), ("lead", "b.txt")}


@CLIS
def test_a_stopped_cli_swarm_ends_every_cli(agent_image: None, log_dir: Path) -> None:
    """c1 submits and the swarm stops while the others' model calls are in flight (each
    would take an hour), with no grace: the stop reaches each CLI, none still runs, and the
    docker_engine fixture checks that no container is left once the eval is done."""
    hour = {"sleep": 3600, "reply": "late"}
    scripts = {
        "c1": [call("exec_command", cmd="cat a.txt"), reply("11")],
        "c2": [call("exec_command", cmd="cat b.txt"), hour],
        "c3": [hour],
        "cc": [call("Bash", command="cat d.txt"), hour],
    }
    sample = cli_swarm(scripts, log_dir, stop_on_submission=True, grace=0)
    result = sample.store["inspect_swarm:result"]
    assert result["stop_reason"] == "submitted"
    # busy in a model call when the (zero) grace ran out: cancelled
    assert {m["name"]: m["status"] for m in result["members"]} == {
        "c1": "submitted",
        "c2": "cancelled",
        "c3": "cancelled",
        "cc": "cancelled",
    }
    ledger = {m["name"]: m for m in sample.store["inspect_swarm:ledger"]["members"]}
    assert {n: m["cancelled"] for n, m in ledger.items()} == {
        "c1": False,
        "c2": True,
        "c3": True,
        "cc": True,
    }
    assert {n: u.total_tokens for n, u in logged_usage(sample).items()} == {
        n: m["meter"]["usage"]["total_tokens"] for n, m in ledger.items()
    }
    assert sample.scores is not None
    assert sample.scores["cli_processes"].metadata == {n: ["tail"] for n in OWN}


@CLIS
def test_a_cap_reached_by_a_codex_call_ends_the_cli(agent_image: None, log_dir: Path) -> None:
    """The swarm's token cap applies to a CLI's calls through the bridge: Codex's first call
    (its instructions alone are thousands of tokens) reaches a 1,000-token cap, is metered,
    and ends the member and the swarm (``swarm_cap``); the CLI does not run on."""
    solver = swarm(
        members=[member("swarm/codex", name="c1", bridged="sandbox")],
        sandboxes={"per_member": True, "files": {"c1": ["a.txt"]}},
        budget=Budget(tokens=1000),
    )
    task = Task(
        dataset=[Sample(input="What number is in your file?", target="", files=FILES)],
        solver=solver,
        scorer=cli_processes(),
        sandbox=("docker", str(COMPOSE)),
    )
    scripts = {"c1": [call("exec_command", cmd="cat a.txt"), reply("11")]}
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = eval(task, model=model, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples or []
    result = sample.store["inspect_swarm:result"]
    assert (result["stop_reason"], result["members"][0]["status"]) == ("swarm_cap", "swarm_cap")
    [ledger] = sample.store["inspect_swarm:ledger"]["members"]
    tokens = ledger["meter"]["usage"]["total_tokens"]
    assert ledger["calls"]["calls"] == 1 and tokens >= 1000
    assert tokens == logged_usage(sample)["c1"].total_tokens
    assert sample.scores is not None
    assert sample.scores["cli_processes"].metadata == {"c1": ["tail"]}
    # it never ran its command: the cap ended it before its second call
    assert sample.store["inspect_swarm:reads"]["entries"] == []


@CLIS
def test_a_fan_out_of_eight_codex_children_resolves(agent_image: None, tmp_path: Path) -> None:
    fixture = load_fixture("json-events")
    assert len(fixture.shards) == 8
    scripts = codex_children(fixture, honest(fixture))
    solver = fanout_topology(fixture, child=CODEX_CHILD)
    sample = run_fanout(
        fixture, "docker", scripts, solver=solver, log_dir=tmp_path / "logs", compose=COMPOSE
    )
    assert failing(sample) == {}
    assert score(sample).value["resolved"] is True
    assert reads(sample) == {(s.worker, f"shards/{s.file}") for s in fixture.shards}
    ledger = {m["name"]: m["bridged"] for m in sample.store["inspect_swarm:ledger"]["members"]}
    assert ledger == {"lead": False} | {s.worker: True for s in fixture.shards}


@CLIS
def test_codex_children_that_relay_the_leads_values_do_not_resolve(
    agent_image: None, tmp_path: Path
) -> None:
    fixture = small_fixture(tmp_path, "csv-metrics", shards=2)  # a Codex child: ~25 s each
    case = CASES["relay base64"]
    scripts = codex_children(fixture, case.scripts(fixture))
    solver = fanout_topology(fixture, child=CODEX_CHILD)
    sample = run_fanout(
        fixture, "docker", scripts, solver=solver, log_dir=tmp_path / "logs", compose=COMPOSE
    )
    case.check(fixture, sample)  # proof_of_work fails for every shard: relayed, base64


def codex_lead_fanout(fixture: Any, scripts: dict[str, Any], tmp_path: Path) -> EvalSample:
    """The fan-out with a Codex lead (its own sub-agents) in the agent image's container."""
    solver = fanout_codex_topology(fixture)
    logs = tmp_path / "logs"
    return run_fanout(fixture, "docker", scripts, solver=solver, log_dir=logs, compose=COMPOSE)


def codex_lead_relays(fixture: Any) -> dict[str, Any]:
    """A Codex lead that reads every shard itself and gives each sub-agent its answer in its
    task; the sub-agents answer without reading."""
    scripts = honest_codex_scripts(fixture)
    lead = scripts["lead"]
    for s in fixture.shards:
        at = next(i for i, step in enumerate(lead) if s.file in str(step.get("args")))
        spawn = lead[at]
        spawn["args"]["message"] += f" The answer is {s.expected}."
        lead.insert(at, {"tool": "exec_command", "args": {"cmd": f"cat shards/{s.file}"}})
        scripts[f"lead/{s.worker}"] = [{"reply": str(s.expected)}]
    return scripts


@CLIS
def test_a_codex_lead_fanning_out_with_its_own_sub_agents_is_judged_unverified(
    agent_image: None, tmp_path: Path
) -> None:
    """The vendor swarm judged by the fan-out rubric: every rule passes on an honest run, but
    its sub-agents shared the lead's container, so it is unverified, never resolved."""
    fixture = small_fixture(tmp_path, "json-events", shards=3)
    sample = codex_lead_fanout(fixture, honest_codex_scripts(fixture), tmp_path)
    assert failing(sample) == {}
    found = score(sample)
    assert (found.value["resolved"], found.value["unverified"]) == (False, True)
    children = {
        e["prompt"]: e["name"]
        for e in sample.store["inspect_swarm:subagents"]["entries"]
        if e["op"] == "dispatch"
    }
    names = {
        s.worker: children[codex_subagent_task(s.worker, s.file, s.question)]
        for s in fixture.shards
    }
    isolation = found.metadata["isolation"]
    assert isolation["isolated"] is False
    assert isolation["problems"] == [
        f"environment 'lead' is shared by {', '.join(sorted(['lead', *names.values()]))}"
    ]
    # the runtime gave every read to the lead's container; the rubric credits each to the
    # sub-agent whose own command named the file
    assert reads(sample) == {("lead", f"shards/{s.file}") for s in fixture.shards}
    proved = found.metadata["rules"]["proof_of_work"]["details"]["proved"]
    assert proved == [s.file for s in fixture.shards]


@CLIS
def test_a_codex_lead_that_reads_the_shards_and_relays_the_answers_fails(
    agent_image: None, tmp_path: Path
) -> None:
    fixture = small_fixture(tmp_path, "json-events", shards=3)
    sample = codex_lead_fanout(fixture, codex_lead_relays(fixture), tmp_path)
    failed = failing(sample)
    assert sorted(f["shard"] for f in failed["proof_of_work"]) == sorted(
        s.file for s in fixture.shards
    )
    for f in failed["proof_of_work"]:
        assert (
            f["reason"]
            == f"shards/{f['shard']} was read by lead, not a child spawned as its worker: the answer may have come from there"
        )


def test_cli_members_from_a_topology_file(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(
        "members:\n"
        "  - {factory: swarm/codex, name: c, bridged: sandbox, args: {system_prompt: Be brief.}}\n"
        "  - {factory: swarm/claude_code, name: cc, bridged: sandbox,\n"
        "     args: {model_config: claude-sonnet-4-5}}\n"
        "templates:\n"
        "  child: {factory: swarm/codex, bridged: sandbox}\n"
        "sandboxes: {per_member: true}\n"
    )
    catalog = PluginCatalog(*get_plugin_manager())
    spec = swarm_spec(catalog, config=path)
    assert [(m.name, m.bridged) for m in spec.members] == [("c", "sandbox"), ("cc", "sandbox")]
    assert spec.templates["child"].bridged == "sandbox"
    described = describe_topology(spec, catalog)
    assert [(m["agent"], m["args"]) for m in described["members"]] == [
        ("swarm/codex", {"system_prompt": "Be brief."}),
        ("swarm/claude_code", {"model_config": "claude-sonnet-4-5"}),
    ]


def test_host_tools_by_registry_name_and_a_bad_one_named() -> None:
    from swarm._faces.agent_clis import _host_tools

    [bash_tool] = _host_tools("swarm/codex", ["bash"])
    assert registry_info(bash_tool).name == "inspect_ai/bash"
    with pytest.raises(ConfigError) as raised:
        _host_tools("swarm/codex", ["no_such_tool"])
    assert str(raised.value).startswith("swarm/codex.tools: no Inspect tool 'no_such_tool'")


def test_the_debian_release_is_read_from_os_release() -> None:
    from swarm.agent_image._build import _release

    text = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n'
    assert _release(text) == "bookworm"
    assert _release('VERSION_CODENAME=""\n') is None
    assert _release("ID=alpine\n") is None


def test_a_cached_tarball_that_is_not_npms_is_refused(tmp_path: Path) -> None:
    from swarm.agent_image._build import INTEGRITY, _fetched

    spec = npm_packages("x64")["codex"]
    (tmp_path / tarball_name(spec)).write_bytes(b"not codex")
    said: list[str] = []
    with pytest.raises(ConfigError) as raised:
        _fetched(spec, tmp_path, said.append)
    assert said == [f"{spec}: cached (openai-codex-0.171.0-linux-x64.tgz)"]
    message = str(raised.value)
    assert message.startswith(f"agent image: {tmp_path / tarball_name(spec)} is not {spec} as npm")
    assert f"npm's {INTEGRITY[spec]}); delete it" in message
    assert sorted(INTEGRITY) == sorted(
        [*npm_packages("x64").values(), *npm_packages("arm64").values()]
    )


def test_curls_packages_are_the_versions_apt_lists_fetched_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the package files apt lists now are built in (an older version in the cache is
    left out), a cached one is not fetched again, and a file that is not apt's is refused."""
    import hashlib
    import subprocess

    from swarm.agent_image import _build

    good = {"curl_8.0-1_amd64.deb": b"curl 8.0", "libcurl4_8.0-1_amd64.deb": b"libcurl 8.0"}
    served = dict(good)
    fetched: list[list[str]] = []

    def run(argv: list[str], what: str, **kwargs: Any) -> str:
        line = " ".join(argv)
        if "os-release" in line:
            return Path("/etc/os-release").read_text(encoding="utf-8")
        if "dpkg-query" in line:
            return "base-files\n"
        if argv[0] == "apt-cache":
            return "curl\n  Depends: libcurl4\nlibcurl4\n"
        if "--print-uris" in argv:
            return "".join(
                f"'http://deb/{n}' {n} {len(b)} SHA256:{hashlib.sha256(b).hexdigest()}\n"
                for n, b in good.items()
            )
        assert argv[:2] == ["apt-get", "download"], argv
        fetched.append(argv[2:])
        for name, body in served.items():
            if name.split("_")[0] in argv[2:]:
                (kwargs["cwd"] / name).write_bytes(body)
        return ""

    monkeypatch.setattr(_build, "_run", run)
    monkeypatch.setattr(
        subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, b"", b"")
    )
    monkeypatch.setattr(_build.shutil, "which", lambda name: f"/usr/bin/{name}")
    debs = tmp_path / "debs"
    debs.mkdir()
    (debs / "curl_7.0-1_amd64.deb").write_bytes(b"an older curl")
    said: list[str] = []
    first = _build._curl_debs("base", tmp_path, said.append)
    assert [p.name for p in first] == sorted(good)
    assert fetched == [["curl", "libcurl4"]]
    again = _build._curl_debs("base", tmp_path, said.append)
    assert again == first and fetched == [["curl", "libcurl4"]]  # cached: not fetched again
    (debs / "curl_8.0-1_amd64.deb").write_bytes(b"tampered")
    served["curl_8.0-1_amd64.deb"] = b"still not apt's"
    with pytest.raises(ConfigError) as raised:
        _build._curl_debs("base", tmp_path, said.append)
    assert fetched[-1] == ["curl"]
    assert str(raised.value).startswith(
        f"agent image: {debs / 'curl_8.0-1_amd64.deb'} is not the package apt lists (SHA-256 "
    )
