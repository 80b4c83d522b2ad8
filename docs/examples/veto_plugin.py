"""A plugin that is not a controller: it vetoes a decision, picks the answer, and observes.

A plugin registered on the catalog's plugin manager (as an installed plugin would be) joins
every run and is called before the run's controller.  `IgnoreDrafts` returns an empty
`Decision()` when a member with the role "drafter" submits, which vetoes the leaderless
controller's stop, and leaves every other submission to the controller by returning `None`.
It also chooses the answer among the other members.  `Noisy` is an observer that raises: the
error is logged with the plugin's name and the run goes on.
"""

import attrs
from inspect_ai.agent import react

from swarm import (
    RESULT_KEY,
    Answer,
    Decision,
    MemberEnded,
    MemberSubmitted,
    PluginCatalog,
    SwarmView,
    first_submission,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
)
from swarm.testing import pause, reply, run_eval, scripted_model, submit


class IgnoreDrafts:
    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        if view.member(event.member).role == "drafter":
            return Decision()  # a decision that does nothing: later plugins are not asked
        return None  # defer to the controller

    @hookimpl
    def swarm_choose_answer(self, view: SwarmView) -> Answer:
        others = tuple(m for m in view.members if m.role != "drafter")
        return first_submission(attrs.evolve(view, members=others))

    @hookimpl
    def swarm_member_ended(self, view: SwarmView, event: MemberEnded) -> None:
        print(f"observed: {event.member} ended ({event.status})")


class Noisy:
    @hookimpl
    def swarm_run_started(self, view: SwarmView) -> None:
        raise RuntimeError("this observer is broken")


pm, sources = get_plugin_manager()
pm.register(IgnoreDrafts(), name="ignore-drafts")
pm.register(Noisy(), name="noisy")
catalog = PluginCatalog(pm, sources)

SCRIPTS = {
    "drafter": [submit("about 40")],
    "solver": [reply("warming up"), pause(0.5, submit("42"))],
}
log = run_eval(
    swarm(
        members=[member(react, name="drafter", role="drafter"), member(react, name="solver")],
        plugins=catalog,
    ),
    model=scripted_model(SCRIPTS),
)
result = log.samples[0].store[RESULT_KEY]
print("log status:", log.status)
print("stop reason:", result["stop_reason"])
print("answer:", result["final"]["member"])
for event in log.samples[0].events:  # the failing observer, as logged in the transcript
    if event.event == "logger" and "observer plugin" in event.message.message:
        print("logged:", event.message.message.splitlines()[-1])
