"""Run the benchmark suite: W(n, k) in every mode, each in a fresh process, side by side.

    python benchmarks/run.py                          # n = 8,32,128,256, k = 10, all modes
    python benchmarks/run.py --quick                  # smoke run: n = 8,32
    python benchmarks/run.py --n 8,32 --k 10 --modes floor,swarm --repeat 3
    python benchmarks/run.py --write benchmarks/RESULTS.md
    python benchmarks/run.py --profile swarm --n 128  # cProfile one run, print the top functions

The workload and the modes are in ``workload.py`` (``MODES``).  Each (n, mode) run is its own
subprocess, so the peak RSS is that mode's alone; for each n the modes run one after another, so
they see the same machine.  With ``--repeat R`` the whole sweep runs R times (the mode order
rotating each time) and the table shows medians.  Ratios are to the floor of the same n.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import pstats
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from workload import MODES

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "workload.py"
ROOT = HERE.parent
DEFAULT_N = "8,32,128,256"
QUICK_N = "8,32"


def _ints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}")
    return values


def _only(text: str) -> tuple[list[str], list[int]]:
    """``MODES=NS``: those modes run only at those n (``fanout,floor-fanout=1024,4096``)."""
    modes, sep, ns = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected MODES=NS (e.g. fanout=1024,4096), got {text!r}")
    return _modes(modes), _ints(ns)


def _modes(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in MODES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown mode(s) {unknown or text!r}; known: {', '.join(MODES)}"
        )
    return names


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def unavailable(mode: str) -> str | None:
    """Why ``mode`` cannot run here, or None."""
    spec = MODES[mode]
    if spec.requires is None:
        return None
    found = _version(spec.requires)
    if found is None:
        return f"{spec.requires} is not installed; install it with: {spec.install_hint}"
    if spec.requires_version is not None and found != spec.requires_version:
        return (
            f"{spec.requires} {found} is installed but the mode measures "
            f"{spec.requires_version}; install it with: {spec.install_hint}"
        )
    return None


def run_one(
    mode: str, n: int, k: int, timeout: float, profile: str | None = None
) -> dict[str, Any]:
    """One (mode, n, k) run in a fresh interpreter; its JSON line as a dict."""
    cmd = [sys.executable, str(WORKLOAD), mode, str(n), str(k)]
    if profile:
        cmd += ["--profile", profile]
    env = {**os.environ, "INSPECT_DISPLAY": "none", "PYTHONUNBUFFERED": "1"}
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT, check=False
        )
    except subprocess.TimeoutExpired:
        return {"mode": mode, "n": n, "k": k, "status": f"timeout ({timeout:.0f} s)"}
    for line in reversed(proc.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and data.get("mode") == mode:
                if data.get("status") != "success":
                    data["stderr_tail"] = proc.stderr.strip().splitlines()[-5:]
                return data
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return {
        "mode": mode,
        "n": n,
        "k": k,
        "status": f"no result (exit {proc.returncode})",
        "stderr_tail": tail,
    }


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the repeats of one (n, mode); status is the worst seen."""
    ok = [r for r in runs if r.get("status") == "success"]
    bad = [r["status"] for r in runs if r.get("status") != "success"]
    return {
        "wall_s": _median([r["wall_s"] for r in ok]),
        "cpu_s": _median([r["cpu_s"] for r in ok if r.get("cpu_s") is not None]),
        "peak_rss_mb": _median([r["peak_rss_mb"] for r in ok]),
        "runs": len(runs),
        "status": bad[0] if bad else "success",
        "walls": [r["wall_s"] for r in ok],
    }


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _ratio(value: float | None, floor: float | None) -> str:
    if value is None or not floor:
        return "—"
    return f"{value / floor:.2f}"


def table(
    ns: list[int],
    modes: list[str],
    agg: dict[tuple[int, str], dict[str, Any]],
    skipped: dict[str, str],
) -> str:
    """The Markdown table: one row per (n, mode), ratios to the floor of the same n."""
    repeats = max((a["runs"] for a in agg.values()), default=1)
    wall_head = "wall s" if repeats == 1 else f"wall s (median of {repeats})"
    lines = [
        f"| n | mode | {wall_head} | CPU s | peak RSS MB | time ÷ floor | CPU ÷ floor "
        "| RSS ÷ floor | status |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for n in ns:
        base = agg.get((n, "floor"))
        for mode in modes:
            if mode in skipped:
                lines.append(f"| {n} | {mode} | — | — | — | — | — | — | skipped |")
                continue
            a = agg.get((n, mode))
            if a is None:  # the mode does not run at this n (--only)
                continue
            lines.append(
                "| {n} | {mode} | {wall} | {cpu} | {rss} | {rt} | {rc} | {rm} | {status} |".format(
                    n=n,
                    mode=mode,
                    wall=_fmt(a["wall_s"], ".2f"),
                    cpu=_fmt(a["cpu_s"], ".2f"),
                    rss=_fmt(a["peak_rss_mb"], ".0f"),
                    rt=_ratio(a["wall_s"], base and base["wall_s"]),
                    rc=_ratio(a["cpu_s"], base and base["cpu_s"]),
                    rm=_ratio(a["peak_rss_mb"], base and base["peak_rss_mb"]),
                    status=a["status"],
                )
            )
    return "\n".join(lines)


COMPARISONS: list[tuple[str, str, str]] = [
    # (numerator mode, denominator mode, the target in benchmarks/README.md)
    ("swarm", "floor", "time <= 1.05 at n = 256"),
    ("swarm-budget", "swarm", "time within 5% (<= 1.05)"),
    ("swarm-shm", "floor", "time <= 1.3, RSS <= 1.2 at n = 256"),
    ("floor-shm", "floor", "Inspect's own cost of a tool of shared_memory's size"),
    ("swarm-shm", "floor-shm", "the swarm's own share: <= 1.1 in time and RSS at n = 256"),
    ("peer-shm", "floor", "baseline: 2.4 in time, 2.2 in RSS at n = 256"),
    ("swarm-shm", "peer-shm", "—"),
    ("fanout", "floor-fanout", "time <= 1.3, RSS <= 1.3 at n = 256"),
    ("floor-fanout-tools", "floor-fanout", "Inspect's own cost of the swarm's tool schemas"),
    ("fanout", "floor-fanout-tools", "the swarm's own share of F(n, k)"),
    ("floor-fanout-staggered", "floor-fanout", "children started as the lead goes (no target)"),
    ("fanout", "floor-fanout-staggered", "the swarm's own share, fan-out's timing (no target)"),
    ("fanout-bwrap", "fanout-local", "what isolating every member costs (no target)"),
    ("swarm-background", "floor-background", "metering background work: time <= 1.05"),
    ("swarm-background", "swarm", "the same work in the background, in a swarm (no target)"),
    # the provider path: Inspect's openai-api provider and the scripted server over HTTP
    ("swarm-server", "swarm", "what the scripted model leaves out of 'swarm' (no target)"),
    ("floor-server", "floor", "what the scripted model leaves out of the floor (no target)"),
    ("swarm-server", "floor-server", "the swarm over the provider path (no target)"),
    # the anatomy: swarm-shm over the same run with one part taken away
    ("swarm-shm", "shm-no-wait", "anatomy: swarm_wait in every tool list"),
    ("swarm-shm", "shm-poll", "anatomy: notices"),
    ("swarm-shm", "shm-no-evidence", "anatomy: evidence entries"),
    ("swarm-shm", "shm-no-status", "anatomy: status lines in write results"),
    ("swarm-shm", "shm-no-records", "anatomy: the records (result, ledger, metrics)"),
    ("swarm-shm", "shm-no-store-events", "anatomy: Inspect's StoreEvents of the records"),
    ("shm-no-records", "floor-shm", "anatomy: the swarm without its records, over its floor"),
    ("shm-no-store-events", "floor-shm", "anatomy: the swarm without Inspect's StoreEvents"),
]
PAIRED = {
    "swarm-server": "floor-server",
    "fanout": "floor-fanout",
    "swarm-shm": "floor-shm",
    "fanout-bwrap": "fanout-local",
    "swarm-background": "floor-background",
}
"""Modes whose comparison needs a second floor: running the mode runs that floor too."""
"""The extra ratios printed under the table (those whose two modes both ran)."""


PER_CHILD = (
    ("fanout", "floor-fanout"),
    ("fanout-bwrap", "fanout-local"),
    ("fanout-docker", "fanout-local"),
)
"""The pairs whose difference per child is reported: a spawn and a reply; an own sandbox."""


def per_child(ns: list[int], agg: dict[tuple[int, str], dict[str, Any]]) -> str:
    """What one child adds at each n: (fanout - floor-fanout) / n (one spawn, one reply) and
    (fanout-bwrap - fanout-local) / n (a bwrap sandbox of its own), in milliseconds and MB;
    flat in n when each costs the same however many."""
    rows = []
    for num, den in PER_CHILD:
        for n in ns:
            a, b = agg.get((n, num)), agg.get((n, den))
            if a is None or b is None or a["wall_s"] is None or b["wall_s"] is None:
                continue
            ms = 1000 * (a["wall_s"] - b["wall_s"]) / n
            mb = (a["peak_rss_mb"] - b["peak_rss_mb"]) / n
            rows.append(f"| {n} | {num} - {den} | {ms:.2f} | {mb:.3f} |")
    if not rows:
        return ""
    head = ["| n | modes | extra ms per child | extra MB per child |", "|---:|---|---:|---:|"]
    return "\n".join([*head, *rows])


def per_member(ns: list[int], modes: list[str], agg: dict[tuple[int, str], dict[str, Any]]) -> str:
    """What each mode costs per member at each n: wall and CPU ms and peak RSS MB over n, and
    the increments from the mode's previous n (wall ms and MB per member added), which stay
    the same from n to n when the cost per member is flat (the whole-run figures over n also
    carry the eval's fixed start-up, which weighs most at small n)."""
    rows = []
    for mode in modes:
        prev: tuple[int, dict[str, Any]] | None = None
        for n in ns:
            a = agg.get((n, mode))
            if a is None or a["wall_s"] is None:
                continue
            step_ms = step_mb = "—"
            if prev is not None:
                pn, pa = prev
                step_ms = f"{1000 * (a['wall_s'] - pa['wall_s']) / (n - pn):.2f}"
                step_mb = f"{(a['peak_rss_mb'] - pa['peak_rss_mb']) / (n - pn):.3f}"
            rows.append(
                f"| {mode} | {n} | {1000 * a['wall_s'] / n:.2f} | {1000 * a['cpu_s'] / n:.2f} "
                f"| {a['peak_rss_mb'] / n:.3f} | {step_ms} | {step_mb} |"
            )
            prev = (n, a)
    if not rows:
        return ""
    head = [
        "| mode | n | wall ms per member | CPU ms per member | peak RSS MB per member "
        "| wall ms per added member | MB per added member |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    return "\n".join([*head, *rows])


def comparisons(ns: list[int], modes: list[str], agg: dict[tuple[int, str], dict[str, Any]]) -> str:
    """A Markdown table of the ``COMPARISONS`` ratios at each n, or "" when none apply."""
    rows = []
    for num, den, target in COMPARISONS:
        if num not in modes or den not in modes:
            continue
        for n in ns:
            a, b = agg.get((n, num)), agg.get((n, den))
            if a is None or b is None:
                continue
            rows.append(
                f"| {n} | {num} ÷ {den} | {_ratio(a['wall_s'], b['wall_s'])} "
                f"| {_ratio(a['cpu_s'], b['cpu_s'])} "
                f"| {_ratio(a['peak_rss_mb'], b['peak_rss_mb'])} | {target} |"
            )
    if not rows:
        return ""
    return "\n".join(
        [
            "| n | ratio | time | CPU | RSS | target |",
            "|---:|---|---:|---:|---:|---|",
            *rows,
        ]
    )


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=ROOT, check=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out


def environment() -> dict[str, Any]:
    rev = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", "swarm", "plugins")
    return {
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "inspect_ai": _version("inspect_ai"),
        "swarm-eval": f"{_version('swarm-eval')} (git {rev}{' + local changes' if dirty else ''})",
        "inspect-swarm": _version("inspect-swarm") or "not installed",
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def report(
    command: str,
    env: dict[str, Any],
    k: int,
    tbl: str,
    skipped: dict[str, str],
    modes: list[str],
    raw: list[dict[str, Any]],
) -> str:
    lines = [
        "# Benchmark results",
        "",
        f"Workload W(n, k = {k}), produced by `{command}`.",
        "",
        *[f"- {key}: {value}" for key, value in env.items()],
        "",
        tbl,
        "",
        "Modes:",
        "",
        *[f"- `{m}`: {MODES[m].description}" for m in modes],
    ]
    if skipped:
        lines += ["", *[f"Skipped `{m}`: {why}." for m, why in skipped.items()]]
    lines += [
        "",
        "Wall seconds are the `eval()` call (startup of the interpreter excluded); CPU seconds "
        "are the process's CPU time over the same call; peak RSS is the subprocess's "
        "`ru_maxrss`.  Ratios are to `floor` at the same n.",
        "",
        "<details><summary>Raw results (one JSON line per run)</summary>",
        "",
        "```",
        *[json.dumps(r) for r in raw],
        "```",
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)


def profile(mode: str, n: int, k: int, timeout: float, top: int) -> int:
    """Run ``mode`` once under cProfile and print the top cumulative functions."""
    with tempfile.TemporaryDirectory(prefix="swarm-bench-prof-") as tmp:
        path = str(Path(tmp) / f"{mode}-{n}.prof")
        result = run_one(mode, n, k, timeout, profile=path)
        print(json.dumps(result))
        if not Path(path).exists():
            print("no profile written", file=sys.stderr)
            return 1
        stats = pstats.Stats(path)
        stats.sort_stats("cumulative")
        print(f"\n== top {top} by cumulative time (all code) ==")
        stats.print_stats(top)
        print(f"\n== top {top} by cumulative time, swarm-eval only (swarm/, plugins/) ==")
        stats.print_stats(r"^(?!.*site-packages).*[\\/](swarm|plugins)[\\/]", top)
        stats.sort_stats("tottime")
        print(f"\n== top {top} by own time (all code) ==")
        stats.print_stats(top)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Benchmark W(n, k) across modes, each in its own process.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="modes:\n" + "\n".join(f"  {name:12} {m.description}" for name, m in MODES.items()),
    )
    parser.add_argument(
        "--n", type=_ints, default=None, help=f"member counts (default {DEFAULT_N})"
    )
    parser.add_argument("--k", type=int, default=10, help="tool calls per member (default 10)")
    parser.add_argument(
        "--modes", type=_modes, default=None, help="modes (default: all but the anatomy shm-*)"
    )
    parser.add_argument("--quick", action="store_true", help=f"smoke run: --n {QUICK_N}")
    parser.add_argument("--repeat", type=int, default=1, help="sweeps to run; medians shown")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per run")
    parser.add_argument("--write", metavar="PATH", help="also write the report (Markdown) here")
    parser.add_argument("--json", metavar="PATH", help="also write the raw results (JSON lines)")
    parser.add_argument(
        "--profile", metavar="MODE", help="instead: cProfile MODE once at the first --n"
    )
    parser.add_argument("--top", type=int, default=30, help="rows per profile listing")
    parser.add_argument(
        "--only",
        type=_only,
        action="append",
        default=[],
        metavar="MODES=NS",
        help="run MODES only at NS (of --n or not), e.g. fanout,floor-fanout=1024,4096; repeatable",
    )
    args = parser.parse_args(argv)

    ns = args.n or _ints(QUICK_N if args.quick else DEFAULT_N)
    modes = args.modes or [name for name, mode in MODES.items() if "anatomy" not in mode.tags]
    if args.profile:
        if args.profile not in MODES:
            parser.error(f"--profile: unknown mode {args.profile!r}")
        return profile(args.profile, ns[0], args.k, args.timeout, args.top)
    if "floor" not in modes:
        modes.insert(0, "floor")  # the ratios need it
        print("note: adding mode 'floor', which the ratios are to", file=sys.stderr)
    for mode, floor in PAIRED.items():
        if mode in modes and floor not in modes:
            modes.insert(modes.index(mode), floor)
            print(f"note: adding mode {floor!r}, which {mode!r} is compared to", file=sys.stderr)

    skipped = {m: why for m in modes if (why := unavailable(m))}
    for mode, why in skipped.items():
        print(f"SKIPPING mode {mode!r}: {why}", file=sys.stderr)
    runnable = [m for m in modes if m not in skipped]
    restricted = {mode: set(at) for chosen, at in args.only for mode in chosen}
    for chosen, _ in args.only:
        runnable += [m for m in chosen if m not in runnable and m not in skipped]
        modes += [m for m in chosen if m not in modes]
    given = set(ns)
    ns = sorted({*ns, *(n for _, at in args.only for n in at)})

    def runs_at(mode: str, n: int) -> bool:
        # the floor runs at every n (every ratio column is to it); the rest at --n, or --only's
        return n in restricted.get(mode, set(ns) if mode == "floor" else given)

    env = environment()
    raw: list[dict[str, Any]] = []
    by_key: dict[tuple[int, str], list[dict[str, Any]]] = {}
    total = args.repeat * sum(runs_at(m, n) for n in ns for m in runnable)
    done = 0
    for rep in range(args.repeat):
        order = runnable[rep % len(runnable) :] + runnable[: rep % len(runnable)]
        for n in ns:
            for mode in order:
                if not runs_at(mode, n):
                    continue
                done += 1
                print(f"[{done}/{total}] {mode} n={n} k={args.k} ...", file=sys.stderr, end="")
                sys.stderr.flush()
                result = run_one(mode, n, args.k, args.timeout)
                result["repeat"] = rep + 1
                raw.append(result)
                by_key.setdefault((n, mode), []).append(result)
                wall = result.get("wall_s")
                print(
                    f" {result.get('status')}"
                    + (f", {wall:.2f} s, {result.get('peak_rss_mb'):.0f} MB" if wall else ""),
                    file=sys.stderr,
                )
                if result.get("status") != "success":
                    for line in result.get("stderr_tail") or []:
                        print(f"    {line}", file=sys.stderr)
    env["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())

    agg = {key: aggregate(runs) for key, runs in by_key.items()}
    tbl = table(ns, modes, agg, skipped)
    cmp_tbl = comparisons(ns, [m for m in modes if m not in skipped], agg)
    if cmp_tbl:
        tbl += "\n\nRatios between modes (same n):\n\n" + cmp_tbl
    member_tbl = per_member(ns, [m for m in modes if m not in skipped], agg)
    if member_tbl:
        tbl += "\n\nPer member (flat in n: the same increments from n to n):\n\n" + member_tbl
    child_tbl = per_child(ns, agg)
    if child_tbl:
        tbl += (
            "\n\nWhat one child costs (per child: a spawn and a reply; a sandbox of its own):\n\n"
            + child_tbl
        )
    print(tbl)
    for mode, why in skipped.items():
        print(f"\n(mode {mode!r} skipped: {why})")
    command = "python benchmarks/run.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    if args.write:
        text = report(command.strip(), env, args.k, tbl, skipped, modes, raw)
        Path(args.write).write_text(text)
        print(f"\nwrote {args.write}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text("".join(json.dumps(r) + "\n" for r in raw))
    failed = [r for r in raw if r.get("status") != "success"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
