"""A controller defined in this file, registered in-process and run by passing a catalog.

`Enough` stops the swarm once `needed` members have submitted and names the earliest of them
as the answer itself (final mode `controller`).  It is registered through the
`swarm_register_controllers` hook of a plugin object, on a plugin manager built with
`get_plugin_manager(load_entrypoints=False)` (swarm-eval's own plugins, and none installed from
elsewhere); the swarm is given the resulting catalog with `plugins=`.  Nothing is installed: a
packaged plugin would register the same hook through a `swarm` entry point.
"""

from inspect_ai.agent import react

from swarm import (
    RESULT_KEY,
    ConfigError,
    Decision,
    MemberSubmitted,
    PluginCatalog,
    Register,
    SwarmView,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
)
from swarm.testing import pause, reply, run_eval, scripted_model, submit


class Enough:
    """Stop when `needed` members have submitted; answer with the earliest submission."""

    def __init__(self, needed: int = 2) -> None:
        self.needed = needed

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        submitted = sorted(view.submissions, key=lambda m: (m.ended or 0.0, m.index))
        if len(submitted) < self.needed:
            return None  # defer: the default decides (it does nothing on a submission)
        return Decision(
            stop="enough",  # not a built-in reason, so it is recorded as controller:enough
            answer=submitted[0].name,
            reason=f"{len(submitted)} of {len(view.members)} submitted",
        )


def enough(needed: int = 2) -> Enough:
    """The controller factory: topology parameters arrive as keyword arguments."""
    if not isinstance(needed, int) or needed < 1:
        raise ConfigError(f"enough.needed: expected a whole number >= 1, got {needed!r}")
    return Enough(needed)


class EnoughPlugin:
    """The plugin: it only registers the controller."""

    @hookimpl
    def swarm_register_controllers(self, register: Register) -> None:
        register("enough", enough)


pm, sources = get_plugin_manager(load_entrypoints=False)  # swarm-eval's own plugins only
pm.register(EnoughPlugin(), name="enough-plugin")
catalog = PluginCatalog(pm, sources)
print("controllers:", ", ".join(catalog.names("controller")))

SCRIPTS = {
    f"worker-{i}": [reply("warming up"), pause(1.0 * i, submit(str(40 + i)))] for i in range(1, 5)
}
log = run_eval(
    swarm(
        members=member(react, name="worker", count=4),
        controller={"name": "enough", "needed": 2},
        budget={"grace": 0},
        plugins=catalog,
    ),
    model=scripted_model(SCRIPTS),
)
result = log.samples[0].store[RESULT_KEY]
print("stop reason:", result["stop_reason"])
for m in result["members"]:
    print(f"{m['name']:<9} {m['status']}")
final = result["final"]
print(f"answer: {final['member']} ({final['mode']}: {final['reason']})")
