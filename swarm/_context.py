"""Context variables: which swarm run and which member the current task belongs to.

Set by the runtime in each member's task; inherited by everything the member awaits or starts
(subagents, tools, model calls), which is how model calls and channel writes are attributed to
a member without trusting anything a model wrote.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

from swarm.records import MemberInfo

if TYPE_CHECKING:
    from swarm._run import SwarmRun

__all__ = ["current_member", "current_run"]

_RUN: ContextVar[SwarmRun | None] = ContextVar("swarm_run", default=None)
_MEMBER: ContextVar[MemberInfo | None] = ContextVar("swarm_member", default=None)


def current_run() -> SwarmRun | None:
    """The swarm run the calling task belongs to, or ``None`` outside a swarm."""
    return _RUN.get()


def current_member() -> MemberInfo | None:
    """The member the calling task acts for (its subagents included), or ``None``."""
    return _MEMBER.get()
