"""Scripts: what the scripted model and the scripted server play, one piece of code for both.

A script is a list of steps, one per model call, under a script key (a member's name, a glob,
``"<member>/sub"`` for a subagent).  This module holds everything about scripts that does not
depend on how the call arrives: the steps and their parsing, which key a conversation has, which
step a call plays, and what that step answers (a ``Turn``: text, a tool call, usage).  The
in-process provider (``_scripted.py``) turns a ``Turn`` into Inspect's ``ModelOutput``; the
server (``_server.py``) into an OpenAI chat completion, and it also plays a step's ``faults``
(the attempts that fail before the one that answers), which have no meaning without a transport.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from swarm.errors import ConfigError

__all__ = [
    "Fault",
    "Said",
    "Scripts",
    "Step",
    "StepUsage",
    "Turn",
    "call",
    "fail",
    "load_scripts",
    "pause",
    "reply",
    "script_key",
    "submit",
]

_YOU_ARE = re.compile(r"You are ([^\s,]+),")
_STEP_KEYS = {
    "tool",
    "args",
    "reply",
    "submit",
    "fail",
    "sleep",
    "usage",
    "no_usage",
    "faults",
}
_USAGE_KEYS = ("input", "output", "cache_read", "cache_write", "reasoning")
_FAULT_KEYS = {"status", "retry_after", "drop", "slow"}


@attrs.frozen(kw_only=True)
class StepUsage:
    """The usage a step reports, in Inspect's terms.

    ``input`` is the input not read from or written to the cache (Inspect's ``input_tokens``),
    ``output`` the output (reasoning included, Inspect's ``output_tokens``), and the optional
    ``cache_read``, ``cache_write`` and ``reasoning`` are Inspect's ``input_tokens_cache_read``,
    ``input_tokens_cache_write`` and ``reasoning_tokens`` (``None``: not reported).
    """

    input: int
    output: int
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None

    @property
    def total(self) -> int:
        """Every token: input, both cache figures and output (reasoning is part of output)."""
        return self.input + self.output + (self.cache_read or 0) + (self.cache_write or 0)


def _usage(value: object) -> StepUsage | None:
    if value is None or isinstance(value, StepUsage):
        return value
    if isinstance(value, Mapping):
        extra = sorted(set(value) - set(_USAGE_KEYS))
        if extra or "input" not in value or "output" not in value:
            raise ConfigError(
                f"script step usage: expected input and output (and optionally cache_read, "
                f"cache_write, reasoning), got {sorted(value)}"
            )
        found = {k: None if value.get(k) is None else int(value[k]) for k in _USAGE_KEYS}
        return StepUsage(
            input=int(value["input"]),
            output=int(value["output"]),
            cache_read=found["cache_read"],
            cache_write=found["cache_write"],
            reasoning=found["reasoning"],
        )
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        return StepUsage(input=int(value[0]), output=int(value[1]))
    raise ConfigError(
        "script step usage: expected [input_tokens, output_tokens] or a mapping with input, "
        f"output, cache_read, cache_write, reasoning; got {value!r}"
    )


@attrs.frozen(kw_only=True)
class Fault:
    """One failed attempt the scripted server plays before a step's answer.

    Exactly one of ``status`` (an HTTP error status, such as 429, 500 or 503, with an OpenAI
    error body and, when ``retry_after`` is set, ``Retry-After`` and ``retry-after-ms``
    headers), ``drop`` (the connection is closed part way through the response) and ``slow``
    (the answer is sent only after this many seconds, normally past the client's timeout).
    """

    status: int | None = None
    retry_after: float | None = None
    drop: bool = False
    slow: float | None = None

    def __attrs_post_init__(self) -> None:
        kinds = [
            k
            for k, on in (
                ("status", self.status is not None),
                ("drop", self.drop),
                ("slow", self.slow is not None),
            )
            if on
        ]
        if len(kinds) != 1:
            raise ConfigError(
                "script step faults: give exactly one of status, drop, slow "
                f"(got {kinds or 'none'})"
            )
        if self.status is not None and not 400 <= self.status <= 599:
            raise ConfigError(
                f"script step faults: status: expected an HTTP error status (400-599), got "
                f"{self.status}"
            )

    @property
    def name(self) -> str:
        """How the server's log names this fault: the status, ``drop`` or ``slow``."""
        if self.status is not None:
            return str(self.status)
        return "drop" if self.drop else "slow"


def _fault(value: object, where: str) -> Fault:
    if isinstance(value, Fault):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Fault(status=value)
    if value == "drop":
        return Fault(drop=True)
    if isinstance(value, Mapping):
        extra = sorted(set(value) - _FAULT_KEYS)
        if extra:
            raise ConfigError(
                f"{where}: unknown key(s) {extra}; expected some of {sorted(_FAULT_KEYS)}"
            )
        return Fault(
            status=None if value.get("status") is None else int(value["status"]),
            retry_after=None if value.get("retry_after") is None else float(value["retry_after"]),
            drop=bool(value.get("drop", False)),
            slow=None if value.get("slow") is None else float(value["slow"]),
        )
    raise ConfigError(
        f"{where}: expected an HTTP status (429), 'drop', or a mapping such as "
        f"{{status: 429, retry_after: 0.01}} or {{slow: 5}}; got {value!r}"
    )


def _faults(value: object) -> tuple[Fault, ...]:
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ConfigError(f"script step faults: expected a list of faults, got {value!r}")
    return tuple(_fault(f, f"script step faults[{i}]") for i, f in enumerate(value))


@attrs.frozen(kw_only=True)
class Step:
    """One scripted model turn.  Exactly one of ``tool``, ``reply``, ``submit``, ``fail``.

    ``sleep`` seconds pass before the turn completes; ``usage`` overrides the computed token
    counts (``(input, output)``, or a ``StepUsage`` with cache and reasoning tokens);
    ``no_usage`` reports no usage at all.  ``faults`` are the attempts the scripted server fails
    before it answers (the in-process model, which has no transport, ignores them).
    """

    tool: str | None = None
    args: Mapping[str, Any] = attrs.field(factory=dict)
    reply: str | None = None
    submit: str | None = None
    fail: str | None = None
    sleep: float = 0.0
    usage: StepUsage | None = attrs.field(default=None, converter=_usage)
    no_usage: bool = False
    faults: tuple[Fault, ...] = attrs.field(default=(), converter=_faults)

    def as_data(self) -> dict[str, Any]:
        """The step as a plain mapping a script may give (its fields that differ from the
        defaults), which reads back as the same step: JSON-ready, so a log's model arguments
        keep it and ``inspect score`` can make the model again."""
        data: dict[str, Any] = {}
        for key in ("tool", "reply", "submit", "fail"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.args:
            data["args"] = dict(self.args)
        if self.sleep:
            data["sleep"] = self.sleep
        if self.usage is not None:
            data["usage"] = {k: v for k, v in attrs.asdict(self.usage).items() if v is not None}
        if self.no_usage:
            data["no_usage"] = True
        if self.faults:
            data["faults"] = [
                {k: v for k, v in attrs.asdict(f).items() if v not in (None, False)}
                for f in self.faults
            ]
        return data

    def __attrs_post_init__(self) -> None:
        kinds = [k for k in ("tool", "reply", "submit", "fail") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ConfigError(
                "script step: give exactly one of tool, reply, submit, fail "
                f"(got {kinds or 'none'})"
            )
        if self.no_usage and self.usage is not None:
            raise ConfigError("script step: give usage or no_usage, not both")


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
    try:
        return Step(
            tool=data.get("tool"),
            args=dict(data.get("args") or {}),
            reply=data.get("reply"),
            submit=None if data.get("submit") is None else str(data["submit"]),
            fail=data.get("fail"),
            sleep=float(data.get("sleep", 0.0)),
            usage=data.get("usage"),
            no_usage=bool(data.get("no_usage", False)),
            faults=data.get("faults"),
        )
    except ConfigError as ex:
        said = str(ex)
        for prefix in ("script step: ", "script step "):
            said = said.removeprefix(prefix)
        raise ConfigError(f"{where}: {said}") from None


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


@attrs.frozen
class Said:
    """One message of a conversation, as scripts see it: its role, its text, and its tool
    calls as ``(function, arguments)``."""

    role: str
    text: str
    calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    @property
    def chars(self) -> int:
        """Its size in characters (text, each call's function and JSON arguments)."""
        return len(self.text) + sum(
            len(function) + len(json.dumps(args, sort_keys=True)) for function, args in self.calls
        )


def script_key(messages: Sequence[Said], member: str | None) -> str | None:
    """The script key of a conversation.

    ``member`` is the calling member's name when the caller knows it (the in-process provider,
    from the swarm's context), ``""`` when it cannot know it (the server, which sees only the
    request), and ``None`` outside a swarm.  A conversation with a user message naming
    ``You are <name>,`` (a member's preamble) is that member's: its key is the name (inside a
    swarm, only the calling member's own name counts).  Otherwise it is a subagent's:
    ``<member>/<name>`` when its system prompt says ``You are <name>,`` and ``<member>/sub``
    when it does not (``/<name>`` and ``/sub`` from the server).  Outside a swarm the key is
    the preamble's name, or ``None``.
    """
    named = None
    for m in messages:
        if m.role == "user":
            found = _YOU_ARE.search(m.text)
            if found:
                named = found.group(1)
                break
    if member is None:
        return named
    if named is not None and (named == member or member == ""):
        return named
    for m in messages:
        found = _YOU_ARE.search(m.text) if m.role == "system" else None
        if found and found.group(1) != member:
            return f"{member}/{found.group(1)}"
    return f"{member}/sub"


@attrs.frozen(kw_only=True)
class Turn:
    """What one call plays: its key, its step (``index`` in the key's script, or ``None`` for
    the default answer), and the answer: ``text``, a tool call (``tool``, ``args``) and the
    ``usage`` (``None`` for a ``no_usage`` step); ``fail`` for a step that errors."""

    key: str | None
    index: int | None
    step: Step
    text: str
    tool: str | None
    args: Mapping[str, Any]
    usage: StepUsage | None
    fail: str | None

    @property
    def sleep(self) -> float:
        """Seconds the step waits before it answers."""
        return self.step.sleep


class Scripts:
    """A set of scripts and the default answer: which step a call plays, and what it says."""

    def __init__(self, scripts: object = None, answer: str = "done") -> None:
        self.scripts = load_scripts(scripts)
        self.answer = str(answer)

    def script_for(self, key: str | None) -> tuple[Step, ...]:
        """The steps of ``key``: an exact key, else the first matching glob, else none."""
        if key is not None and key in self.scripts:
            return self.scripts[key]
        for pattern, steps in self.scripts.items():
            if key is not None and fnmatch.fnmatchcase(key, pattern):
                return steps
        return self.scripts.get("*", ())

    def turn(self, messages: Sequence[Said], tools: Iterable[str], member: str | None) -> Turn:
        """What a call with ``messages`` and ``tools`` (their names) plays (``member``: see
        ``script_key``): the step at the index of the number of assistant messages so far, or,
        past the script's end, the default answer (``submit`` when a submit tool is offered)."""
        key = script_key(messages, member)
        index = sum(1 for m in messages if m.role == "assistant")
        steps = self.script_for(key)
        if index < len(steps):
            step = steps[index]
            found: int | None = index
        else:
            offers_submit = any(name == "submit" for name in tools)
            step = Step(submit=self.answer) if offers_submit else Step(reply=self.answer)
            found = None
        tool, args = step.tool, dict(step.args)
        if step.submit is not None:
            tool, args = "submit", {"answer": step.submit}
        text = "" if tool is not None else (step.reply or "")
        usage = step.usage
        if usage is None and not step.no_usage:
            said = Said("assistant", text, ((tool, args),) if tool is not None else ())
            usage = StepUsage(
                input=max(1, sum(m.chars for m in messages) // 4), output=max(1, said.chars // 4)
            )
        return Turn(
            key=key,
            index=found,
            step=step,
            text=text,
            tool=tool,
            args=args,
            usage=usage,
            fail=step.fail,
        )
