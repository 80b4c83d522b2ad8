"""What reading a large swarm log costs: each reader of a W(n, 1) ``swarm-shm`` log, timed in a
fresh process of its own (docs/timeline.md, "Reading a 4,096-member log").

    python benchmarks/readers.py                          # n = 1024 and 4096, every reader
    python benchmarks/readers.py --n 1024 --readers timeline,diagnose_log
    python benchmarks/readers.py --log run.eval           # a log you have (one n: its members)
    python benchmarks/readers.py --n 1024 --keep /tmp/big # keep the logs it builds (and reuse them)
    python benchmarks/readers.py --source /tmp/before     # another checkout's swarm package
    python benchmarks/readers.py --profile diagnose_log --log run.eval   # cProfile one reader

A log is built with ``workload.py swarm-shm N 1 --log-dir DIR`` (n members, each one
``shared_memory`` append and a submit), unless ``--log`` gives one.  Each reader then runs in its
own subprocess (``readers.py --run READER LOG``), which imports Inspect and swarm-eval first and
then times the reader alone: wall and CPU seconds of the call, and the process's peak RSS
(``ru_maxrss``) beside its RSS once imported, so the reader's own memory is the difference.
The per-member columns divide the reader's time and memory by n.  ``--source DIR`` puts the
``swarm`` package of another checkout first on the path, so two versions are measured side by
side on the same logs.  ``--json PATH`` saves every result as a JSON line.

The readers (``READERS``): ``read``, ``read-thread`` and ``read-store`` are Inspect's own
reading of the sample (whole in the main thread, whole in a thread of its own, and without its
events, messages and attachments), the floors the others stand on.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STORE_ONLY = frozenset({"events", "messages", "attachments"})


def _peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def _rss_mb() -> float:
    """The process's resident memory now (Linux; else the peak so far)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except OSError:
        return _peak_rss_mb()


def _first(log: str) -> tuple[Any, int]:
    from inspect_ai.log import read_eval_log_sample_summaries

    summary = read_eval_log_sample_summaries(log)[0]
    return summary.id, summary.epoch


# -- the readers ---------------------------------------------------------------------------------


def _read(log: str) -> object:
    from inspect_ai.log import read_eval_log_sample

    return read_eval_log_sample(log, *_first(log))


def _read_thread(log: str) -> object:
    return _in_thread(lambda: _read(log))


def _read_store(log: str) -> object:
    from inspect_ai.log import read_eval_log_sample

    return read_eval_log_sample(log, *_first(log), exclude_fields=set(STORE_ONLY))


def _timeline(log: str) -> object:
    from swarm.timeline import write_timeline

    with tempfile.TemporaryDirectory() as out:
        return write_timeline(log, Path(out) / "run.html")


def _diagnose_log(log: str) -> object:
    from swarm.diagnosis import diagnose_log

    return list(diagnose_log(log))


def _score(log: str, make: Callable[[], Any]) -> object:
    from inspect_ai import score
    from inspect_ai.log import read_eval_log

    return score(read_eval_log(log), [make()], display="none", copy=False)


def _diagnosis_scorer(log: str) -> object:
    from swarm.diagnosis import swarm_diagnosis

    return _score(log, swarm_diagnosis)


def _member_scores(log: str) -> object:
    from swarm.analysis import member_scores

    return _score(log, member_scores)


def _samples_df(log: str) -> object:
    from inspect_ai.analysis import SampleSummary, samples_df

    from swarm.analysis import SwarmColumns

    return samples_df(log, columns=SampleSummary + SwarmColumns, quiet=True)


def _samples_df_diagnosis(log: str) -> object:
    from inspect_ai.analysis import SampleSummary, samples_df

    from swarm.diagnosis import DiagnosisColumns

    return samples_df(log, columns=SampleSummary + DiagnosisColumns, quiet=True)


def _in_thread(read: Callable[[], object]) -> object:
    """``read()`` in a thread of its own (what ``swarm.analysis.read_sample`` does)."""
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(read()))
    worker.start()
    worker.join()
    return done[0]


def _samples_df_records(log: str) -> object:
    from inspect_ai.analysis import SampleSummary, samples_df

    from swarm.analysis import SwarmColumns

    columns = SampleSummary + SwarmColumns  # the same columns without what they do not read
    return samples_df(log, columns=columns, quiet=True, exclude_fields={"events", "attachments"})


def _samples_df_diagnosis_thread(log: str) -> object:
    return _in_thread(lambda: _samples_df_diagnosis(log))


def _sample(log: str, records_only: bool) -> Any:
    """The sample as the checkout's docs say to read it: ``read_sample`` where it exists,
    else Inspect's ``read_eval_log_sample`` (without events, messages and attachments for the
    records, without messages for the evidence)."""
    try:
        from swarm.analysis import read_sample
    except ImportError:
        from inspect_ai.log import read_eval_log_sample

        excluded = set(STORE_ONLY) if records_only else {"messages"}
        return read_eval_log_sample(log, *_first(log), exclude_fields=excluded)
    return read_sample(log, records_only=records_only)


def _evidence(log: str) -> object:
    from swarm.analysis import swarm_evidence

    return swarm_evidence(_sample(log, records_only=False))


def _records(log: str) -> object:
    from swarm.analysis import swarm_ledger, swarm_messages, swarm_result, swarm_spawns

    sample = _sample(log, records_only=True)
    return swarm_ledger(sample), swarm_spawns(sample), swarm_messages(sample), swarm_result(sample)


READERS: dict[str, tuple[Callable[[str], object], str]] = {
    "read": (_read, "Inspect: read_eval_log_sample, the whole sample"),
    "read-thread": (_read_thread, "Inspect: the same, called in a thread of its own"),
    "read-store": (
        _read_store,
        "Inspect: read_eval_log_sample without events/messages/attachments",
    ),
    "timeline": (_timeline, "swarm.timeline.write_timeline (what `swarm timeline LOG -o F` runs)"),
    "diagnose_log": (_diagnose_log, "swarm.diagnosis.diagnose_log: every sample's diagnosis"),
    "diagnosis-scorer": (_diagnosis_scorer, "inspect_ai.score(log, [swarm_diagnosis()])"),
    "member-scores": (_member_scores, "inspect_ai.score(log, [member_scores()])"),
    "samples_df": (_samples_df, "samples_df(columns=SampleSummary + SwarmColumns)"),
    "samples_df-records": (
        _samples_df_records,
        "the same, exclude_fields={events, attachments} (the columns do not read them)",
    ),
    "samples_df-diagnosis": (
        _samples_df_diagnosis,
        "samples_df(columns=SampleSummary + DiagnosisColumns)",
    ),
    "samples_df-diagnosis-thread": (
        _samples_df_diagnosis_thread,
        "the same, called in a thread of its own",
    ),
    "evidence": (_evidence, "swarm_evidence of the sample (read_sample where there is one)"),
    "records": (
        _records,
        "swarm_ledger, _spawns, _messages, _result of the sample (read_sample(records_only=True))",
    ),
}


def run_one(name: str, log: str, profile: str | None) -> dict[str, Any]:
    """Run reader ``name`` on ``log`` in this process and return its measurements."""
    # imported before the clock starts, so the figures are the readers' own
    import inspect_ai.log  # noqa: F401 - imported for its cost only

    import swarm.analysis
    import swarm.diagnosis
    import swarm.timeline  # noqa: F401 - imported for its cost only

    for heavy in ("pandas", "pyarrow"):  # samples_df's, imported lazily by Inspect
        try:
            __import__(heavy)
        except ImportError:
            pass
    reader = READERS[name][0]
    base = _rss_mb()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    reader(log)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    return {
        "reader": name,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "base_rss_mb": round(base, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
    }


# -- the driver ----------------------------------------------------------------------------------


def _env(source: str | None) -> dict[str, str]:
    env = dict(os.environ)
    path = [str(Path(source).resolve()) if source else str(ROOT)]
    if env.get("PYTHONPATH"):
        path.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.setdefault("INSPECT_DISPLAY", "none")
    return env


def build_log(n: int, folder: Path) -> str:
    """A W(n, 1) ``swarm-shm`` log in ``folder`` (the one already there, if any)."""
    existing = sorted(folder.glob("*.eval"))
    if existing:
        return str(existing[-1])
    folder.mkdir(parents=True, exist_ok=True)
    print(f"building a {n}-member log in {folder} ...", file=sys.stderr, flush=True)
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "workload.py"),
            "swarm-shm",
            str(n),
            "1",
            "--log-dir",
            str(folder),
        ],
        env=_env(None),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"building the {n}-member log failed:\n{done.stdout}{done.stderr}")
    return str(json.loads(done.stdout.strip().splitlines()[-1])["log"])


def measure(name: str, log: str, source: str | None, timeout: float) -> dict[str, Any]:
    """Run reader ``name`` on ``log`` in a fresh subprocess."""
    command = [sys.executable, str(Path(__file__).resolve()), "--run", name, log]
    try:
        done = subprocess.run(
            command,
            env=_env(source),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"reader": name, "status": f"timeout after {timeout:g} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"reader": name, "status": f"failed: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    result["status"] = "ok"
    return result


HEADER = (
    "| n | reader | wall s | CPU s | peak RSS MB | reader's own MB | ms per member "
    "| KB per member |\n|---:|---|---:|---:|---:|---:|---:|---:|"
)


def _row(n: int, r: dict[str, Any]) -> str:
    if r.get("status") != "ok":
        return f"| {n} | {r['reader']} | {r.get('status')} | | | | | |"
    own = r["peak_rss_mb"] - r["base_rss_mb"]
    return (
        f"| {n} | {r['reader']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['peak_rss_mb']:.0f} "
        f"| {own:.0f} | {1000 * r['wall_s'] / n:.2f} | {1024 * own / n:.0f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1024, 4096], help="members")
    parser.add_argument("--log", help="measure this log (its members given by --n, one value)")
    parser.add_argument(
        "--readers", default=",".join(READERS), help="comma-separated; default: all"
    )
    parser.add_argument("--keep", metavar="DIR", help="build logs into DIR/<n>/ and reuse them")
    parser.add_argument("--source", metavar="DIR", help="a checkout whose swarm package to use")
    parser.add_argument("--json", metavar="PATH", help="append each result as a JSON line")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per reader")
    parser.add_argument("--profile", metavar="READER", help="cProfile READER, print the top")
    parser.add_argument("--run", nargs=2, metavar=("READER", "LOG"), help=argparse.SUPPRESS)
    parser.add_argument("--profile-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        print(json.dumps(run_one(args.run[0], args.run[1], args.profile_file)), flush=True)
        return 0
    names = [r for r in args.readers.split(",") if r]
    unknown = [r for r in names if r not in READERS]
    if unknown:
        parser.error(f"unknown readers {unknown}; known: {', '.join(READERS)}")
    if args.log and len(args.n) != 1:
        parser.error("--log takes one --n: the log's members")
    if args.profile:
        n, log = (
            args.n[0],
            args.log or build_log(args.n[0], Path(args.keep or ".") / str(args.n[0])),
        )
        stats = Path(tempfile.gettempdir()) / f"readers-{args.profile}-{n}.prof"
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--run",
                args.profile,
                log,
                "--profile-file",
                str(stats),
            ],
            env=_env(args.source),
            check=True,
        )
        import pstats

        pstats.Stats(str(stats)).sort_stats("cumulative").print_stats(30)
        return 0
    print(HEADER)
    with tempfile.TemporaryDirectory(prefix="swarm-readers-") as scratch:
        for n in args.n:
            if args.log:
                log = args.log
            else:
                log = build_log(n, Path(args.keep or scratch) / str(n))
            for name in names:
                result = measure(name, log, args.source, args.timeout)
                result.update(n=n, log=log, source=args.source or str(ROOT))
                print(_row(n, result), flush=True)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
