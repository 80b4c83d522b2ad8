"""Small helpers shared by the tests: agents with tools, and reading a swarm's records."""

from __future__ import annotations

from typing import Any

import anyio
from inspect_ai.agent import Agent, agent, react
from inspect_ai.log import EvalSample
from inspect_ai.model import GenerateConfig, ModelAPI
from inspect_ai.tool import Tool, tool
from inspect_ai.util import sandboxenv

from swarm._faces.bwrap import BwrapSandboxEnvironment


@tool
def noop() -> Tool:
    async def execute(i: int) -> str:
        """Do nothing.

        Args:
            i: a counter
        """
        return f"ok {i}"

    return execute


@agent
def worker() -> Agent:
    """A react agent with a no-op tool."""
    return react(tools=[noop()])


def result(sample: EvalSample) -> dict[str, Any]:
    """The sample's inspect_swarm:result record."""
    record: dict[str, Any] = sample.store["inspect_swarm:result"]
    return record


def statuses(sample: EvalSample) -> dict[str, str | None]:
    """Member name -> status from the result record."""
    return {m["name"]: m["status"] for m in result(sample)["members"]}


@agent
def shm_worker() -> Agent:
    """A react agent wired to the swarm: channel tools and notices."""
    from swarm import swarm_on_continue, swarm_tools

    return react(tools=[noop(), swarm_tools()], on_continue=swarm_on_continue())


def tool_results(sample: EvalSample, function: str) -> list[tuple[str, str | None]]:
    """(result text, error message) of every call of ``function``, in order."""
    from inspect_ai.event import ToolEvent

    return [
        (str(e.result), None if e.error is None else e.error.message)
        for e in sample.events
        if isinstance(e, ToolEvent) and e.function == function
    ]


# -- for the value tests (tests/test_values_*.py) ---------------------------------------------


def only_sample(log: Any) -> EvalSample:
    """The one sample of a successful eval log."""
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 1
    sample: EvalSample = log.samples[0]
    return sample


def ledger(sample: EvalSample) -> dict[str, Any]:
    """The sample's inspect_swarm:ledger record."""
    record: dict[str, Any] = sample.store["inspect_swarm:ledger"]
    return record


def metrics(sample: EvalSample) -> dict[str, Any]:
    """The sample's inspect_swarm:metrics record."""
    record: dict[str, Any] = sample.store["inspect_swarm:metrics"]
    return record


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A record's member rows by member name."""
    return {row["name"]: row for row in rows}


def comm_events(sample: EvalSample, kind: str | None = None) -> list[dict[str, Any]]:
    """The swarm's evidence entries (of one ``kind``), in order: swarm.analysis.swarm_evidence."""
    from swarm.analysis import swarm_evidence

    return swarm_evidence(sample, kind)


def ended_member(name: str, status: str) -> Any:
    """A member as the record builders see it at the end of a run (for the ledger's unit
    tests): ended with ``status``, started at 0 and ended at 1."""
    from swarm._report.outcome import MemberEnd
    from swarm.records import MemberInfo

    return MemberEnd(
        info=MemberInfo(name=name),
        state="ended",
        status=status,
        started=0.0,
        ended=1.0,
        error=None,
        span_id="span",
        delivery="notify",
        own_loop=None,
        continue_wired=False,
    )


class FixedModelAPI(ModelAPI):
    """A test model provider: Inspect's constructor signature, no client; subclasses write
    ``generate``."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008  (Inspect's signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)


# -- shared-memory runs (the channel value tests) ----------------------------------------------

BOARD = "/shared_memory"


def all_finish() -> Any:
    """The leaderless controller that lets every member finish (a submission does not stop)."""
    from swarm import controller

    return controller("leaderless", stop_on_submission=False)


def board(*members: Any, controller_: Any = None, budget: Any = None, **params: Any) -> Any:
    """A swarm of ``members`` on one shared_memory channel (``params``); every member finishes
    unless ``controller_`` says otherwise."""
    from swarm import channel, swarm

    return swarm(
        members=list(members),
        channels=[channel("shared_memory", **params)],
        controller=all_finish() if controller_ is None else controller_,
        budget=budget,
    )


def sm(command: str, **args: Any) -> Any:
    """A scripted shared_memory call."""
    from swarm.testing import call

    return call("shared_memory", command=command, **args)


def run_scripted(solver: Any, scripts: dict[str, Any], log_dir: Any, **kwargs: Any) -> EvalSample:
    """Run ``solver`` on the scripted model (``scripts`` per member); the one sample, with its
    attachments resolved."""
    from inspect_ai.log import resolve_sample_attachments

    from swarm.testing import run_eval, scripted_model

    log = run_eval(solver, model=scripted_model(scripts), log_dir=log_dir, **kwargs)
    return resolve_sample_attachments(only_sample(log))


def shm_comm(sample: EvalSample, name: str) -> dict[str, Any]:
    """A member's shared_memory counts in the metrics record."""
    found: dict[str, Any] = by_name(metrics(sample)["members"])[name]["comm"]["shared_memory"]
    return found


def notice_messages(sample: EvalSample) -> list[Any]:
    """The ``[Swarm notice]`` user messages in the model calls' inputs, in event order (a notice
    is in every later call's input too, so each appears once per call that carries it)."""
    from inspect_ai.model import ChatMessageUser

    return [
        m
        for e in sample.events
        if e.event == "model"
        for m in e.input
        if isinstance(m, ChatMessageUser) and m.text.startswith("[Swarm notice]")
    ]


@sandboxenv(name="slow-copy-bwrap")
class SlowCopyBwrap(BwrapSandboxEnvironment):
    """``bwrap`` whose file writes take 0.3 s: the runtime's copy of a member's files from the
    staging area spans the calls other members make meanwhile."""

    async def write_file(self, file: str, contents: str | bytes) -> None:
        await anyio.sleep(0.3)
        await super().write_file(file, contents)
