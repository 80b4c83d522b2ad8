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
import reprlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from swarm.errors import ConfigError
from swarm.testing._script_file import MAX_DEPTH, parsed_scripts

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
    "poll",
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
    "until",
}
_USAGE_KEYS = ("input", "output", "cache_read", "cache_write", "reasoning")
_FAULT_KEYS = {"status", "retry_after", "drop", "slow"}

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60

MAX_SECONDS = 86_400
"""The longest a step's ``sleep``, a fault's ``slow`` or ``retry_after`` may be (a day)."""
MAX_REPEATS = 1_000
"""The most turns a step with ``until`` plays before the script moves on without its texts."""


def _shown(value: object) -> str:
    """``value``'s ``repr``, shortened (a message stays one readable line)."""
    return _REPR.repr(value)


def _seconds(value: object, where: str) -> float:
    """``value`` as seconds: a finite number in [0, ``MAX_SECONDS``]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 <= value <= MAX_SECONDS  # False for nan
    ):
        raise ConfigError(
            f"{where}: expected a finite number of seconds in [0, {MAX_SECONDS}], "
            f"got {_shown(value)}"
        )
    return float(value)


def _tokens(value: object, where: str) -> int:
    """``value`` as a token count: a whole number >= 0 (``3.0`` is 3)."""
    whole = int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(whole, bool) or not isinstance(whole, int) or whole < 0:
        raise ConfigError(f"{where}: expected a whole number >= 0, got {_shown(value)}")
    return whole


def _status(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 400 <= value <= 599:
        raise ConfigError(f"{where}: expected an HTTP error status (400-599), got {_shown(value)}")
    return value


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {_shown(value)}")
    return value


def _string(value: object, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {_shown(value)}")
    return value


def _json_problem(value: object, where: str) -> str | None:
    """Why ``value`` is not JSON data nested at most ``MAX_DEPTH`` levels (the path of the first
    value that is not), or ``None``; walks it without recursion.  A non-finite number is kept:
    it is what a hostile model's tool call can hold (Python's JSON reads and writes ``NaN`` and
    ``Infinity``), and the tools' refusal of it is tested so."""
    stack: list[tuple[object, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple) and depth >= MAX_DEPTH:
            return f"{path}: nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, Mapping):
            for k, v in item.items():
                if not isinstance(k, str):
                    return f"{path}: expected string keys, got {_shown(k)}"
                stack.append((v, f"{path}.{k}", depth + 1))
        elif isinstance(item, list | tuple):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(item))
        elif item is not None and not isinstance(item, str | int | float):
            return (
                f"{path}: expected JSON data (strings, numbers, booleans, null, lists, "
                f"mappings), got {_shown(item)}"
            )
    return None


@attrs.frozen(kw_only=True)
class StepUsage:
    """The usage a step reports, in Inspect's terms.

    ``input`` is the input not read from or written to the cache (Inspect's ``input_tokens``),
    ``output`` the output (reasoning included, Inspect's ``output_tokens``), and the optional
    ``cache_read``, ``cache_write`` and ``reasoning`` are Inspect's ``input_tokens_cache_read``,
    ``input_tokens_cache_write`` and ``reasoning_tokens`` (``None``: not reported).  Each is a
    whole number >= 0.
    """

    input: int
    output: int
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None

    def __attrs_post_init__(self) -> None:
        for key in _USAGE_KEYS:
            value = getattr(self, key)
            if value is not None or key in ("input", "output"):
                _tokens(value, f"StepUsage.{key}")

    @property
    def total(self) -> int:
        """Every token: input, both cache figures and output (reasoning is part of output)."""
        return self.input + self.output + (self.cache_read or 0) + (self.cache_write or 0)


def _usage(value: object, where: str = "Step.usage") -> StepUsage | None:
    if value is None or isinstance(value, StepUsage):
        return value
    if isinstance(value, Mapping):
        extra = sorted(set(value) - set(_USAGE_KEYS), key=str)
        if extra or "input" not in value or "output" not in value:
            raise ConfigError(
                f"{where}: expected input and output (and optionally cache_read, "
                f"cache_write, reasoning), got {sorted(value, key=str)}"
            )
        given = {
            k: None if value.get(k) is None else _tokens(value[k], f"{where}.{k}")
            for k in ("cache_read", "cache_write", "reasoning")
        }
        return StepUsage(
            input=_tokens(value["input"], f"{where}.input"),
            output=_tokens(value["output"], f"{where}.output"),
            **given,
        )
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        return StepUsage(
            input=_tokens(value[0], f"{where}[0]"), output=_tokens(value[1], f"{where}[1]")
        )
    raise ConfigError(
        f"{where}: expected [input_tokens, output_tokens] or a mapping with input, "
        f"output, cache_read, cache_write, reasoning; got {_shown(value)}"
    )


@attrs.frozen(kw_only=True)
class Fault:
    """One failed attempt the scripted server plays before a step's answer.

    Exactly one of ``status`` (an HTTP error status, such as 429, 500 or 503, with an OpenAI
    error body and, when ``retry_after`` is set, ``Retry-After`` and ``retry-after-ms``
    headers), ``drop`` (the connection is closed part way through the response) and ``slow``
    (the answer is sent only after this many seconds, normally past the client's timeout).
    ``retry_after`` and ``slow`` are finite numbers of seconds in [0, ``MAX_SECONDS``].
    """

    status: int | None = None
    retry_after: float | None = None
    drop: bool = False
    slow: float | None = None

    def __attrs_post_init__(self) -> None:
        _check_fault(self.status, self.retry_after, self.drop, self.slow, "Fault")

    @property
    def name(self) -> str:
        """How the server's log names this fault: the status, ``drop`` or ``slow``."""
        if self.status is not None:
            return str(self.status)
        return "drop" if self.drop else "slow"


def _check_fault(
    status: object, retry_after: object, drop: object, slow: object, where: str
) -> None:
    """Refuse a fault that is not exactly one of status, drop and slow, or has a value out of
    range, naming the field."""
    kinds = [
        k
        for k, on in (("status", status is not None), ("drop", drop), ("slow", slow is not None))
        if on
    ]
    if len(kinds) != 1:
        raise ConfigError(
            f"{where}: give exactly one of status, drop, slow (got {', '.join(kinds) or 'none'})"
        )
    if status is not None:
        _status(status, f"{where}.status")
    _flag(drop, f"{where}.drop")
    if slow is not None:
        _seconds(slow, f"{where}.slow")
    if retry_after is not None:
        if status is None:
            raise ConfigError(f"{where}.retry_after: goes with a status (such as 429)")
        _seconds(retry_after, f"{where}.retry_after")


def _fault(value: object, where: str) -> Fault:
    if isinstance(value, Fault):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Fault(status=_status(value, where))
    if value == "drop":
        return Fault(drop=True)
    if isinstance(value, Mapping):
        extra = sorted(set(value) - _FAULT_KEYS, key=str)
        if extra:
            raise ConfigError(
                f"{where}: unknown key(s) {extra}; expected some of {sorted(_FAULT_KEYS)}"
            )
        status, retry_after, slow = (value.get(k) for k in ("status", "retry_after", "slow"))
        drop = value.get("drop", False)
        _check_fault(status, retry_after, drop, slow, where)
        return Fault(
            status=status,
            retry_after=None if retry_after is None else float(retry_after),
            drop=drop,
            slow=None if slow is None else float(slow),
        )
    raise ConfigError(
        f"{where}: expected an HTTP status (429), 'drop', or a mapping such as "
        f"{{status: 429, retry_after: 0.01}} or {{slow: 5}}; got {_shown(value)}"
    )


def _faults(value: object, where: str = "Step.faults") -> tuple[Fault, ...]:
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ConfigError(f"{where}: expected a list of faults, got {_shown(value)}")
    return tuple(_fault(f, f"{where}[{i}]") for i, f in enumerate(value))


def _until(value: object, where: str = "Step.until") -> tuple[str, ...]:
    if value is None or value == ():  # not given (an empty list given is refused)
        return ()
    texts = [value] if isinstance(value, str) else value
    if (
        not isinstance(texts, Sequence)
        or not texts
        or not all(isinstance(t, str) and t for t in texts)
    ):
        raise ConfigError(
            f"{where}: expected a text, or a list of texts, to wait for in the call's results "
            f"(each not empty), got {_shown(value)}"
        )
    return tuple(texts)


@attrs.frozen(kw_only=True)
class Step:
    """One scripted model turn.  Exactly one of ``tool``, ``reply``, ``submit``, ``fail``.

    ``sleep`` seconds pass before the turn completes (a finite number in [0,
    ``MAX_SECONDS``]); ``usage`` overrides the computed token counts (``(input, output)``, or a
    ``StepUsage`` with cache and reasoning tokens); ``no_usage`` reports no usage at all.
    ``faults`` are the attempts the scripted server fails before it answers (the in-process
    model, which has no transport, ignores them).
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
    until: tuple[str, ...] = attrs.field(default=(), converter=_until)

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
        if self.until:
            data["until"] = list(self.until)
        return data

    def __attrs_post_init__(self) -> None:
        kinds = [k for k in ("tool", "reply", "submit", "fail") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ConfigError(
                "Step: give exactly one of tool, reply, submit, fail "
                f"(got {', '.join(kinds) or 'none'})"
            )
        if self.no_usage and self.usage is not None:
            raise ConfigError("Step: give usage or no_usage, not both")
        if self.until and self.tool is None:
            raise ConfigError(
                "Step: until goes with a tool step (a poll waits for the tool's results), "
                f"not with {kinds[0]}"
            )
        _seconds(self.sleep, "Step.sleep")


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


def poll(step: Step, *texts: str) -> Step:
    """``step`` (a tool call) played again and again until its results hold every one of
    ``texts``: ``poll(pause(0.5, call("read_messages")), 'from="w1"', 'from="w2"')``."""
    return attrs.evolve(step, until=texts)


def _step_from(data: object, where: str) -> Step:
    """The step ``data`` gives, every field checked first, so an error names its path
    (``scripts['a'][2].usage.input``)."""
    if isinstance(data, Step):
        return data
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{where}: expected a step mapping such as {{submit: '42'}}, got {_shown(data)}"
        )
    extra = sorted(set(data) - _STEP_KEYS, key=str)
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {extra}; expected some of {sorted(_STEP_KEYS)}")
    args = data.get("args")
    if args is not None and not isinstance(args, Mapping):
        raise ConfigError(
            f"{where}.args: expected a mapping of argument to value, got {_shown(args)}"
        )
    problem = _json_problem(args, f"{where}.args")
    if problem is not None:
        raise ConfigError(problem)
    answer = data.get("submit")
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        answer = str(answer)
    texts = {k: _string(data.get(k), f"{where}.{k}") for k in ("tool", "reply", "fail")}
    fields: dict[str, Any] = {
        **texts,
        "args": dict(args or {}),
        "submit": _string(answer, f"{where}.submit"),
        "sleep": _seconds(data.get("sleep", 0.0), f"{where}.sleep"),
        "usage": _usage(data.get("usage"), f"{where}.usage"),
        "no_usage": _flag(data.get("no_usage", False), f"{where}.no_usage"),
        "faults": _faults(data.get("faults"), f"{where}.faults"),
        "until": _until(data.get("until"), f"{where}.until"),
    }
    try:
        return Step(**fields)
    except ConfigError as ex:  # the checks across fields, made by the step itself
        raise ConfigError(f"{where}: {str(ex).removeprefix('Step: ')}") from None


def load_scripts(value: object) -> dict[str, tuple[Step, ...]]:
    """Scripts from a mapping, YAML text, or the path of a YAML/JSON file (a ``Path``, or a
    one-line string ending in ``.yaml``, ``.yml`` or ``.json``).

    Raises:
        ConfigError: the scripts are not a mapping of key to a list of steps, or a step is
            wrong; the message names the field (``scripts['a'][2].usage.input``), after the
            file's name when they came from a file.  A file that cannot be read or parsed:
            see ``parsed_scripts``.
    """
    if value is None:
        return {}
    path = None
    if isinstance(value, str | Path):
        value, path = parsed_scripts(value)
    try:
        return _scripts_from(value)
    except ConfigError as ex:
        raise ConfigError(str(ex) if path is None else f"{path}: {ex}") from None


def _scripts_from(value: object) -> dict[str, tuple[Step, ...]]:
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"scripts: expected a mapping of member name to steps, got {_shown(value)}"
        )
    scripts: dict[str, tuple[Step, ...]] = {}
    for key, steps in value.items():
        if not isinstance(steps, Sequence) or isinstance(steps, str):
            raise ConfigError(f"scripts[{key!r}]: expected a list of steps, got {_shown(steps)}")
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
    ``<member>/<name>`` when a user message of it says ``You are <name>,`` (the task its
    member gave it: a Codex CLI member's ``spawn_agent`` message, whose system prompt is
    Codex's own) or else its system prompt does (a deepagent subagent's), and
    ``<member>/sub`` when neither does (``/<name>`` and ``/sub`` from the server).  Outside a
    swarm the key is the preamble's name, or ``None``.
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
    if named is not None:
        return f"{member}/{named}"
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


def step_index(messages: Sequence[Said], steps: Sequence[Step]) -> int:
    """The index of the step a call with ``messages`` plays: each assistant message so far
    played one step, and moved the script on unless that step polls (``until``) and neither
    its calls' results, counted from the poll's first turn, nor the user messages that reached
    the agent after its first turn (an agent CLI's news: a Codex sub-agent's notification)
    hold every text yet."""
    index, repeats, seen = 0, 0, ""
    news = ""  # what reached the agent as a user message after its first turn, so far
    started = False
    for at, m in enumerate(messages):
        if m.role != "assistant":
            news += f"{m.text}\n" if started and m.role == "user" else ""
            continue
        started = True
        step = steps[index] if index < len(steps) else None
        if step is None or not step.until:
            index += 1
            continue
        repeats += 1
        results = _results(messages, at)
        seen += "\n".join(r.text for r in results) + "\n"
        arrived = news + "\n".join(r.text for r in results if r.role == "user")
        if repeats >= MAX_REPEATS or all(text in seen or text in arrived for text in step.until):
            index, repeats, seen = index + 1, 0, ""
    return index


def _results(messages: Sequence[Said], at: int) -> list[Said]:
    """The tool results that answer the assistant message at ``at``, and the user messages
    that arrived with them (an agent CLI puts what reaches it mid-turn there: a Codex
    sub-agent's ``<subagent_notification>``)."""
    found = []
    for m in messages[at + 1 :]:
        if m.role not in ("tool", "user"):
            break
        found.append(m)
    return found


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
        steps = self.script_for(key)
        index = step_index(messages, steps)
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
