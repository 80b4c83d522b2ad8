"""What one agent-CLI member costs beside a ``swarm/worker`` member on the same scripted work.

    python benchmarks/cli_member.py                # each kind twice, medians
    python benchmarks/cli_member.py --repeat 3 --kinds worker,codex

Each kind runs a one-member swarm in its own container (``sandboxes.per_member`` under Docker, on
the agent CLIs' image for all three, so the container is the same): the member reads ``a.txt``
with its shell tool and answers.  The scripted model plays each CLI's own tools (``bash`` for
the worker, Codex's ``exec_command``, Claude Code's ``Bash``).  Each run is a fresh Python
process (``--one KIND``), timed from the outside; the member container's memory is sampled
with ``docker stats`` every 0.5 s while it runs.  Needs a Docker engine and the image
(``swarm agent-image``).  Kinds run one after another in each round, the order rotating.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KINDS = ("worker", "codex", "claude_code")
_UNITS = {"B": 1e-6, "KiB": 1024 / 1e6, "MiB": 1.048576, "GiB": 1073.741824, "kB": 1e-3, "MB": 1.0}


def one(kind: str, log_dir: str) -> dict[str, Any]:
    """Run ``kind``'s one-member swarm in this process; its figures."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model

    from swarm import controller, member, swarm
    from swarm.agent_image import COMPOSE
    from swarm.testing import call, reply, submit

    scripts = {
        "worker": [call("bash", command="cat a.txt"), submit("7")],
        "codex": [call("exec_command", cmd="cat a.txt"), reply("7")],
        "claude_code": [call("Bash", command="cat a.txt"), reply("7")],
    }[kind]
    made = {
        "worker": member("swarm/worker", {"tools": ["bash"]}, name="m"),
        "codex": member("swarm/codex", name="m", bridged="sandbox"),
        "claude_code": member(
            "swarm/claude_code", {"model_config": "claude-sonnet-4-5"}, name="m", bridged="sandbox"
        ),
    }[kind]
    solver = swarm(
        members=[made],
        sandboxes={"per_member": True, "files": {"m": ["a.txt"]}},
        controller=controller("leaderless", stop_on_submission=True),
    )
    task = Task(
        dataset=[Sample(input="What number is in a.txt?", target="7", files={"a.txt": "7\n"})],
        solver=solver,
        sandbox=("docker", str(COMPOSE)),
    )
    started = time.perf_counter()
    model = get_model("swarm/scripted", scripts={"m": scripts}, memoize=False)
    [log] = eval(task, model=model, display="none", log_dir=log_dir)
    wall = time.perf_counter() - started
    [sample] = log.samples or []
    [row] = sample.store["inspect_swarm:metrics"]["members"]
    [res] = sample.store["inspect_swarm:result"]["members"]
    return {
        "status": res["status"],
        "answer": res["answer"],
        "eval_wall": wall,
        "member_time": row["running_time"],
        "tokens": row["tokens"],
        "process_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB
    }


class MemorySampler:
    """The highest memory ``docker stats`` shows for each member container while it runs."""

    def __init__(self) -> None:
        self.peak: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            out = subprocess.run(
                ["docker", "stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}"],
                capture_output=True,
                text=True,
            ).stdout
            for line in out.splitlines():
                name, _, usage = line.partition("\t")
                if not name.startswith("inspect-swarm-"):
                    continue
                role = "watcher" if "swarm-watcher" in name else "member"
                found = re.match(r"([\d.]+)\s*([A-Za-z]+)", usage)
                if found:
                    mb = float(found.group(1)) * _UNITS.get(found.group(2), 1.0)
                    self.peak[role] = max(self.peak.get(role, 0.0), mb)
            self._stop.wait(0.5)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(kind: str) -> dict[str, Any]:
    """``kind`` in a fresh process: its figures, its process's CPU and the containers' peaks."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as logs, MemorySampler() as memory:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--one", kind, "--logs", logs],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{kind}: the run failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        **figures,
        "process_wall": wall,
        "process_cpu": cpu,
        "container_mb": memory.peak.get("member", 0.0),
        "watcher_mb": memory.peak.get("watcher", 0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--one", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--logs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.logs)))
        return
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"--kinds: unknown {unknown}; expected some of {', '.join(KINDS)}")
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for round_ in range(args.repeat):
        order = kinds[round_ % len(kinds) :] + kinds[: round_ % len(kinds)]
        for kind in order:
            found = measure(kind)
            if (found["status"], found["answer"]) != ("submitted", "7"):
                raise SystemExit(f"{kind}: ended {found['status']} with {found['answer']!r}")
            runs[kind].append(found)
            shown = {k: round(v, 2) if isinstance(v, float) else v for k, v in found.items()}
            print(f"{kind}: {json.dumps(shown)}", file=sys.stderr)
    keys = [
        ("member_time", "member running s"),
        ("eval_wall", "eval wall s"),
        ("process_cpu", "process CPU s"),
        ("process_rss_mb", "process RSS MB"),
        ("container_mb", "container peak MB"),
        ("tokens", "tokens"),
    ]
    print("| member | " + " | ".join(label for _, label in keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for kind, found in runs.items():
        cells = [f"{statistics.median(r[key] for r in found):,.2f}" for key, _ in keys]
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
