"""A controller plugin that reads answers: stop once three members agree.

`Agreement` counts the normalised answers in the view at each submission (every member's view
holds the answer it submitted) and stops the swarm when `size` roster members gave the same
one, answering with the first of them.  It is registered through the
`swarm_register_controllers` hook of this module, on a plugin manager built in-process; a
packaged plugin registers the same hook through a `swarm` entry point (plugins.md).
"""

import sys

from inspect_ai.agent import react

from swarm import (
    RESULT_KEY,
    Budget,
    Decision,
    MemberSubmitted,
    PluginCatalog,
    Register,
    SwarmView,
    get_plugin_manager,
    hookimpl,
    member,
    normalize_answer,
    swarm,
)
from swarm.testing import pause, reply, run_eval, scripted_model, submit


class Agreement:
    def __init__(self, size: int = 3) -> None:
        self.size = size

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        key = normalize_answer(event.answer or "")
        agreeing = sorted(
            (
                m
                for m in view.submissions
                if m.depth == 0 and normalize_answer(m.answer or "") == key
            ),
            key=lambda m: (m.ended or 0.0, m.index),
        )
        if not key or len(agreeing) < self.size:
            return None
        return Decision(stop="agreement", answer=agreeing[0].name, reason="agreement")


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("agreement", Agreement)


pm, sources = get_plugin_manager(load_entrypoints=False)
pm.register(sys.modules[__name__], name="agreement-plugin")

ANSWERS = {"m1": "3", "m2": "3", "m3": "4", "m4": "3"}
SCRIPTS = {
    name: [reply("thinking"), pause(0.2 * (i + 1), submit(answer))]
    for i, (name, answer) in enumerate(ANSWERS.items())
}
SCRIPTS["m5"] = [reply("thinking"), pause(30, submit("5"))]  # still working at the stop

solver = swarm(
    members=[member(react, name=name) for name in SCRIPTS],
    controller="agreement",
    plugins=PluginCatalog(pm, sources),
    budget=Budget(grace=0),
)
log = run_eval(solver, model=scripted_model(SCRIPTS))
result = log.samples[0].store[RESULT_KEY]
for m in result["members"]:
    print(f"{m['name']}: {m['status']:<10} answer {m['answer']!r}")
print("stop reason:", result["stop_reason"])
print("answer:", result["final"]["member"], result["final"]["mode"], result["final"]["reason"])
