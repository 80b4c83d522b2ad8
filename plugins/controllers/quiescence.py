"""``quiescence``: let members work until nothing can change any more."""

from __future__ import annotations

import math

from swarm import (
    Answer,
    ConfigError,
    Decision,
    FinalRule,
    Quiescent,
    Register,
    SwarmView,
    first_submission,
    hookimpl,
    last_submission,
)


class Quiescence:
    """The swarm stops when all running members wait on each other or when nothing has
    happened for ``idle_seconds``.  (Starting everyone and ``all_done`` when every member has
    ended are the kernel's default decisions.)"""

    def __init__(self, idle_seconds: float, final: FinalRule) -> None:
        self.idle_seconds = idle_seconds
        self.final = final

    @hookimpl
    def swarm_on_quiescence(self, view: SwarmView, event: Quiescent) -> Decision:
        return Decision(stop="quiescence")

    @hookimpl
    def swarm_choose_answer(self, view: SwarmView) -> Answer:
        return last_submission(view) if self.final == "last" else first_submission(view)


def quiescence(idle_seconds: float = 60.0, final: FinalRule = "first") -> Quiescence:
    """Stop with ``quiescence`` when nothing can change.

    Nothing can change when every running member's own loop waits in ``swarm_wait``, or when
    no record, model call, member start or member end has happened for ``idle_seconds``.  A
    swarm whose members all end first stops ``all_done``.

    Args:
        idle_seconds: seconds of inactivity that count as quiescence (finite, > 0).
        final: the answer: ``"first"`` or ``"last"`` submission.
    """
    if isinstance(idle_seconds, bool) or not isinstance(idle_seconds, int | float):
        raise ConfigError(
            f"quiescence.idle_seconds: expected a number of seconds, got {idle_seconds!r}"
        )
    if not math.isfinite(idle_seconds) or idle_seconds <= 0:
        raise ConfigError(f"quiescence.idle_seconds: must be finite and > 0, got {idle_seconds!r}")
    if final not in ("first", "last"):
        raise ConfigError(f"quiescence.final: expected 'first' or 'last', got {final!r}")
    return Quiescence(float(idle_seconds), final)


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("quiescence", quiescence)
