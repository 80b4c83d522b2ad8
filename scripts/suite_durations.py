"""Where the test suite's time goes: per-file and per-test durations from a JUnit XML report.

    python -m pytest -n 3 -q --junitxml=suite.xml
    python scripts/suite_durations.py suite.xml [--top 25]

Prints the files by their tests' summed time (the work a file gives the workers; with
``-n 2`` the wall time is about half the total), then the slowest tests.  docs/testing.md
records the figures before and after the suite was reshaped.

Wall time shows where a test waited; CPU time is what a second run beside it competes for:

    SWARM_TEST_CPU=cpu/ python -m pytest -n 3 -q      # cpu/ must exist
    python scripts/suite_durations.py --cpu cpu/

sums each test's CPU seconds (its process's and its finished subprocesses', from
``tests/conftest.py``; the Docker engine's own are not among them) by file.
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", nargs="?", help="a JUnit XML report (pytest --junitxml=FILE)")
    parser.add_argument("--cpu", help="a folder of SWARM_TEST_CPU records, instead of a report")
    parser.add_argument("--top", type=int, default=25, help="how many files and tests to list")
    args = parser.parse_args()
    if (args.report is None) == (args.cpu is None):
        parser.error("give a report or --cpu FOLDER")
    tests = _from_cpu(Path(args.cpu)) if args.cpu else _from_report(args.report)
    per_file: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for seconds, name in tests:
        path = name.split("::")[0]
        per_file[path] += seconds
        counts[path] += 1
    total = sum(per_file.values())
    print(f"{len(tests)} tests, {total:.0f} s of test time in {len(per_file)} files\n")
    print(f"{'seconds':>8} {'share':>6} {'tests':>6}  file")
    for path, seconds in sorted(per_file.items(), key=lambda x: -x[1])[: args.top]:
        print(f"{seconds:8.1f} {seconds / total:6.1%} {counts[path]:6d}  {path}")
    print(f"\n{'seconds':>8}  test")
    for seconds, name in sorted(tests, reverse=True)[: args.top]:
        print(f"{seconds:8.1f}  {name}")


def _from_report(report: str) -> list[tuple[float, str]]:
    tests = []
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("classname", "")
        if name.endswith(".md"):  # a page: docs.fanout.md
            path = name[: -len(".md")].replace(".", "/") + ".md"
        else:  # a module: tests.test_seen
            path = name.replace(".", "/") + ".py"
        tests.append((float(case.get("time", 0)), f"{path}::{case.get('name')}"))
    return tests


def _from_cpu(folder: Path) -> list[tuple[float, str]]:
    tests = []
    for records in sorted(folder.glob("*.jsonl")):
        for line in records.read_text(encoding="utf-8").splitlines():
            found = json.loads(line)
            tests.append((float(found["cpu"]), str(found["test"])))
    return tests


if __name__ == "__main__":
    main()
