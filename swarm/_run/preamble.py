"""The text appended to a member's input: who it is, its role, its budget, the channels' rules."""

from __future__ import annotations

from collections.abc import Sequence

from swarm._accounts.caps import SwarmCaps, split_sentence
from swarm._spec.budget import Budget
from swarm.records import MemberInfo

__all__ = ["in_channel_order", "preamble", "weight_share"]


def weight_share(budget: Budget, index: int) -> float | None:
    """The fraction of a weighted split that is the share of the roster member at ``index``
    (``None`` without weights, or for a member who joined after the roster)."""
    weights = budget.split
    if isinstance(weights, tuple) and index < len(weights):
        return weights[index] / sum(weights)
    return None


def in_channel_order(found: Sequence[tuple[str, str]], channels: Sequence[str]) -> list[str]:
    """Instruction paragraphs (plugin name, text) with the run's channels' first, in channel
    order, then any others."""
    order = {f"channel:{name}": i for i, name in enumerate(channels)}
    return [text for _, text in sorted(found, key=lambda pair: order.get(pair[0], len(order)))]


def preamble(
    info: MemberInfo,
    members: int,
    budget: Budget,
    caps: SwarmCaps,
    instructions: Sequence[str],
) -> str:
    """The preamble of ``info`` in a swarm of ``members`` members (as many as have joined)."""
    if info.parent is not None:
        paragraphs = [
            f"You are {info.name}, a child member spawned by {info.parent} to do the task "
            f"above, one of {members} agents in a swarm working at the same time."
        ]
    elif members == 1:
        paragraphs = [f"You are {info.name}, the only agent in this swarm."]
    else:
        paragraphs = [
            f"You are {info.name}, one of {members} agents in a swarm working on this task at "
            "the same time."
        ]
    if info.role:
        paragraphs.append(f"Your role: {info.role}.")
    if members > 1:
        share = weight_share(budget, info.index)
        sentence = split_sentence(budget, caps, share, spawned_by=info.parent)
        if sentence:
            paragraphs.append(sentence)
    paragraphs.extend(text for text in instructions if text.strip())
    return "\n\n".join(paragraphs)
