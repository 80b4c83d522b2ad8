"""The kernel's default decisions, as ``trylast`` implementations any plugin can override."""

from __future__ import annotations

from swarm.hookspecs import hookimpl
from swarm.records import Answer, Decision, Delivery, MemberEnded, MemberView, SwarmView

__all__ = ["KernelDefaults", "first_submission", "last_submission"]


def _candidates(view: SwarmView) -> list[MemberView]:
    # a spawned member's submission answers its parent's task, not the sample's
    return [m for m in view.submissions if m.depth == 0]


def first_submission(view: SwarmView) -> Answer:
    """The earliest submission of a roster member (ties by roster order), or no answer.

    Spawned members' submissions answer their parents' tasks and are never the swarm's answer.
    """
    subs = sorted(_candidates(view), key=lambda m: (m.ended or 0.0, m.index))
    if not subs:
        return Answer(member=None, mode=None, reason="no_submissions")
    return Answer(member=subs[0].name, mode="first")


def last_submission(view: SwarmView) -> Answer:
    """The latest submission of a roster member (ties by roster order), or no answer."""
    subs = sorted(_candidates(view), key=lambda m: (-(m.ended or 0.0), m.index))
    if not subs:
        return Answer(member=None, mode=None, reason="no_submissions")
    return Answer(member=subs[0].name, mode="last")


class KernelDefaults:
    """Start everyone, stop when nobody is left, answer with the first submission."""

    @hookimpl(trylast=True)
    def swarm_start(self, view: SwarmView) -> Decision:
        return Decision(start=tuple(m.name for m in view.pending))

    @hookimpl(trylast=True)
    def swarm_on_member_end(self, view: SwarmView, event: MemberEnded) -> Decision | None:
        if view.count("running"):
            return None
        return Decision(stop="all_done")

    @hookimpl(trylast=True)
    def swarm_choose_answer(self, view: SwarmView) -> Answer:
        return first_submission(view)

    @hookimpl(trylast=True)
    def swarm_delivery_mode(self, view: SwarmView, member: MemberView) -> Delivery:
        return member.delivery or ("poll" if member.bridged else "notify")
