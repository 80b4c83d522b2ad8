"""The timeline as SVG: a pure function from a ``RunTimeline`` to a string.

The drawing is plain SVG 1.1 with its own ``<style>``; hover text is SVG ``<title>``, so it
works in any browser and in the standalone file with no script.  Elements carry ``class`` and
``data-`` attributes that say what they are (``g.lane[data-member]``, ``.mark.model
[data-count]``, ``g.stop[data-reason]``), which the HTML page's filter and the tests read.
"""

from __future__ import annotations

from html import escape

from swarm.timeline._describe import describe, header, lane_title, seconds, status_class
from swarm.timeline._layout import Geometry, Placed, layout, ticks
from swarm.timeline._model import Lane, RunTimeline

__all__ = ["STYLE", "render_svg"]

SVG_NS = "http://www.w3.org/2000/svg"

STYLE = """
.stl text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#1f2328}
.stl .head{font-weight:600}
.stl .axis text,.stl .legend text{fill:#57606a}
.stl .grid{stroke:#d0d7de;stroke-width:1;stroke-dasharray:2 3}
.stl .band{fill:#fff}.stl .band.odd{fill:#f6f8fa}.stl .band.answer{fill:#fff8c5}
.stl .name.answer{font-weight:700}
.stl .life{fill-opacity:.45}.stl .end{stroke-width:2}
.stl text.status{font-weight:600;stroke:none}
.stl .s-submitted{fill:#1a7f37;stroke:#1a7f37}
.stl .s-unsubmitted{fill:#9a6700;stroke:#9a6700}
.stl .s-stopped{fill:#57606a;stroke:#57606a}
.stl .s-cancelled{fill:#8c959f;stroke:#8c959f}
.stl .s-errored{fill:#cf222e;stroke:#cf222e}
.stl .s-share,.stl .s-swarm_cap,.stl .s-member_limit{fill:#bc4c00;stroke:#bc4c00}
.stl .s-running{fill:#0969da;stroke:#0969da}
.stl .s-pending{fill:#afb8c1;stroke:#afb8c1}
.stl .life{stroke:none}
.stl .mark.model{fill:#0969da}
.stl .mark.setup{fill:#0969da;fill-opacity:.18}
.stl .mark.tool{fill:#8250df}
.stl .mark.err{fill:#cf222e}
.stl .mark.nested{fill-opacity:.5}
.stl .mark.open{fill-opacity:.35;stroke:#cf222e;stroke-width:.8;stroke-dasharray:3 2}
.stl .mark.wait{fill:#d4a72c;fill-opacity:.28;stroke:#bf8700;stroke-width:1}
.stl .mark.wait.o-stopping,.stl .mark.wait.o-cancelled{stroke:#cf222e}
.stl .mark.write{fill:#1a7f37}
.stl .mark.rejected{stroke:#cf222e;stroke-width:2;fill:#cf222e}
.stl .mark.notice{fill:#fb8f44;stroke:#953800;stroke-width:.6}
.stl .mark.spawn{stroke:#1b7c83;stroke-width:2;fill:#1b7c83}
.stl .mark.spawn-refused{stroke:#cf222e;stroke-width:2;fill:#cf222e}
.stl .mark:hover{stroke:#1f2328;stroke-width:1.5}
.stl .msg{stroke:#1b7c83;stroke-width:1.2;fill:none}
.stl .msg.receipt{stroke-dasharray:4 2}
.stl .spawn-link{stroke:#1b7c83;stroke-width:1;stroke-dasharray:1 2;fill:none}
.stl .stop line{stroke:#cf222e;stroke-width:2;stroke-dasharray:6 3}
.stl .stop text{fill:#cf222e;font-weight:600}
.stl .star{fill:#bf8700}
.stl .child-label{fill:#57606a}
.stl .critical{stroke:#6639ba;stroke-width:2;stroke-opacity:.7;fill:none}
.stl .crit{fill:#6639ba}
.stl .finding circle{fill:#cf222e}.stl .finding text{fill:#fff;font-weight:700}
"""


def _n(x: float) -> str:
    """A coordinate: one decimal at most."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _a(text: object) -> str:
    return escape(str(text), quote=True)


def _title(text: str) -> str:
    return f"<title>{escape(text, quote=False)}</title>"


def _fit(name: str, room: float, font: int) -> str:
    """``name`` cut to the room, its middle left out: names that share a start (the fan-out's
    ``worker-events-01`` ... ``-08``) still differ where they differ, at the end."""
    chars = max(4, int(room / (font * 0.58)))
    if len(name) <= chars:
        return name
    head = (chars - 1) // 3
    return name[:head] + "…" + name[len(name) - (chars - 1 - head) :]


def _glyph(p: Placed, g: Geometry, cy: float, tip: str) -> str:
    s = g.point
    count = f' data-count="{p.count}"'
    if p.count > 1:  # several point marks merged: a pill spanning them
        return (
            f'<rect class="mark {p.kind}"{count} x="{_n(p.x0)}" y="{_n(cy - s / 2)}" '
            f'width="{_n(p.x1 - p.x0)}" height="{_n(s)}" rx="{_n(s / 2)}">{tip}</rect>'
        )
    x, r = p.x0 + s / 2, s / 2
    if p.kind == "write":
        points = (
            f"{_n(x)},{_n(cy - r)} {_n(x + r)},{_n(cy)} {_n(x)},{_n(cy + r)} {_n(x - r)},{_n(cy)}"
        )
        return f'<polygon class="mark write"{count} points="{points}">{tip}</polygon>'
    if p.kind == "notice":
        circle = f'cx="{_n(x)}" cy="{_n(cy)}" r="{_n(r)}"'
        return f'<circle class="mark notice"{count} {circle}>{tip}</circle>'
    if p.kind == "rejected":
        a, b, c, e = _n(x - r), _n(x + r), _n(cy - r), _n(cy + r)
        d = f"M{a} {c}L{b} {e}M{b} {c}L{a} {e}"
    else:  # a spawn, admitted or refused: a plus
        d = f"M{_n(x - r)} {_n(cy)}H{_n(x + r)}M{_n(x)} {_n(cy - r)}V{_n(cy + r)}"
    return f'<path class="mark {p.kind}"{count} d="{d}">{tip}</path>'


def _mark(p: Placed, g: Geometry, bar: float) -> str:
    h, cy = g.lane_height, g.lane_height / 2
    tip = _title(describe(p.kind, p.marks))
    if p.kind not in ("model", "setup", "tool", "wait"):
        return _glyph(p, g, cy, tip)
    classes = ["mark", p.kind]
    if any(getattr(m, "error", None) for m in p.marks):
        classes.append("err")
    if all(getattr(m, "nested", False) for m in p.marks):
        classes.append("nested")
    if any(not getattr(m, "end_recorded", True) for m in p.marks):
        classes.append("open")
    if p.kind == "wait":
        outcomes = {getattr(m, "outcome", "") for m in p.marks}
        classes.extend(f"o-{o}" for o in sorted(outcomes) if o)
        y0, y1 = cy - h * 0.44, cy + h * 0.44
    elif p.kind in ("model", "setup"):
        y0, y1 = cy - h * 0.4, cy - bar / 2 - 0.5
    else:
        y0, y1 = cy + bar / 2 + 0.5, cy + h * 0.4
    return (
        f'<rect class="{" ".join(classes)}" data-count="{p.count}" x="{_n(p.x0)}" '
        f'y="{_n(y0)}" width="{_n(p.x1 - p.x0)}" height="{_n(y1 - y0)}">{tip}</rect>'
    )


def _lane(lane: Lane, index: int, g: Geometry, run: RunTimeline, marks: list[Placed]) -> str:
    h, cy, font = g.lane_height, g.lane_height / 2, g.font
    bar = 2.0 if g.compact else 4.0
    status = status_class(lane.label)
    attrs = (
        f'class="lane" data-member="{_a(lane.name)}" data-status="{_a(lane.label)}" '
        f'data-role="{_a(lane.role or "")}" data-depth="{lane.depth}" '
        f'data-parent="{_a(lane.parent or "")}" data-answer="{str(lane.answer).lower()}"'
    )
    band = "band answer" if lane.answer else ("band odd" if index % 2 else "band")
    indent = 8 + 14 * lane.depth
    prefix = ("└ " if lane.depth else "") + ("★ " if lane.answer else "")
    name = _fit(lane.name, g.gutter - indent - font * 9, font)
    text_y = _n(cy + font * 0.35)
    out = [
        f'<g {attrs} transform="translate(0,{g.lane_y(index)})">',
        f'<rect class="{band}" x="0" y="0" width="{g.width}" height="{h}"/>',
        f'<text class="name{" answer" if lane.answer else ""}" x="{indent}" y="{text_y}" '
        f'font-size="{font}">{escape(prefix + name)}{_title(lane_title(lane))}</text>',
        f'<text class="status {status}" x="{g.gutter - 8}" y="{text_y}" font-size="{font}" '
        f'text-anchor="end">{escape(lane.label)}</text>',
    ]
    if lane.started is not None:
        x0 = g.x(lane.started)
        x1 = max(g.x(lane.ended if lane.ended is not None else run.duration), x0 + 1)
        out.append(
            f'<rect class="life {status}" x="{_n(x0)}" y="{_n(cy - bar / 2)}" '
            f'width="{_n(x1 - x0)}" height="{_n(bar)}"/>'
        )
        if lane.ended is not None:
            out.append(
                f'<line class="end {status}" x1="{_n(x1)}" x2="{_n(x1)}" y1="{_n(cy - h * 0.3)}" '
                f'y2="{_n(cy + h * 0.3)}">{_title(f"{lane.label} at {seconds(lane.ended)}")}</line>'
            )
        if lane.answer:
            out.append(
                f'<text class="star" x="{_n(x1 + 3)}" y="{text_y}" font-size="{font}">★'
                f"{_title('the answer')}</text>"
            )
    out.extend(_mark(p, g, bar) for p in marks)
    if lane.parent and lane.started is not None and not g.compact:
        # a child's full name and its task along the top of its lane (from the plot's left
        # edge, where a child's lane is empty until it starts): children of one template
        # look alike
        label = lane.name + (f" · {lane.task}" if lane.task else "")
        out.append(
            f'<text class="child-label" x="{_n(g.gutter + 4)}" y="{_n(font * 0.85)}" '
            f'font-size="{_n(font * 0.75)}">{escape(_fit(label, g.plot - 8, int(font * 0.75)))}'
            f"{_title(label)}</text>"
        )
    out.append("</g>")
    return "".join(out)


def _links(run: RunTimeline, g: Geometry, row: dict[str, int]) -> list[str]:
    cy = g.lane_height / 2
    out = []
    for m in run.messages:
        x = _n(g.x(m.time))
        seq = f" #{m.seq}" if m.seq is not None else ""
        tip = _title(f"{m.kind}{seq}: {m.sender} to {m.recipient} at {seconds(m.time)}")
        kind = "msg receipt" if m.kind == "receipt" else "msg"
        out.append(
            f'<line class="{kind}" data-from="{_a(m.sender)}" data-to="{_a(m.recipient)}" '
            f'x1="{x}" x2="{x}" y1="{_n(g.lane_y(row[m.sender]) + cy)}" '
            f'y2="{_n(g.lane_y(row[m.recipient]) + cy)}" marker-end="url(#stl-arrow)">{tip}</line>'
        )
    for lane in run.lanes:
        for s in lane.spawns:
            if s.child is None or s.child not in row:
                continue
            child = run.lanes[row[s.child]]
            start = child.started if child.started is not None else s.start
            out.append(
                f'<line class="spawn-link" data-from="{_a(lane.name)}" data-to="{_a(s.child)}" '
                f'x1="{_n(g.x(s.start))}" x2="{_n(g.x(start))}" '
                f'y1="{_n(g.lane_y(row[lane.name]) + cy)}" y2="{_n(g.lane_y(row[s.child]) + cy)}"/>'
            )
    return out


def _critical(run: RunTimeline, g: Geometry, row: dict[str, int]) -> str:
    """The critical path: a line through the middle of each of its model calls, in order."""
    points = []
    y_off = g.lane_height / 2 - g.lane_height * 0.25
    for member, step in run.critical:
        if member not in row or not 0 < step <= len(run.lanes[row[member]].model_calls):
            return ""  # a call the lane does not have: draw no path rather than a wrong one
        call = run.lanes[row[member]].model_calls[step - 1]
        points.append((g.x((call.start + call.end) / 2), g.lane_y(row[member]) + y_off))
    if not points:
        return ""
    line = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
    dots = "".join(f'<circle class="crit" cx="{_n(x)}" cy="{_n(y)}" r="2"/>' for x, y in points)
    tip = _title(f"critical path: {len(points)} model calls")
    return (
        f'<g class="critical-path" data-steps="{len(points)}">{tip}'
        f'<polyline class="critical" points="{line}"/>{dots}</g>'
    )


def _findings(run: RunTimeline, g: Geometry, row: dict[str, int]) -> list[str]:
    """Each finding: a red "!" on its member's lane at its time (the lane's start without)."""
    out = []
    r = max(4.0, g.lane_height * 0.22)
    for f in run.findings:
        if f.member not in row:
            continue
        lane = run.lanes[row[f.member]]
        time = f.time if f.time is not None else (lane.started or 0.0)
        x, y = g.x(time), g.lane_y(row[f.member]) + r + 1
        out.append(
            f'<g class="finding" data-member="{_a(f.member)}" data-check="{_a(f.check)}">'
            f"{_title(f'{f.check} ({f.mode}): {f.why}')}"
            f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}"/>'
            f'<text x="{_n(x)}" y="{_n(y + r * 0.6)}" font-size="{_n(r * 1.7)}" '
            'text-anchor="middle">!</text></g>'
        )
    return out


def _axis(run: RunTimeline, g: Geometry) -> list[str]:
    out = ['<g class="axis">']
    for t in ticks(run.duration):
        x = _n(g.x(t))
        out.append(
            f'<line class="grid" data-stretch="1" x1="{x}" x2="{x}" y1="{g.top - 24}" '
            f'y2="{g.lanes_bottom}"/>'
            f'<text x="{x}" y="{g.top - 28}" font-size="11" text-anchor="middle">{t:g}</text>'
        )
    out.append(
        f'<text x="{g.gutter - 8}" y="{g.top - 28}" font-size="11" text-anchor="end">'
        "seconds since the swarm started</text></g>"
    )
    return out


def _stop(run: RunTimeline, g: Geometry) -> str:
    if run.stop is None:
        return ""
    stop = run.stop
    x = g.x(stop.time)
    right = x > g.gutter + g.plot * 0.7
    label = f"stop: {stop.reason} · {seconds(stop.time)}"
    return (
        f'<g class="stop" data-reason="{_a(stop.reason)}" data-time="{stop.time:.6f}">'
        f"{_title(f'the swarm stopped: {stop.reason}; time from {stop.basis}')}"
        f'<line data-stretch="1" x1="{_n(x)}" x2="{_n(x)}" y1="{g.top - 16}" '
        f'y2="{g.lanes_bottom}"/>'
        f'<text x="{_n(x - 4 if right else x + 4)}" y="{g.top - 6}" font-size="12" '
        f'text-anchor="{"end" if right else "start"}">{escape(label)}</text></g>'
    )


_LEGEND = (
    ('<rect class="life s-submitted" x="0" y="-2" width="16" height="4"/>', "life (status colour)"),
    ('<rect class="mark model" x="0" y="-6" width="12" height="5"/>', "model call"),
    ('<rect class="mark setup" x="0" y="-6" width="12" height="5"/>', "before the model's time"),
    ('<rect class="mark tool" x="0" y="1" width="12" height="5"/>', "tool call"),
    ('<rect class="mark model err" x="0" y="-6" width="12" height="5"/>', "errored call"),
    ('<rect class="mark wait" x="0" y="-6" width="16" height="12"/>', "swarm_wait"),
    ('<polygon class="mark write" points="5,-5 10,0 5,5 0,0"/>', "write"),
    ('<path class="mark rejected" d="M0 -4L8 4M8 -4L0 4"/>', "refused write"),
    ('<circle class="mark notice" cx="5" cy="0" r="4"/>', "notice"),
    ('<path class="mark spawn" d="M0 0H10M5 -5V5"/>', "spawn"),
    ('<line class="msg" x1="0" y1="-6" x2="0" y2="4" marker-end="url(#stl-arrow)"/>', "message"),
    ('<line class="stop-key" x1="6" y1="-7" x2="6" y2="7"/>', "stop"),
    ('<text class="star" x="0" y="4" font-size="12">★</text>', "answer"),
    ('<polyline class="critical" points="0,3 6,-3 12,3"/>', "critical path"),
    (
        '<g class="finding"><circle cx="5" cy="0" r="5"/>'
        '<text x="5" y="3" font-size="8" text-anchor="middle">!</text></g>',
        "finding",
    ),
)


def _legend(g: Geometry) -> str:
    out = [f'<g class="legend" transform="translate(0,{g.lanes_bottom + 24})">']
    x, y = 8.0, 0.0
    for glyph, label in _LEGEND:
        width = 26 + len(label) * 6.4
        if x + width > g.width:
            x, y = 8.0, y + 22
        out.append(
            f'<g transform="translate({_n(x)},{_n(y)})">{glyph}'
            f'<text x="20" y="4" font-size="11">{escape(label)}</text></g>'
        )
        x += width + 14
    out.append("</g>")
    return "".join(out)


def render_svg(run: RunTimeline, *, standalone: bool = True, plot: int = 1000) -> str:
    """``run`` as an SVG document (``standalone``) or as an ``<svg>`` element for HTML."""
    g, placed = layout(run, plot=plot)
    row = {lane.name: i for i, lane in enumerate(run.lanes)}
    title = header(run)
    ns = f' xmlns="{SVG_NS}"' if standalone else ""
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n' if standalone else "",
        f'<svg{ns} class="stl" width="{g.width}" height="{g.height}" '
        f'viewBox="0 0 {g.width} {g.height}" role="img" aria-label="{_a(title)}" '
        f'data-top="{g.top}" data-lane-height="{g.lane_height}" '
        f'data-compact="{str(g.compact).lower()}">',
        f"<title>Swarm timeline: {escape(title, quote=False)}</title>",
        f"<style>{STYLE}.stl .stop-key{{stroke:#cf222e;stroke-width:2;stroke-dasharray:4 2}}"
        "</style>",
        '<defs><marker id="stl-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0 0L8 4L0 8z" fill="#1b7c83"/>'
        "</marker></defs>",
        f'<text class="head" x="8" y="20" font-size="13">{escape(title)}</text>',
        *_axis(run, g),
        '<g class="lanes">',
        *(_lane(lane, i, g, run, placed[i]) for i, lane in enumerate(run.lanes)),
        "</g>",
        '<g class="links">',
        *_links(run, g, row),
        "</g>",
        _critical(run, g, row),
        '<g class="findings">',
        *_findings(run, g, row),
        "</g>",
        _stop(run, g),
        _legend(g),
        "</svg>\n" if standalone else "</svg>",
    ]
    return "".join(out)
