"""Which member the calling task acts for.

Set by the runtime in each member's task; inherited by everything the member awaits or starts
(subagents, tools, model calls), which is how model calls and channel writes are attributed to a
member without trusting anything a model wrote.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any

from swarm.records import MemberInfo

__all__ = [
    "BoundContexts",
    "background_context",
    "bind_contexts",
    "current_member",
    "member_context",
]

member_context: ContextVar[MemberInfo | None] = ContextVar("swarm_member", default=None)

# set in a member's background work (``background.BackgroundOwner``): never its own loop
background_context: ContextVar[bool] = ContextVar("swarm_background", default=False)


def current_member() -> MemberInfo | None:
    """The member the calling task acts for (its subagents included), or ``None``."""
    return member_context.get()


class BoundContexts:
    """Context variables set for one run, reset together when it ends."""

    def __init__(self, tokens: list[tuple[ContextVar[Any], Token[Any]]]) -> None:
        self._tokens = tokens

    def reset(self) -> None:
        """Put every variable back as it was."""
        for var, token in reversed(self._tokens):
            var.reset(token)


def bind_contexts(*pairs: tuple[ContextVar[Any], Any]) -> BoundContexts:
    """Set each context variable to its value (each service's own variable, for the run)."""
    return BoundContexts([(var, var.set(value)) for var, value in pairs])
