"""Inspect Scout scanners for the failure modes the records cannot decide: each asks the
scanning model one question about each swarm member's own span, and gives one ``Result`` per
member (its ``label`` the member's name).

Needs the optional ``swarm-eval[scout]`` extra (``inspect-scout``); nothing else in swarm-eval
imports this module.  Offline on a log directory::

    from inspect_scout import scan, transcripts_from
    from swarm.diagnosis.scout import mast_scanners

    scan(mast_scanners(), transcripts_from("logs"), model="openai/gpt-5")

A member's span is the agent span named after it (the members are the ones the swarm's result
record names, from its info event in the transcript); what the model reads is the conversation
of that span's last model call (its input and its output), so a member's subagents are not part
of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.event import Event, InfoEvent, ModelEvent
from inspect_ai.model import ChatMessage, ChatMessageUser, get_model

try:
    from inspect_scout import Result, Scanner, Transcript, scanner
except ImportError:  # the optional extra: say what to install, not a bare traceback
    from swarm.errors import MissingExtra

    raise MissingExtra(
        "swarm.diagnosis.scout needs Inspect Scout: pip install 'swarm-eval[scout]'"
    ) from None

from swarm.diagnosis._trace import _owners
from swarm.records import INFO_SOURCE

__all__ = ["MAST_QUESTIONS", "mast_scanners", "member_scanner", "member_spans"]

MAST_QUESTIONS: Mapping[str, tuple[str, str]] = {
    "disobey_task_specification": (
        "FM-1.1 Disobey task specification",
        "Did this agent fail to follow the task's stated requirements or constraints?",
    ),
    "task_derailment": (
        "FM-2.3 Task derailment",
        "Did this agent drift away from the task it was given, working on something else?",
    ),
    "reasoning_action_mismatch": (
        "FM-2.6 Reasoning-action mismatch",
        "Did this agent's actions (its tool calls, its answer) contradict its own stated "
        "reasoning?",
    ),
    "incomplete_verification": (
        "FM-3.2 No or incomplete verification",
        "Did this agent give its result without checking it, where the task called for a check?",
    ),
}
"""The MAST modes the records cannot decide, each as (mode, the question asked of a member)."""


def _members(events: Sequence[Event]) -> list[str]:
    for e in events:
        if isinstance(e, InfoEvent) and e.source == INFO_SOURCE and isinstance(e.data, dict):
            members = e.data.get("members")
            if e.data.get("type") == "result" and isinstance(members, list):
                return [str(m.get("name")) for m in members if isinstance(m, dict)]
    return []


def member_spans(events: Sequence[Event]) -> dict[str, list[ChatMessage]]:
    """Each swarm member's conversation: the input and output of the last model call in its own
    agent span (members with no model call are left out)."""
    names = _members(events)
    _, own = _owners(events, set(names))
    found: dict[str, list[ChatMessage]] = {}
    for name in names:
        span = own.get(name)
        last = [e for e in events if isinstance(e, ModelEvent) and e.span_id == span]
        if last:
            call = last[-1]
            said = [call.output.message] if call.output.choices else []
            found[name] = [*call.input, *said]
    return found


def _rendered(messages: Sequence[ChatMessage]) -> str:
    lines = []
    for m in messages:
        text = m.text
        calls = getattr(m, "tool_calls", None) or []
        for c in calls:
            text += f"\n[calls {c.function}({c.arguments})]"
        lines.append(f"[{m.role}] {text}")
    return "\n".join(lines)


def member_scanner(name: str, mode: str, question: str) -> Scanner[Transcript]:
    """A Scout scanner named ``name`` that asks the scanning model ``question`` about each
    swarm member's span; its results' ``value`` is true when the answer begins with "yes",
    ``label`` the member, ``answer`` the model's answer, ``metadata`` the ``mode``."""

    @scanner(name=name, events=["span_begin", "model", "info"])
    def factory() -> Scanner[Transcript]:
        async def scan(transcript: Transcript) -> list[Result]:
            results = []
            for member, messages in member_spans(transcript.events).items():
                prompt = (
                    f"Here is the conversation of {member}, one agent of a multi-agent "
                    f"system.\n\n{_rendered(messages)}\n\n{question} Answer yes or no, then "
                    "say why in one sentence."
                )
                reply = await get_model().generate([ChatMessageUser(content=prompt)])
                answer = reply.completion.strip()
                results.append(
                    Result(
                        value=answer.lower().startswith("yes"),
                        answer=answer,
                        label=member,
                        metadata={"mode": mode, "member": member},
                    )
                )
            return results

        return scan

    built: Scanner[Transcript] = factory()
    return built


def mast_scanners() -> dict[str, Any]:
    """One ``member_scanner`` per mode of ``MAST_QUESTIONS``, for Scout's ``scan()``: by name,
    ``swarm_<mode key>`` (``swarm_task_derailment``...)."""
    return {
        f"swarm_{name}": member_scanner(f"swarm_{name}", mode, question)
        for name, (mode, question) in MAST_QUESTIONS.items()
    }
