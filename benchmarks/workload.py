"""The workload W(n, k) of benchmarks/README.md ("Targets"), one mode in this process.

n ``react()`` members each make k calls to a ``noop`` tool on a scripted model, then submit;
nothing stops early (leaderless, ``stop_on_submission=False``).  The no-channel modes run the
same agent (``worker``) on the same model (``swarm/scripted`` with one ``"*"`` script), so the
model's cost is identical and only what is wrapped around the agents differs.  The
shared-memory modes (``swarm-shm``, ``peer-shm``) call ``shared_memory`` ``append`` on one
shared file instead of ``noop``, with the swarm's tools and notices in their members.

A run counts as ``success`` only when the eval succeeded, all n members submitted, exactly
n·(k+1) model calls were made, the mode's tool was called n·k times without an error, and the
mode's own ``check`` (if any) passed.

    python benchmarks/workload.py MODE N K [--profile FILE] [--log-dir DIR]

prints one JSON line: ``{"mode", "n", "k", "wall_s", "peak_rss_mb", "status", ...}``.
``benchmarks/run.py`` runs every mode in its own fresh process (so peak RSS is per mode) and
tabulates them; use it rather than this file.

This module imports nothing heavy at the top, so ``run.py`` can read ``MODES`` cheaply.  (No
``from __future__ import annotations``: Inspect evaluates the annotations of the ``@tool`` and
``@agent`` defined inside functions against module globals, which would not find them.)
"""

import argparse
import contextlib
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

# -- the shared model behaviour ----------------------------------------------------------------
from common import (
    ANSWER,
    RESULT_KEY,
    SUBMITTED_KEY,
    USAGE,
    Mode,
    build_floor_worker_group,
    noop_factory,
    worker_factory,
)

SHM_PATH = "/shared_memory/notes.md"
"""The ONE shared file every member of the shared-memory modes appends to on every step."""


def shm_script(n: int, k: int) -> dict[str, list[dict[str, Any]]]:
    """k ``shared_memory`` appends of ``line i`` to ``SHM_PATH``, then ``submit``; for every
    member (``"*"``), usage always set."""
    steps: list[dict[str, Any]] = [
        {
            "tool": "shared_memory",
            "args": {"command": "append", "path": SHM_PATH, "append_text": f"line {i}"},
            "usage": list(USAGE),
        }
        for i in range(k)
    ]
    steps.append({"submit": ANSWER, "usage": list(USAGE)})
    return {"*": steps}


@functools.cache
def swarm_shm_worker_factory() -> Callable[..., Any]:
    """swarm-eval's shared-memory member: ``react()`` with the swarm's tools and notices."""
    from inspect_ai.agent import Agent, agent, react

    from swarm import swarm_on_continue, swarm_tools

    @agent
    def shm_worker() -> Agent:
        return react(tools=[swarm_tools()], on_continue=swarm_on_continue())

    return shm_worker


@functools.cache
def peer_shm_worker_factory() -> Callable[..., Any]:
    """inspect-swarm 0.1.0's shared-memory member, as in the baseline of the shared-memory target
    (benchmarks/README.md, "Targets"): ``react()`` with ``noop`` (never called here) and the
    swarm's tools, notices through ``swarm_on_continue()``."""
    from inspect_ai.agent import Agent, agent, react
    from inspect_swarm import swarm_on_continue, swarm_tools

    noop = noop_factory()

    @agent
    def peer_shm_worker() -> Agent:
        return react(tools=[noop(), swarm_tools()], on_continue=swarm_on_continue())

    return peer_shm_worker


# -- the modes ---------------------------------------------------------------------------------


def build_floor(n: int, k: int, tools: list[Any] | None = None) -> Any:
    """The n agents of W(n, k) in one anyio task group inside a solver, no swarm around them
    (with ``tools``: react() agents with those tools instead of ``noop``)."""
    return build_floor_worker_group([f"worker-{i + 1}" for i in range(n)], tools)


def build_floor_shm(n: int, k: int) -> Any:
    """The floor's agents with a plain Inspect tool that has exactly the ``shared_memory``
    tool's name, description and parameters (read from the tool itself, so it follows any
    change) and appends to a dict: what Inspect charges for a tool of that size, no swarm."""
    from inspect_ai.tool import ToolDef

    from swarm.plugins.channels.shared_memory import shared_memory_tool

    real = ToolDef(shared_memory_tool())
    board: dict[str, list[str]] = {}

    async def execute(**args: Any) -> str:
        board.setdefault(str(args.get("path")), []).append(str(args.get("append_text")))
        return f"Appended to {args.get('path')}."

    plain = ToolDef(
        execute, name=real.name, description=real.description, parameters=real.parameters
    ).as_tool()
    return build_floor(n, k, tools=[plain])


def build_swarm(n: int, k: int) -> Any:
    """swarm-eval: leaderless, every member runs to its submission."""
    from swarm import controller, member, swarm

    return swarm(
        members=member(worker_factory(), count=n),
        controller=controller("leaderless", stop_on_submission=False),
    )


BUDGET_TOKENS = 10**9
BUDGET_TIME = 10**6
"""``swarm-budget``'s caps: W(n, k) uses n·(k+1)·110 tokens (about 310,000 at n = 256) and a
minute or so, so they never bind, yet every call goes through the metering and budget checks."""

SHM_PARAMS: dict[str, Any] = {
    "rate": None,
    "max_file_bytes": 262_144,
    "max_file_lines": 100_000,
    "max_board_bytes": 16_777_216,
}
"""``swarm-shm``'s ``shared_memory`` params: no rate control, bounds that never bind."""

PEER_SHM_PARAMS: dict[str, Any] = {
    "rate": None,
    "max_file_bytes": 262_144,
    "max_file_lines": 100_000,
}
"""``peer-shm``'s ``shared_memory`` params, exactly the baseline's (its board bound stays at
inspect-swarm's default 400,000 bytes, which W(256, 10)'s ~20 KB never reaches)."""


def check_budget(sample: Any) -> str | None:
    """``swarm-budget``'s run really had the caps (swarm-eval's ledger records them)."""
    ledger = (sample.store or {}).get("inspect_swarm:ledger") if sample is not None else None
    caps = ledger.get("caps") if isinstance(ledger, Mapping) else None
    if not isinstance(caps, Mapping):
        return "no budget caps in the inspect_swarm:ledger record"
    if caps.get("tokens") != BUDGET_TOKENS or caps.get("time") != BUDGET_TIME:
        return f"budget caps {dict(caps)!r}, expected tokens={BUDGET_TOKENS}, time={BUDGET_TIME}"
    return None


def build_swarm_budget(n: int, k: int) -> Any:
    """swarm-eval exactly like ``swarm``, plus a ``Budget`` whose caps never bind."""
    from swarm import Budget, controller, member, swarm

    return swarm(
        members=member(worker_factory(), count=n),
        controller=controller("leaderless", stop_on_submission=False),
        budget=Budget(tokens=BUDGET_TOKENS, time=BUDGET_TIME),
    )


def build_swarm_shm(n: int, k: int) -> Any:
    """swarm-eval with the ``shared_memory`` channel; every step appends to one file."""
    from swarm import channel, controller, member, swarm

    return swarm(
        members=member(swarm_shm_worker_factory(), count=n),
        controller=controller("leaderless", stop_on_submission=False),
        channels=[channel("shared_memory", **SHM_PARAMS)],
    )


# -- the anatomy of swarm-shm: the same run with one part of the swarm taken away ------------
# (benchmark-only patches of swarm-eval's internals, applied in the mode's own process; what a
# part costs is swarm-shm minus the run without it)


def _events(sample: Any, kind: str) -> list[Any]:
    return [e for e in (sample.events if sample is not None else []) if e.event == kind]


def check_no_wait(sample: Any) -> str | None:
    """shm-no-wait's members were offered no ``swarm_wait``."""
    offered = any(t.name == "swarm_wait" for e in _events(sample, "model") for t in e.tools)
    return "swarm_wait was offered" if offered else None


def check_poll(sample: Any) -> str | None:
    """shm-poll's members got no notice."""
    from swarm.analysis import swarm_evidence

    return "a notice was given" if swarm_evidence(sample, "notified") else None


def check_no_evidence(sample: Any) -> str | None:
    """shm-no-evidence kept no entries."""
    from swarm.analysis import swarm_evidence

    return "evidence was kept" if swarm_evidence(sample) else None


def check_no_status(sample: Any) -> str | None:
    """shm-no-status's write results carry no status line."""
    results = [str(e.result) for e in _events(sample, "tool") if e.function == "shared_memory"]
    return "a status line was written" if any("Shared memory:" in r for r in results) else None


def build_shm_no_wait(n: int, k: int) -> Any:
    """swarm-shm without the ``swarm_wait`` tool in the members' tool lists."""
    import swarm._run.engine as engine

    offered = engine.kernel_tools

    def without_wait(waits: Any, spawns: Any) -> list[Any]:
        return offered(None, spawns)

    engine.kernel_tools = without_wait  # type: ignore[assignment]
    return build_swarm_shm(n, k)


def build_shm_poll(n: int, k: int) -> Any:
    """swarm-shm with every member in ``poll`` delivery: no notices."""
    from swarm import channel, controller, member, swarm

    return swarm(
        members=member(swarm_shm_worker_factory(), count=n, delivery="poll"),
        controller=controller("leaderless", stop_on_submission=False),
        channels=[channel("shared_memory", **SHM_PARAMS)],
    )


def build_shm_no_evidence(n: int, k: int) -> Any:
    """swarm-shm keeping no evidence entries (the evidence event is empty)."""
    from swarm._run.evidence import EvidenceLog

    EvidenceLog.add = lambda self, kind, member, **fields: None  # type: ignore[method-assign]
    return build_swarm_shm(n, k)


def build_shm_no_status(n: int, k: int) -> Any:
    """swarm-shm whose write results do not end with the board's news (no status line)."""
    from swarm.plugins.channels._board import Board

    Board.status_line = lambda self, loop: None  # type: ignore[method-assign]
    return build_swarm_shm(n, k)


def build_shm_no_records(n: int, k: int) -> Any:
    """swarm-shm writing none of its records (result, ledger, metrics: neither to the store nor
    as info events); only the count of submissions, for the workload's own check."""
    from inspect_ai.util import store

    import swarm._run.engine as engine

    def count_only(outcome: Any, hooks: Any) -> None:
        store().set(SUBMITTED_KEY, sum(m.status == "submitted" for m in outcome.members))

    engine.write_records = count_only  # type: ignore[assignment]
    return build_swarm_shm(n, k)


def check_no_records(sample: Any) -> str | None:
    return "the result record was written" if RESULT_KEY in (sample.store or {}) else None


def build_shm_no_store_events(n: int, k: int) -> Any:
    """swarm-shm with Inspect logging no StoreEvent at all (its spans copy no store): what
    the three spans Inspect opens around the swarm cost by each logging the records again."""
    import inspect_ai.log._transcript as transcript_module

    transcript_module.store_events_suspended = lambda: True  # type: ignore[attr-defined]
    return build_swarm_shm(n, k)


def check_no_store_events(sample: Any) -> str | None:
    if _events(sample, "store"):
        return "a StoreEvent was logged"
    return None if RESULT_KEY in (sample.store or {}) else "no result record"


def build_peer_shm(n: int, k: int) -> Any:
    """inspect-swarm 0.1.0 with its ``shared_memory``, the shared-memory target's baseline."""
    from inspect_swarm import leaderless, member, shared_memory, swarm

    return swarm(
        members=member(peer_shm_worker_factory(), count=n),
        controller=leaderless(stop_on_submission=False),
        channels=[shared_memory(**PEER_SHM_PARAMS)],
    )


def build_peer(n: int, k: int) -> Any:
    """inspect-swarm 0.1.0: the same roster and controller, no channels."""
    from inspect_swarm import leaderless, member, swarm

    return swarm(
        members=member(worker_factory(), count=n),
        controller=leaderless(stop_on_submission=False),
        channels=[],
    )


def _anatomy(what: str, build: Any, check: Any) -> Mode:
    """An anatomy mode: swarm-shm's workload with one part taken away (not in the default
    sweep)."""
    return Mode(
        description=f"anatomy: {what}",
        build=build,
        script=shm_script,
        tool="shared_memory",
        tags=("anatomy",),
        check=check,
    )


MODES: dict[str, Mode] = {
    "floor-server": Mode(
        description="the floor's agents on Inspect's openai-api provider and the scripted "
        "server (its own process, on the loopback): the provider path with no swarm",
        build=build_floor,
        server=True,
        requires="openai",
        install_hint="pip install openai  (Inspect's openai-api provider needs it)",
    ),
    "swarm-server": Mode(
        description="'swarm' on Inspect's openai-api provider and the scripted server (its own "
        "process, on the loopback): HTTP, the OpenAI client, response parsing, pricing",
        build=build_swarm,
        server=True,
        requires="openai",
        install_hint="pip install openai  (Inspect's openai-api provider needs it)",
    ),
    "floor": Mode(
        description="n react() agents in one anyio task group in a solver, no swarm (the floor)",
        build=build_floor,
    ),
    "floor-shm": Mode(
        description="the floor's agents with a plain tool of exactly shared_memory's name, "
        "description and parameters, appending to a dict (no swarm): Inspect's own cost of a "
        f"tool that size; each step appends to {SHM_PATH}",
        build=build_floor_shm,
        script=shm_script,
        tool="shared_memory",
    ),
    "swarm": Mode(
        description="swarm-eval: swarm(member(worker, count=n), leaderless, "
        "stop_on_submission=False), no channels",
        build=build_swarm,
    ),
    "peer": Mode(
        description="inspect-swarm 0.1.0: swarm(member(worker, count=n), "
        "leaderless(stop_on_submission=False), channels=[])",
        build=build_peer,
        requires="inspect-swarm",
        requires_version="0.1.0",
        install_hint="pip install -e '.[bench]'  (or: pip install inspect-swarm==0.1.0)",
    ),
    "swarm-budget": Mode(
        description="swarm-eval: like 'swarm', plus budget=Budget(tokens=10**9, time=10**6) "
        "(caps that never bind: metering and budget checks on every call)",
        build=build_swarm_budget,
        check=check_budget,
    ),
    "swarm-shm": Mode(
        description="swarm-eval: leaderless, channels=[channel('shared_memory', rate=None, "
        "...)], members react(tools=[swarm_tools()], on_continue=swarm_on_continue()); "
        f"each step appends to {SHM_PATH}",
        build=build_swarm_shm,
        script=shm_script,
        tool="shared_memory",
    ),
    "swarm-shm-bounded": Mode(
        description="swarm-shm with a sample time limit that never binds (time_limit=10**6): "
        "every plugin hook call is bounded by the time the sample has left (the guard's cost)",
        build=build_swarm_shm,
        script=shm_script,
        tool="shared_memory",
        time_limit=10**6,
    ),
    "shm-no-wait": _anatomy(
        "swarm-shm without swarm_wait in the tool lists", build_shm_no_wait, check_no_wait
    ),
    "shm-poll": _anatomy(
        "swarm-shm with every member in poll delivery (no notices)", build_shm_poll, check_poll
    ),
    "shm-no-evidence": _anatomy(
        "swarm-shm keeping no evidence entries", build_shm_no_evidence, check_no_evidence
    ),
    "shm-no-status": _anatomy(
        "swarm-shm without the status line at the end of write results",
        build_shm_no_status,
        check_no_status,
    ),
    "shm-no-records": _anatomy(
        "swarm-shm writing none of its records (result, ledger, metrics)",
        build_shm_no_records,
        check_no_records,
    ),
    "shm-no-store-events": _anatomy(
        "swarm-shm with Inspect logging no StoreEvent (its spans around the swarm log the "
        "records once each otherwise)",
        build_shm_no_store_events,
        check_no_store_events,
    ),
    "peer-shm": Mode(
        description="inspect-swarm 0.1.0: leaderless, channels=[shared_memory(rate=None, ...)] "
        f"as in the shared-memory target's baseline; each step appends to {SHM_PATH}",
        build=build_peer_shm,
        script=shm_script,
        tool="shared_memory",
        requires="inspect-swarm",
        requires_version="0.1.0",
        install_hint="pip install -e '.[bench]'  (or: pip install inspect-swarm==0.1.0)",
    ),
}


def _fanout_modes() -> dict[str, Mode]:
    from fanout import FANOUT_MODES

    return FANOUT_MODES


def _background_modes() -> dict[str, Mode]:
    from background import BACKGROUND_MODES

    return BACKGROUND_MODES


MODES.update(_fanout_modes())
MODES.update(_background_modes())


# -- one measured run --------------------------------------------------------------------------


def _peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def _submitted(sample: Any) -> int | None:
    if sample is None:
        return None
    store = sample.store or {}
    if SUBMITTED_KEY in store:
        return int(store[SUBMITTED_KEY])
    record = store.get(RESULT_KEY)
    if isinstance(record, Mapping):
        return sum(1 for m in record.get("members", []) if m.get("submitted"))
    return None


def _model_calls(log: Any) -> int | None:
    """Model calls made, from the log's usage (every call reports exactly ``USAGE``)."""
    usage = log.stats.model_usage if log.stats else {}
    total = sum(u.total_tokens for u in usage.values())
    per_call = sum(USAGE)
    return total // per_call if total % per_call == 0 else None


def _tool_calls(sample: Any, tool: str) -> tuple[int, int] | None:
    """(successful, failed) calls of ``tool`` in the sample's transcript, or None without one."""
    if sample is None or not sample.events:
        return None
    ok = failed = 0
    for event in sample.events:
        if getattr(event, "event", None) == "tool" and getattr(event, "function", None) == tool:
            if event.error is None:
                ok += 1
            else:
                failed += 1
    return ok, failed


@contextlib.contextmanager
def scripted_server(scripts: Mapping[str, Any]) -> Iterator[Any]:
    """``swarm scripted-server`` playing ``scripts`` in a process of its own (so the eval's time,
    CPU and memory are its own, as with a remote API), and the ``openai-api`` model pointed at
    it, with Inspect's retries bounded (none are needed: the script has no faults)."""
    from inspect_ai.model import GenerateConfig, get_model

    with tempfile.TemporaryDirectory(prefix="swarm-bench-server-") as folder:
        path = os.path.join(folder, "scripts.json")
        with open(path, "w") as f:
            json.dump(scripts, f)
        command = os.path.join(os.path.dirname(sys.executable), "swarm")
        server = subprocess.Popen(
            [command, "scripted-server", "--scripts", path, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            first = server.stdout.readline()  # "serving 1 script(s) on http://127.0.0.1:N/v1"
            if " on " not in first:
                raise RuntimeError(f"the scripted server did not start: {first!r}")
            url = first.rsplit(" on ", 1)[1].strip()
            yield get_model(
                "openai-api/scripted/bench",
                base_url=url,
                api_key="scripted",
                config=GenerateConfig(max_retries=2, timeout=600),
                memoize=False,
            )
        finally:
            server.terminate()
            server.wait(30)


def measure(
    mode_name: str, n: int, k: int, profile: str | None = None, log_dir: str | None = None
) -> dict[str, Any]:
    """Run W(n, k) in ``mode_name`` once and return its measurements.

    The eval's log goes to a temporary directory removed afterwards, or to ``log_dir`` (kept,
    and its path given as ``log`` in the result) when one is given.
    """
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes

    mode = MODES[mode_name]
    result: dict[str, Any] = {"mode": mode_name, "n": n, "k": k}
    files = dict(mode.files(n)) if mode.files is not None else None
    task = Task(
        dataset=[Sample(input="What is 6*7?", target=ANSWER, files=files)],
        solver=mode.build(n, k),
        scorer=includes(),
        sandbox=mode.sandbox,
    )
    with contextlib.ExitStack() as stack:
        keep = log_dir is not None
        if log_dir is None:
            log_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="swarm-bench-"))
        if mode.server:
            model: Any = stack.enter_context(scripted_server(mode.script(n, k)))
            model_args: dict[str, Any] = {}
        else:
            model, model_args = "swarm/scripted", {"scripts": dict(mode.script(n, k))}
        profiler = None
        if profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        t0, c0 = time.perf_counter(), time.process_time()
        logs = eval(
            task,
            model=model,
            model_args=model_args,
            display="none",
            log_dir=log_dir,
            max_connections=1000,
            time_limit=mode.time_limit,
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        log = logs[0]
        sample = log.samples[0] if log.samples else None
        submitted = _submitted(sample)
        calls = _model_calls(log)
        tools = _tool_calls(sample, mode.tool)
        tools_ok, tools_failed = tools if tools is not None else (None, None)
        status = log.status
        if status == "success" and (
            submitted != mode.submitted(n)
            or calls != mode.calls(n, k)
            or tools_ok != mode.tool_calls(n, k)
            or tools_failed
        ):
            status = "incomplete"
        problem = mode.check(sample) if mode.check is not None else None
        if problem is not None:
            result["check"] = problem
            if status == "success":
                status = "incomplete"
        result.update(
            wall_s=round(wall, 3),
            cpu_s=round(cpu, 3),
            peak_rss_mb=round(_peak_rss_mb(), 1),
            status=status,
            submitted=submitted,
            model_calls=calls,
            tool_calls=tools_ok,
            tool_errors=tools_failed,
        )
        if keep:
            result["log"] = log.location
        if log.error is not None:
            result["error"] = log.error.message
        elif sample is not None and sample.error is not None:
            result["error"] = sample.error.message
        if log.results and log.results.scores:
            metric = log.results.scores[0].metrics.get("accuracy")
            result["accuracy"] = None if metric is None else metric.value
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=sorted(MODES))
    parser.add_argument("n", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("--profile", metavar="FILE", help="cProfile the eval into FILE")
    parser.add_argument(
        "--log-dir",
        metavar="DIR",
        help="write the eval's log into DIR and keep it (default: a temp dir)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("INSPECT_DISPLAY", "none")
    try:
        result = measure(args.mode, args.n, args.k, args.profile, args.log_dir)
    except Exception as ex:
        traceback.print_exc()
        result = {
            "mode": args.mode,
            "n": args.n,
            "k": args.k,
            "wall_s": None,
            "peak_rss_mb": round(_peak_rss_mb(), 1),
            "status": "crashed",
            "error": repr(ex),
        }
    print(json.dumps(result), flush=True)
    return 0 if result["status"] == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
