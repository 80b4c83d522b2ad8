"""The bus pinned by value, in process: text that is not valid Unicode refused with its reason
and escaped in the evidence, what admission and delivery hooks see, ids of a channel without a
prefix, a write by a member that has ended, and counters and notices that add up over a run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from inspect_ai.agent import Agent, AgentState, agent, react
from inspect_ai.tool import Tool, ToolDef, ToolError, tool

from swarm import (
    Draft,
    MemberView,
    NoticeLine,
    PluginCatalog,
    Record,
    Register,
    Rejection,
    SwarmView,
    current_bus,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
    swarm_on_continue,
    swarm_tools,
)
from swarm.testing import call, pause, submit

from helpers import (
    BOARD,
    all_finish,
    comm_events,
    noop,
    notice_messages,
    run_scripted,
    shm_comm,
    sm,
    tool_results,
)

INVALID = "contains a character that is not valid Unicode (a lone surrogate); nothing was written"


# -- text that is not valid Unicode ------------------------------------------------------------------


@tool
def write_lone_surrogate() -> Tool:
    async def execute(where: str) -> str:
        """Write to shared memory with a lone surrogate in one argument.

        Args:
            where: "text" (the text written) or "path" (the path, in an insert)
        """
        # built here: a model's tool call holding a lone surrogate cannot be logged by Inspect
        from swarm.plugins.channels.shared_memory import shared_memory_tool

        write = shared_memory_tool()
        if where == "text":
            return str(await write(command="create", path=f"{BOARD}/a.md", file_text="x\ud800y"))
        return str(
            await write(
                command="insert", path=f"{BOARD}/b\udc00.md", insert_line=0, insert_text="ok"
            )
        )

    return execute


@agent
def surrogate_writer() -> Agent:
    return react(tools=[write_lone_surrogate(), swarm_tools()])


def test_a_lone_surrogate_is_refused_and_escaped_in_the_evidence(log_dir: Path) -> None:
    scripts = {
        "w": [
            call("write_lone_surrogate", where="text"),
            call("write_lone_surrogate", where="path"),
            sm("create", path=f"{BOARD}/c.md", file_text="fine"),
            sm("view", path=BOARD),
            submit("42"),
        ]
    }
    solver = swarm(members=[member(surrogate_writer, name="w")], channels=["shared_memory"])
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "write_lone_surrogate") == [
        ("", f"the text {INVALID}"),
        ("", f"'path' {INVALID}"),
    ]
    # nothing of the refused writes reached the board (ids w-1 and w-2 are spent on them)
    [(created, error), (listing, _)] = tool_results(sample, "shared_memory")
    assert error is None
    assert created == "Created /shared_memory/c.md (f-1, version 1)."
    assert listing.endswith(
        '<peer_listing path="/shared_memory">\nf-1  version 1  w  /shared_memory/c.md\n'
        "</peer_listing>"
    )
    sent = comm_events(sample, "sent")
    assert [(e["record"], e["record_kind"], e["seq"], e["size"]) for e in sent] == [
        ("w-1", "create", None, 5),  # "x", the lone surrogate as three bytes, "y"
        ("w-2", "insert", None, 2),
    ]
    assert [e["op"] for e in sent] == [
        {"command": "create", "path": f"{BOARD}/a.md"},
        {"command": "insert", "path": f"{BOARD}/b\\udc00.md", "insert_line": 0},  # escaped
    ]
    assert [e["rejected"] for e in sent] == [
        {"control": "invalid", "reason": f"the text {INVALID}"},
        {"control": "invalid", "reason": f"'path' {INVALID}"},
    ]
    [delivered] = comm_events(sample, "delivered")
    assert (delivered["record"], delivered["seq"]) == ("w-3", 1)
    assert shm_comm(sample, "w") == {
        "records": 1,
        "record_bytes": 4,
        "rejections": {"invalid": 2},
        "reads": 0,
        "listings": 1,
        "notices": 0,
    }


# -- a channel of this file: no prefix, and hooks that look at what the bus hands them --------------


class Tally:
    """A channel without a ``prefix``: its records are named after the channel.  It keeps what
    the admission and delivery hooks are given, for every channel's writes."""

    def __init__(self) -> None:
        self.admitted: list[tuple[str, str, tuple[tuple[str, str], ...]]] = []
        self.delivered: list[tuple[str, int, str, bool, str]] = []
        self.told: dict[str, int] = {}  # loop -> shared memory writes it was told of

    @hookimpl
    def swarm_member_tools(self, view: SwarmView, member: MemberView, nested: bool) -> list[Tool]:
        async def tally(n: int) -> str:
            """Add to the tally.

            Args:
                n: how much
            """
            bus = current_bus()
            assert bus is not None
            record, total = bus.deliver(
                Draft(channel="tally", kind="add", payload="", op={"n": n}), lambda r: n
            )
            return f"{record.id}: {total}"

        return [ToolDef(tally, name="tally").as_tool()]

    @hookimpl
    def swarm_admit_record(self, view: SwarmView, record: Record) -> Rejection | None:
        states = tuple((m.name, m.state) for m in view.members)
        self.admitted.append((record.id, record.sender, states))
        return None

    @hookimpl
    def swarm_record_delivered(self, view: SwarmView, record: Record) -> None:
        state = view.member(record.sender).state
        self.delivered.append((record.id, record.seq, record.loop, record.nested, state))

    @hookimpl
    def swarm_notice_lines(
        self, view: SwarmView, member: MemberView, loop: str
    ) -> NoticeLine | None:
        writes = sum(d[0].startswith("w-") for d in self.delivered)
        if member.name != "reader" or writes == self.told.get(loop, 0):
            return None
        self.told[loop] = writes
        return NoticeLine(channel="tally", text="The tally moved.", ids=({"record": "tally"},))


TALLIES: list[Tally] = []


def tally_channel() -> Tally:
    TALLIES.append(Tally())
    return TALLIES[-1]


class Pulse:
    """A channel that only makes the swarm offer ``swarm_wait``, for at most 0.3 seconds."""

    max_wait = 0.3


class TallyPlugin:
    @hookimpl
    def swarm_register_channels(self, register: Register) -> None:
        register("tally", tally_channel)
        register("pulse", Pulse)


def tally_catalog() -> PluginCatalog:
    pm, sources = get_plugin_manager()
    pm.register(TallyPlugin(), name="tally-plugin")
    return PluginCatalog(pm, sources)


@agent
def tally_worker() -> Agent:
    return react(tools=[noop(), swarm_tools()], on_continue=swarm_on_continue())


def test_hooks_see_the_run_and_the_stamped_record_and_ids_fall_back_to_the_channel(
    log_dir: Path,
) -> None:
    scripts = {
        "a": [
            call("tally", n=2),
            sm("create", path=f"{BOARD}/a.md", file_text="a"),
            call("tally", n=3),
            submit("42"),
        ],
        "b": [pause(1.0, submit("1"))],
    }
    solver = swarm(
        members=[member(tally_worker, name="a"), member(tally_worker, name="b")],
        channels=["tally", "shared_memory"],
        controller=all_finish(),
        plugins=tally_catalog(),
    )
    sample = run_scripted(solver, scripts, log_dir)
    assert tool_results(sample, "tally") == [("tally-1: 2", None), ("tally-2: 3", None)]
    [tally] = TALLIES[-1:]
    running = (("a", "running"), ("b", "running"))
    assert tally.admitted == [
        ("tally-1", "a", running),
        ("w-1", "a", running),
        ("tally-2", "a", running),
    ]
    loops = {e["loop"] for e in comm_events(sample) if e["member"] == "a"}
    [loop] = loops
    assert loop  # the member's own loop, as the evidence names it
    assert tally.delivered == [
        ("tally-1", 1, loop, False, "running"),
        ("w-1", 2, loop, False, "running"),
        ("tally-2", 3, loop, False, "running"),
    ]


def test_a_notice_joins_the_channels_lines(log_dir: Path) -> None:
    scripts = {
        "writer": [
            sm("create", path=f"{BOARD}/a.md", file_text="A"),
            pause(0.6, sm("create", path=f"{BOARD}/b.md", file_text="B")),
            submit("w"),
        ],
        "reader": [
            pause(0.3, call("noop", i=1)),
            pause(0.6, call("noop", i=2)),
            sm("view", path=f"{BOARD}/a.md"),
            submit("r"),
        ],
    }
    solver = swarm(
        members=[member(tally_worker, name="writer"), member(tally_worker, name="reader")],
        channels=["shared_memory", "tally"],
        controller=all_finish(),
        plugins=tally_catalog(),
    )
    sample = run_scripted(solver, scripts, log_dir)
    notices = notice_messages(sample)
    texts = list(dict.fromkeys(m.text for m in notices))
    ids = list(dict.fromkeys(m.metadata["inspect_swarm"]["id"] for m in notices))
    assert ids == ["n-1", "n-2"]
    # one line per channel, joined by a space (pluggy asks the last registered plugin first)
    assert texts == [
        "[Swarm notice] The tally moved. 1 shared memory file changed since you last viewed it "
        f'(f-{n} new; by writer). View one with shared_memory(command="view", path="f-{n}"), or '
        'list them with path="/shared_memory".'
        for n in (1, 2)
    ]
    assert shm_comm(sample, "reader")["notices"] == 2
    notified = comm_events(sample, "notified")
    assert [(e["notice"], e["channel"]) for e in notified] == [
        ("n-1", "tally"),
        ("n-1", "shared_memory"),
        ("n-2", "tally"),
        ("n-2", "shared_memory"),
    ]
    [reader_loop] = {e["loop"] for e in comm_events(sample, "read")}
    assert {e["loop"] for e in notified} == {reader_loop}


# -- reads, and a member that has ended ----------------------------------------------------------


def test_every_view_is_counted_and_a_range_and_the_news_come_back(log_dir: Path) -> None:
    scripts = {
        "writer": [
            sm("create", path=f"{BOARD}/a.md", file_text="one\ntwo\nthree"),
            sm("create", path=f"{BOARD}/b.md", file_text="B"),
            submit("w"),
        ],
        "reader": [
            pause(0.5, sm("view", path=f"{BOARD}/a.md", view_range=[2, 2])),
            sm("view", path="f-1"),
            sm("view", path=BOARD),
            sm("view", path=BOARD),
            submit("r"),
        ],
    }
    solver = swarm(
        members=[member(tally_worker, name="writer"), member(tally_worker, name="reader")],
        channels=["shared_memory"],
        controller=all_finish(),
    )
    sample = run_scripted(solver, scripts, log_dir)
    ranged, error = tool_results(sample, "shared_memory")[2]
    assert error is None
    # the range, and the news of the reader's own loop: the file it has not viewed yet
    assert ranged.split("\n\n", 1)[1] == (
        '<peer_file id="f-1" path="/shared_memory/a.md" version="1" writer="writer" '
        'record="w-1" lines="2-2">\n     2\ttwo\n</peer_file>\n\n'
        "Shared memory: 1 file changed since you last viewed it (f-2 new)."
    )
    assert shm_comm(sample, "reader") == {
        "records": 0,
        "record_bytes": 0,
        "rejections": {},
        "reads": 2,
        "listings": 2,
        "notices": 0,
    }
    [writer_loop] = {e["loop"] for e in comm_events(sample, "delivered")}
    reads = comm_events(sample, "read")
    assert [(r["listing"], r["member"]) for r in reads] == [(False, "reader")] * 2 + [
        (True, "reader")
    ] * 2
    [reader_loop] = {r["loop"] for r in reads}
    assert reader_loop and reader_loop != writer_loop
    assert reads[0]["files"] == [
        {"file": "f-1", "path": f"{BOARD}/a.md", "version": 1, "record": "w-1", "lines": [2, 2]}
    ]


LATE: list[str] = []


@agent
def leaves_a_write_behind() -> Agent:
    """A member that ends at once, leaving a task that writes a moment later."""

    async def execute(state: AgentState) -> AgentState:
        bus = current_bus()
        assert bus is not None

        async def later() -> None:
            await asyncio.sleep(0.3)
            try:
                bus.deliver(Draft(channel="shared_memory", kind="x", payload="", op={}), str)
            except ToolError as ex:
                LATE.append(str(ex))

        LATE.append("started")
        LATE_TASKS.append(asyncio.get_running_loop().create_task(later()))
        return state

    return execute


LATE_TASKS: list[asyncio.Task[None]] = []


def test_a_write_by_a_member_that_has_ended_is_refused(log_dir: Path) -> None:
    LATE.clear()
    scripts = {"stayer": [pause(1.0, submit("1"))]}
    solver = swarm(
        members=[member(leaves_a_write_behind, name="leaver"), member(tally_worker, name="stayer")],
        channels=["shared_memory"],
        controller=all_finish(),
    )
    sample = run_scripted(solver, scripts, log_dir)
    assert LATE == ["started", "leaver has ended."]
    assert comm_events(sample, "sent") == []


def test_a_channels_max_wait_under_a_second_is_the_longest_wait(log_dir: Path) -> None:
    scripts = {"*": [call("swarm_wait"), call("swarm_wait", timeout=30), submit("42")]}
    solver = swarm(
        members=[member(tally_worker, name="solo")], channels=["pulse"], plugins=tally_catalog()
    )
    sample = run_scripted(solver, scripts, log_dir)
    # the swarm's max_wait is the channels' longest, here 0.3 s (not a second)
    assert [w["timeout"] for w in comm_events(sample, "waited")] == [
        {"requested": None, "effective": 0.3},
        {"requested": 30.0, "effective": 0.3},
    ]
