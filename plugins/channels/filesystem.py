"""``filesystem``: a shared directory in the sample's sandbox, by convention only.

It connects the members that work in one sandbox environment: all of them by default; with
``sandboxes.per_member`` a share group's members, and with named environments the members that
name the same one.  The preamble says no more than that, so it stays true either way.

No tools and no records: members use whatever file tools they have (``bash()``,
``text_editor()``) on the sample's sandbox (``sandbox="local"`` works without Docker).  The
channel adds instructions to each member's preamble; communication through files is observed
in the transcript, not recorded on the bus, so it adds nothing to the metrics' ``comm``.
"""

from __future__ import annotations

from swarm import ConfigError, MemberView, Register, SwarmView, hookimpl


class Filesystem:
    """The filesystem convention for one run."""

    name = "filesystem"

    def __init__(self, shared: str, notes: str, scratch: str) -> None:
        self.shared = shared
        self.notes = notes
        self.scratch = scratch

    @hookimpl
    def swarm_member_instructions(self, view: SwarmView, member: MemberView) -> str:
        scratch = self.scratch.replace("{member}", member.name)
        return (
            "The other members who work in your sandbox work in it at the same time, so files "
            f"can change under you. Share files with them in {self.shared}. Read "
            f"{self.shared}/{self.notes} before you start and again as you work, and append "
            "what you learn or decide to "
            f"its end without changing anyone else's text. Keep your own work in {scratch}, "
            "which no one else uses."
        )


def filesystem(
    shared: str = "/shared", notes: str = "notes.md", scratch: str = "/scratch/{member}"
) -> Filesystem:
    """A shared directory convention.

    Args:
        shared: the shared directory (in the sample's sandbox).
        notes: the notes file inside it that everyone reads and appends to.
        scratch: each member's private directory; must contain ``{member}``.
    """
    for field, value in (("shared", shared), ("notes", notes), ("scratch", scratch)):
        if not isinstance(value, str) or not value:
            raise ConfigError(f"filesystem.{field}: expected a non-empty path, got {value!r}")
    if scratch.count("{member}") != 1 or scratch.replace("{member}", "").count("{") > 0:
        raise ConfigError(
            f"filesystem.scratch: must contain {{member}} exactly once and no other field, "
            f"got {scratch!r}"
        )
    if "/" in notes.strip("/"):
        raise ConfigError(f"filesystem.notes: a file name inside {shared}, got {notes!r}")
    return Filesystem(shared.rstrip("/") or "/", notes.strip("/"), scratch)


@hookimpl
def swarm_register_channels(register: Register) -> None:
    register("filesystem", filesystem)
