"""``leaderless``: everyone starts at once; stop at the first submission or when all are done."""

from __future__ import annotations

from swarm import (
    Answer,
    ConfigError,
    Decision,
    FinalRule,
    MemberSubmitted,
    Register,
    SwarmView,
    first_submission,
    hookimpl,
    last_submission,
)


class Leaderless:
    """The leaderless controller.  Configuration only: every decision reads the snapshot.

    Starting every member and stopping ``all_done`` when none is left running are the
    kernel's default decisions, so this controller only decides the stop at a submission and
    the answer.
    """

    def __init__(self, stop_on_submission: bool, final: FinalRule) -> None:
        self.stop_on_submission = stop_on_submission
        self.final = final

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        # a spawned member's submission answers its parent's task: it stops nothing
        if not self.stop_on_submission or view.member(event.member).depth > 0:
            return None
        return Decision(stop="submitted")

    @hookimpl
    def swarm_choose_answer(self, view: SwarmView) -> Answer:
        return last_submission(view) if self.final == "last" else first_submission(view)


def leaderless(stop_on_submission: bool = True, final: FinalRule = "first") -> Leaderless:
    """Start every member at once.

    Args:
        stop_on_submission: stop the swarm (reason ``submitted``) at the first submission;
            when false, let every member finish (reason ``all_done``).
        final: the answer: ``"first"`` (earliest submission) or ``"last"`` (latest; needs
            ``stop_on_submission=False``).
    """
    if not isinstance(stop_on_submission, bool):
        raise ConfigError(
            f"leaderless.stop_on_submission: expected true or false, got {stop_on_submission!r}"
        )
    if final not in ("first", "last"):
        raise ConfigError(f"leaderless.final: expected 'first' or 'last', got {final!r}")
    if final == "last" and stop_on_submission:
        raise ConfigError(
            "leaderless.final: 'last' needs stop_on_submission=False (with a stop at the first "
            "submission the last is the first)"
        )
    return Leaderless(stop_on_submission, final)


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("leaderless", leaderless)
