"""How a member ended, read from what its agent raised; what ended a run from outside; why a
member's new model calls are refused."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import attrs
from inspect_ai.util import LimitExceededError

from swarm._accounts.accounts import Accounts
from swarm._accounts.limit_errors import SwarmLimitError, SwarmStopped
from swarm._run.members import Roster, RunMember
from swarm.errors import MemberErrors, PluginError

__all__ = [
    "AgentEnd",
    "classify",
    "ended_by",
    "every_member_errored",
    "interrupted_status",
    "leaves",
    "log_others",
    "refusal_of",
]

logger = logging.getLogger("swarm")


def leaves(ex: BaseException) -> list[BaseException]:
    """The exceptions inside ``ex``, exception groups flattened."""
    if isinstance(ex, BaseExceptionGroup):
        return [leaf for sub in ex.exceptions for leaf in leaves(sub)]
    return [ex]


@attrs.frozen(kw_only=True)
class AgentEnd:
    """What an exception out of a member's agent means.

    ``status`` is the member's status; ``error`` the member's own error (for ``errored``);
    ``propagate``: the exception is not the member's to keep (a sample limit, a plugin's
    fault) and must go on to end the run.
    """

    status: str | None = None
    error: BaseException | None = None
    propagate: bool = False


def classify(ex: Exception) -> AgentEnd:
    """The meaning of ``ex``, raised by a member's agent."""
    found = leaves(ex)
    if any(isinstance(leaf, PluginError) for leaf in found):
        return AgentEnd(propagate=True)  # a plugin's fault fails the run, never the member
    ours = [leaf for leaf in found if isinstance(leaf, SwarmLimitError)]
    if ours and len(ours) == len(found):
        # a cap, share or own limit outranks a stop that other members caused
        status = next((e.status for e in ours if not isinstance(e, SwarmStopped)), "stopped")
        return AgentEnd(status=status)
    limits = [leaf for leaf in found if isinstance(leaf, LimitExceededError)]
    if limits and len(limits) == len(found):
        if all(leaf.type == "custom" and leaf.source is None for leaf in limits):
            return AgentEnd(status="member_limit:custom")
        return AgentEnd(propagate=True)  # a sample limit ends the whole sample, as in Inspect
    return AgentEnd(status="errored", error=ex if len(found) > 1 else found[0])


def refusal_of(
    accounts: Accounts, stop: str | None, member: RunMember | None
) -> SwarmLimitError | None:
    """The error ``member``'s new model calls are refused with, or ``None``.

    The share it spends from is used up (``ShareExhausted``: status ``share``, its own limit,
    which outranks a stop); the swarm is stopping (``stop`` is its reason); or the member is
    torn down (its parent ended).  Both of the latter are ``SwarmStopped`` (status ``stopped``).
    """
    if member is not None and member.name in accounts.members:
        used_up = accounts.share_used_up(member.name)
        if used_up is not None:
            return used_up
    if stop is not None:
        return SwarmStopped(stop)
    return SwarmStopped("parent_ended") if member is not None and member.torn_down else None


def interrupted_status(ex: BaseException) -> AgentEnd:
    """How a member ends when the run ends under it: ``errored`` if its own call tripped a
    sample limit (the call completed and is metered), else ``cancelled``."""
    for leaf in leaves(ex):
        if isinstance(leaf, LimitExceededError) and not isinstance(leaf, SwarmLimitError):
            return AgentEnd(status="errored", error=leaf)
    return AgentEnd(status="cancelled")


def ended_by(ex: BaseException, limits: Any) -> str:
    """What ended the swarm from outside: a sample limit, or unknown."""
    for leaf in leaves(ex):
        if isinstance(leaf, LimitExceededError) and not isinstance(leaf, SwarmLimitError):
            return f"sample_limit:{leaf.type}"
    time = limits.time
    if time.limit is not None and time.remaining is not None and time.remaining <= 0:
        return "sample_limit:time"
    return "unknown"


def log_others(ex: BaseException, failure: BaseException) -> None:
    """Log what else ended the run besides the failure that becomes the sample's error."""
    for leaf in leaves(ex):
        if leaf is not failure and not isinstance(leaf, anyio.get_cancelled_exc_class()):
            logger.error("swarm: also raised while the run failed: %r", leaf)


def every_member_errored(roster: Roster) -> MemberErrors | None:
    """The sample's error when every member that started ended ``errored``, else ``None``."""
    started = [m for m in roster if m.started is not None]
    if not started or any(m.status != "errored" for m in started):
        return None
    error = MemberErrors(
        {m.name: m.error or "unknown error" for m in started},
        "every member of the swarm errored",
    )
    error.__cause__ = started[0].exception
    return error
