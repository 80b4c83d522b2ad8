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

import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import attrs
import yaml
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from swarm._run.identity import current_member
from swarm.errors import ConfigError

__all__ = [
    "ScriptedModelAPI",
    "ScriptedModelError",
    "Step",
    "call",
    "fail",
    "pause",
    "reply",
    "submit",
]

_YOU_ARE = re.compile(r"You are ([^\s,]+),")
_STEP_KEYS = {"tool", "args", "reply", "submit", "fail", "sleep", "usage"}


class ScriptedModelError(RuntimeError):
    """Raised by a ``fail`` step: a model call that errors."""


@attrs.frozen(kw_only=True)
class Step:
    """One scripted model turn.  Exactly one of ``tool``, ``reply``, ``submit``, ``fail``.

    ``sleep`` seconds pass before the turn completes; ``usage`` overrides the computed
    (input, output) token counts.
    """

    tool: str | None = None
    args: Mapping[str, Any] = attrs.field(factory=dict)
    reply: str | None = None
    submit: str | None = None
    fail: str | None = None
    sleep: float = 0.0
    usage: tuple[int, int] | None = None

    def __attrs_post_init__(self) -> None:
        kinds = [k for k in ("tool", "reply", "submit", "fail") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ConfigError(
                "script step: give exactly one of tool, reply, submit, fail "
                f"(got {kinds or 'none'})"
            )


def call(tool: str, /, **args: Any) -> Step:
    """A step that calls ``tool`` with ``args``."""
    return Step(tool=tool, args=args)


def reply(text: str) -> Step:
    """A step that answers with ``text`` and calls no tool."""
    return Step(reply=text)


def submit(answer: str) -> Step:
    """A step that calls the ``submit`` tool with ``answer``."""
    return Step(submit=answer)


def fail(message: str) -> Step:
    """A step whose model call raises ``ScriptedModelError(message)``."""
    return Step(fail=message)


def pause(seconds: float, step: Step) -> Step:
    """``step``, completing only after ``seconds``."""
    return attrs.evolve(step, sleep=seconds)


def _step_from(data: object, where: str) -> Step:
    if isinstance(data, Step):
        return data
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{where}: expected a step mapping such as {{submit: '42'}}, got {data!r}"
        )
    extra = sorted(set(data) - _STEP_KEYS)
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {extra}; expected some of {sorted(_STEP_KEYS)}")
    usage = data.get("usage")
    return Step(
        tool=data.get("tool"),
        args=dict(data.get("args") or {}),
        reply=data.get("reply"),
        submit=None if data.get("submit") is None else str(data["submit"]),
        fail=data.get("fail"),
        sleep=float(data.get("sleep", 0.0)),
        usage=None if usage is None else (int(usage[0]), int(usage[1])),
    )


def load_scripts(value: object) -> dict[str, tuple[Step, ...]]:
    """Scripts from a mapping, a YAML/JSON string, or the path of a YAML/JSON file."""
    if value is None:
        return {}
    if isinstance(value, str | Path):
        text = str(value)
        path = Path(text)
        if "\n" not in text and path.suffix in (".yaml", ".yml", ".json") and path.exists():
            text = path.read_text()
        value = yaml.safe_load(text)
    if not isinstance(value, Mapping):
        raise ConfigError(f"scripts: expected a mapping of member name to steps, got {value!r}")
    scripts: dict[str, tuple[Step, ...]] = {}
    for key, steps in value.items():
        if not isinstance(steps, Sequence) or isinstance(steps, str):
            raise ConfigError(f"scripts[{key!r}]: expected a list of steps")
        scripts[str(key)] = tuple(
            _step_from(s, f"scripts[{key!r}][{i}]") for i, s in enumerate(steps)
        )
    return scripts


def _message_chars(messages: Sequence[ChatMessage]) -> int:
    total = 0
    for m in messages:
        total += len(m.text)
        for tc in getattr(m, "tool_calls", None) or []:
            total += len(tc.function) + len(json.dumps(tc.arguments, sort_keys=True))
    return total


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
            raise ConfigError(
                f"unknown model 'swarm/{model_name}': swarm-eval provides one model, "
                "'swarm/scripted' (did you mean it?)"
            )
        if model_args:
            raise ConfigError(
                f"swarm/scripted: unknown model args {sorted(model_args)}; expected scripts, "
                "answer, delay"
            )
        self.scripts = load_scripts(scripts)
        self.answer = str(answer)
        self.delay = float(delay)

    def script_for(self, member: str | None) -> tuple[Step, ...]:
        """The steps of ``member``: an exact key, else the first matching glob, else none."""
        if member is not None and member in self.scripts:
            return self.scripts[member]
        for pattern, steps in self.scripts.items():
            if member is not None and fnmatch.fnmatchcase(member, pattern):
                return steps
        return self.scripts.get("*", ())

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        member = _script_key(input)
        turn = sum(1 for m in input if isinstance(m, ChatMessageAssistant))
        steps = self.script_for(member)
        step = steps[turn] if turn < len(steps) else self._default(tools)
        if self.delay or step.sleep:
            await anyio.sleep(self.delay + step.sleep)
        if step.fail is not None:
            raise ScriptedModelError(step.fail)
        if step.tool is not None:
            out = ModelOutput.for_tool_call(self.model_name, step.tool, dict(step.args), content="")
        elif step.submit is not None:
            out = ModelOutput.for_tool_call(
                self.model_name, "submit", {"answer": step.submit}, content=""
            )
        else:
            out = ModelOutput.from_content(self.model_name, step.reply or "")
        in_tokens, out_tokens = step.usage or (
            max(1, _message_chars(input) // 4),
            max(1, _message_chars([out.message]) // 4),
        )
        out.usage = ModelUsage(
            input_tokens=in_tokens, output_tokens=out_tokens, total_tokens=in_tokens + out_tokens
        )
        return out

    def _default(self, tools: list[ToolInfo]) -> Step:
        if any(t.name == "submit" for t in tools):
            return Step(submit=self.answer)
        return Step(reply=self.answer)

    def should_retry(self, ex: Exception) -> bool:
        return False

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)


@modelapi(name="swarm")
def _scripted_api() -> type[ModelAPI]:
    # registered through a factory, so ``ScriptedModelAPI`` stays a class (to subclass: a test
    # model with a native ``compact()``, say) rather than Inspect's registration wrapper
    return ScriptedModelAPI


def _script_key(messages: Sequence[ChatMessage]) -> str | None:
    named = None
    for m in messages:
        if m.role == "user":
            found = _YOU_ARE.search(m.text)
            if found:
                named = found.group(1)
                break
    info = current_member()
    if info is None:
        return named
    if named == info.name:
        return info.name
    for m in messages:  # a subagent whose own system prompt names it: "<member>/<name>"
        found = _YOU_ARE.search(m.text) if m.role == "system" else None
        if found and found.group(1) != info.name:
            return f"{info.name}/{found.group(1)}"
    return f"{info.name}/sub"
