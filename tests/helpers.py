"""Small helpers shared by the tests: agents with tools, and reading a swarm's records."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import anyio
import attrs
from inspect_ai.agent import Agent, AgentState, agent, react
from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelAPI, ModelUsage
from inspect_ai.tool import Tool, tool
from inspect_ai.util import sandboxenv

from swarm import (
    PluginCatalog,
    Receipt,
    SpawnDecision,
    SpawnRequest,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
    swarm_on_continue,
    swarm_tools,
)
from swarm._faces.bwrap import BwrapSandboxEnvironment
from swarm.testing import Step, call, pause, submit


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


_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, anyio.Event]] = (
    weakref.WeakKeyDictionary()
)


def _turn(name: str) -> anyio.Event:
    """The event set when member ``name``'s agent has returned, in this eval's event loop."""
    events = _TURNS.setdefault(asyncio.get_running_loop(), {})
    if name not in events:
        events[name] = anyio.Event()
    return events[name]


@agent
def in_turn(me: str, previous: str | None = None) -> Agent:
    """``worker()`` that starts only once member ``previous``'s agent has returned: members
    chained so submit in order, by the event loop's order rather than by pauses (the member
    that returned ends, and is recorded as submitted, before the next one's model calls are
    played)."""
    inner = worker()

    async def execute(state: AgentState) -> AgentState:
        if previous is not None:
            await _turn(previous).wait()
        try:
            return await inner(state)
        finally:
            _turn(me).set()

    return execute


def members_in_turn(names: Any) -> list[Any]:
    """``member(in_turn, ...)`` for each of ``names``, each after the one before."""
    from swarm import member

    names = list(names)
    return [
        member(in_turn, {"me": n, "previous": names[i - 1] if i else None}, name=n)
        for i, n in enumerate(names)
    ]


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
        cancelled=status == "cancelled",
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


@attrs.frozen
class InputNotice:
    """A notice in a model call's input: its own user message, or riding at the end of the
    turn's last tool result (``role == "tool"``)."""

    text: str  # from "[Swarm notice]" on
    role: str
    metadata: dict[str, Any]


def notice_in(message: Any) -> InputNotice | None:
    """The notice ``message`` (of a sample whose attachments are resolved) is or carries."""
    from swarm.analysis import notice_text

    text = notice_text(message)
    if text is None:
        return None
    return InputNotice(text=text, role=message.role, metadata=message.metadata)


def notice_messages(sample: EvalSample) -> list[InputNotice]:
    """The notices in the model calls' inputs, in event order (a notice is in every later
    call's input too, so each appears once per call that carries it)."""
    from inspect_ai.log import resolve_sample_attachments

    return [
        found
        for e in resolve_sample_attachments(sample).events
        if e.event == "model"
        for m in e.input
        if (found := notice_in(m)) is not None
    ]


@sandboxenv(name="slow-copy-bwrap")
class SlowCopyBwrap(BwrapSandboxEnvironment):
    """``bwrap`` whose file writes take 0.3 s: the runtime's copy of a member's files from the
    staging area spans the calls other members make meanwhile."""

    async def write_file(self, file: str, contents: str | bytes) -> None:
        await anyio.sleep(0.3)
        await super().write_file(file, contents)


# -- spawning runs (tests/test_values_spawning*.py) ----------------------------------------------


class Recorder:
    """Records every spawn request the kernel's limits decide (with the members the swarm's
    view held), every receipt and every question whether a child replied (with the child's
    state in the view); decides nothing."""

    def __init__(self) -> None:
        self.requests: list[SpawnRequest] = []
        self.views: list[tuple[str, ...]] = []
        self.receipts: list[Receipt] = []
        self.receipt_states: list[tuple[str | None, str | None]] = []
        self.replied: list[tuple[str, str, str]] = []

    @hookimpl(tryfirst=True)
    def swarm_admit_spawn(self, view: Any, request: SpawnRequest) -> SpawnDecision | None:
        self.requests.append(request)
        self.views.append(tuple(m.name for m in view.members))
        return None

    @hookimpl(tryfirst=True)
    def swarm_deliver_receipt(self, view: Any, receipt: Receipt) -> bool | None:
        self.receipts.append(receipt)
        child = view.member(receipt.child)
        self.receipt_states.append((child.state, child.status))
        return None

    @hookimpl(tryfirst=True)
    def swarm_replied(self, view: Any, child: str, parent: str) -> bool | None:
        self.replied.append((child, parent, view.member(child).state))
        return None


def catalog(*plugins: object) -> PluginCatalog:
    pm, sources = get_plugin_manager(load_entrypoints=False)
    for i, plugin in enumerate(plugins):
        pm.register(plugin, name=f"test-plugin-{i}")
    return PluginCatalog(pm, sources)


def team(
    *plugins: object,
    can_spawn: tuple[str, ...] = ("worker",),
    child_can_spawn: tuple[str, ...] = ("worker",),
    others: tuple[Any, ...] = (),
    templates: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A lead that may spawn ``worker`` children (which may spawn ``worker`` in turn), with
    ``plugins`` registered in-process."""
    lead = member("swarm/worker", name="lead", can_spawn=list(can_spawn))
    found = {"worker": member("swarm/worker", can_spawn=list(child_can_spawn))}
    return swarm(
        members=[lead, *others],
        templates=found if templates is None else templates,
        plugins=catalog(*plugins) if plugins else None,
        **kwargs,
    )


FIELDS = ("seq", "op", "member", "requested", "parent", "depth", "template", "task", "status")


def ledger_rows(sample: EvalSample) -> list[tuple[Any, ...]]:
    """The spawn ledger's entries, every field but the time (checked here: from 0, in order,
    within the run)."""
    record = sample.store["inspect_swarm:spawns"]
    assert record["version"] == 1
    entries = record["entries"]
    times = [e["time"] for e in entries]
    assert all(isinstance(t, float) for t in times)
    assert times == sorted(times)
    assert all(0 < t <= metrics(sample)["wall_clock"] for t in times)
    for e in entries:
        assert set(e) == {*FIELDS, "time", "reason"}
    return [(*(e[f] for f in FIELDS), e["reason"]) for e in entries]


def of(rows: list[tuple[Any, ...]], name: str) -> list[tuple[Any, ...]]:
    """The rows about member (or requested name) ``name``, without their seq."""
    return [r[1:] for r in rows if r[2] == name or (r[2] is None and r[3] == name)]


def spawned(name: str, renamed: str = "", why: str = "") -> str:
    """What ``spawn_child`` returns for a child asked for as ``name`` (``renamed``: the member
    name it got instead, because a member that ended had it, or ``why``)."""
    what = f"{name} (as {renamed}: {why or f'{name} ran before'})" if renamed else name
    return (
        f"Spawned {what} from template worker. It works on your task now and reports back to "
        "you; wait_for_children() waits for all of your children."
    )


def all_ended(n: int) -> str:
    return (
        f"All {n} of your children have ended; their replies and receipts are in read_messages()."
    )


def first_call(sample: EvalSample, name: str) -> Any:
    """The first model call of member ``name``'s own loop (its input holds its preamble)."""
    return next(
        e
        for e in sample.events
        if e.event == "model"
        and any(
            isinstance(m, ChatMessageUser) and m.text.startswith(f"You are {name},")
            for m in e.input
        )
    )


def spawn(name: str, task: str = "t", **args: Any) -> Step:
    return call("spawn_child", name=name, task=task, **args)


WAIT = call("wait_for_children")
SLOW = pause(5, submit("late"))  # cancelled long before it completes


# -- the test's clock (tests/test_values_messages.py, tests/stored_runs.py) ---------------------


class Clock:
    """The swarm's clock while a test runs: seconds since it started, as a script set it (a
    test patches ``SwarmRun.now`` to read it; only ``set_clock`` moves it)."""

    time = 0.0


@tool
def set_clock() -> Tool:
    async def execute(t: float) -> str:
        """Set the swarm's clock (a test's).

        Args:
            t: seconds since the swarm started
        """
        Clock.time = t
        return f"clock {t:g}"

    return execute


@agent
def clocked() -> Agent:
    """A member wired to the swarm, with the test's clock."""
    return react(tools=[set_clock(), swarm_tools()], on_continue=swarm_on_continue())


def logged_usage(sample: EvalSample) -> dict[str, ModelUsage]:
    """Each member's usage summed from the model events in its spans: what Inspect logged,
    attributed here independently of swarm-eval (by walking span parents)."""
    spans = {e.id: e for e in sample.events if isinstance(e, SpanBeginEvent)}
    names = {m["name"] for m in result(sample)["members"]}

    def owner(span_id: str | None) -> str | None:
        while span_id is not None and span_id in spans:
            span = spans[span_id]
            if span.type == "agent" and span.name in names:
                return span.name
            span_id = span.parent_id
        return None

    totals = {name: ModelUsage() for name in names}
    for e in sample.events:
        if isinstance(e, ModelEvent) and e.output is not None and e.output.usage is not None:
            who = owner(e.span_id)
            if who is not None and e.cache != "read":
                totals[who] = totals[who] + e.output.usage
    return totals
