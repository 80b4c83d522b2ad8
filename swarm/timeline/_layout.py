"""Where things go: the time scale, the lanes' rows, and marks merged where they would overlap.

Pure geometry over a ``RunTimeline``; the SVG writer only formats what this computes.  Lanes
are compact (short rows, small type) past ``COMPACT_FROM`` lanes.  Marks of one kind on one
lane whose extents come within ``gap`` pixels of each other are drawn as one mark that says
how many it holds, so a lane never has more marks of a kind than it has room for: the number
of drawn marks is at most ``lanes x kinds x plot width / (min width + gap)``.  On top of
that, when a drawing would hold more than ``MARK_BUDGET`` marks, marks that start in the same
bin of a lane are merged too, with bins of 4, 8, 16... pixels, the smallest that brings the
drawing within the budget (or one bin for the whole lane): that bounds the size of the file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import attrs

from swarm.timeline._model import Lane, Mark, ModelCall, RunTimeline

__all__ = [
    "COMPACT_FROM",
    "MARK_BUDGET",
    "Geometry",
    "Placed",
    "geometry",
    "lane_marks",
    "layout",
    "place",
    "ticks",
]

COMPACT_FROM = 41
"""Lanes from which the timeline is drawn compact."""

MARK_BUDGET = 16_000
"""The most marks a drawing holds before marks further apart are merged too."""

LEGEND_HEIGHT = 64
"""Room below the lanes for the legend."""


@attrs.frozen(kw_only=True)
class Geometry:
    """Sizes in pixels, and the time scale."""

    compact: bool
    plot: int
    gutter: int
    right: int
    top: int
    lane_height: int
    font: int
    duration: float
    lanes: int
    gap: float
    min_width: float
    bin: float | None = None

    @property
    def point(self) -> float:
        """The size of a point mark (a write, a notice)."""
        return round(self.lane_height * 0.3, 1)

    @property
    def width(self) -> int:
        """The drawing's whole width."""
        return self.gutter + self.plot + self.right

    @property
    def lanes_bottom(self) -> int:
        """The y just below the last lane."""
        return self.top + self.lanes * self.lane_height

    @property
    def height(self) -> int:
        """The drawing's whole height (lanes, then the legend)."""
        return self.lanes_bottom + LEGEND_HEIGHT

    def x(self, t: float) -> float:
        """The x of time ``t`` (seconds since the swarm started)."""
        span = self.duration if self.duration > 0 else 1.0
        return self.gutter + self.plot * min(max(t, 0.0), span) / span

    def lane_y(self, index: int) -> int:
        """The y of the top of lane ``index``."""
        return self.top + index * self.lane_height


def geometry(run: RunTimeline, *, plot: int = 1000) -> Geometry:
    """The geometry of ``run`` drawn ``plot`` pixels wide."""
    compact = len(run.lanes) >= COMPACT_FROM
    return Geometry(
        compact=compact,
        plot=plot,
        gutter=200 if compact else 230,
        right=70,
        top=70,
        lane_height=12 if compact else 30,
        font=9 if compact else 12,
        duration=run.duration,
        lanes=len(run.lanes),
        gap=3.0 if compact else 1.0,
        min_width=1.5 if compact else 2.0,
    )


def ticks(duration: float, target: int = 10) -> list[float]:
    """Round times from 0 to ``duration``: about ``target`` of them, steps of 1, 2 or 5 x 10^k."""
    if duration <= 0:
        return [0.0]
    raw = duration / target
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    count = int(duration / step + 1e-9)
    return [round(i * step, 10) for i in range(count + 1)]


@attrs.frozen(kw_only=True)
class Placed:
    """One drawn mark: ``marks`` (one or more of the same kind) from ``x0`` to ``x1``."""

    kind: str
    x0: float
    x1: float
    marks: tuple[Mark, ...]

    @property
    def count(self) -> int:
        """How many marks it stands for."""
        return len(self.marks)


def place(
    g: Geometry,
    kind: str,
    marks: Sequence[Mark],
    *,
    width: Callable[[Mark], float] | None = None,
    span: Callable[[Mark], tuple[float, float]] | None = None,
) -> list[Placed]:
    """``marks`` of one kind on one lane, merged where they would overlap or touch, and (with
    ``g.bin``) where they start in the same bin of ``g.bin`` pixels; ``span`` gives the part of
    a mark drawn (default: its start to its end)."""
    placed: list[Placed] = []
    group: list[Mark] = []
    x0 = x1 = 0.0
    spans = span or (lambda m: (m.start, m.end))
    for mark in sorted(marks, key=lambda m: spans(m)[0]):
        start, end = spans(mark)
        a = g.x(start)
        b = max(g.x(end), a + (width(mark) if width else g.min_width))
        same_bin = g.bin is not None and (a - g.gutter) // g.bin == (x0 - g.gutter) // g.bin
        if group and (a <= x1 + g.gap or same_bin):
            group.append(mark)
            x1 = max(x1, b)
            continue
        if group:
            placed.append(Placed(kind=kind, x0=x0, x1=x1, marks=tuple(group)))
        group, x0, x1 = [mark], a, b
    if group:
        placed.append(Placed(kind=kind, x0=x0, x1=x1, marks=tuple(group)))
    return placed


def _before_model(mark: Mark) -> tuple[float, float]:
    assert isinstance(mark, ModelCall)
    return mark.start, mark.model_start


def _model_time(mark: Mark) -> tuple[float, float]:
    assert isinstance(mark, ModelCall)
    return mark.model_start, mark.end


def lane_marks(g: Geometry, lane: Lane) -> list[Placed]:
    """Everything drawn on ``lane``, back to front: waits, calls, then point events."""
    point = g.point
    writes = [w for w in lane.writes if w.rejected is None]
    refused = [w for w in lane.writes if w.rejected is not None]
    spawned = [s for s in lane.spawns if s.refused is None]
    spawn_refused = [s for s in lane.spawns if s.refused is not None]
    # the model's own time, and before it (a connection slot, a retry's backoff, the first
    # call's setup) where that is wide enough to see
    calls = lane.model_calls
    setups = [c for c in calls if g.x(c.model_start) - g.x(c.start) >= g.min_width]
    return [
        *place(g, "wait", lane.waits),
        *place(g, "setup", setups, span=_before_model),
        *place(g, "model", calls, span=_model_time),
        *place(g, "tool", lane.tool_calls),
        *place(g, "write", writes, width=lambda _: point),
        *place(g, "rejected", refused, width=lambda _: point),
        *place(g, "notice", lane.notices, width=lambda _: point),
        *place(g, "spawn", spawned, width=lambda _: point),
        *place(g, "spawn-refused", spawn_refused, width=lambda _: point),
    ]


_KINDS = 9
"""The kinds of mark ``lane_marks`` draws (wait, setup, model, tool, write, rejected, notice,
spawn, spawn-refused)."""


def layout(run: RunTimeline, *, plot: int = 1000) -> tuple[Geometry, list[list[Placed]]]:
    """The geometry of ``run`` and each lane's marks, within ``MARK_BUDGET`` where it can be."""
    g = geometry(run, plot=plot)
    if _KINDS * len(run.lanes) > MARK_BUDGET:
        # no bin draws fewer marks than one per kind on each lane, which the last bin (as
        # wide as the plot) draws: when that is over the budget, so is every bin, and the
        # bins would double (4, 8, ... pixels) up to the last one; start there
        last = attrs.evolve(g, bin=4.0)
        while (last.bin or 0) < plot:
            last = attrs.evolve(last, bin=2 * (last.bin or 0))
        placed = [lane_marks(last, lane) for lane in run.lanes]
        if sum(len({p.kind for p in marks}) for marks in placed) > MARK_BUDGET:
            return last, placed
    while True:
        placed = [lane_marks(g, lane) for lane in run.lanes]
        if sum(map(len, placed)) <= MARK_BUDGET or (g.bin or 0) >= plot:
            return g, placed
        g = attrs.evolve(g, bin=2 * g.bin if g.bin else 4.0)
