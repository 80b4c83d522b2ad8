"""The narrow views of a run its services see, never the engine itself.

The engine implements them; a service (the bus, the waits, the wiring, a member's task) is
handed the port it needs, so each can be built and tested alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from inspect_ai.model import ModelUsage

from swarm.records import MemberView, SwarmView

if TYPE_CHECKING:
    from swarm._accounts.limit_errors import SwarmLimitError
    from swarm._run.members import RunMember
    from swarm.errors import SwarmError

__all__ = ["MemberHost", "RunPort", "SandboxPort", "UsageSink"]


class RunPort(Protocol):
    """The run as its services see it: its clock, its members, its own loops, its activity."""

    def now(self) -> float:
        """Seconds since the swarm started."""
        ...

    def view(self) -> SwarmView:
        """A frozen snapshot of the run now."""
        ...

    def member_view(self, name: str) -> MemberView:
        """The view of member ``name`` now."""
        ...

    def own_loop(self, member: str) -> str | None:
        """The member's own loop (agent span id), once bound."""
        ...

    def running(self) -> int:
        """How many members are running now."""
        ...

    def activity(self) -> None:
        """Something happened (a record, a model call, a member start or end)."""
        ...

    def refused(self, member: str | None) -> SwarmLimitError | None:
        """The limit error ``member``'s new model calls are refused with (the share it spends
        from is used up, the swarm is stopping, the member is torn down), or ``None``."""
        ...


class UsageSink(Protocol):
    """Where the model-call hooks report: a completed call's usage, and whether new calls are
    refused (a share used up, the swarm stopping)."""

    def record_usage(self, member: str | None, usage: ModelUsage) -> None:
        """Meter a completed call; raise the limit error its member must end with."""
        ...

    def refused(self, member: str | None) -> SwarmLimitError | None:
        """The limit error ``member``'s new model calls are refused with (the share it spends
        from is used up, the swarm is stopping, or its parent ended), else ``None``."""
        ...

    def member(self, name: str) -> RunMember:
        """The member called ``name`` (a bridged call marks it bridged, or halts it)."""
        ...


class MemberHost(Protocol):
    """What a member's task needs of the run: its clock, the member's text, the end of the
    member, and the run's failure."""

    def now(self) -> float:
        """Seconds since the swarm started."""
        ...

    def preamble(self, member: RunMember) -> str:
        """The text appended to the member's input."""
        ...

    def member_ended(self, member: RunMember, status: str, *, decide: bool) -> None:
        """The member ended with ``status`` (``decide``: ask the decision hooks)."""
        ...

    def fail(self, error: SwarmError) -> None:
        """End the run as failed with ``error``."""
        ...

    def sync_usage(self, member: str, usage: ModelUsage) -> None:
        """Bring the member's meter up to Inspect's record of what it spent."""
        ...


class SandboxPort(Protocol):
    """Where a member's task gets its own sandbox environment (``sandboxes.MemberSandboxes``)."""

    async def enter(self, member: str, environment: str | None) -> None:
        """Make the member's environment (``environment``, the sample's that it names, or its
        own with ``per_member``) the only sandbox of the calling task."""
        ...

    def problem(self, environment: str, who: str) -> str | None:
        """Why the run cannot give ``who`` the sample's ``environment`` it names, or
        ``None``."""
        ...
