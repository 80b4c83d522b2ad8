"""The shape of a chat completions request, as the scripted server checks it.

A request the server cannot read gets a 400 with an OpenAI error body whose message names the
field (``messages[1].role: expected a string, got a number``), as OpenAI's API answers one,
instead of a 500 from deep inside the server.  Only the fields the server reads are checked:
``model``, ``messages`` (each one's ``role``, ``content`` and ``tool_calls``), ``tools``,
``stream`` and ``stream_options``; the body is parsed without recursing past
``MAX_DEPTH`` levels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypeVar

__all__ = ["MAX_DEPTH", "BadRequest", "checked_request", "too_deep"]

T = TypeVar("T")

MAX_DEPTH = 100
"""The deepest nesting of arrays and objects a request body may hold."""


class BadRequest(Exception):
    """A request the server refuses: ``param`` is the field (``None``: the body), ``message``
    says what is wrong."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


def _kind(value: object) -> str:
    """What a JSON value is, as OpenAI's errors say it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    return "an array"


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests arrays and objects deeper than ``limit`` levels (walked without
    recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            items: Sequence[object] = list(item.values())
        elif isinstance(item, list):
            items = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((v, depth + 1) for v in items)
    return False


def _expect(value: object, where: str, want: type | tuple[type, ...], what: str) -> None:
    """Refuse ``value`` unless it is ``None`` (not given) or of type ``want``."""
    if value is not None and not isinstance(value, want):
        raise BadRequest(f"{where}: expected {what}, got {_kind(value)}", where)


def _required(item: Mapping[str, object], key: str, where: str, want: type[T], what: str) -> T:
    """``item[key]``, refused unless it is of type ``want``."""
    if key not in item:
        raise BadRequest(f"{where}: missing (expected {what})", where)
    value = item[key]
    if not isinstance(value, want):
        raise BadRequest(f"{where}: expected {what}, got {_kind(value)}", where)
    return value


def _message(m: object, where: str) -> None:
    if not isinstance(m, Mapping):
        raise BadRequest(f"{where}: expected a message object, got {_kind(m)}", where)
    _required(m, "role", f"{where}.role", str, "a string")
    content = m.get("content")
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, Mapping):
                raise BadRequest(
                    f"{where}.content[{j}]: expected a content part object, got {_kind(part)}",
                    f"{where}.content[{j}]",
                )
            _expect(part.get("text"), f"{where}.content[{j}].text", str, "a string")
    else:
        _expect(content, f"{where}.content", str, "a string or an array of content parts")
    calls = m.get("tool_calls")
    _expect(calls, f"{where}.tool_calls", list, "an array of tool calls")
    for j, call in enumerate(calls or []):
        _function(call, f"{where}.tool_calls[{j}]", arguments=True)


def _function(item: object, where: str, *, arguments: bool = False) -> None:
    """A tool call or a tool: an object whose ``function`` is an object with a string ``name``
    (and, for a call, string ``arguments``)."""
    if not isinstance(item, Mapping):
        raise BadRequest(f"{where}: expected an object, got {_kind(item)}", where)
    function = _required(item, "function", f"{where}.function", dict, "an object")
    _required(function, "name", f"{where}.function.name", str, "a string")
    if arguments:
        _expect(function.get("arguments"), f"{where}.function.arguments", str, "a string")


def checked_request(raw: bytes) -> Mapping[str, object]:
    """The request ``raw`` holds, checked field by field.

    Raises:
        BadRequest: the body is not JSON, is nested deeper than ``MAX_DEPTH`` levels, is not an
            object, or a field the server reads has the wrong type; the message names the field.
    """
    try:
        body: object = json.loads(raw)
    except RecursionError:  # the parser recurses once per level
        raise BadRequest(f"the request body is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        raise BadRequest("the request body is not JSON") from None
    if too_deep(body):
        raise BadRequest(f"the request body is nested deeper than {MAX_DEPTH} levels")
    if not isinstance(body, Mapping):
        raise BadRequest(f"the request body is not a JSON object (got {_kind(body)})")
    _expect(body.get("model"), "model", str, "a string")
    messages = _required(body, "messages", "messages", list, "an array of messages")
    for i, m in enumerate(messages):
        _message(m, f"messages[{i}]")
    tools = body.get("tools")
    _expect(tools, "tools", list, "an array of tools")
    for i, tool in enumerate(tools or []):
        _function(tool, f"tools[{i}]")
    _expect(body.get("stream"), "stream", bool, "a boolean")
    options = body.get("stream_options")
    _expect(options, "stream_options", Mapping, "an object")
    if isinstance(options, Mapping):
        _expect(options.get("include_usage"), "stream_options.include_usage", bool, "a boolean")
    return body
