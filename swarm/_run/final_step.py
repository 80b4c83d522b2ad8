"""The final step: the swarm's own model call that writes the answer (the ``synthesize`` rule).

When the answer's mode is ``synthesize``, once every member has ended the run makes one model
call of its own: the synthesis's prompt (``Synthesis.prompt``, default ``SYNTHESIS_PROMPT``),
with the sample's input and the answers of the roster members that submitted, in the order
they submitted, to the synthesis's model (default: the task's).  Its output is the swarm's
answer.  The call is metered in the accounts' ``final`` meter (the ledger's ``final``) and
counts in the swarm's totals; it runs in the swarm's span, in a span of its own (``final``).

The step must end by the time cap plus the grace; past that, or when the sample is cancelled,
it is cancelled: the ledger's ``final_cancelled`` is true, and the answer is none (reason
``final_cancelled``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anyio
from inspect_ai.model import ChatMessage, ChatMessageUser, get_model
from inspect_ai.util import span

from swarm._accounts.accounts import Accounts
from swarm._hooks.votes import roster_submissions
from swarm._run.answer import AnswerChoice
from swarm.records import SYNTHESIS_PROMPT, Answer, SwarmView, Synthesis

__all__ = ["FinalStep", "synthesis_prompt"]

logger = logging.getLogger("swarm")


def synthesis_prompt(template: str, question: str, answers: Sequence[tuple[str, str]]) -> str:
    """The prompt: ``template`` with ``{input}`` and ``{answers}`` replaced (plain replacement,
    so braces elsewhere in it, or in the answers, stay as they are).  Each answer is numbered,
    with its member: ``Answer 1 (react-2):`` and its text."""
    listed = "\n\n".join(
        f"Answer {i} ({name}):\n{text}" for i, (name, text) in enumerate(answers, start=1)
    )
    return template.replace("{input}", question).replace("{answers}", listed)


def _question(messages: Sequence[ChatMessage]) -> str:
    return "\n\n".join(m.text for m in messages if m.role == "user")


class FinalStep:
    """The final step of one run."""

    def __init__(
        self,
        answers: AnswerChoice,
        accounts: Accounts,
        controller: object,
        input_messages: Sequence[ChatMessage],
    ) -> None:
        self._answers = answers
        self._accounts = accounts
        synthesis = getattr(controller, "synthesis", None)
        # a controller's own Synthesis, else the defaults (any plugin may answer "synthesize")
        self._synthesis = synthesis if isinstance(synthesis, Synthesis) else Synthesis()
        self._input = list(input_messages)
        self.cancelled = False

    async def run(self, view: SwarmView, now: Callable[[], float], grace: float) -> None:
        """Write the answer if its mode is ``synthesize``: one call, metered as the final
        step's, cancelled at the time cap plus ``grace`` (``now()``: the run's clock)."""
        answer = self._answers.settle(view)
        if answer.mode != "synthesize" or answer.member is not None:
            return
        answers = [(m.name, m.answer) for m in roster_submissions(view) if m.answer is not None]
        if not answers:
            self._answers.final = Answer(member=None, mode=None, reason="no_submissions")
            return
        template = self._synthesis.prompt or SYNTHESIS_PROMPT
        prompt = synthesis_prompt(template, _question(self._input), answers)
        model = get_model(self._synthesis.model) if self._synthesis.model else get_model()
        cap = self._accounts.caps.time
        left = None if cap is None else cap + grace - now()
        self._accounts.final_step = True
        try:
            with anyio.move_on_after(float("inf") if left is None else max(0.0, left)) as scope:
                async with span(name="final", type="final"):
                    output = await model.generate([ChatMessageUser(content=prompt)])
            if scope.cancelled_caught:
                self._cancelled()
                return
        except anyio.get_cancelled_exc_class():
            self._cancelled()
            raise
        finally:
            self._accounts.final_step = False
        self._answers.synthesized = output
        self._answers.final = Answer(member=None, mode="synthesize")

    def _cancelled(self) -> None:
        logger.warning("swarm: the final step (synthesize) was cancelled; there is no answer")
        self.cancelled = True
        self._answers.final = Answer(member=None, mode=None, reason="final_cancelled")
