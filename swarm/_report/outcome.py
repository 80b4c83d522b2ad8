"""A finished run, as the record builders see it: one value, no live objects but the accounts.

The runtime fills it in when the run ends (normally, on error or cancelled); the builders of the
result, ledger and metrics records read only this and the run's transcript events.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import attrs

from swarm._accounts.accounts import Accounts
from swarm._report.counters import CommCounts, WaitCounts
from swarm._report.reads import ReadsTaken
from swarm._report.spawns import SpawnEntry
from swarm._report.subagents import BackgroundFuture
from swarm.records import Answer, Delivery, MemberInfo, MemberState, SwarmView

__all__ = ["MemberEnd", "RunOutcome"]


@attrs.frozen(kw_only=True)
class MemberEnd:
    """One member at the end of the run."""

    info: MemberInfo
    state: MemberState
    status: str | None
    started: float | None
    ended: float | None
    error: str | None
    span_id: str
    delivery: Delivery
    own_loop: str | None
    continue_wired: bool
    gate_checks: int = 0
    gate_passes: int = 0
    first_pass_time: float | None = None
    # its agent talked to its model through Inspect's agent bridge (declared, or seen)
    bridged: bool = False
    # the swarm or the sample cancelled the member (calls it had in flight are unknown), also
    # during its background drain, when its status is its agent's
    cancelled: bool = False
    background_started: int = 0
    background_cancelled: int = 0
    # what it submitted (cut at ANSWER_MAX_CHARS), its full length, the verifier's verdict
    answer: str | None = None
    answer_chars: int | None = None
    verified: bool | None = None

    @property
    def name(self) -> str:
        """The member's name."""
        return self.info.name


@attrs.frozen(kw_only=True)
class RunOutcome:
    """Everything the records say about one run, at its end.

    ``comm`` and ``waits`` are the run's counters by member; ``commits`` the time and acting
    loop of every committed record, in order; ``tool_channels`` each channel tool's name and
    channel; ``waits`` is ``None`` when no ``swarm_wait`` was offered.
    """

    members: tuple[MemberEnd, ...]
    answer: Answer
    # the answer's text (None: no answer), whole; the final step was cancelled
    answer_text: str | None
    final_cancelled: bool
    interrupted: bool
    stop_reason: str | None
    ended_by: str | None
    wall_clock: float
    started_at: datetime
    root_span: str | None
    # the index of the run's first event in the transcript (events before it are not the run's)
    first_event: int
    accounts: Accounts
    comm: Mapping[tuple[str, str], CommCounts]
    recording_channels: tuple[str, ...]
    commits: tuple[tuple[float, str], ...]
    tool_channels: Mapping[str, str]
    waits: Mapping[str, WaitCounts] | None
    channel_tools: bool
    view: SwarmView
    spawns: tuple[SpawnEntry, ...] | None = None
    reads: ReadsTaken | None = None
    # each member's deepagent background subagents, as its registry held them at the end
    background: Mapping[str, tuple[BackgroundFuture, ...]] = attrs.field(factory=dict)
