"""The scripted server: an OpenAI-compatible chat completions server on the loopback that plays
the same scripts as ``swarm/scripted``, and the failures real APIs have.

Inspect's own ``openai-api`` provider (``openai-api/scripted/<model>`` with
``SCRIPTED_BASE_URL``) talks to it unchanged, so a run through it goes through a real HTTP
client, the SDK's and Inspect's retries, timeouts, streaming and Inspect's usage parsing and
pricing.  A step's ``faults`` are played first, one per attempt of that call (a status such as
429 with ``Retry-After``, 500 or 503, a connection dropped part way through the response, an
answer slower than the client's timeout); the attempt after the last fault answers.  Every
attempt is logged (``ScriptedServer.attempts``) with the usage its response carried.

A request carries no swarm context, so the server keys it from its messages alone
(``script_key`` with an unknown member): a conversation whose user message says
``You are <name>,`` (a member's preamble) plays ``<name>``'s script; any other is a subagent's,
keyed ``/<name>`` from its system prompt's ``You are <name>,`` or ``/sub`` (so ``*/sub``
scripts match on the server as in process).  Attempts are counted per conversation: a retry
sends the same messages, so it is the next attempt of the same call.
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import attrs
import uvicorn
from inspect_ai.model import GenerateConfig, Model, get_model
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from swarm.testing._requests import BadRequest, checked_request, too_deep
from swarm.testing._script import Fault, Said, Scripts, StepUsage, Turn

__all__ = ["Attempt", "ScriptedServer", "completion_usage", "said_from_openai"]

HOST = "127.0.0.1"
SERVICE = "scripted"
"""The ``openai-api`` service name: ``openai-api/scripted/<model>`` reads ``SCRIPTED_BASE_URL``
and ``SCRIPTED_API_KEY``."""


@attrs.define
class Attempt:
    """One request the server received: one attempt of one model call.

    ``key``, ``index`` and ``turn`` are the script key, the step played (``None``: the default
    answer) and the number of assistant messages before it; ``attempt`` counts the attempts of
    this call (1 for the first); ``fault`` names the fault played (``"429"``, ``"500"``,
    ``"drop"``, ``"slow"``...) or is ``None`` for an answer; ``status`` is the HTTP status sent
    (``None`` when the connection was dropped); ``usage`` the usage the response carried
    (``None``: none); ``stream`` whether the client asked for a stream; ``delivered`` whether
    the whole response went to a client still connected (``False`` for a call the client gave
    up on, such as one cancelled in flight, or timed out); ``done`` whether the server finished
    with it.
    """

    key: str | None
    index: int | None
    turn: int
    attempt: int
    model: str
    stream: bool
    fault: str | None = None
    status: int | None = None
    usage: StepUsage | None = None
    delivered: bool = False
    done: bool = False
    started: float = attrs.field(factory=time.monotonic)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def _arguments(raw: object) -> Mapping[str, Any]:
    """A tool call's arguments: the JSON object they hold; else ``""`` mapped to the JSON value
    they hold (not an object) or to the text itself (not JSON, or an object nested too deep to
    walk)."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        return {"": raw}
    if not isinstance(value, Mapping):
        return {"": value}
    return {"": raw} if too_deep(value) else value


def said_from_openai(messages: Sequence[Mapping[str, Any]]) -> list[Said]:
    """OpenAI chat messages as scripts see them (``developer`` is a system message)."""
    found = []
    for m in messages:
        role = str(m.get("role", ""))
        calls = tuple(
            (str(tc["function"]["name"]), _arguments(tc["function"].get("arguments")))
            for tc in m.get("tool_calls") or []
            if isinstance(tc, Mapping) and "function" in tc
        )
        found.append(
            Said("system" if role == "developer" else role, _text(m.get("content")), calls)
        )
    return found


def completion_usage(usage: StepUsage) -> dict[str, Any]:
    """A step's usage as an OpenAI completion reports it: the prompt counts the cached and the
    cache-written tokens, the completion counts the reasoning tokens."""
    prompt = usage.input + (usage.cache_read or 0) + (usage.cache_write or 0)
    found: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output,
        "total_tokens": prompt + usage.output,
    }
    details = {
        k: v
        for k, v in (("cached_tokens", usage.cache_read), ("cache_write_tokens", usage.cache_write))
        if v is not None
    }
    if details:
        found["prompt_tokens_details"] = details
    if usage.reasoning is not None:
        found["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning}
    return found


class _Played(Response):
    """A response the server writes itself, message by message (to drop it part way)."""

    def __init__(self, play: Callable[[Receive, Send], Awaitable[None]]) -> None:
        self._play = play

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._play(receive, send)


async def _connected_after(seconds: float, receive: Receive) -> bool:
    """Wait ``seconds`` unless the client disconnects first; whether it is still connected."""
    gone = False
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            nonlocal gone
            while True:
                message: Message = await receive()
                if message["type"] == "http.disconnect":
                    gone = True
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(watch)
        await anyio.sleep(seconds)
        tg.cancel_scope.cancel()
    return not gone


class ScriptedServer:
    """The scripted server: start it, point Inspect's ``openai-api`` provider at
    ``base_url``, read ``attempts``.

    One server can serve many runs: ``load()`` gives it new scripts and forgets what it saw.
    It listens on 127.0.0.1 only; ``port=0`` (the default) takes a free port.
    """

    def __init__(self, scripts: object = None, *, answer: str = "done", port: int = 0) -> None:
        self._lock = threading.Lock()
        self._requested_port = port
        self._thread: threading.Thread | None = None
        self._server: uvicorn.Server | None = None
        self._socket: socket.socket | None = None
        self.load(scripts, answer=answer)

    # -- state -----------------------------------------------------------------------------

    def load(self, scripts: object = None, *, answer: str = "done") -> None:
        """Play ``scripts`` from now on (a mapping, YAML/JSON text or file), forgetting every
        attempt seen so far."""
        played = Scripts(scripts, answer)
        with self._lock:
            self.scripts = played
            self._attempts: list[Attempt] = []
            self._counts: dict[tuple[str | None, int, str], int] = {}

    @property
    def attempts(self) -> list[Attempt]:
        """Every attempt received since the last ``load()``, in order of arrival."""
        with self._lock:
            return list(self._attempts)

    def attempts_of(self, key: str | None) -> list[Attempt]:
        """The attempts whose script key is ``key``."""
        return [a for a in self.attempts if a.key == key]

    # -- lifetime --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port it listens on (once started)."""
        if self._socket is None:
            raise RuntimeError("the scripted server is not started")
        port: int = self._socket.getsockname()[1]
        return port

    @property
    def base_url(self) -> str:
        """The base URL to give the ``openai-api`` provider (``SCRIPTED_BASE_URL``)."""
        return f"http://{HOST}:{self.port}/v1"

    def start(self, timeout: float = 10.0) -> ScriptedServer:
        """Start serving in a thread of its own; returns once it accepts connections."""
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, self._requested_port))
        self._socket = sock
        config = uvicorn.Config(
            self.app(),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            http="h11",
            ws="none",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="swarm-scripted-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the scripted server did not start")
            time.sleep(0.01)  # noqa: TID251  (the caller's thread waits for the server's)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving: requests in progress get about a second, then are cancelled."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                self._thread.join(timeout)
        if self._socket is not None:
            self._socket.close()
        self._thread = self._server = self._socket = None

    def model(
        self, name: str = "model", *, config: GenerateConfig | None = None, **model_args: Any
    ) -> Model:
        """Inspect's ``openai-api`` provider pointed at this server: ``openai-api/scripted/<name>``
        (not memoized), with bounded retries unless ``config`` says otherwise (Inspect's
        default retries forever): ``max_retries=2`` and ``timeout=120`` of Inspect's, on top of
        the OpenAI client's own 2 retries.  ``model_args`` go to the provider (``stream=True``,
        ``client_timeout=...``, ``max_retries=...`` for the client's retries...)."""
        bounded = GenerateConfig(max_retries=2, timeout=120)
        return get_model(
            f"openai-api/{SERVICE}/{name}",
            base_url=self.base_url,
            api_key=SERVICE,
            config=bounded.merge(config) if config is not None else bounded,
            memoize=False,
            **model_args,
        )

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Run in the calling thread until interrupted (the ``swarm scripted-server`` command)."""
        self.start()
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(0.5)
        finally:
            self.stop()

    # -- the app ---------------------------------------------------------------------------

    def app(self) -> Starlette:
        """The ASGI app: ``POST /v1/chat/completions`` and ``GET /v1/models``."""
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._completions, methods=["POST"]),
                Route("/chat/completions", self._completions, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": []})

    def _begin(self, body: Mapping[str, Any]) -> tuple[Attempt, Turn]:
        messages = said_from_openai(body.get("messages") or [])
        tools = [
            str(t["function"]["name"])
            for t in body.get("tools") or []
            if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
        ]
        digest = hashlib.sha256(
            json.dumps(body.get("messages") or [], sort_keys=True, default=str).encode()
        ).hexdigest()
        with self._lock:
            turn = self.scripts.turn(messages, tools, member="")
            where = (turn.key, sum(1 for m in messages if m.role == "assistant"), digest)
            self._counts[where] = number = self._counts.get(where, 0) + 1
            attempt = Attempt(
                key=turn.key,
                index=turn.index,
                turn=where[1],
                attempt=number,
                model=str(body.get("model", "")),
                stream=bool(body.get("stream")),
            )
            self._attempts.append(attempt)
        return attempt, turn

    async def _completions(self, request: Request) -> Response:
        try:
            body = checked_request(await request.body())
        except BadRequest as ex:  # OpenAI's answer to a request of the wrong shape
            return _error(400, ex.message, ex.param)
        attempt, turn = self._begin(body)
        faults = turn.step.faults
        fault = faults[attempt.attempt - 1] if attempt.attempt <= len(faults) else None
        options = body.get("stream_options")
        include_usage = isinstance(options, Mapping) and options.get("include_usage") is True

        async def play(receive: Receive, send: Send) -> None:
            try:
                await self._play(attempt, turn, fault, include_usage, receive, send)
            finally:
                attempt.done = True

        return _Played(play)

    async def _play(
        self,
        attempt: Attempt,
        turn: Turn,
        fault: Fault | None,
        include_usage: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        # the attempt's log is written before the response's last bytes are sent, so a client
        # that has the response also finds it in the log
        attempt.fault = None if fault is None else fault.name
        if fault is not None and fault.status is not None:
            headers = {}
            if fault.retry_after is not None:
                headers["retry-after"] = str(math.ceil(fault.retry_after))
                headers["retry-after-ms"] = str(round(fault.retry_after * 1000))
            attempt.status, attempt.delivered = fault.status, True
            body = _error_body(fault.status, f"scripted fault {fault.status}")
            await _start(send, fault.status, "application/json", len(body), headers)
            await _body(send, body, more=False)
            return
        wait = turn.sleep + ((fault.slow or 0.0) if fault is not None else 0.0)
        if wait > 0 and not await _connected_after(wait, receive):
            return  # the client gave up (a timeout, a cancelled call): nothing is sent
        if turn.fail is not None:
            attempt.status, attempt.delivered = 400, True
            body = _error_body(400, turn.fail)
            await _start(send, 400, "application/json", len(body), {})
            await _body(send, body, more=False)
            return
        dropped = fault is not None and fault.drop
        if attempt.stream:
            pieces = _chunks(attempt, turn, include_usage)
            await _start(send, 200, "text/event-stream", None, {})
        else:
            payload = json.dumps(_completion(attempt, turn)).encode()
            pieces = [payload[: len(payload) // 2], payload[len(payload) // 2 :]]
            await _start(send, 200, "application/json", len(payload), {})
        for piece in pieces[: max(1, len(pieces) // 2)] if dropped else pieces[:-1]:
            await _body(send, piece, more=True)
        if dropped:
            return  # the connection closes with the response part way through
        attempt.status, attempt.delivered = 200, True
        attempt.usage = turn.usage if include_usage or not attempt.stream else None
        await _body(send, pieces[-1], more=False)


async def _start(
    send: Send, status: int, kind: str, length: int | None, headers: Mapping[str, str]
) -> None:
    values = {"content-type": kind, **headers}
    if length is not None:
        values["content-length"] = str(length)
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in values.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})


async def _body(send: Send, data: bytes, *, more: bool) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": more})


def _error_body(status: int, message: str, param: str | None = None) -> bytes:
    """An OpenAI error body: the message, the error's type, the field (``param``, ``None``
    when it is not about one) and the status as its code."""
    kind = {429: "rate_limit_error", 400: "invalid_request_error"}.get(status, "server_error")
    error = {"message": message, "type": kind, "param": param, "code": str(status)}
    return json.dumps({"error": error}).encode()


def _error(status: int, message: str, param: str | None = None) -> Response:
    return Response(_error_body(status, message, param), status, media_type="application/json")


def _tool_call(attempt: Attempt, turn: Turn) -> dict[str, Any]:
    return {
        "id": f"call_{attempt.turn}_{turn.tool}",
        "type": "function",
        "function": {"name": turn.tool, "arguments": json.dumps(dict(turn.args))},
    }


def _completion(attempt: Attempt, turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool is not None:
        message["tool_calls"] = [_tool_call(attempt, turn)]
    found: dict[str, Any] = {
        "id": f"chatcmpl-scripted-{attempt.turn}-{attempt.attempt}",
        "object": "chat.completion",
        "created": 0,
        "model": attempt.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if turn.tool is not None else "stop",
            }
        ],
    }
    if turn.usage is not None:
        found["usage"] = completion_usage(turn.usage)
    return found


def _chunks(attempt: Attempt, turn: Turn, include_usage: bool) -> list[bytes]:
    """The completion as server-sent events: the role, the text in two pieces, the tool call
    (its arguments in two pieces), the finish reason, the usage when asked for, ``[DONE]``."""
    base = {
        "id": f"chatcmpl-scripted-{attempt.turn}-{attempt.attempt}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": attempt.model,
    }

    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n".encode()

    def delta(value: dict[str, Any], finish: str | None = None) -> bytes:
        return event([{"index": 0, "delta": value, "finish_reason": finish}])

    found = [delta({"role": "assistant", "content": ""})]
    half = len(turn.text) // 2
    for piece in (turn.text[:half], turn.text[half:]):
        if piece:
            found.append(delta({"content": piece}))
    if turn.tool is not None:
        call = _tool_call(attempt, turn)
        arguments = call["function"]["arguments"]
        cut = len(arguments) // 2
        found.append(
            delta(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": turn.tool, "arguments": arguments[:cut]},
                        }
                    ]
                }
            )
        )
        found.append(
            delta({"tool_calls": [{"index": 0, "function": {"arguments": arguments[cut:]}}]})
        )
    found.append(delta({}, "tool_calls" if turn.tool is not None else "stop"))
    if include_usage and turn.usage is not None:
        found.append(event([], usage=completion_usage(turn.usage)))
    found.append(b"data: [DONE]\n\n")
    return found
