"""The comparison's pictures: the accuracy/cost frontier and accuracy against k.

Drawn with matplotlib (the ``swarm-eval[experiments]`` extra), which renders PNG offline with
no browser; inspect-viz draws in a browser (its PNG export needs one), so it does not serve a
command that must write a picture on a machine without one.  ``comparison_figures`` returns
the matplotlib figures for a notebook; ``write_comparison`` writes both PNGs and one
self-contained HTML page (the table and the pictures inlined).
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from swarm.errors import MissingExtra

if TYPE_CHECKING:
    from swarm.analysis._arms import ArmRow, ArmTable

__all__ = ["Comparison", "comparison_figures", "frontier", "write_comparison"]

_COLOURS = {
    "single": "#1b6ca8",
    "attempts": "#d1741a",
    "swarm": "#2b8a3e",
    "subagents": "#7b3fa0",
}


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra(
            "the comparison's pictures need matplotlib: pip install 'swarm-eval[experiments]'"
        ) from None
    return plt


def frontier(rows: tuple[ArmRow, ...] | list[ArmRow]) -> list[ArmRow]:
    """The arms within their budget that no other such arm beats on both realized tokens and
    the accuracy of the answer it chose, cheapest first (an oracle's pick is not an answer,
    and an arm over its budget did not play by the experiment's rule)."""
    fair = [r for r in rows if r.within_budget]
    found = []
    for r in fair:
        beaten = any(
            o is not r
            and o.tokens <= r.tokens
            and o.chosen >= r.chosen
            and (o.tokens < r.tokens or o.chosen > r.chosen)
            for o in fair
        )
        if not beaten:
            found.append(r)
    return sorted(found, key=lambda r: (r.tokens, r.chosen))


def _frontier_figure(table: ArmTable) -> Any:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for r in table.rows:
        colour = _COLOURS.get(r.kind, "#555555")
        ax.errorbar(
            r.tokens,
            r.chosen,
            yerr=[[r.chosen - r.ci_lower], [r.ci_upper - r.chosen]],
            fmt="o" if r.within_budget else "X",
            color=colour,
            ecolor=colour,
            alpha=0.9 if r.within_budget else 0.5,
            capsize=3,
            markeredgecolor="black" if r.within_budget else "red",
        )
        label = r.arm if r.within_budget else f"{r.arm} (over budget)"
        ax.annotate(label, (r.tokens, r.chosen), textcoords="offset points", xytext=(5, 4))
        if r.oracle is not None:  # drawn apart: hollow, never on the frontier
            ax.plot(r.tokens, r.oracle, "o", mfc="none", color=colour, alpha=0.6)
    best = frontier(table.rows)
    ax.plot([r.tokens for r in best], [r.chosen for r in best], "--", color="#888888", lw=1)
    for b in sorted({r.budget for r in table.rows}):
        ax.axvline(b, color="#bbbbbb", lw=1, ls=":")
    grey = {"ls": "", "color": "#555555"}
    handles = [
        plt.Line2D([], [], marker="o", label="the answer the arm chose", **grey),
        plt.Line2D([], [], marker="o", mfc="none", label="oracle: pass@k, best member", **grey),
        plt.Line2D([], [], marker="X", mec="red", label="over budget: not in the fit", **grey),
    ]
    ax.legend(handles=handles, fontsize="small", loc="lower right")
    ax.set_xlabel("realized tokens per sample (ledger)")
    ax.set_ylabel("accuracy of the chosen answer")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title("Accuracy against cost (dotted: the budget; dashed: the frontier)")
    fig.tight_layout()
    return fig


def _curve(
    ax: Any,
    start: list[tuple[int, float]],
    points: list[tuple[int, float | None]],
    style: str,
    kind: str,
    label: str,
    alpha: float = 1.0,
) -> None:
    """One arm kind's figure against k, from the single agent's point at k = 1."""
    shown = start + [(k, v) for k, v in points if v is not None]
    ax.plot(
        [k for k, _ in shown],
        [v for _, v in shown],
        style,
        color=_COLOURS[kind],
        label=label,
        alpha=alpha,
    )


def _k_figure(table: ArmTable) -> Any:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    single = [r for r in table.rows if r.kind == "single"]
    attempts = sorted((r for r in table.rows if r.kind == "attempts"), key=lambda r: r.k)
    start = [(1, single[0].chosen)] if single else []
    if single:
        ax.axhline(single[0].chosen, color=_COLOURS["single"], lw=1, label="single agent at B")
    if attempts:
        _curve(
            ax,
            start,
            [(r.k, r.chosen) for r in attempts],
            "o-",
            "attempts",
            "k attempts at B/k: majority answer",
        )
        _curve(
            ax,
            start,
            [(r.k, r.oracle) for r in attempts],
            "o--",
            "attempts",
            "k attempts: oracle (pass@k)",
            0.6,
        )
        _curve(
            ax,
            [],
            [(r.k, r.mean_agent) for r in attempts],
            "o:",
            "attempts",
            "one attempt at B/k",
            0.6,
        )
    swarms: dict[str, list[ArmRow]] = {}
    for r in table.rows:
        if r.kind == "swarm":
            swarms.setdefault(r.arm.rsplit("-", 1)[0], []).append(r)
    for name, rows in swarms.items():
        rows = sorted(rows, key=lambda r: r.k)
        _curve(
            ax,
            start,
            [(r.k, r.chosen) for r in rows],
            "s-",
            "swarm",
            f"{name} of k at B: its answer",
        )
        if any(r.oracle is not None for r in rows):
            _curve(
                ax,
                start,
                [(r.k, r.oracle) for r in rows],
                "s--",
                "swarm",
                f"{name}: oracle (best member)",
                0.6,
            )
    subagents = sorted((r for r in table.rows if r.kind == "subagents"), key=lambda r: r.k)
    if subagents:
        _curve(
            ax,
            start,
            [(r.k, r.chosen) for r in subagents],
            "^-",
            "subagents",
            "deepagent with k subagents at B",
        )
    ax.set_xscale("log", base=2)
    ticks = sorted({1, *(r.k for r in table.rows)})
    ax.set_xticks(ticks, [str(k) for k in ticks])
    ax.set_xlabel("k (agents)")
    ax.set_ylabel("accuracy (solid: the chosen answer)")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title("Accuracy against k at the same budget B")
    ax.legend(fontsize="small", loc="best")
    fig.tight_layout()
    return fig


@attrs.frozen
class Comparison:
    """The two figures of a comparison (matplotlib ``Figure`` objects)."""

    frontier: Any
    by_k: Any


def comparison_figures(table: ArmTable) -> Comparison:
    """The accuracy/cost frontier and the accuracy-against-k curves of ``table``."""
    return Comparison(frontier=_frontier_figure(table), by_k=_k_figure(table))


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def write_comparison(table: ArmTable, out_dir: str | Path, stem: str = "comparison") -> Path:
    """Write ``<stem>-frontier.png``, ``<stem>-by-k.png`` and ``<stem>.html`` (the table and
    both pictures in one self-contained page) into ``out_dir``; return the page's path."""
    plt = _pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = comparison_figures(table)
    pictures = {}
    for name, fig in (("frontier", figures.frontier), ("by-k", figures.by_k)):
        data = _png(fig)
        (out / f"{stem}-{name}.png").write_bytes(data)
        pictures[name] = base64.b64encode(data).decode()
        plt.close(fig)
    page = out / f"{stem}.html"
    page.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>Arms compared</title>"
        "<style>body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em}"
        "</style></head><body><h1>Arms compared</h1>"
        f"<pre>{html.escape(table.to_text())}</pre>"
        f"<img alt='accuracy against cost' src='data:image/png;base64,{pictures['frontier']}'>"
        f"<img alt='accuracy against k' src='data:image/png;base64,{pictures['by-k']}'>"
        "</body></html>\n"
    )
    return page
