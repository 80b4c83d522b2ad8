"""Where the test suite's time goes: per-file and per-test durations from a JUnit XML report.

    python -m pytest -n 2 -q --junitxml=suite.xml
    python scripts/suite_durations.py suite.xml [--top 25]

Prints the files by their tests' summed time (the work a file gives the workers; with
``-n 2`` the wall time is about half the total), then the slowest tests.  docs/testing.md
records the figures before and after the suite was reshaped.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import defaultdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", help="a JUnit XML report (pytest --junitxml=FILE)")
    parser.add_argument("--top", type=int, default=25, help="how many files and tests to list")
    args = parser.parse_args()
    cases = ET.parse(args.report).getroot().iter("testcase")
    per_file: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    tests: list[tuple[float, str]] = []
    for case in cases:
        name = case.get("classname", "").replace(".", "/")
        path = name if name.endswith(".md") or "/" not in name else name + ".py"
        seconds = float(case.get("time", 0))
        per_file[path] += seconds
        counts[path] += 1
        tests.append((seconds, f"{path}::{case.get('name')}"))
    total = sum(per_file.values())
    print(f"{len(tests)} tests, {total:.0f} s of test time in {len(per_file)} files\n")
    print(f"{'seconds':>8} {'share':>6} {'tests':>6}  file")
    for path, seconds in sorted(per_file.items(), key=lambda x: -x[1])[: args.top]:
        print(f"{seconds:8.1f} {seconds / total:6.1%} {counts[path]:6d}  {path}")
    print(f"\n{'seconds':>8}  test")
    for seconds, name in sorted(tests, reverse=True)[: args.top]:
        print(f"{seconds:8.1f}  {name}")


if __name__ == "__main__":
    main()
