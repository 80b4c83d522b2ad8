"""The ``fixture`` entry point of ``swarm-fixture-plugin``.

Only registration hooks live at module level: the module is loaded into every process that has
the distribution installed, so anything else here would run in every swarm.  The controller and
the channel implement their run-time hooks as methods and are registered on a run's own plugin
manager only when a topology names them.
"""

from __future__ import annotations

from swarm import (
    ConfigError,
    Decision,
    MemberSubmitted,
    MemberView,
    Register,
    SwarmView,
    first_submission,
    hookimpl,
)

__all__ = ["Bulletin", "Quorum", "bulletin", "quorum"]


class Quorum:
    """Start every member; once ``size`` have submitted, stop and answer with the earliest."""

    def __init__(self, size: int) -> None:
        self.size = size

    @hookimpl
    def swarm_start(self, view: SwarmView) -> Decision:
        return Decision(start=tuple(m.name for m in view.pending))

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        if len(view.submissions) < self.size:
            return None
        earliest = first_submission(view).member
        return Decision(stop="quorum", answer=earliest, reason="quorum")


def quorum(size: int = 2) -> Quorum:
    """Stop (reason ``controller:quorum``) once ``size`` members have submitted.

    Args:
        size: how many submissions make a quorum (a whole number >= 1).  With fewer
            submissions by the time every member has ended, the swarm ends ``all_done`` and
            the answer is the earliest submission, if any.
    """
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ConfigError(f"quorum.size: expected a whole number >= 1, got {size!r}")
    return Quorum(size)


class Bulletin:
    """A bulletin board channel; for now it only tells members where the board is."""

    name = "bulletin"

    def __init__(self, path: str) -> None:
        self.path = path

    @hookimpl
    def swarm_member_instructions(self, view: SwarmView, member: MemberView) -> str:
        return (
            f"Post what you learn on the bulletin board at {self.path}. "
            f"Sign each post as {member.name}."
        )


def bulletin(path: str = "/shared/bulletin.md") -> Bulletin:
    """A bulletin board at ``path`` that every member is told to post to.

    Args:
        path: where the board is (a non-empty string).
    """
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f"bulletin.path: expected a non-empty path, got {path!r}")
    return Bulletin(path)


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("quorum", quorum)


@hookimpl
def swarm_register_channels(register: Register) -> None:
    register("bulletin", bulletin)
