"""The run's members: each one's mutable state, and the roster, which can grow while it runs.

A member's ``view`` (the frozen ``MemberView`` decision hooks see) is rebuilt on demand after any
change to what it shows, so no code has to remember to refresh it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from shortuuid import uuid as shortuuid

from swarm._spec.roster import Bridge, MemberSpec, RosterEntry
from swarm.records import Delivery, MemberInfo, MemberState, MemberView

if TYPE_CHECKING:
    import anyio
    from inspect_ai.agent import AgentState

    from swarm._inspect.private import UsageTap

__all__ = ["BackgroundCounts", "Roster", "RunMember"]


class BackgroundCounts(Protocol):
    """What the records read of a member's background work (``background.BackgroundOwner``)."""

    started: int
    cancelled: int


# the attributes a MemberView shows: changing one makes the view stale
_VIEWED = frozenset(
    {
        "info",
        "state",
        "status",
        "started",
        "ended",
        "delivery",
        "gate_checks",
        "gate_passes",
        "bridged",
        "answer",
        "verified",
    }
)


class RunMember:
    """The runtime's mutable record of one member."""

    __slots__ = (
        "_at",
        "_on_change",
        "_view",
        "agent_state",
        "agent_status",
        "answer",
        "answer_chars",
        "background",
        "bridged",
        "delivery",
        "done",
        "ended",
        "entry",
        "error",
        "exception",
        "first_pass_time",
        "gate_checks",
        "gate_passes",
        "halted",
        "info",
        "scope",
        "span_id",
        "started",
        "state",
        "status",
        "tap",
        "task",
        "torn_down",
        "verified",
        "work_cancelled",
    )

    def __init__(self, entry: RosterEntry) -> None:
        self._view: MemberView | None = None
        self._at = 0  # its position in its roster
        self._on_change: Callable[[RunMember], None] | None = None
        self.entry = entry
        self.info: MemberInfo = entry.info
        self.state: MemberState = "pending"
        self.status: str | None = None
        self.started: float | None = None
        self.ended: float | None = None
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.gate_checks = 0
        self.gate_passes = 0
        self.first_pass_time: float | None = None
        self.verified: bool | None = None
        # the text it submitted (cut at ANSWER_MAX_CHARS) and its full length, once it submits
        self.answer: str | None = None
        self.answer_chars: int | None = None
        self.scope: anyio.CancelScope | None = None
        self.agent_state: AgentState | None = None
        # the status its agent returned with (kept when a hard stop cuts its background drain)
        self.agent_status: str | None = None
        self.background: BackgroundCounts | None = None  # its background work, once it starts
        self.work_cancelled = False  # the swarm cancelled its work (a hard stop, the drain's end)
        self.delivery: Delivery | None = None
        # how its agent reaches its model through Inspect's agent bridge: as declared, or as
        # its first bridged call showed (``None``: not bridged)
        self.bridged: Bridge | None = entry.spec.bridged
        # the status it ends with when the swarm cancelled it in place of raising into a call
        # (a sandbox-bridged member's: a limit raised there would end the whole sample)
        self.halted: str | None = None
        self.span_id = f"swarm-member-{shortuuid()}"
        self.tap: UsageTap | None = None
        # a spawned member's task (its whole input), and whether its parent's end tears it down
        self.task: str | None = None
        self.torn_down = False
        self.done: anyio.Event | None = None  # set when it ends, once someone waits for that

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _VIEWED:
            object.__setattr__(self, "_view", None)
            if self._on_change is not None:
                self._on_change(self)

    def ended_event(self) -> anyio.Event:
        """An event set when the member ends (already set if it has): made on first use, in
        the run's event loop."""
        import anyio

        if self.done is None:
            self.done = anyio.Event()
            if self.state == "ended":
                self.done.set()
        return self.done

    @property
    def name(self) -> str:
        """The member's name."""
        return self.info.name

    @property
    def view(self) -> MemberView:
        """The member as decision hooks see it now."""
        view = self._view
        if view is None:
            info = self.info
            view = MemberView(
                name=info.name,
                role=info.role,
                index=info.index,
                parent=info.parent,
                depth=info.depth,
                state=self.state,
                status=self.status,
                started=self.started,
                ended=self.ended,
                delivery=self.delivery or info.delivery,
                gate_checks=self.gate_checks,
                gate_passes=self.gate_passes,
                bridged=self.bridged is not None,
                answer=self.answer,
                verified=self.verified,
            )
            object.__setattr__(self, "_view", view)
        return view


class Roster:
    """Every member of one run, in the order they joined: the roster's, then any that join
    while it runs (``add``).  Names are unique."""

    def __init__(self, entries: Sequence[RosterEntry]) -> None:
        self.members: list[RunMember] = []
        self._by_name: dict[str, RunMember] = {}
        # each name's position in ``members``: append-only, so every view shares it
        self.positions: dict[str, int] = {}
        self._counts = {"pending": 0, "running": 0, "ended": 0}
        # every member's view, kept up to date from the members that changed since the last
        # call of ``views`` (a view is taken on every write and turn: rebuilding all of them
        # each time would cost the roster's size per step)
        self._kept: list[MemberView] = []
        self._stale: dict[int, RunMember] = {}
        self._views: tuple[MemberView, ...] | None = None  # the tuple of _kept, until a change
        self._variant: dict[str, int] = {}  # per wanted name: the variant free_name found last
        for entry in entries:
            self._append(RunMember(entry))

    def _append(self, member: RunMember) -> RunMember:
        if member.name in self._by_name:
            raise ValueError(f"member name {member.name!r} is taken")
        member._at = self.positions[member.name] = len(self.members)
        self.members.append(member)
        self._by_name[member.name] = member
        self._kept.append(member.view)
        self._counts[member.state] += 1
        member._on_change = self._changed
        self._views = None
        return member

    def _changed(self, member: RunMember) -> None:
        self._stale[member._at] = member
        self._views = None

    def add(
        self,
        spec: MemberSpec,
        name: str,
        *,
        parent: str | None,
        depth: int,
        role: str | None = None,
        delivery: Delivery | None = None,
    ) -> RunMember:
        """A new member joining the running swarm, at the end of the roster.

        ``ValueError`` when the name is taken (callers pick a free one: ``free_name``).
        """
        info = MemberInfo(
            name=name,
            role=role if role is not None else spec.role,
            index=len(self.members),
            parent=parent,
            depth=depth,
            delivery=delivery if delivery is not None else spec.delivery,
        )
        return self._append(RunMember(RosterEntry(spec=spec, info=info)))

    def free_name(self, wanted: str) -> str:
        """``wanted`` if no member has it, else ``wanted~2``, ``wanted~3``... (the first free):
        never a name a member has, however many times ``wanted`` was taken."""
        if wanted not in self._by_name:
            return wanted
        # names are never given back, so every variant below the one found last is still taken:
        # the search goes on from there (from ~2 each time, n spawns of a name cost O(n^2))
        n = self._variant.get(wanted, 2)
        while f"{wanted}~{n}" in self._by_name:
            n += 1
        self._variant[wanted] = n
        return f"{wanted}~{n}"

    def __iter__(self) -> Iterator[RunMember]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __getitem__(self, name: str) -> RunMember:
        return self._by_name[name]

    def get(self, name: str | None) -> RunMember | None:
        """The member called ``name``, or ``None``."""
        return None if name is None else self._by_name.get(name)

    def views(self) -> tuple[MemberView, ...]:
        """Every member's view, in roster order (built again only after a change: a swarm's
        view is taken on every write and turn, whatever the number of members)."""
        if self._views is None:
            kept = self._kept
            for at, member in self._stale.items():
                kept[at] = member.view
            self._stale.clear()
            self._views = tuple(kept)
        return self._views

    def counts(self) -> dict[str, int]:
        """How many members are in each state now (a copy)."""
        return dict(self._counts)

    @property
    def running(self) -> int:
        """How many members are running now."""
        return self._counts["running"]

    def mark_running(self, member: RunMember, at: float) -> None:
        """``member`` starts running at ``at`` (its task, when it opens the member's agent span,
        takes its start again then)."""
        self._moved(member, "running")
        member.started = at

    def mark_ended(self, member: RunMember, status: str, at: float) -> None:
        """``member`` ended at ``at`` with ``status``."""
        self._moved(member, "ended")
        member.status = status
        member.ended = at
        if member.done is not None:
            member.done.set()

    def _moved(self, member: RunMember, state: MemberState) -> None:
        self._counts[member.state] -= 1
        self._counts[state] += 1
        member.state = state

    def any_pending(self) -> bool:
        """Whether some member has not started."""
        return self._counts["pending"] > 0
