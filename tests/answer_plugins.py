"""Plugins and normalisers the answer tests use: the stop-on-agreement controller and the
``digits`` normaliser (a plugin registered by its ``swarm_register_controllers`` and
``swarm_register_normalizers``, as a distribution's entry point module would be), normalisers
good and bad, and one whose call leaves a mark (to show a topology file cannot name it)."""

from __future__ import annotations

import re
from typing import Any

from swarm import (
    Decision,
    MemberSubmitted,
    Register,
    SwarmView,
    hookimpl,
    normalize_answer,
)


class Agreement:
    """Stop once ``size`` roster members submitted the same normalised answer; the answer is
    the first of them."""

    def __init__(self, size: int) -> None:
        self.size = size

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        if event.answer is None:
            return None
        key = normalize_answer(event.answer)
        agreeing = sorted(
            (
                m
                for m in view.submissions
                if m.depth == 0 and m.answer is not None and normalize_answer(m.answer) == key
            ),
            key=lambda m: (m.ended or 0.0, m.index),
        )
        if len(agreeing) < self.size:
            return None
        return Decision(stop="agreement", answer=agreeing[0].name, reason="agreement")


def agreement(size: int = 3) -> Agreement:
    """Stop (reason ``controller:agreement``) once ``size`` members agree."""
    return Agreement(size)


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("agreement", agreement)


def digits(text: str) -> str:
    """Only the digits of an answer (``"x = 3."`` -> ``"3"``)."""
    return "".join(re.findall(r"\d", text))


@hookimpl
def swarm_register_normalizers(register: Register) -> None:
    register("digits", digits)


CALLED: list[str] = []
"""The answers ``leaves_a_mark`` was called with."""


def leaves_a_mark(text: str) -> str:
    """A normaliser with a side effect, as ``os:system`` would have one."""
    CALLED.append(text)
    return text


def raises(text: str) -> str:
    raise ValueError(f"no number in {len(text)} characters")


def not_text(text: str) -> Any:
    return len(text)


NOT_A_FUNCTION = "a normaliser's name must name a function"


class Counting:
    """A normaliser that counts its calls (``normalize_answer`` otherwise)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> str:
        self.calls += 1
        return normalize_answer(text)
