"""A Codex lead's own sub-agents as the fan-out's children, without Docker: which shard a
sub-agent's task names, and how a read in the lead's one container is credited to the
sub-agent whose own command named the file.  The runs with Codex are in
``tests/test_agent_clis.py`` (``test_a_codex_lead_*``)."""

from __future__ import annotations

import pytest

from swarm import ConfigError
from swarm.plugins.scorers.fanout import child_aliases, credit_reads, fanout, load_fixture
from swarm.plugins.scorers.fanout._demo import demo_model
from swarm.plugins.scorers.fanout._readlog import FileRead, Reads
from swarm.plugins.scorers.fanout._subagents import Ran, named_shard, names_path

FIXTURE = load_fixture("json-events")
ALIASES = child_aliases(FIXTURE)
FIRST, SECOND = FIXTURE.shards[0], FIXTURE.shards[1]


def test_a_sub_agents_shard_is_the_one_shard_file_its_task_names() -> None:
    assert named_shard(f"You are x. Read shards/{FIRST.file}.", ALIASES) == FIRST.worker
    assert named_shard(f"cat /workspace/shards/{FIRST.file}", ALIASES) == FIRST.worker
    assert named_shard(f"Read ./shards/{FIRST.file} now", ALIASES) == FIRST.worker
    both = f"Read shards/{FIRST.file} and shards/{SECOND.file}."
    assert named_shard(both, ALIASES) is None
    assert named_shard(f"Read {FIRST.file}.", ALIASES) is None  # a bare file name is no path
    assert named_shard("Read every shard.", ALIASES) is None
    assert not names_path(f"cat shards/{FIRST.file}x", f"shards/{FIRST.file}")
    # the deepagent's subagent types still map as before
    assert ALIASES["worker_events_01"] == "worker-events-01"


def read(seq: int, time: float, path: str, op: str = "read", member: str = "lead") -> FileRead:
    return FileRead(seq=seq, time=time, member=member, sandbox="lead", path=path, op=op, call=3)


def ran(child: str, time: float, command: str) -> Ran:
    return Ran(child=child, member="lead", time=time, text=f'exec_command {{"cmd": "{command}"}}')


def test_a_read_in_the_leads_container_goes_to_the_sub_agent_that_last_asked_for_it() -> None:
    a, b = f"shards/{FIRST.file}", f"shards/{SECOND.file}"
    reads = Reads(
        provider="docker",
        watched=True,
        members={"lead": {"sandbox": "lead", "files": [a, b]}},
        entries=(
            read(0, 1.0, a),  # before anyone asked: the lead's
            read(1, 3.0, a, "open"),
            read(2, 3.0, a),
            read(3, 4.0, b),  # both asked, the latest was lead/B
            read(4, 6.0, b),  # both asked at the same moment: nobody's but the lead's
            read(5, 7.0, "task.txt"),  # no sub-agent named it
            read(6, 7.5, a, "write"),  # a write is never credited
        ),
    )
    asked = [
        ran("lead/A", 2.0, f"wc -l {a}"),
        ran("lead/A", 2.5, f"cat {b}"),
        ran("lead/B", 3.5, f"cat /workspace/{b}"),
        ran("lead/A", 5.0, f"head {b}"),
        ran("lead/B", 5.0, f"tail {b}"),
    ]
    credited = credit_reads(reads, asked)
    assert credited is not None
    assert [(e.seq, e.member) for e in credited.entries] == [
        (0, "lead"),
        (1, "lead/A"),
        (2, "lead/A"),
        (3, "lead/B"),
        (4, "lead"),
        (5, "lead"),
        (6, "lead"),
    ]
    # each credited sub-agent works in the lead's environment: first_read finds it there
    assert credited.members["lead/A"] == {"sandbox": "lead", "files": []}
    first = credited.first_read("lead/A", a)
    assert first is not None and first.seq == 1
    assert credited.readers(b) == ("lead/B", "lead")
    assert credit_reads(reads, []) is reads and credit_reads(None, asked) is None


def test_a_codex_lead_needs_docker() -> None:
    with pytest.raises(ConfigError) as raised:
        fanout(lead="codex")
    assert str(raised.value).startswith(
        "fanout.lead: a codex lead runs Codex CLI in the agent image's container"
    )
    assert "got sandbox='bwrap'" in str(raised.value)
    task = fanout(lead="codex", sandbox="docker")
    assert task.sandbox is not None and task.sandbox.config is not None
    assert str(task.sandbox.config).endswith("agent_image/compose.yaml")


def test_codex_children_need_docker_and_a_worker_lead() -> None:
    with pytest.raises(ConfigError) as raised:
        fanout(child="codex")
    assert str(raised.value).startswith("fanout.child: Codex CLI children run in the agent image")
    assert "got sandbox='bwrap' and lead='worker'" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        fanout(child="codex", lead="deepagent", sandbox="docker")
    assert "lead='deepagent'" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        fanout(child="claude")
    assert str(raised.value) == (
        "fanout.child: expected one of worker, codex (the members a worker lead spawns), "
        "got 'claude'"
    )
    task = fanout(child="codex", sandbox="docker")
    assert task.sandbox is not None
    assert str(task.sandbox.config).endswith("agent_image/compose.yaml")
    # the keyless demonstration's children play their scripts as Codex does
    scripts = demo_model(FIXTURE, "worker", "codex").api.scripts  # type: ignore[attr-defined]
    played = [s.tool or s.reply for s in scripts[FIRST.worker]]
    assert played == ["exec_command", "send_message", str(FIRST.expected)]


def test_swarm_fanout_names_the_option_a_codex_run_lacks(tmp_path: object) -> None:
    from tests.test_fanout_command import fanout as command

    code, out, err = command(
        "--fixture", "json-events", "--lead", "codex", "--log-dir", str(tmp_path)
    )
    assert (code, out) == (1, "")
    assert err.startswith("error: fanout.lead: a codex lead runs Codex CLI")
    code, out, err = command(
        "--fixture", "json-events", "--child", "codex", "--log-dir", str(tmp_path)
    )
    assert (code, out) == (1, "")
    assert err.startswith("error: fanout.child: Codex CLI children run in the agent image")
