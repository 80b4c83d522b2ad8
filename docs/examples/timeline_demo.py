"""Draw a swarm's timeline: a scripted shared-memory swarm, then `timeline()` on its log file.

`writer` posts the answer on the board at 0.4 s, appends to it at 0.6 s and submits a second
later, which stops the swarm (leaderless stops at the first submission). `waiter` waits twice
(the first wait returns at once, with the news that `crasher` ended; the second with the new
file), is refused an overwrite of the file it has not viewed, gets a notice of the append, and
is cancelled when the 0.5 s grace runs out. `crasher`'s first model
call raises. The timeline is written as timeline.html and timeline.svg in the current directory;
`swarm timeline LOG -o timeline.html` writes the same page.
"""

from inspect_ai.agent import Agent, agent, react

from swarm import channel, controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.testing import call, fail, pause, reply, run_eval, scripted_model, submit
from swarm.timeline import timeline

BOARD = "/shared_memory"


@agent
def board_worker() -> Agent:
    """A react agent wired to the swarm's channels: their tools, and notices."""
    return react(tools=[swarm_tools()], on_continue=swarm_on_continue())


log = run_eval(
    swarm(
        members=[
            member(board_worker, name="writer"),
            member(board_worker, name="waiter"),
            member(board_worker, name="crasher"),
        ],
        channels=[channel("shared_memory")],
        controller=controller("leaderless", stop_on_submission=True),
        budget={"grace": 0.5},
    ),
    model=scripted_model(
        {
            "writer": [
                reply("warming up"),
                pause(
                    0.4,
                    call("shared_memory", command="create", path=f"{BOARD}/a.md", file_text="42"),
                ),
                pause(
                    0.2,
                    call("shared_memory", command="append", path=f"{BOARD}/a.md", append_text="!"),
                ),
                pause(1.0, submit("42")),
            ],
            "waiter": [
                call("swarm_wait"),
                call("swarm_wait", path=f"{BOARD}/a.md"),
                pause(
                    0.5,
                    call("shared_memory", command="create", path=f"{BOARD}/a.md", file_text="x"),
                ),
                pause(5, reply("still thinking")),
            ],
            "crasher": [fail("model API down")],
        }
    ),
)

t = timeline(log.location)  # a log file (or an EvalSample, or an EvalLog with its samples)
for lane in t.run.lanes:
    refused = sum(1 for w in lane.writes if w.rejected is not None)
    print(
        f"{lane.name:<8} {lane.label:<10} model calls {len(lane.model_calls)}, "
        f"tool calls {len(lane.tool_calls)}, writes {len(lane.writes) - refused} "
        f"(+{refused} refused), waits {len(lane.waits)}, notices {len(lane.notices)}"
    )
assert t.run.stop is not None
print(f"stop: {t.run.stop.reason} ({t.run.stop.basis})")
print(f"answer: {t.run.answer}")
html, svg = t.save("timeline.html"), t.save("timeline.svg")
print(f"wrote {html} and {svg}")
print("self-contained:", "http" not in html.read_text(encoding="utf-8"))
