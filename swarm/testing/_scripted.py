"""The scripted model provider: deterministic, offline, per-member model behaviour.

Use it as ``--model swarm/scripted`` (or ``get_model("swarm/scripted", scripts=...)``).  Each
member follows its own script, a list of steps (call a tool, reply, submit, fail, pause); the
step is picked by how many assistant turns the conversation already has, so a script is a pure
function of the conversation and replays identically.  Usage is always set, so Inspect never
needs a tokenizer (which it would download).

Scripts are keyed by member name; keys may be globs (``"worker-*"``) and ``"*"`` matches any
member.  The member is known from the swarm's context, or failing that from the "You are
<name>," line of its preamble.  A conversation without that line is a subagent's (``as_tool``,
``handoff``...): it follows the script keyed ``"<member>/sub"`` (globs work: ``"*/sub"``), or
``"<member>/<name>"`` when its own system prompt says "You are <name>," (a deepagent subagent's).
When a script runs out (or there is none) the model submits ``answer`` if a ``submit`` tool is
offered, and otherwise replies with it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, cast

import anyio
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from swarm._run.identity import current_member
from swarm.errors import ConfigError
from swarm.testing._script import (
    Said,
    Scripts,
    Step,
    StepUsage,
    _seconds,
    call,
    fail,
    pause,
    poll,
    reply,
    submit,
)

__all__ = [
    "ScriptedModelAPI",
    "ScriptedModelError",
    "Step",
    "call",
    "fail",
    "pause",
    "poll",
    "reply",
    "submit",
]


class ScriptedModelError(RuntimeError):
    """Raised by a ``fail`` step: a model call that errors."""


def said(messages: Sequence[ChatMessage]) -> list[Said]:
    """Inspect's messages as scripts see them."""
    return [
        Said(
            m.role,
            m.text,
            tuple((tc.function, tc.arguments) for tc in getattr(m, "tool_calls", None) or []),
        )
        for m in messages
    ]


def model_usage(usage: StepUsage | None) -> ModelUsage | None:
    """A step's usage as Inspect's ``ModelUsage`` (``None`` for none)."""
    if usage is None:
        return None
    return ModelUsage(
        input_tokens=usage.input,
        output_tokens=usage.output,
        total_tokens=usage.total,
        input_tokens_cache_read=usage.cache_read,
        input_tokens_cache_write=usage.cache_write,
        reasoning_tokens=usage.reasoning,
    )


class ScriptedModelAPI(ModelAPI):
    """``swarm/scripted``: follows per-member scripts; see the module docstring.

    Model args: ``scripts`` (mapping, YAML text or file), ``answer`` (the default submission,
    ``"done"``), ``delay`` (seconds added to every call).
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008  (Inspect's own signature)
        scripts: object = None,
        answer: str = "done",
        delay: float = 0.0,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if type(self) is ScriptedModelAPI and model_name != "scripted":  # subclasses: any name
            names = ["scripted", *sorted(MODEL_VARIANTS)]
            closest = difflib.get_close_matches(model_name, names, n=1, cutoff=0.0)[0]
            provided = " and ".join(f"'swarm/{n}'" for n in names)
            raise ConfigError(
                f"unknown model 'swarm/{model_name}': swarm-eval provides {provided} "
                f"(did you mean 'swarm/{closest}'?)"
            )
        if model_args:
            raise ConfigError(
                f"swarm/scripted: unknown model args {sorted(model_args)}; expected scripts, "
                "answer, delay"
            )
        self.played = Scripts(scripts, answer)
        self.scripts = self.played.scripts
        self.answer = self.played.answer
        self.delay = _seconds(delay, f"swarm/{model_name}: delay")

    def script_for(self, member: str | None) -> tuple[Step, ...]:
        """The steps of ``member``: an exact key, else the first matching glob, else none."""
        return self.played.script_for(member)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        info = current_member()
        turn = self.played.turn(
            said(input), [t.name for t in tools], None if info is None else info.name
        )
        if self.delay or turn.sleep:
            await anyio.sleep(self.delay + turn.sleep)
        if turn.fail is not None:
            raise ScriptedModelError(turn.fail)
        if turn.tool is not None:
            out = ModelOutput.for_tool_call(self.model_name, turn.tool, dict(turn.args), content="")
        else:
            out = ModelOutput.from_content(self.model_name, turn.text)
        out.usage = model_usage(turn.usage)
        return out

    def should_retry(self, ex: Exception) -> bool:
        return False

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)


MODEL_VARIANTS: dict[str, type[ScriptedModelAPI]] = {}
"""The other models under ``swarm/`` by name (``noisy``: ``swarm.testing._noisy``), each a
subclass that registers itself here when its module is imported."""


def _swarm_model(model_name: str, **args: Any) -> ModelAPI:
    """``swarm/<model_name>``: a registered variant, else the scripted model (which refuses
    any name but ``scripted``)."""
    return MODEL_VARIANTS.get(model_name, ScriptedModelAPI)(model_name, **args)


@modelapi(name="swarm")
def _scripted_api() -> type[ModelAPI]:
    # registered through a factory, so ``ScriptedModelAPI`` stays a class (to subclass: a test
    # model with a native ``compact()``, say) rather than Inspect's registration wrapper; Inspect
    # only calls what it returns, so the factory can pick the class by model name
    return cast(type[ModelAPI], _swarm_model)
