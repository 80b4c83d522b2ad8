"""What a plugin cannot do to a run: exit the process, or hold it past the sample's limit.

An observer that raises SystemExit is logged and the run goes on; a normaliser that blocks for
30 s under a 2 s time limit is interrupted at the limit and fails the sample, naming it.
Run: python docs/examples/contained_plugin.py
"""

from __future__ import annotations

import tempfile
import time

from inspect_ai.agent import react

from swarm import (
    PluginCatalog,
    SwarmView,
    controller,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
)
from swarm.testing import reply, run_eval, scripted_model, submit


class Exits:
    @hookimpl
    def swarm_run_started(self, view: SwarmView) -> None:
        raise SystemExit("an observer tried to end the process")


def stalls(text: str) -> str:
    time.sleep(30)  # noqa: TID251  (a normaliser is sync: it blocks the loop, as shown)
    return text


pm, sources = get_plugin_manager()
pm.register(Exits(), name="exits")
catalog = PluginCatalog(pm, sources)
scripts = {
    "m1": [reply("warming up"), submit("42")],
    "m2": [reply("warming up"), submit("42")],
}
with tempfile.TemporaryDirectory() as logs:
    log = run_eval(
        swarm(members=member(react, count=2), plugins=catalog),
        model=scripted_model(scripts),
        log_dir=logs,
    )
    print("observer's SystemExit -> log status:", log.status)

    started = time.monotonic()
    log = run_eval(
        swarm(
            members=member(react, count=2),
            controller=controller("leaderless", final="vote", normalize=stalls),
        ),
        model=scripted_model(scripts),
        log_dir=logs,
        time_limit=2,
    )
    sample = log.samples[0]
    print("blocking normaliser -> log status:", log.status)
    print("ended within 10 s of its 2 s limit:", time.monotonic() - started < 12)
    print("error:", sample.error.message.split(" did not return")[0])
    print("records kept:", sorted(k for k in sample.store if k.startswith("inspect_swarm:")))
