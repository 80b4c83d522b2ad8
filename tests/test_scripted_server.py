"""The scripted server: how it keys a request, plays a step's faults attempt by attempt, answers
in OpenAI's format (streamed or not) with the step's usage, and logs every attempt; the same
script semantics as the in-process model (one piece of code); the fixture and the command."""

from __future__ import annotations

import datetime
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from inspect_ai.agent import react
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ToolCall,
    get_model,
)

from swarm import ConfigError, UsageError, member, swarm
from swarm.testing import Fault, ScriptedServer, Step, StepUsage, run_eval
from swarm.testing._script import Scripts, load_scripts, script_key
from swarm.testing._scripted import said
from swarm.testing._server import completion_usage, said_from_openai

SCRIPTS = {
    "a": [
        {"tool": "noop", "args": {"i": 1}, "usage": [100, 10]},
        {"submit": "42", "usage": {"input": 80, "output": 12, "cache_read": 300, "reasoning": 4}},
    ],
    "*/sub": [{"reply": "sub report", "usage": [7, 3]}],
    "*/researcher": [{"reply": "found it", "usage": [9, 1]}],
    "flaky": [
        {
            "reply": "at last",
            "usage": [20, 2],
            "faults": [{"status": 429, "retry_after": 0.01}, 503, "drop", {"slow": 0.05}],
        }
    ],
}


def post(server: ScriptedServer, messages: list[dict[str, Any]], **body: Any) -> httpx.Response:
    with httpx.Client(timeout=10) as client:
        return client.post(
            f"{server.base_url}/chat/completions",
            json={"model": "m", "messages": messages, **body},
        )


def preamble(name: str) -> dict[str, str]:
    return {"role": "user", "content": f"You are {name}, one of 2 agents in a swarm."}


def test_the_server_keys_a_request_by_the_preamble_and_subagents_by_their_system_prompt(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.load(SCRIPTS)
    task = {"role": "user", "content": "What is 6 * 7?"}
    post(scripted_server, [task, preamble("a")])
    post(scripted_server, [{"role": "developer", "content": "You are researcher, a helper."}, task])
    post(scripted_server, [task])
    assert [(a.key, a.index, a.usage) for a in scripted_server.attempts] == [
        ("a", 0, StepUsage(input=100, output=10)),
        ("/researcher", 0, StepUsage(input=9, output=1)),
        ("/sub", 0, StepUsage(input=7, output=3)),
    ]


def test_a_tool_call_and_a_submit_with_cache_and_reasoning_tokens_in_openai_form(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.load(SCRIPTS)
    first = post(scripted_server, [preamble("a")]).json()
    assert first["choices"][0]["message"]["tool_calls"][0]["function"] == {
        "name": "noop",
        "arguments": '{"i": 1}',
    }
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    assert first["usage"] == {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    second = post(
        scripted_server,
        [preamble("a"), first["choices"][0]["message"], {"role": "tool", "content": "ok"}],
    ).json()
    assert second["choices"][0]["message"]["tool_calls"][0]["function"] == {
        "name": "submit",
        "arguments": '{"answer": "42"}',
    }
    # the prompt counts the cached tokens, the completion the reasoning tokens
    assert second["usage"] == {
        "prompt_tokens": 380,
        "completion_tokens": 12,
        "total_tokens": 392,
        "prompt_tokens_details": {"cached_tokens": 300},
        "completion_tokens_details": {"reasoning_tokens": 4},
    }


def test_faults_are_played_one_per_attempt_then_the_answer(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.load(SCRIPTS)
    messages = [preamble("flaky")]
    limited = post(scripted_server, messages)
    assert limited.status_code == 429
    assert (limited.headers["retry-after"], limited.headers["retry-after-ms"]) == ("1", "10")
    assert limited.json()["error"]["type"] == "rate_limit_error"
    assert post(scripted_server, messages).status_code == 503
    with pytest.raises(httpx.RemoteProtocolError):
        post(scripted_server, messages)
    with httpx.Client(timeout=0.01) as client, pytest.raises(httpx.ReadTimeout):
        client.post(f"{scripted_server.base_url}/chat/completions", json={"messages": messages})
    answer = post(scripted_server, messages)
    assert answer.json()["choices"][0]["message"]["content"] == "at last"
    deadline = time.monotonic() + 5
    while not all(a.done for a in scripted_server.attempts) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [
        (a.attempt, a.fault, a.status, a.delivered, a.usage) for a in scripted_server.attempts
    ] == [
        (1, "429", 429, True, None),
        (2, "503", 503, True, None),
        (3, "drop", None, False, None),
        (4, "slow", None, False, None),  # the client had gone when the answer was due
        (5, None, 200, True, StepUsage(input=20, output=2)),
    ]
    # another conversation of the same member is another call: its faults start again
    assert (
        post(scripted_server, [*messages, {"role": "user", "content": "again"}]).status_code == 429
    )


def test_a_streamed_answer_carries_the_usage_when_asked(scripted_server: ScriptedServer) -> None:
    scripted_server.load(SCRIPTS)
    body = {"stream": True, "stream_options": {"include_usage": True}}
    response = post(scripted_server, [preamble("a")], **body)
    events = [
        json.loads(line[len("data: ") :])
        for line in response.text.splitlines()
        if line.startswith("data: {")
    ]
    assert response.text.endswith("data: [DONE]\n\n")
    arguments = "".join(
        tc["function"].get("arguments", "")
        for e in events
        for c in e["choices"]
        for tc in c["delta"].get("tool_calls", [])
    )
    assert arguments == '{"i": 1}'
    assert events[-1]["usage"] == {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
    }
    post(scripted_server, [preamble("a")], stream=True)  # no usage asked for: none sent
    assert [(a.stream, a.usage) for a in scripted_server.attempts] == [
        (True, StepUsage(input=100, output=10)),
        (True, None),
    ]


def test_a_fail_step_is_a_400_the_client_does_not_retry(scripted_server: ScriptedServer) -> None:
    scripted_server.load({"*": [{"fail": "model API down"}]})
    response = post(scripted_server, [preamble("x")])
    assert (response.status_code, response.json()["error"]["message"]) == (400, "model API down")


def test_the_server_and_the_in_process_model_play_the_same_turn() -> None:
    """One piece of code: the server's view of the OpenAI messages and the in-process model's
    view of Inspect's messages give the same key, step and usage (the default usage too)."""
    scripts = Scripts({"a": [Step(reply="thinking"), Step(tool="noop", args={"i": 2})]})
    inspect_messages = [
        ChatMessageSystem(content="Be brief."),
        ChatMessageUser(content="You are a, one of 2 agents."),
        ChatMessageAssistant(
            content="", tool_calls=[ToolCall(id="c1", function="noop", arguments={"i": 1})]
        ),
    ]
    openai_messages = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "You are a, one of 2 agents."}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "noop", "arguments": '{"i":1}'},
                }
            ],
        },
    ]
    in_process = scripts.turn(said(inspect_messages), ["noop"], member="a")
    served = scripts.turn(said_from_openai(openai_messages), ["noop"], member="")
    assert in_process == served
    assert (served.key, served.index, served.tool, served.usage) == (
        "a",
        1,
        "noop",
        StepUsage(input=(9 + 27 + 4 + 8) // 4, output=(4 + 8) // 4),
    )


def test_script_keys_in_process_and_on_the_server() -> None:
    from swarm.testing._script import Said

    member_own = [Said("user", "You are a, one of 2 agents.")]
    subagent = [Said("system", "You are researcher, a helper."), Said("user", "look")]
    bare = [Said("user", "look")]
    # a task given to a subagent naming it (a Codex member's spawn_agent message) beats a
    # vendor's system prompt, and the member's own name in a subagent's task is not the member's
    tasked = [Said("system", "You are researcher, a helper."), Said("user", "You are reader-b,")]
    assert [script_key(m, "a") for m in (member_own, subagent, bare, tasked)] == [
        "a",
        "a/researcher",
        "a/sub",
        "a/reader-b",
    ]
    assert [script_key(m, "") for m in (member_own, subagent, bare)] == ["a", "/researcher", "/sub"]
    assert [script_key(m, None) for m in (member_own, subagent, bare)] == ["a", None, None]


def test_usage_for_openai_counts_cache_writes_in_the_prompt() -> None:
    usage = StepUsage(input=10, output=5, cache_write=40)
    assert completion_usage(usage) == {
        "prompt_tokens": 50,
        "completion_tokens": 5,
        "total_tokens": 55,
        "prompt_tokens_details": {"cache_write_tokens": 40},
    }
    assert usage.total == 55


def test_bad_faults_are_config_errors_naming_the_step() -> None:
    with pytest.raises(ConfigError) as info:
        Scripts({"a": [{"reply": "x", "faults": [{"status": 200}]}]})
    assert str(info.value) == (
        "scripts['a'][0].faults[0].status: expected an HTTP error status (400-599), got 200"
    )
    with pytest.raises(ConfigError) as info:
        Scripts({"a": [{"reply": "x", "faults": ["slow"]}]})
    assert str(info.value).startswith("scripts['a'][0].faults[0]: expected an HTTP status (429)")
    with pytest.raises(ConfigError) as info:
        Scripts({"a": [{"reply": "x", "usage": {"input": 1}}]})
    assert str(info.value) == (
        "scripts['a'][0].usage: expected input and output (and optionally cache_read, "
        "cache_write, reasoning), got ['input']"
    )


SECONDS = "expected a finite number of seconds in [0, 86400], got"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        # issue 39: each was accepted (a negative wait, one that never ends, a header of "inf")
        ({"faults": [{"slow": -5}]}, f".faults[0].slow: {SECONDS} -5"),
        ({"faults": [{"slow": math.inf}]}, f".faults[0].slow: {SECONDS} inf"),
        (
            {"faults": [{"status": 429, "retry_after": math.inf}]},
            f".faults[0].retry_after: {SECONDS} inf",
        ),
        ({"faults": [{"status": 429, "retry_after": -1}]}, f".faults[0].retry_after: {SECONDS} -1"),
        (
            {"faults": [{"status": 429, "retry_after": math.nan}]},
            f".faults[0].retry_after: {SECONDS} nan",
        ),
        ({"faults": [{"slow": 86401}]}, f".faults[0].slow: {SECONDS} 86401"),
        (
            {"faults": [{"drop": True, "retry_after": 1}]},
            ".faults[0].retry_after: goes with a status (such as 429)",
        ),
        ({"faults": [{"drop": "no"}]}, ".faults[0].drop: expected true or false, got 'no'"),
        (
            {"faults": [{"status": "429"}]},
            ".faults[0].status: expected an HTTP error status (400-599), got '429'",
        ),
        (
            {"faults": [{"status": 429.5}]},
            ".faults[0].status: expected an HTTP error status (400-599), got 429.5",
        ),
        (
            {"faults": [{"status": True}]},
            ".faults[0].status: expected an HTTP error status (400-599), got True",
        ),
        ({"faults": [{}]}, ".faults[0]: give exactly one of status, drop, slow (got none)"),
        (
            {"faults": [{"status": 429, "slow": 1}]},
            ".faults[0]: give exactly one of status, drop, slow (got status, slow)",
        ),
        ({"sleep": -5}, f".sleep: {SECONDS} -5"),
        ({"sleep": math.nan}, f".sleep: {SECONDS} nan"),
        ({"sleep": "1"}, f".sleep: {SECONDS} '1'"),
        # issue 39: a ValueError or an OverflowError traceback, or a count silently truncated
        ({"usage": [math.nan, 1]}, ".usage[0]: expected a whole number >= 0, got nan"),
        ({"usage": [1, math.inf]}, ".usage[1]: expected a whole number >= 0, got inf"),
        ({"usage": [-5, 1]}, ".usage[0]: expected a whole number >= 0, got -5"),
        ({"usage": [1.5, 1]}, ".usage[0]: expected a whole number >= 0, got 1.5"),
        ({"usage": ["ten", 1]}, ".usage[0]: expected a whole number >= 0, got 'ten'"),
        (
            {"usage": {"input": 1, "output": 2, "cache_read": -1}},
            ".usage.cache_read: expected a whole number >= 0, got -1",
        ),
        (
            {"usage": {"input": math.nan, "output": 2}},
            ".usage.input: expected a whole number >= 0, got nan",
        ),
        ({"no_usage": "yes"}, ".no_usage: expected true or false, got 'yes'"),
    ],
)
def test_a_step_value_out_of_range_is_refused_naming_its_field(
    step: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        Scripts({"a": [{"reply": "x", **step}]})
    assert str(info.value) == f"scripts['a'][0]{message}"


def test_a_tool_calls_arguments_may_hold_a_non_finite_number() -> None:
    # a hostile model's input (the tools' refusal of timeout=inf is tested with it)
    [step] = load_scripts({"a": [{"tool": "t", "args": {"x": [math.inf], "y": math.nan}}]})["a"]
    assert step.args["x"] == [math.inf]
    assert math.isnan(step.args["y"])


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"tool": "t", "args": "x"}, ".args: expected a mapping of argument to value, got 'x'"),
        ({"tool": 5}, ".tool: expected a string, got 5"),
        ({"reply": ["x"]}, ".reply: expected a string, got ['x']"),
        ({"submit": {"answer": 1}}, ".submit: expected a string, got {'answer': 1}"),
        (
            {"tool": "t", "args": {"when": datetime.date(2024, 1, 1)}},
            ".args.when: expected JSON data (strings, numbers, booleans, null, lists, mappings), "
            "got datetime.date(2024, 1, 1)",
        ),
        ({}, ": give exactly one of tool, reply, submit, fail (got none)"),
        (
            {"reply": "x", "fail": "y"},
            ": give exactly one of tool, reply, submit, fail (got reply, fail)",
        ),
    ],
)
def test_a_step_of_the_wrong_type_is_refused_naming_its_field(
    step: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        Scripts({"a": [step]})
    assert str(info.value) == f"scripts['a'][0]{message}"


def test_a_long_wrong_value_is_shown_shortened() -> None:
    with pytest.raises(ConfigError) as info:
        Scripts({"a": [{"reply": "x", "sleep": "y" * 100_000}]})
    assert str(info.value) == (f"scripts['a'][0].sleep: {SECONDS} '{'y' * 27}...{'y' * 28}'")


def test_steps_and_faults_made_in_python_are_checked_too() -> None:
    for make, message in [
        (lambda: Fault(slow=-5), f"Fault.slow: {SECONDS} -5"),
        (lambda: Fault(status=429, retry_after=math.inf), f"Fault.retry_after: {SECONDS} inf"),
        (lambda: Step(reply="x", sleep=math.nan), f"Step.sleep: {SECONDS} nan"),
        (
            lambda: Step(reply="x", usage=(1, -2)),
            "Step.usage[1]: expected a whole number >= 0, got -2",
        ),
        (
            lambda: StepUsage(input=-1, output=1),
            "StepUsage.input: expected a whole number >= 0, got -1",
        ),
        (
            lambda: Step(reply="x", faults=(200,)),
            "Step.faults[0]: expected an HTTP error status (400-599), got 200",
        ),
    ]:
        with pytest.raises(ConfigError) as info:
            make()
        assert str(info.value) == message
    # a whole number written as a float (JSON's 3.0) is that number
    assert Step(reply="x", usage=(3.0, 1)).usage == StepUsage(input=3, output=1)


def test_the_fixture_points_the_openai_api_provider_at_the_server(
    scripted_server: ScriptedServer, tmp_path: Any
) -> None:
    assert os.environ["SCRIPTED_BASE_URL"] == scripted_server.base_url
    scripted_server.load({"solo": [{"submit": "42", "usage": [50, 5]}]})
    log = run_eval(
        swarm(members=[member(react, name="solo")]),
        model="openai-api/scripted/model",
        log_dir=tmp_path,
        max_retries=1,
    )
    assert log.status == "success"
    [sample] = log.samples or []
    assert sample.output.completion == "42"
    assert sample.model_usage["openai-api/scripted/model"].total_tokens == 55
    assert [(a.key, a.status) for a in scripted_server.attempts] == [("solo", 200)]


def test_the_command_serves_a_scripts_file_on_the_loopback(tmp_path: Any) -> None:
    scripts = tmp_path / "scripts.yaml"
    scripts.write_text("'*':\n  - {reply: hello, usage: [3, 1]}\n")
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("swarm")),
            "scripted-server",
            "--scripts",
            str(scripts),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        url = first.split(" on ")[1].strip()
        assert first == f"serving 1 script(s) on {url}\n"
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert process.stdout.readline() == f"export SCRIPTED_BASE_URL={url}\n"
        assert process.stdout.readline() == "export SCRIPTED_API_KEY=scripted\n"
        response = httpx.post(
            f"{url}/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}
        )
        assert response.json()["choices"][0]["message"]["content"] == "hello"
    finally:
        process.terminate()
        process.wait(10)


def test_the_command_refuses_a_scripts_file_of_another_kind(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from swarm.cli import cli

    result = CliRunner().invoke(cli, ["scripted-server", "--scripts", "scripts.txt"])
    assert isinstance(result.exception, UsageError)
    assert str(result.exception) == (
        "--scripts: expected a .yaml, .yml or .json file, got 'scripts.txt'"
    )


# -- issue 39: a scripts file that is not right says so in one line ------------------------------

NOT_UTF8 = "not UTF-8 text (byte 0x{:02x} at offset {}); a scripts file is YAML or JSON in UTF-8"
DIRECTORY = object()  # the scripts "file" is a directory
MISSING = object()  # there is no such file
BAD_FILES: dict[str, tuple[str, object, str]] = {
    "yaml-syntax": (
        "scripts.yaml",
        "'*': [ {reply: x\n",
        "not valid YAML: line 2, column 1: expected ',' or '}', but got '<stream end>' (while "
        "parsing a flow mapping)",
    ),
    "json-syntax": (
        "scripts.json",
        '{"a": [}',
        "not valid JSON: line 1, column 8: Expecting value",
    ),
    "binary": ("scripts.yaml", b"\x89PNG\r\n\x1a\n\x00\x00", NOT_UTF8.format(0x89, 0)),
    "utf-16": ("scripts.yaml", "a: [{reply: x}]\n".encode("utf-16"), NOT_UTF8.format(0xFF, 0)),
    "nan-usage-yaml": (
        "scripts.yaml",
        "a:\n  - {reply: x}\n  - {reply: y, usage: [.nan, 1]}\n",
        "scripts['a'][1].usage[0]: expected a whole number >= 0, got nan",
    ),
    "nan-usage-json": (
        "scripts.json",
        '{"a": [{"reply": "x", "usage": {"input": 1, "output": NaN}}]}',
        "scripts['a'][0].usage.output: expected a whole number >= 0, got nan",
    ),
    "python-tag": (
        "scripts.yaml",
        "a: !!python/object/apply:os.system ['touch pwned']\n",
        "line 1, column 4: the YAML tag '!!python/object/apply:os.system' is not allowed "
        "(scripts are plain data: mappings, lists, strings, numbers, booleans, null)",
    ),
    "deep-yaml": (
        "scripts.yaml",
        "a: " + "[" * 20_000 + "]" * 20_000 + "\n",
        "nested deeper than 100 levels",
    ),
    "deep-json": (
        "scripts.json",
        '{"a": ' + "[" * 20_000 + "]" * 20_000 + "}",
        "nested deeper than 100 levels",
    ),
    "alias-bomb": (
        "scripts.yaml",
        "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9)),
        "holds more than 100000 values (a YAML alias counts at every use)",
    ),
    "negative-slow": (
        "scripts.yaml",
        "a: [{reply: x, faults: [{slow: -5}]}]\n",
        "scripts['a'][0].faults[0].slow: expected a finite number of seconds in [0, 86400], got -5",
    ),
    "infinite-retry-after": (
        "scripts.yaml",
        "a: [{reply: x, faults: [{status: 429, retry_after: .inf}]}]\n",
        "scripts['a'][0].faults[0].retry_after: expected a finite number of seconds in "
        "[0, 86400], got inf",
    ),
    "directory": ("scripts.yaml", DIRECTORY, "cannot read the scripts file: Is a directory"),
    "missing": ("scripts.yaml", MISSING, "cannot read the scripts file: No such file or directory"),
}


def bad_file(tmp_path: Path, case: str) -> tuple[Path, str]:
    """The file of a ``BAD_FILES`` case, written under ``tmp_path``, and its message."""
    name, content, message = BAD_FILES[case]
    path = tmp_path / name
    if content is DIRECTORY:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    return path, f"{path}: {message}"


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_the_command_refuses_a_bad_scripts_file_in_one_line_naming_it(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each was a traceback (or, for a missing file, "expected a mapping ..., got
    'scripts.yaml'"; for a negative or infinite fault, a server that started)."""
    from swarm.cli import main

    path, message = bad_file(tmp_path, case)
    monkeypatch.chdir(tmp_path)  # a constructed python tag would write here
    monkeypatch.setattr(sys, "argv", ["swarm", "scripted-server", "--scripts", str(path)])

    def started(self: ScriptedServer, timeout: float = 10.0) -> ScriptedServer:
        raise AssertionError("the server started")

    monkeypatch.setattr(ScriptedServer, "start", started)
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1  # as every fixable error of the swarm command
    assert capsys.readouterr() == ("", f"error: {message}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        [] if case == "missing" else [path.name]
    )  # nothing else written: the tag was never constructed


@pytest.mark.parametrize("case", ["nan-usage-yaml", "python-tag", "deep-yaml", "utf-16"])
def test_the_in_process_model_refuses_a_bad_scripts_file_alike(tmp_path: Path, case: str) -> None:
    path, message = bad_file(tmp_path, case)
    with pytest.raises(ConfigError) as info:
        get_model("swarm/scripted", scripts=str(path), memoize=False)
    assert str(info.value) == message


def test_the_in_process_model_refuses_a_delay_out_of_range() -> None:
    with pytest.raises(ConfigError) as info:
        get_model("swarm/scripted", delay=-1, memoize=False)
    assert str(info.value) == (
        "swarm/scripted: delay: expected a finite number of seconds in [0, 86400], got -1"
    )


def test_scripts_text_names_itself_and_a_scripts_path_is_read_as_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        Scripts("a: [{reply: x, usage: [1, -1]}]")
    assert str(info.value) == "scripts['a'][0].usage[1]: expected a whole number >= 0, got -1"
    with pytest.raises(ConfigError) as info:
        Scripts("a: [{reply: x\n")
    assert str(info.value).startswith("scripts: not valid YAML: line 2, column 1: ")
    # a one-line string ending in .yaml names a file, there or not (it was read as YAML text)
    with pytest.raises(ConfigError) as info:
        Scripts(str(tmp_path / "nope.yaml"))
    assert (
        str(info.value)
        == f"{tmp_path / 'nope.yaml'}: cannot read the scripts file: No such file or directory"
    )
    marked = tmp_path / "marked.yaml"  # a UTF-8 byte order mark is allowed
    marked.write_bytes(b"\xef\xbb\xbfa: [{reply: x}]\n")
    assert Scripts(marked).scripts == {"a": (Step(reply="x"),)}
    good = tmp_path / "good.json"
    good.write_text('{"a": [{"reply": "x", "sleep": 1e-2, "usage": [3.0, 1]}]}')
    # JSON is read as JSON: 1e-2 is a number (YAML 1.1 reads it as a string)
    assert Scripts(good).scripts == {"a": (Step(reply="x", sleep=0.01, usage=(3, 1)),)}


def test_a_bad_scripts_file_is_one_line_and_no_traceback_from_the_real_command(
    tmp_path: Path,
) -> None:
    path, message = bad_file(tmp_path, "deep-yaml")
    done = subprocess.run(
        [str(Path(sys.executable).with_name("swarm")), "scripted-server", "--scripts", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: {message}\n")


def test_the_command_names_a_directory_given_as_the_scripts_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory without a .yaml name was "expected a .yaml, .yml or .json file"."""
    from swarm.cli import main

    monkeypatch.setattr(sys, "argv", ["swarm", "scripted-server", "--scripts", str(tmp_path)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    assert capsys.readouterr() == (
        "",
        f"error: {tmp_path}: cannot read the scripts file: Is a directory\n",
    )


# -- issue 39: a request of the wrong shape is a 400 naming the field ----------------------------


def raw_post(server: ScriptedServer, body: str) -> httpx.Response:
    with httpx.Client(timeout=30) as client:
        return client.post(
            f"{server.base_url}/chat/completions",
            content=body,
            headers={"content-type": "application/json"},
        )


USER = {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        # each was a 500 with a traceback (an AttributeError, a TypeError, a KeyError)
        ({"messages": "hi"}, "messages", "messages: expected an array of messages, got a string"),
        ({"model": "m"}, "messages", "messages: missing (expected an array of messages)"),
        (
            {"messages": [USER, "hi"]},
            "messages[1]",
            "messages[1]: expected a message object, got a string",
        ),
        (
            {"messages": [{"content": "hi"}]},
            "messages[0].role",
            "messages[0].role: missing (expected a string)",
        ),
        (
            {"messages": [{"role": "user", "content": 5}]},
            "messages[0].content",
            "messages[0].content: expected a string or an array of content parts, got a number",
        ),
        (
            {"messages": [{"role": "user", "content": ["hi"]}]},
            "messages[0].content[0]",
            "messages[0].content[0]: expected a content part object, got a string",
        ),
        (
            {"messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]},
            "messages[0].tool_calls[0].function",
            "messages[0].tool_calls[0].function: expected an object, got a string",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}
                ]
            },
            "messages[0].tool_calls[0].function.name",
            "messages[0].tool_calls[0].function.name: missing (expected a string)",
        ),
        (
            {"messages": [USER], "tools": [{"type": "function", "function": {"name": 1}}]},
            "tools[0].function.name",
            "tools[0].function.name: expected a string, got a number",
        ),
        (
            {"messages": [USER], "stream_options": "usage"},
            "stream_options",
            "stream_options: expected an object, got a string",
        ),
        (
            {"messages": [USER], "stream": True, "stream_options": {"include_usage": "yes"}},
            "stream_options.include_usage",
            "stream_options.include_usage: expected a boolean, got a string",
        ),
        (
            {"messages": [USER], "stream": "false"},
            "stream",
            "stream: expected a boolean, got a string",
        ),
        ({"messages": [USER], "model": ["m"]}, "model", "model: expected a string, got an array"),
    ],
)
def test_a_request_of_the_wrong_shape_is_a_400_naming_the_field(
    scripted_server: ScriptedServer, body: dict[str, Any], param: str, message: str
) -> None:
    scripted_server.load({"*": [{"reply": "hello"}]})
    response = raw_post(scripted_server, json.dumps(body))
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": "400",
            }
        },
    )
    assert scripted_server.attempts == []  # not an attempt of any call


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # was a 500: the JSON parser's RecursionError
        (
            '{"model": "m", "messages": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "the request body is nested deeper than 100 levels",
        ),
        (
            '{"messages": [{"role": "user", "content": "hi", "x": ' + "[" * 200 + "]" * 200 + "}]}",
            "the request body is nested deeper than 100 levels",
        ),
        ("[1]", "the request body is not a JSON object (got an array)"),
        ("{", "the request body is not JSON"),
    ],
    ids=["100000-deep", "200-deep", "array", "not-json"],
)
def test_a_request_body_too_deep_or_not_an_object_is_a_400_and_the_server_answers_on(
    scripted_server: ScriptedServer, body: str, message: str
) -> None:
    scripted_server.load({"*": [{"reply": "hello"}]})
    response = raw_post(scripted_server, body)
    assert (response.status_code, response.json()["error"]) == (
        400,
        {"message": message, "type": "invalid_request_error", "param": None, "code": "400"},
    )
    answered = post(scripted_server, [USER])
    assert answered.status_code == 200
    assert answered.json()["choices"][0]["message"]["content"] == "hello"


def test_deep_tool_call_arguments_are_kept_as_text_not_a_500(
    scripted_server: ScriptedServer,
) -> None:
    """A call's arguments are a string: deep JSON in it is kept as that string (its parse was
    a RecursionError, a 500)."""
    scripted_server.load({"*": [{"reply": "one"}, {"reply": "two"}]})
    deep = "[" * 100_000 + "]" * 100_000
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": deep}}
    messages = [USER, {"role": "assistant", "content": None, "tool_calls": [call]}]
    response = post(scripted_server, messages)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "two"
    [attempt] = scripted_server.attempts
    assert attempt.index == 1
