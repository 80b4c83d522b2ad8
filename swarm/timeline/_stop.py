"""When the swarm stopped.  The records give the reason but not the moment, so the moment is
read from the records that pin it down for that reason, and ``Stop.basis`` says which."""

from __future__ import annotations

from collections.abc import Sequence

from swarm.timeline._model import Lane, Stop

__all__ = ["infer_stop"]


def infer_stop(
    reason: str | None,
    lanes: Sequence[Lane],
    first_passes: Sequence[float],
    time_cap: float | None,
    duration: float,
) -> Stop | None:
    """When the swarm stopped: the records give the reason but not the moment."""
    if reason is None:
        return None

    def ends(status: str | None = None) -> list[float]:
        return [
            lane.ended
            for lane in lanes
            if lane.ended is not None and (status is None or lane.status == status)
        ]

    candidates: list[tuple[list[float], str, bool]] = [
        (ends(), "the last member's end", reason == "all_done"),
        (ends("submitted"), "the first submission", reason == "submitted"),
        (list(first_passes), "the first verified submission", reason == "verified"),
        ([time_cap] if time_cap is not None else [], "the time cap", reason == "swarm_time"),
        (ends("swarm_cap"), "the call that reached the cap", reason == "swarm_cap"),
    ]
    for times, basis, applies in candidates:
        if applies and times:
            at = max(times) if reason == "all_done" else min(times)
            return Stop(reason=reason, time=at, basis=basis)
    released = [w.end for lane in lanes for w in lane.waits if w.outcome == "stopping"]
    if released:
        return Stop(reason=reason, time=min(released), basis="a wait the stop released")
    if ends("stopped"):
        return Stop(
            reason=reason, time=min(ends("stopped")), basis="no later than: a call it refused"
        )
    return Stop(reason=reason, time=duration, basis="not recorded: drawn at the run's end")
