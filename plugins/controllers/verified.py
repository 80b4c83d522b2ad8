"""``verified``: stop at the first submission that passes a verifier, and answer with it."""

from __future__ import annotations

from typing import Any

from swarm import (
    Answer,
    ConfigError,
    Decision,
    MemberSubmitted,
    Register,
    SwarmView,
    first_submission,
    hookimpl,
)


class Verified:
    """Each submission is checked; the first that passes wins.  (Starting everyone and the
    ``all_done`` fallback are the kernel's default decisions.)"""

    def __init__(self, verifier: Any) -> None:
        self.verifier = verifier

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        if event.verified:
            return Decision(stop="verified", answer=event.member, reason="verified")
        return None

    @hookimpl
    def swarm_choose_answer(self, view: SwarmView) -> Answer:
        return first_submission(view)


def verified(verifier: Any = "task") -> Verified:
    """Check every submission; stop with ``verified`` at the first that passes.

    The passing member's submission is the answer (mode ``controller``, reason ``verified``).
    When no submission passes, the swarm ends ``all_done`` with the earliest submission.

    Args:
        verifier: ``"task"`` (the task's own scorers), the registry name of an Inspect scorer
            (``"match"``, ``"mypkg/checker"``), or a ``Scorer``.  A check passes when the first
            score is 1.0 under ``value_to_float()``.  Each check is a gate check of the member.
    """
    if verifier is None or (isinstance(verifier, str) and not verifier):
        raise ConfigError("verified.verifier: give 'task', a scorer name or a Scorer")
    if not isinstance(verifier, str) and not callable(verifier):
        raise ConfigError(f"verified.verifier: expected a scorer, got {verifier!r}")
    return Verified(verifier)


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("verified", verified)
