"""Which member the calling task acts for.

Set by the runtime in each member's task; inherited by everything the member awaits or starts
(subagents, tools, model calls), which is how model calls and channel writes are attributed to a
member without trusting anything a model wrote.
"""

from __future__ import annotations

from contextvars import ContextVar

from swarm.records import MemberInfo

__all__ = ["current_member", "member_context"]

member_context: ContextVar[MemberInfo | None] = ContextVar("swarm_member", default=None)


def current_member() -> MemberInfo | None:
    """The member the calling task acts for (its subagents included), or ``None``."""
    return member_context.get()
