"""The noisy model, ``swarm/noisy``: members that are right by chance, seeded, for experiments.

Each member (by name; ``agent`` outside a swarm) works on each sample and epoch for a number of
model calls drawn from the seed, replying "Working on it (step n)." until its last call, which
submits.  The submission is right (the sample's target) with a probability drawn per member
and per sample around the member's ``skill``, and wrong otherwise.  Every call reports the same
usage (``tokens``: input and output), so a budget of B tokens buys B / tokens calls: a member
whose budget runs out before its last call never answers.  Accuracy therefore grows with the
budget, differs by member and by sample, and is a real curve in both, yet every figure replays
exactly from the seed.

Model args: ``seed`` (any integer, 0), ``skill`` (a probability, or a mapping of member name or
glob to probability, ``"*"`` for the rest; 0.6), ``spread`` (how far a sample moves a member's
probability, either way; 0.3), ``steps`` (the most calls a member needs, each number from 1 to
it equally likely; 10), ``tokens`` (``[input, output]`` per call; ``[16, 4]``), ``delay``
(seconds per call; 0).  Its price is nominal: $1 and $2 per million input and output tokens.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelCost,
    ModelInfo,
    ModelOutput,
    ModelUsage,
    set_model_info,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from swarm._inspect.private import running_task_state
from swarm._run.identity import current_member
from swarm.errors import ConfigError
from swarm.testing._scripted import MODEL_VARIANTS, ScriptedModelAPI

__all__ = ["NoisyModelAPI", "draw"]

_ARGS = ("seed", "skill", "spread", "steps", "tokens", "delay")
_PRICE = ModelCost(input=1.0, output=2.0, input_cache_write=1.0, input_cache_read=0.1)
WRONG = "I could not work it out."
"""What a member that is wrong submits (it never contains a target)."""


def draw(seed: int, *parts: object) -> float:
    """A number in [0, 1) that is a pure function of ``seed`` and ``parts``."""
    text = "\x1f".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _probability(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(f"swarm/noisy: {where}: expected a probability in [0, 1], got {value!r}")
    return float(value)


class NoisyModelAPI(ScriptedModelAPI):
    """``swarm/noisy``: see the module docstring."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008  (Inspect's own signature)
        seed: int = 0,
        skill: float | Mapping[str, float] = 0.6,
        spread: float = 0.3,
        steps: int = 10,
        tokens: Sequence[int] = (16, 4),
        delay: float = 0.0,
        **model_args: Any,
    ) -> None:
        if model_args:
            raise ConfigError(
                f"swarm/noisy: unknown model args {sorted(model_args)}; expected {', '.join(_ARGS)}"
            )
        super().__init__(model_name, base_url, api_key, config, delay=delay)
        self.seed = int(seed)
        if isinstance(skill, Mapping):
            self.skill = {str(k): _probability(v, f"skill[{k!r}]") for k, v in skill.items()}
        else:
            self.skill = {"*": _probability(skill, "skill")}
        self.spread = _probability(spread, "spread")
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ConfigError(f"swarm/noisy: steps: expected a whole number >= 1, got {steps!r}")
        self.steps = steps
        if (
            isinstance(tokens, str)
            or not isinstance(tokens, Sequence)
            or len(tokens) != 2
            or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in tokens)
        ):
            raise ConfigError(
                f"swarm/noisy: tokens: expected [input, output], whole numbers >= 1, got {tokens!r}"
            )
        self.tokens = (int(tokens[0]), int(tokens[1]))
        # a nominal price, $1 and $2 per million input and output tokens, so that the ledger's
        # cost is a figure in every process that runs the model (an eval set, a Flow run)
        set_model_info(f"swarm/{model_name}", ModelInfo(cost=_PRICE))

    def member_skill(self, member: str) -> float:
        """The member's skill: an exact key, else the first matching glob, else ``"*"``."""
        if member in self.skill:
            return self.skill[member]
        for pattern, value in self.skill.items():
            if fnmatch.fnmatchcase(member, pattern):
                return value
        return self.skill.get("*", 0.6)

    def chance(self, member: str, sample: object) -> float:
        """The probability that ``member`` is right on ``sample``."""
        shift = (2.0 * draw(self.seed, "sample", sample, member) - 1.0) * self.spread
        return min(1.0, max(0.0, self.member_skill(member) + shift))

    def calls_needed(self, member: str, sample: object, epoch: int) -> int:
        """How many calls ``member`` makes on ``sample`` in ``epoch`` (its last one submits)."""
        return 1 + int(draw(self.seed, "steps", sample, epoch, member) * self.steps)

    def right(self, member: str, sample: object, epoch: int) -> bool:
        """Whether ``member``'s submission on ``sample`` in ``epoch`` is right."""
        return draw(self.seed, "right", sample, epoch, member) < self.chance(member, sample)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if self.delay:
            import anyio

            await anyio.sleep(self.delay)
        info = current_member()
        member = "agent" if info is None else info.name
        state = running_task_state()
        sample = None if state is None else state.sample_id
        epoch = 1 if state is None else state.epoch
        turn = sum(1 for m in input if m.role == "assistant")
        if turn + 1 < self.calls_needed(member, sample, epoch):
            out = ModelOutput.from_content(self.model_name, f"Working on it (step {turn + 1}).")
        else:
            target = "" if state is None else state.target.text
            answer = target if self.right(member, sample, epoch) else WRONG
            if any(t.name == "submit" for t in tools):
                out = ModelOutput.for_tool_call(
                    self.model_name, "submit", {"answer": answer}, content=""
                )
            else:
                out = ModelOutput.from_content(self.model_name, answer)
        out.usage = ModelUsage(
            input_tokens=self.tokens[0],
            output_tokens=self.tokens[1],
            total_tokens=sum(self.tokens),
        )
        return out


MODEL_VARIANTS["noisy"] = NoisyModelAPI
