"""What a sent model call marks seen, read from the end of its input: only what is new since
the member's last call is read, and a result or notice anywhere in the input is still seen."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextvars import copy_context
from typing import overload

import pluggy
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.util._span import _current_agent_span_id

from swarm import hookspecs
from swarm._hooks.calls import RunHooks
from swarm._run.bus import Bus, RateControl, bus_context
from swarm._run.identity import member_context
from swarm.records import MemberInfo


class Clock:
    """The run as the bus sees it here: its clock and the lead's own loop."""

    def __init__(self) -> None:
        self.clock = 1.5

    def now(self) -> float:
        return self.clock

    def own_loop(self, member: str) -> str:
        return f"{member}/own"


class Reads(Sequence[ChatMessage]):
    """A model input that counts the messages read from it."""

    def __init__(self, messages: list[ChatMessage]) -> None:
        self.messages = messages
        self.read = 0

    @overload
    def __getitem__(self, i: int) -> ChatMessage: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[ChatMessage]: ...
    def __getitem__(self, i: int | slice) -> ChatMessage | Sequence[ChatMessage]:
        self.read += 1
        return self.messages[i]

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[ChatMessage]:
        for m in self.messages:
            self.read += 1
            yield m

    def __reversed__(self) -> Iterator[ChatMessage]:
        for m in reversed(self.messages):
            self.read += 1
            yield m


def make_bus() -> Bus:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    clock = Clock()
    return Bus(clock, RunHooks(pm), [], RateControl({}, clock.now))  # type: ignore[arg-type]  # the bus reads only these two here


def shown(bus: Bus, text: str, seen: list[float]) -> None:
    """``text`` returned as a tool result of ``lead``'s own loop."""

    def call() -> None:
        bus_context.set(bus)
        member_context.set(MemberInfo(name="lead"))
        _current_agent_span_id.set("lead/own")
        bus.when_sent(text, seen.append)

    copy_context().run(call)


def conversation(turns: int) -> list[ChatMessage]:
    messages: list[ChatMessage] = [ChatMessageUser(content="task")]
    for i in range(turns):
        messages += [ChatMessageAssistant(content=""), ChatMessageTool(content=f"result {i}")]
    return messages


def test_a_call_reads_only_what_is_new_since_the_last() -> None:
    bus = make_bus()
    seen: list[float] = []
    shown(bus, "result 99", seen)
    messages = Reads(conversation(100))
    bus.sending("lead", messages)
    assert seen == [1.5]
    assert messages.read == 1  # not the 201 messages of the conversation


def test_a_result_early_in_the_input_is_still_seen() -> None:
    bus = make_bus()
    early: list[float] = []
    late: list[float] = []
    shown(bus, "result 3", early)
    shown(bus, "result 7", late)
    bus.sending("lead", conversation(10))
    assert early == late == [1.5]


def test_a_result_no_call_holds_is_not_seen_and_stays_unseen() -> None:
    bus = make_bus()
    seen: list[float] = []
    shown(bus, "never sent", seen)
    bus.sending("lead", conversation(5))
    assert seen == []
    bus.sending("lead", [*conversation(5), ChatMessageTool(content="never sent")])
    assert seen == [1.5]


def test_every_call_sent_is_counted_per_member_and_a_seen_callback_sees_its_number() -> None:
    """``calls_sent`` counts each member's calls as they are sent, a call that carries nothing
    new too (the early return), and is already that call's number in its ``seen`` callbacks."""
    bus = make_bus()

    class Numbers(list[float]):
        def append(self, time: float) -> None:  # the call's number, not its time
            super().append(bus.calls_sent("lead"))

    numbers = Numbers()
    assert bus.calls_sent("lead") == 0
    bus.sending("lead", conversation(1))  # nothing to see
    bus.sending("a", conversation(1))
    shown(bus, "result 1", numbers)
    bus.sending("lead", conversation(2))
    bus.sending("lead", conversation(2))
    assert (bus.calls_sent("lead"), bus.calls_sent("a"), bus.calls_sent("b")) == (3, 1, 0)
    assert numbers == [2]
