"""The swarm's answer: which member's submission it is, and the output it gives the sample.

A controller's explicit ``Decision(answer=...)`` wins; otherwise ``swarm_choose_answer`` decides
once, when the members have ended (on an interrupted run, as the records are written: the answer
as of its end, provisional).  An answer of mode
``synthesize`` names no member: the final step (``final_step``) writes it when the members end,
and what it gave (or why it gave nothing) is then the answer.

Each member's own answer is the text of its final output (``output.completion``: with react()'s
``submit()`` tool, what react made of the submitted answer), kept when it submits.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from inspect_ai.agent import AgentState
from inspect_ai.model import ChatMessage, ModelOutput

from swarm._hooks.calls import RunHooks
from swarm._run.members import Roster, RunMember
from swarm.errors import PluginError
from swarm.records import ANSWER_MAX_CHARS, INFO_SOURCE, Answer, MemberSubmitted, SwarmView

__all__ = ["AnswerChoice", "bounded", "keep_answer", "submission"]

logger = logging.getLogger("swarm")

NO_ANSWER = Answer(member=None, mode=None, reason="no_submissions")


def bounded(text: str | None) -> tuple[str | None, int | None]:
    """``text`` cut at ``ANSWER_MAX_CHARS``, and its full length."""
    if text is None:
        return None, None
    return text[:ANSWER_MAX_CHARS], len(text)


def submission(m: RunMember) -> MemberSubmitted:
    """The event of ``m``'s submission (it has ended ``submitted``)."""
    return MemberSubmitted(member=m.name, time=m.ended or 0.0, verified=m.verified, answer=m.answer)


def keep_answer(m: RunMember, state: AgentState) -> None:
    """Keep what ``m`` submits: its final output's text, bounded."""
    m.answer, m.answer_chars = bounded(state.output.completion if state.output.choices else "")


class AnswerChoice:
    """The answer of one run as of now."""

    def __init__(self, roster: Roster, hooks: RunHooks) -> None:
        self._roster = roster
        self._hooks = hooks
        self._chosen: Answer | None = None
        self.answer: Answer = NO_ANSWER
        # set by the final step: what it wrote (its output), or why it wrote nothing
        self.final: Answer | None = None
        self.synthesized: ModelOutput | None = None
        # a choice raised (the plugin's fault is reported): the run ends on it, and is not
        # asked again, so the fault is reported and logged once
        self._failed = False
        self._settled = False  # chosen once the members ended: not asked again at the records

    def choose(self, member: str, reason: str | None) -> None:
        """A controller chose ``member``'s submission (it must have submitted)."""
        self._chosen = Answer(member=member, mode="controller", reason=reason)

    def settle(self, view: SwarmView) -> Answer:
        """The answer, chosen once: when the members have ended (or, on an interrupted run, as
        the records are written); later calls keep it, and a choice that failed (its fault
        reported) is not asked again.  What the final step wrote, once it has, is the answer."""
        if self.final is not None:
            self.answer = self.final
        elif not (self._settled or self._failed):
            self.answer = self._choose(view)
            self._settled = True
        return self.answer

    def _choose(self, view: SwarmView) -> Answer:
        """Choose the answer as of ``view``; a plugin that names a member that has not submitted
        is at fault."""
        answer = self._chosen
        decided = None
        if answer is None:
            try:
                decided = self._hooks.choose_answer(view)
            except PluginError:
                self._failed = True
                raise
            answer = decided[1] if decided is not None else None
        if answer is not None and answer.member is None and answer.mode == "synthesize":
            pass  # the final step writes it
        elif answer is None or answer.member is None:
            reason = None if answer is None else answer.reason
            answer = Answer(member=None, mode=None, reason=reason or "no_submissions")
        else:
            m = self._roster.get(answer.member)
            if m is None or m.status != "submitted":
                plugin = decided[0] if decided else "<controller>"
                why = f"chose member {answer.member!r}, which has not submitted"
                self._failed = True
                raise self._hooks.fault(PluginError(plugin, "swarm_choose_answer", why))
        return answer

    @property
    def output(self) -> ModelOutput:
        """The answer member's output, unchanged (the synthesis's for ``synthesize``; empty
        with no answer)."""
        if self.answer.mode == "synthesize":
            return self.synthesized or ModelOutput()
        chosen = self._roster.get(self.answer.member)
        if chosen is not None and chosen.agent_state is not None:
            return chosen.agent_state.output
        return ModelOutput()

    def text(self) -> str | None:
        """The answer's text (``None`` with no answer)."""
        if self.answer.member is None and self.synthesized is None:
            return None
        output = self.output
        return output.completion if output.choices else ""

    def give(
        self,
        state: AgentState,
        view: SwarmView,
        input_messages: Sequence[ChatMessage],
        *,
        interrupted: bool,
    ) -> None:
        """The answer as of ``view`` given to the swarm's state: its output and, unless the run
        was interrupted, its conversation.  A plugin's fault here is logged (and already
        reported to the run)."""
        try:
            self.settle(view)
        except PluginError:
            logger.exception("answer selection failed while the swarm ended")
        state.output = self.output
        if not interrupted:
            self.final_conversation(state, input_messages)

    def final_conversation(self, state: AgentState, input_messages: Sequence[ChatMessage]) -> None:
        """The swarm's messages: the sample's input and the answer's last message, marked."""
        output = self.output
        if not output.choices:
            return
        last = output.message
        final = {"mode": self.answer.mode, "member": self.answer.member}
        last = last.model_copy(
            update={"metadata": {**(last.metadata or {}), INFO_SOURCE: {"final": final}}}
        )
        state.messages = [*input_messages, last]
