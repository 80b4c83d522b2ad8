"""The limit errors the swarm raises into a member's model call, and the status each gives.

They are ``LimitExceededError``s, so Inspect and agents treat them like any other limit; the
runtime recognises them by class and never lets them end the sample.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai.util import LimitExceededError

__all__ = [
    "MemberLimitReached",
    "ShareExhausted",
    "SwarmCapReached",
    "SwarmLimitError",
    "SwarmStopped",
]

LimitKind = Literal["token", "cost"]


def _fmt(kind: LimitKind, value: float) -> str:
    return f"${value:.4f}" if kind == "cost" else f"{int(value):,}"


class SwarmLimitError(LimitExceededError):
    """Base class: ``status`` is what the member's status becomes."""

    status: str = "stopped"


class SwarmStopped(SwarmLimitError):
    """The swarm is stopping: no new model call starts (calls in flight finish)."""

    status = "stopped"

    def __init__(self, reason: str) -> None:
        super().__init__("custom", value=0, limit=0, message=f"Stopped by the swarm: {reason}")


class SwarmCapReached(SwarmLimitError):
    """The swarm's token or cost cap was reached by this member's call."""

    status = "swarm_cap"

    def __init__(self, kind: LimitKind, value: float, limit: float) -> None:
        super().__init__(
            kind,
            value=value,
            limit=limit,
            message=f"Swarm {kind} cap reached. value: {_fmt(kind, value)}; "
            f"limit: {_fmt(kind, limit)}",
        )


class ShareExhausted(SwarmLimitError):
    """The member used up its share of a split budget."""

    status = "share"

    def __init__(self, member: str, kind: LimitKind, value: float, limit: float) -> None:
        super().__init__(
            kind,
            value=value,
            limit=limit,
            message=f"Swarm member '{member}' {kind} share reached. value: "
            f"{_fmt(kind, value)}; limit: {_fmt(kind, limit)}",
        )


class MemberLimitReached(SwarmLimitError):
    """The member's own token or cost limit was reached."""

    def __init__(self, member: str, kind: LimitKind, value: float, limit: float) -> None:
        super().__init__(
            kind,
            value=value,
            limit=limit,
            message=f"Swarm member '{member}' {kind} limit reached. value: "
            f"{_fmt(kind, value)}; limit: {_fmt(kind, limit)}",
        )
        self.status = f"member_limit:{kind}"
