"""Every private Inspect API swarm-eval relies on still exists and still means what we read it
as.  A new Inspect release that moves one fails here, loudly, instead of inside a run."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.agent import Agent, agent
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import current_span_id, span, suspend_token_limit

from swarm._inspect import private
from swarm.testing import scripted_model


def test_each_private_reader_works_inside_a_sample() -> None:
    seen: dict[str, Any] = {}

    @solver
    def probe() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()
            with private.UsageTap() as tap:
                out: ModelOutput = await model.generate("hi")
            seen["tap"] = tap.usage
            seen["call"] = out.usage
            seen["sample"] = private.sample_model_usage()
            seen["suspended_outside"] = private.token_metering_suspended()
            with suspend_token_limit():
                seen["suspended_inside"] = private.token_metering_suspended()
            from inspect_ai.util._store import store_events_suspended

            with private.store_events_suspended():
                seen["store_events_suspended"] = store_events_suspended()
            seen["store_events_after"] = store_events_suspended()
            async with span("outer", type="agent"):
                seen["agent_span"] = private.current_agent_span_id()
                seen["span"] = current_span_id()  # public
            seen["task_state"] = private.running_task_state()
            seen["state"] = state
            return state

        return solve

    log = eval(
        Task(dataset=[Sample(input="x")], solver=probe()),
        model=scripted_model(),
        display="none",
        log_dir=None,
    )[0]
    assert log.status == "success", log.error
    call_usage: ModelUsage = seen["call"]
    assert seen["tap"].total_tokens == call_usage.total_tokens > 0
    [(model, usage)] = seen["sample"].items()
    assert model == "swarm/scripted" and usage.total_tokens == call_usage.total_tokens
    assert seen["suspended_outside"] is False
    assert seen["suspended_inside"] is True
    assert (seen["store_events_suspended"], seen["store_events_after"]) == (True, False)
    assert isinstance(seen["agent_span"], str) and seen["agent_span"] == seen["span"]
    assert seen["task_state"] is seen["state"]
    assert private.running_task_state() is None  # outside a sample


def test_tool_output_limit_is_the_limit_inspect_truncates_at() -> None:
    from inspect_ai.model._call_tools import truncate_tool_output

    seen: list[Any] = []

    @solver
    def probe() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            limit = private.tool_output_limit()
            seen.append(limit)
            if limit is not None:  # exactly the limit is whole; one byte more is cut
                seen.append(truncate_tool_output("t", "x" * limit, None))
                seen.append(truncate_tool_output("t", "x" * (limit + 1), None) is not None)
            return state

        return solve

    for config in ({}, {"max_tool_output": 300}, {"max_tool_output": 0}):
        log = eval(
            Task(dataset=[Sample(input="x")], solver=probe()),
            model=scripted_model(),
            display="none",
            log_dir=None,
            **config,
        )[0]
        assert log.status == "success", log.error
    assert seen == [16 * 1024, None, True, 300, None, True, None]


def test_registry_lookup_and_register_as() -> None:
    from inspect_ai.agent import react

    assert private.registry_lookup("agent", "react") is react
    assert private.registry_lookup("agent", "no-such-agent") is None

    @agent
    def helper() -> Agent:
        return react()

    # a fresh object: renaming a shared one (react itself) would rename it for every later test
    private.register_as(helper, "swarmtest/helper_again")
    assert private.registry_lookup("agent", "swarmtest/helper_again") is helper
    # the names a lookup takes: Inspect's own without their package (for "did you mean")
    names = private.registry_names("agent")
    assert {"react", "swarmtest/helper_again"} <= set(names)
    assert names == sorted(names) and not [n for n in names if n.startswith("inspect_ai/")]


def test_inspect_ai_is_within_the_tested_bound() -> None:
    import tomllib

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    [spec] = [
        Requirement(r) for r in pyproject["project"]["dependencies"] if r.startswith("inspect-ai")
    ]
    assert spec.specifier.contains(importlib.metadata.version("inspect-ai"))
    assert spec.specifier.contains(private.TESTED_INSPECT)
    # an upper bound below Inspect's next minor version: within 0.3 a release that moves a private
    # name is refused by require_private_api() in one message, and scripts/inspect-canary.sh
    # runs this file against the newest Inspect
    assert str(spec.specifier) == f"<0.4,>={private.TESTED_INSPECT}"


def test_the_private_names_table_is_every_private_import_of_the_module() -> None:
    import ast

    tree = ast.parse(Path(private.__file__).read_text())
    imported: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and "._" in node.module:
            imported.setdefault(node.module, set()).update(a.name for a in node.names)
    assert imported == {m: set(names) for m, names in private.PRIVATE_NAMES.items()}
    assert private.missing_private_api() == []  # the installed Inspect has them all
    private.require_private_api()


def test_an_inspect_without_a_private_name_is_refused_in_one_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspect_ai.util._span

    from swarm import member, swarm

    monkeypatch.delattr(inspect_ai.util._span, "current_agent_span_id")
    monkeypatch.setitem(private.PRIVATE_NAMES, "inspect_ai.util._gone", ("thing",))
    assert private.missing_private_api() == [
        "inspect_ai.util._span.current_agent_span_id",
        "inspect_ai.util._gone.thing",
    ]
    with pytest.raises(private.PrerequisiteError) as refused:
        swarm(members=member("swarm/worker"))
    assert str(refused.value) == (
        f"swarm-eval cannot run on inspect-ai {importlib.metadata.version('inspect-ai')}: it "
        "lacks inspect_ai.util._span.current_agent_span_id, inspect_ai.util._gone.thing, "
        "which swarm-eval uses (swarm/_inspect/private.py). Install the newest release its "
        f"suite passed on: pip install 'inspect-ai=={private.TESTED_INSPECT}'"
    )


def test_inspect_prints_swarm_errors_as_prerequisite_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """swarm-eval's user-facing errors are the type Inspect's excepthook prints as a message
    alone; the message survives Inspect's rich markup (a "[name]" is not eaten as a tag)."""
    import rich
    from inspect_ai._util.error import exception_hook

    from swarm import ConfigError

    monkeypatch.setattr(rich.get_console(), "quiet", False)  # an eval with display "none" ran

    assert issubclass(ConfigError, private.PrerequisiteError)
    error = ConfigError("members[0].args: expected a mapping, got [null, none]")
    exception_hook()(ConfigError, error, None)  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert out.strip() == "members[0].args: expected a mapping, got [null, none]"


def test_the_sandbox_readers_and_setters_inside_a_sample() -> None:
    from inspect_ai.util import sandbox

    seen: dict[str, Any] = {}

    @solver
    def probe() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            found = private.sample_sandboxes()
            assert found is not None
            environments, default = found
            seen["names"], seen["default"] = sorted(environments), default
            inner = private.sandbox_unproxied(environments[default])
            seen["inner"] = type(inner).__name__
            wrapped = private.sandbox_proxy(inner)
            seen["rewrapped"] = private.sandbox_unproxied(wrapped) is inner
            seen["plain"] = private.sandbox_unproxied(inner) is inner
            private.use_sandbox(wrapped)
            seen["now"] = sandbox() is wrapped
            seen["only"] = sorted(private.sample_sandboxes()[0])  # type: ignore[index]
            return state

        return solve

    log = eval(
        Task(dataset=[Sample(input="x")], solver=probe(), sandbox="local"),
        model=scripted_model(),
        display="none",
        log_dir=None,
    )[0]
    assert log.status == "success", log.error
    assert seen == {
        "names": ["default"],
        "default": "default",
        "inner": "LocalSandboxEnvironment",
        "rewrapped": True,
        "plain": True,
        "now": True,
        "only": ["default"],
    }
    assert private.sample_sandboxes() is None  # outside a sample


def test_bridged_call_tells_a_bridged_call_and_its_bridge() -> None:
    # "sandbox" (a bridged call from Inspect's sandbox service) is pinned by
    # test_bridged_members' sandbox-bridged member that ends alone at its limit
    from inspect_ai.agent import AgentState, agent_bridge
    from inspect_ai.model import ChatMessage, GenerateConfig, modelapi
    from inspect_ai.tool import ToolChoice, ToolInfo

    from swarm.testing._scripted import ScriptedModelAPI

    seen: list[str | None] = []

    class Probe(ScriptedModelAPI):
        async def generate(
            self,
            input: list[ChatMessage],
            tools: list[ToolInfo],
            tool_choice: ToolChoice,
            config: GenerateConfig,
        ) -> ModelOutput:
            seen.append(private.bridged_call())
            return await super().generate(input, tools, tool_choice, config)

    modelapi(name="test_inspect_private_probe")(lambda: Probe)

    @solver
    def probe() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            from openai import AsyncOpenAI

            await get_model().generate("plain")
            async with agent_bridge(AgentState(messages=[])):
                client = AsyncOpenAI(api_key="unused", base_url="http://unused.invalid/v1")
                await client.chat.completions.create(
                    model="inspect", messages=[{"role": "user", "content": "bridged"}]
                )
            return state

        return solve

    log = eval(
        Task(dataset=[Sample(input="x")], solver=probe()),
        model=get_model("test_inspect_private_probe/probe", memoize=False),
        display="none",
    )[0]
    assert log.status == "success", log.error
    assert seen == [None, "in_process"]
    assert private.bridged_call() is None
