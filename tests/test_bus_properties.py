"""Property tests: random shared-memory command sequences from several members and loops,
through the real bus (stamping, admission, rate control, counters) and the real channel.

Checks: bounds never exceeded, versions only grow, every accepted write is visible to a later
view, every rejection is counted exactly once (per member, channel and control).
"""

from __future__ import annotations

import re
from contextvars import copy_context
from typing import Any

import pluggy
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.tool import ToolError
from inspect_ai.util._span import _current_agent_span_id

from swarm import hookspecs
from swarm._hooks.calls import RunHooks
from swarm._run.bus import Bus, ChannelSettings, RateControl, bus_context
from swarm._run.identity import member_context
from swarm._run.ports import RunPort
from swarm.plugins.channels.shared_memory import SharedMemory, shared_memory
from swarm.records import MemberInfo, MemberView, SwarmView

MEMBERS = ("ann", "bob", "cy")
PATHS = ("/shared_memory/a.md", "/shared_memory/d/b.md", "/shared_memory/d", "/shared_memory/../x")


class FakeRun:
    """The run as the bus sees it (its ``RunPort``), with every member running."""

    def __init__(self, channel: SharedMemory) -> None:
        channels = [("shared_memory", channel)]
        settings = ChannelSettings.of(channels)
        rate = RateControl(settings.rates, self.now)
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        pm.register(channel, name="channel:shared_memory")
        pm.register(rate, name="swarm:rate")
        self.hooks = RunHooks(pm)
        port: RunPort = self  # the bus needs nothing of the run but its port
        self.bus = Bus(port, self.hooks, channels, rate)
        self.clock = 0.0

    def running(self) -> int:
        return len(MEMBERS)

    def own_loop(self, member: str) -> str:
        return f"{member}/own"

    def member_view(self, name: str) -> MemberView:
        return MemberView(
            name=name,
            role=None,
            index=0,
            parent=None,
            depth=0,
            state="running",
            status=None,
            started=0.0,
            ended=None,
        )

    def view(self) -> SwarmView:
        return SwarmView(members=tuple(self.member_view(m) for m in MEMBERS), time=self.clock)

    def now(self) -> float:
        return self.clock

    def activity(self) -> None:
        pass


def act(
    run: FakeRun, channel: SharedMemory, member: str, loop: str, command: str, args: dict[str, Any]
) -> tuple[str | None, str | None]:
    """Run one tool call as ``member`` in ``loop``: (result, error)."""

    def call() -> tuple[str | None, str | None]:
        bus_context.set(run.bus)
        member_context.set(MemberInfo(name=member))
        _current_agent_span_id.set(loop)
        try:
            return channel.run(command, {"command": command, **args}), None
        except ToolError as ex:
            return None, str(ex)

    return copy_context().run(call)


command = st.one_of(
    st.tuples(
        st.just("create"),
        st.fixed_dictionaries(
            {"path": st.sampled_from(PATHS), "file_text": st.text("ab\n<", max_size=30)}
        ),
    ),
    st.tuples(
        st.just("append"),
        st.fixed_dictionaries(
            {
                "path": st.sampled_from(PATHS),
                "append_text": st.text("ab\n", min_size=1, max_size=30),
            }
        ),
    ),
    st.tuples(
        st.just("str_replace"),
        st.fixed_dictionaries(
            {
                "path": st.sampled_from(PATHS),
                "old_str": st.sampled_from(["a", "ab", "b"]),
                "new_str": st.text("xy", max_size=3),
            }
        ),
    ),
    st.tuples(
        st.just("insert"),
        st.fixed_dictionaries(
            {
                "path": st.sampled_from(PATHS),
                "insert_line": st.integers(0, 3),
                "insert_text": st.text("z", min_size=1, max_size=3),
            }
        ),
    ),
    st.tuples(st.just("delete"), st.fixed_dictionaries({"path": st.sampled_from(PATHS)})),
    st.tuples(
        st.just("rename"),
        st.fixed_dictionaries(
            {"old_path": st.sampled_from(PATHS), "new_path": st.sampled_from(PATHS)}
        ),
    ),
    st.tuples(
        st.just("view"),
        st.fixed_dictionaries({"path": st.sampled_from([*PATHS, "/shared_memory", "f-1", "f-2"])}),
    ),
)
step = st.tuples(st.sampled_from(MEMBERS), st.booleans(), command)

VERSION = re.compile(r'id="(f-\d+)" path="([^"]+)" version="(\d+)"')


@settings(max_examples=80, deadline=None)
@given(st.lists(step, min_size=1, max_size=40))
def test_random_commands_through_the_bus(steps: list[Any]) -> None:
    channel = shared_memory(
        max_files=3, max_file_bytes=60, max_file_lines=4, max_board_bytes=120, rate=[6, 1000.0]
    )
    run = FakeRun(channel)
    errors: dict[str, int] = {}
    written: dict[str, str] = {}
    versions: dict[str, int] = {}
    for member, nested, (cmd, args) in steps:
        loop = f"{member}/{'sub' if nested else 'own'}"
        out, error = act(run, channel, member, loop, cmd, dict(args))
        if cmd != "view" and error is not None:
            errors[member] = errors.get(member, 0) + 1
        # bounds hold after every step
        files = [f for f in channel.board.files() if f.content is not None]
        assert len(files) <= 3
        assert sum(len(f.content.encode()) for f in files) <= 120  # type: ignore[union-attr]
        for f in files:
            assert len(f.content.encode()) <= 60  # type: ignore[union-attr]
            assert len(f.content.splitlines()) <= 4  # type: ignore[union-attr]
        # versions only grow
        for f in channel.board.files():
            assert f.version >= versions.get(f.id, 0)
            versions[f.id] = f.version
        if error is None and cmd != "view":
            for f in files:
                written[f.id] = f.content  # type: ignore[assignment]
        # every accepted write is visible to a later view
        if out is not None and cmd == "view":
            for file_id, _path, version in VERSION.findall(out):
                current = channel.board.get(file_id)
                assert current is not None and current.version == int(version)
    for f in channel.board.files():
        if f.content is not None:
            out, error = act(run, channel, "ann", "ann/check", "view", {"path": f.id})
            assert error is None and out is not None
            for line in f.content.splitlines():
                assert line in out
    # every rejection counted once, by control
    for member in MEMBERS:
        counts = run.bus.counts.get((member, "shared_memory"))
        counted = sum(counts.rejections.values()) if counts else 0
        assert counted == errors.get(member, 0)


def test_the_property_test_meets_every_kind_of_rejection() -> None:
    """The sequences above can reach each control: shown here on fixed sequences."""
    channel = shared_memory(
        max_files=3, max_file_bytes=60, max_file_lines=100, max_board_bytes=120, rate=[6, 1000.0]
    )
    run = FakeRun(channel)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("create", {"path": PATHS[3], "file_text": "x"}),  # path
        ("create", {"path": PATHS[0], "file_text": "<peer_file"}),  # fence
        ("create", {"path": PATHS[0], "file_text": "a"}),
        ("append", {"path": PATHS[0], "append_text": "b" * 70}),  # max_file_bytes
        *[("append", {"path": PATHS[0], "append_text": "b"}) for _ in range(6)],  # rate at the 6th
    ]
    for cmd, args in steps:
        act(run, channel, "ann", "ann/own", cmd, args)
    # bob, whose loop never viewed f-1, cannot replace it
    act(run, channel, "bob", "bob/own", "create", {"path": PATHS[0], "file_text": "mine"})
    ann = run.bus.counts[("ann", "shared_memory")].rejections
    bob = run.bus.counts[("bob", "shared_memory")].rejections
    assert {"path", "fence", "max_file_bytes", "rate"} <= set(ann), ann
    assert ann == {"path": 1, "fence": 1, "max_file_bytes": 1, "rate": 1}
    assert bob == {"unviewed": 1}
