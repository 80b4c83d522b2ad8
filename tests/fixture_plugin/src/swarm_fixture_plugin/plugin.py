"""The ``fixture`` entry point of ``swarm-fixture-plugin``.

Only registration hooks live at module level: the module is loaded into every process that has
the distribution installed, so anything else here would run in every swarm.  The controller and
the channel implement their run-time hooks as methods and are registered on a run's own plugin
manager only when a topology names them.
"""

from __future__ import annotations

from inspect_ai.tool import Tool, ToolDef, ToolError

from swarm import (
    ConfigError,
    Decision,
    Draft,
    MemberSubmitted,
    MemberView,
    NoticeLine,
    Register,
    SwarmView,
    current_bus,
    first_submission,
    hookimpl,
)

__all__ = ["Bulletin", "Quorum", "bulletin", "last_word", "quorum"]


class Quorum:
    """Start every member; once ``size`` have submitted, stop and answer with the earliest."""

    def __init__(self, size: int) -> None:
        self.size = size

    @hookimpl
    def swarm_start(self, view: SwarmView) -> Decision:
        return Decision(start=tuple(m.name for m in view.pending))

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        if len(view.submissions) < self.size:
            return None
        earliest = first_submission(view).member
        return Decision(stop="quorum", answer=earliest, reason="quorum")


def quorum(size: int = 2) -> Quorum:
    """Stop (reason ``controller:quorum``) once ``size`` members have submitted.

    Args:
        size: how many submissions make a quorum (a whole number >= 1).  With fewer
            submissions by the time every member has ended, the swarm ends ``all_done`` and
            the answer is the earliest submission, if any.
    """
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ConfigError(f"quorum.size: expected a whole number >= 1, got {size!r}")
    return Quorum(size)


class Bulletin:
    """A bulletin board channel: members post notes and read the others' (public API only).

    Posts go through the bus as records ``b-N``; members in notify mode get a notice line
    counting posts they have not read.
    """

    name = "bulletin"
    prefix = "b"

    def __init__(self, path: str) -> None:
        self.path = path
        self.posts: list[tuple[str, str, str]] = []  # (record id, author, text)
        self.read_upto: dict[str, int] = {}
        self.noticed_upto: dict[str, int] = {}

    @hookimpl
    def swarm_member_instructions(self, view: SwarmView, member: MemberView) -> str:
        return (
            f"Post what you learn on the bulletin board at {self.path}. "
            f"Sign each post as {member.name}."
        )

    @hookimpl
    def swarm_member_tools(self, view: SwarmView, member: MemberView, nested: bool) -> list[Tool]:
        async def post(text: str) -> str:
            """Post a note to the bulletin board.

            Args:
                text: the note.
            """
            return self._post(text)

        async def read() -> str:
            """Read the bulletin posts you have not read yet."""
            return self._read()

        return [
            ToolDef(post, name="bulletin_post").as_tool(),
            ToolDef(read, name="bulletin_read").as_tool(),
        ]

    @hookimpl
    def swarm_extra_metrics(self, view: SwarmView) -> dict[str, int]:
        return {"posts": len(self.posts)}

    def _unread(self, member: str, upto: dict[str, int]) -> list[tuple[str, str, str]]:
        return [p for p in self.posts[upto.get(member, 0) :] if p[1] != member]

    @hookimpl
    def swarm_notice_lines(
        self, view: SwarmView, member: MemberView, loop: str
    ) -> NoticeLine | None:
        unread = self._unread(member.name, self.noticed_upto)
        self.noticed_upto[member.name] = len(self.posts)
        if not unread:
            return None
        ids = tuple({"record": p[0]} for p in unread)
        return NoticeLine(
            channel="bulletin",
            text=f"{len(unread)} new bulletin posts ({', '.join(p[0] for p in unread)}). "
            "Call bulletin_read() to read them.",
            ids=ids,
        )

    def _post(self, text: str) -> str:
        bus = current_bus()
        if bus is None:
            raise ToolError("bulletin_post works only inside a swarm")
        record, _ = bus.deliver(
            Draft(channel="bulletin", kind="post", payload=text),
            lambda rec: self.posts.append((rec.id, rec.sender, text)),
        )
        return f"Posted {record.id}."

    def _read(self) -> str:
        bus = current_bus()
        if bus is None:
            raise ToolError("bulletin_read works only inside a swarm")
        member = bus.acting_loop().member
        unread = self._unread(member, self.read_upto)
        self.read_upto[member] = len(self.posts)
        bus.note_read("bulletin", listing=False, files=[{"record": p[0]} for p in unread])
        return "\n".join(f"{rid} by {who}: {text}" for rid, who, text in unread) or "No new posts."


def bulletin(path: str = "/shared/bulletin.md") -> Bulletin:
    """A bulletin board at ``path`` that every member is told to post to.

    Args:
        path: where the board is (a non-empty string).
    """
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f"bulletin.path: expected a non-empty path, got {path!r}")
    return Bulletin(path)


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("quorum", quorum)


@hookimpl
def swarm_register_channels(register: Register) -> None:
    register("bulletin", bulletin)


def last_word(text: str) -> str:
    """The answer's last word, case-folded (``"I think: Paris."`` -> ``"paris"``)."""
    words = [w.strip(".,;:!?") for w in text.split()]
    words = [w for w in words if w]
    return words[-1].casefold() if words else ""


@hookimpl
def swarm_register_normalizers(register: Register) -> None:
    register("last_word", last_word)
