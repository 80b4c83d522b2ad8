"""The swarm's answer: which member's submission it is, and the output it gives the sample.

A controller's explicit ``Decision(answer=...)`` wins; otherwise ``swarm_choose_answer`` decides
after every change (the answer is provisional until the run ends).
"""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.agent import AgentState
from inspect_ai.model import ChatMessage, ModelOutput

from swarm._hooks.calls import RunHooks
from swarm._run.members import Roster
from swarm.errors import PluginError
from swarm.records import INFO_SOURCE, Answer, SwarmView

__all__ = ["AnswerChoice"]

NO_ANSWER = Answer(member=None, mode=None, reason="no_submissions")


class AnswerChoice:
    """The answer of one run as of now."""

    def __init__(self, roster: Roster, hooks: RunHooks) -> None:
        self._roster = roster
        self._hooks = hooks
        self._chosen: Answer | None = None
        self.answer: Answer = NO_ANSWER

    def choose(self, member: str, reason: str | None) -> None:
        """A controller chose ``member``'s submission (it must have submitted)."""
        self._chosen = Answer(member=member, mode="controller", reason=reason)

    def refresh(self, view: SwarmView) -> Answer:
        """Choose the answer as of ``view``; a plugin that names a member that has not submitted
        is at fault."""
        answer = self._chosen
        decided = None
        if answer is None:
            decided = self._hooks.choose_answer(view)
            answer = decided[1] if decided is not None else None
        if answer is None or answer.member is None:
            answer = NO_ANSWER
        else:
            m = self._roster.get(answer.member)
            if m is None or m.status != "submitted":
                plugin = decided[0] if decided else "<controller>"
                why = f"chose member {answer.member!r}, which has not submitted"
                raise self._hooks.fault(PluginError(plugin, "swarm_choose_answer", why))
        self.answer = answer
        return answer

    @property
    def output(self) -> ModelOutput:
        """The answer member's output, unchanged (empty with no answer)."""
        chosen = self._roster.get(self.answer.member)
        if chosen is not None and chosen.agent_state is not None:
            return chosen.agent_state.output
        return ModelOutput()

    def final_conversation(self, state: AgentState, input_messages: Sequence[ChatMessage]) -> None:
        """The swarm's messages: the sample's input and the answer's last message, marked."""
        chosen = self._roster.get(self.answer.member)
        if chosen is None or chosen.agent_state is None or not chosen.agent_state.output.choices:
            return
        last = chosen.agent_state.output.message
        final = {"mode": self.answer.mode, "member": chosen.name}
        last = last.model_copy(
            update={"metadata": {**(last.metadata or {}), INFO_SOURCE: {"final": final}}}
        )
        state.messages = [*input_messages, last]
