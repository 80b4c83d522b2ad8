"""The timeline as a self-contained HTML page: the SVG inline, a little CSS, and a lane filter.

Nothing is fetched: no external script, style sheet, font or image.  The filter box hides
the lanes whose member name, status, role and parent do not contain every word typed, and
stacks the rest again (messages and spawn links follow their lanes).  Without script (an
untrusted notebook, say) the page is the whole drawing, unfiltered.
"""

from __future__ import annotations

import hashlib
from html import escape

from swarm.timeline._describe import header
from swarm.timeline._model import RunTimeline
from swarm.timeline._svg import render_svg

__all__ = ["render_fragment", "render_html"]

_CSS = """
.swarm-timeline{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328}
.swarm-timeline .stl-bar{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.4em 0}
.swarm-timeline .stl-filter{font:inherit;padding:.25em .5em;min-width:22em;
border:1px solid #d0d7de;border-radius:6px}
.swarm-timeline .stl-count,.swarm-timeline .stl-note{color:#57606a;font-size:.9em}
.swarm-timeline .stl-scroll{overflow:auto;max-height:85vh;border:1px solid #d0d7de;
border-radius:6px}
.swarm-timeline svg{display:block}
"""

# the filter: %ID% is replaced with the fragment's id (hex, so it cannot end the script)
_SCRIPT = """
(function(){
var root=document.getElementById("%ID%");if(!root)return;
var svg=root.querySelector("svg.stl"),input=root.querySelector(".stl-filter"),
count=root.querySelector(".stl-count");
var top=+svg.getAttribute("data-top"),h=+svg.getAttribute("data-lane-height");
var width=+svg.getAttribute("width"),all=[].slice.call(svg.querySelectorAll("g.lane"));
var extra=+svg.getAttribute("height")-(top+all.length*h);
var links=[].slice.call(svg.querySelectorAll(".links line"));
var stretch=[].slice.call(svg.querySelectorAll("[data-stretch]"));
var legend=svg.querySelector("g.legend");
function text(g){return ["data-member","data-status","data-role","data-parent"].map(
function(a){return g.getAttribute(a)||"";}).join(" ").toLowerCase();}
var hay=all.map(text);
function apply(){
var terms=input.value.toLowerCase().split(/\\s+/).filter(Boolean),row={},n=0;
all.forEach(function(g,i){
var shown=terms.every(function(t){return hay[i].indexOf(t)>=0;});
g.style.display=shown?"":"none";
if(shown){g.setAttribute("transform","translate(0,"+(top+n*h)+")");
row[g.getAttribute("data-member")]=n;n++;}});
links.forEach(function(l){
var a=row[l.getAttribute("data-from")],b=row[l.getAttribute("data-to")];
var shown=a!==undefined&&b!==undefined;l.style.display=shown?"":"none";
if(shown){l.setAttribute("y1",top+a*h+h/2);l.setAttribute("y2",top+b*h+h/2);}});
var bottom=top+n*h;
stretch.forEach(function(e){e.setAttribute("y2",bottom);});
if(legend)legend.setAttribute("transform","translate(0,"+(bottom+24)+")");
svg.setAttribute("height",bottom+extra);
svg.setAttribute("viewBox","0 0 "+width+" "+(bottom+extra));
count.textContent=n+" of "+all.length+" members shown";}
input.addEventListener("input",apply);
})();
"""


def _fragment_id(run: RunTimeline) -> str:
    seed = "\n".join([header(run), *(lane.name for lane in run.lanes)])
    return "stl-" + hashlib.sha1(seed.encode("utf-8")).hexdigest()[:12]


def render_fragment(run: RunTimeline) -> str:
    """The timeline as one ``<div>`` (style, filter, SVG, script), for a notebook or a page."""
    ident = _fragment_id(run)
    n = len(run.lanes)
    stop = f" The stop's time is from {run.stop.basis}." if run.stop is not None else ""
    return (
        f'<div class="swarm-timeline" id="{ident}"><style>{_CSS}</style>'
        '<div class="stl-bar"><input class="stl-filter" type="search" '
        'placeholder="filter members: name, status, role or parent" '
        'aria-label="filter members by name, status, role or parent">'
        f'<span class="stl-count">{n} of {n} members shown</span></div>'
        f'<div class="stl-scroll">{render_svg(run, standalone=False)}</div>'
        '<p class="stl-note">Hover over a mark or a name for details. Marks of one kind that '
        f"would overlap on a lane are drawn as one; hovering says how many.{escape(stop)}</p>"
        f"<script>{_SCRIPT.replace('%ID%', ident)}</script></div>"
    )


def render_html(run: RunTimeline) -> str:
    """The timeline as a whole HTML document."""
    title = f"Swarm timeline: sample {run.sample_id}, epoch {run.epoch}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title>"
        "<style>body{margin:1em;background:#fff}</style></head>\n<body>"
        f"{render_fragment(run)}</body></html>\n"
    )
