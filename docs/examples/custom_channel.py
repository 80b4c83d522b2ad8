"""A channel defined in this file: members vote for an answer, one vote each.

`Votes` uses only swarm-eval's public API, like any third-party channel.  Its tool hands each
vote to the bus (`current_bus().deliver`), which stamps the sender from the runtime, asks the
admission hooks, applies the vote and commits it as record v-N.  A second vote by the same
member is refused with `RecordRejected` (control `one_vote`).  Members in notify mode get a
notice line about votes they have not been told of, and `max_wait` makes the swarm offer
`swarm_wait`, which this channel ends with `swarm_wait_news`.  The channel is registered
in-process and the swarm gets the catalog with `plugins=`.
"""

from inspect_ai.agent import Agent, agent, react
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.tool import Tool, ToolDef, ToolError

from swarm import (
    Draft,
    MemberView,
    NoticeLine,
    PluginCatalog,
    Record,
    RecordRejected,
    Register,
    SwarmView,
    WaitNews,
    controller,
    current_bus,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
    swarm_on_continue,
    swarm_tools,
)
from swarm.analysis import notice_text
from swarm.testing import call, pause, reply, run_eval, scripted_model, submit

NAME = "votes"


class Votes:
    """One run's votes.  The factory below builds a new one for every run."""

    prefix = "v"  # records are v-1, v-2...; the metrics count them under comm["votes"]
    max_wait = 30.0  # the channel can wake waiting members: swarm_wait is offered

    def __init__(self) -> None:
        self.votes: list[Record] = []  # committed votes, in order
        self.answers: dict[str, str] = {}  # member -> answer
        self.told: dict[str, int] = {}  # loop -> how many votes it has been told of

    @hookimpl
    def swarm_member_instructions(self, view: SwarmView, member: MemberView) -> str:
        return "Vote for the answer you believe is right with the vote tool; you have one vote."

    @hookimpl
    def swarm_member_tools(self, view: SwarmView, member: MemberView, nested: bool) -> list[Tool]:
        # Called once per run for members' own loops (and once for subagents' loops), so the
        # tool must find out who calls it at call time, from the bus.
        async def vote(answer: str) -> str:
            """Vote for an answer.

            Args:
                answer: the answer you vote for.
            """
            bus = current_bus()
            if bus is None:
                raise ToolError("vote works only inside a swarm")
            record, total = bus.deliver(
                Draft(channel=NAME, kind="vote", payload=answer, op={"answer": answer}),
                lambda record: self._apply(record, answer),
            )
            return f"Vote {record.id} recorded ({total} so far)."

        return [ToolDef(vote, name="vote").as_tool()]

    def _apply(self, record: Record, answer: str) -> int:
        if record.sender in self.answers:  # applied and committed atomically by the bus
            raise RecordRejected("one_vote", f"{record.sender} has already voted.")
        self.answers[record.sender] = answer
        self.votes.append(record)
        return len(self.votes)

    def _news(self, member: str, loop: str) -> tuple[Record, ...]:
        """Votes by other members that this loop has not been told of."""
        return tuple(r for r in self.votes[self.told.get(loop, 0) :] if r.sender != member)

    def _tell(self, loop: str) -> None:
        self.told[loop] = len(self.votes)

    @hookimpl
    def swarm_notice_lines(
        self, view: SwarmView, member: MemberView, loop: str
    ) -> NoticeLine | None:
        news = self._news(member.name, loop)
        self._tell(loop)  # a notice covers what it names
        if not news:
            return None
        ids = ", ".join(r.id for r in news)
        return NoticeLine(
            channel=NAME,
            text=f"{len(news)} new vote{'s' if len(news) > 1 else ''} ({ids}).",
            ids=tuple({"record": r.id} for r in news),
        )

    @hookimpl
    def swarm_wait_news(
        self, view: SwarmView, member: MemberView, loop: str, path: str | None
    ) -> WaitNews | None:
        # Asked when the wait starts, after every commit while it sleeps, and again to word
        # its result: report without consuming (the next notice covers these votes).
        news = self._news(member.name, loop)
        if not news:
            return None
        tally = ", ".join(f"{r.id} by {r.sender}: {r.op['answer']}" for r in news)
        return WaitNews(channel=NAME, text=f"New votes: {tally}.", ids=())

    @hookimpl
    def swarm_record_delivered(self, view: SwarmView, record: Record) -> None:
        if record.channel == NAME:
            print(f"delivered {record.id} seq={record.seq} sender={record.sender} op={record.op}")


def votes() -> Votes:
    """The channel factory (a topology's parameters would arrive as keyword arguments)."""
    return Votes()


class VotesPlugin:
    @hookimpl
    def swarm_register_channels(self, register: Register) -> None:
        register(NAME, votes)


@agent
def voter() -> Agent:
    """A react agent wired to the swarm's channels."""
    return react(tools=[swarm_tools()], on_continue=swarm_on_continue())


pm, sources = get_plugin_manager()
pm.register(VotesPlugin(), name="votes-plugin")
catalog = PluginCatalog(pm, sources)

SCRIPTS = {
    "alice": [reply("warming up"), pause(0.3, call("vote", answer="42")), submit("42")],
    "bob": [call("swarm_wait"), call("vote", answer="42"), submit("42")],
    "carol": [
        reply("warming up"),
        pause(1.2, call("vote", answer="41")),
        call("vote", answer="42"),
        submit("41"),
    ],
}
log = run_eval(
    swarm(
        members=[member(voter, name=name) for name in SCRIPTS],
        channels=[NAME],
        controller=controller("leaderless", stop_on_submission=False),
        plugins=catalog,
    ),
    model=scripted_model(SCRIPTS),
)
sample = resolve_sample_attachments(log.samples[0])
spans = {e.id: e.name for e in sample.events if e.event == "span_begin"}
for e in sample.events:  # tool calls in the order they started, and notices
    who = spans.get(e.span_id, "?")
    if e.event == "tool" and e.function in ("vote", "swarm_wait"):
        text = e.error.message if e.error else str(e.result)
        print(f"[{who}] {e.function}({', '.join(map(repr, e.arguments.values()))}): {text}")
    elif e.event == "model" and (notice := notice_text(e.input[-1])) is not None:
        print(f"[{who}] {notice}")
for m in sample.store["inspect_swarm:metrics"]["members"]:
    print(f"{m['name']:<6} {m['comm'][NAME]}")
