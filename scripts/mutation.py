"""Mutation testing of the kernel's accounting and records, the bus, the waits, spawning, the
built-in controllers and channels and the fan-out rubric, with mutmut.

    scripts/mutation.sh                        every module (one worker)
    scripts/mutation.sh swarm/_caps.py         one module (or several)
    scripts/mutation.sh --report               the scores of the last run again

The modules and the tests each one runs are in pyproject.toml: ``[tool.mutmut]`` (mutmut's own
settings) and ``[tool.swarm-mutation]``, whose groups pair modules with the fast tests that
check them.  Each group runs in its own staged copy of the tree, ``build/mutation/<group>``,
with ``plugins/`` copied to ``swarm/plugins/``: the folder is installed as the package
``swarm.plugins`` and mutmut names a mutant after its file's path, so only there do the
mutants carry their modules' real names (and the tests import the mutated plugins).  Within a
group, mutmut runs for each mutant only those of the group's tests that executed the mutated
function in a clean run, with a timeout of (their clean time + timeout_constant) *
timeout_multiplier seconds.  See docs/mutation.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MUTMUT = Path(sys.executable).with_name("mutmut")

# mutmut's exit codes (mutmut.stats.status_by_exit_code), folded into what a score needs;
# 37 is "caught by the type checker", which this project does not configure
_STATUS = {1: "killed", 3: "killed", 37: "killed", 0: "survived", 5: "no tests", 33: "no tests"}
_TIMEOUT = {36, -24, 24, 152, 255}


def status(code: int | None) -> str:
    """A mutant's status from mutmut's exit code."""
    if code is None:
        return "not checked"
    if code in _TIMEOUT:
        return "timeout"
    return _STATUS.get(code, "suspicious")


def staged(module: str) -> str:
    """A module's path in the staged tree (plugins/x.py -> swarm/plugins/x.py)."""
    return "swarm/" + module if module.startswith("plugins/") else module


def unstaged(path: str) -> str:
    """The inverse of ``staged``."""
    return path.removeprefix("swarm/") if path.startswith("swarm/plugins/") else path


def load_groups() -> dict[str, dict[str, list[str]]]:
    """Group name -> {"modules": [repo paths], "tests": [pytest args]} from pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    groups: dict[str, dict[str, list[str]]] = config["tool"]["swarm-mutation"]["groups"]
    for name, group in groups.items():
        modules: list[str] = []
        for pattern in group["modules"]:
            found = sorted(
                p.relative_to(ROOT).as_posix()
                for p in ROOT.glob(pattern)
                if p.name != "__init__.py"
            )
            if not found:
                raise SystemExit(
                    f"[tool.swarm-mutation.groups.{name}]: no module matches {pattern}"
                )
            modules.extend(found)
        group["modules"] = modules
    return groups


def _set_list(text: str, key: str, values: list[str]) -> str:
    new = f"{key} = {json.dumps(values)}"
    text, n = re.subn(rf"^{key} = \[.*?\]", new, text, count=1, flags=re.DOTALL | re.MULTILINE)
    if n != 1:
        raise SystemExit(f"pyproject.toml: [tool.mutmut] has no {key} to set")
    return text


def stage(directory: Path, modules: list[str], tests: list[str]) -> None:
    """A copy of the tree to run mutmut in, set to mutate ``modules`` and run ``tests``."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "swarm", directory / "swarm", ignore=ignore)
    shutil.copytree(ROOT / "plugins", directory / "swarm" / "plugins", ignore=ignore)
    shutil.copytree(ROOT / "tests", directory / "tests", ignore=ignore)
    # the runnable examples some tests run (docs/examples/task.py)
    shutil.copytree(ROOT / "docs" / "examples", directory / "docs" / "examples", ignore=ignore)
    text = (ROOT / "pyproject.toml").read_text()
    text = _set_list(text, "only_mutate", [staged(m) for m in modules])
    present = [t for t in tests if not t.startswith("tests/") or (ROOT / t).exists()]
    for missing in sorted(set(tests) - set(present)):
        print(f"   ({missing} does not exist here: left out)")
    text = _set_list(text, "pytest_add_cli_args_test_selection", present)
    (directory / "pyproject.toml").write_text(text)


def _temp_root(directory: Path) -> Path:
    root = directory / "pytest-tmp"
    root.mkdir(exist_ok=True)
    return root


def run_group(directory: Path, workers: int, only: list[str]) -> float:
    """Run mutmut in a staged tree (on the mutants matching ``only``, or all); the seconds it
    took."""
    started = time.monotonic()
    done = subprocess.run(
        [str(MUTMUT), "run", "--max-children", str(workers), *only],
        cwd=directory,
        # pytest's temporary folders under the staged tree: another pytest session of the
        # machine's user (a second group, the test suite) cleans up the shared default root
        env={
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DEBUG_TEMPROOT": str(_temp_root(directory)),
        },
        check=False,
    )
    if done.returncode != 0:
        print(f"mutmut exited with {done.returncode} in {directory}", file=sys.stderr)
    return time.monotonic() - started


def collect(directory: Path) -> dict[str, dict[str, str]]:
    """Module (repo path) -> mutant name -> status, from a staged run's ``.meta`` files."""
    found: dict[str, dict[str, str]] = {}
    root = directory / "mutants"
    for meta in sorted(root.rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        rows = {name: status(code) for name, code in data["exit_code_by_key"].items()}
        if rows:
            found[unstaged(meta.relative_to(root).with_suffix("").as_posix())] = rows
    return found


def score(counts: dict[str, int]) -> float:
    """Killed (or timed out) mutants over the mutants checked."""
    n = sum(counts[c] for c in CHECKED)
    return (counts["killed"] + counts["timeout"]) / n if n else 0.0


CHECKED = ("killed", "timeout", "survived", "no tests", "suspicious")
COLUMNS = (*CHECKED, "not checked")


def record(summary: dict[str, Any], results: dict[str, dict[str, str]]) -> None:
    """Store each module's results in the summary (replacing an earlier run's)."""
    for module, rows in results.items():
        counts = Counter(rows.values())
        summary["modules"][module] = {
            "mutants": len(rows),
            **{c: counts[c] for c in COLUMNS},
            "not_killed": {k: v for k, v in sorted(rows.items()) if v not in ("killed", "timeout")},
        }


def report(summary: dict[str, Any], modules: list[str] | None) -> None:
    """Print the scores per module, and the time each group's last run took."""
    rows = {m: r for m, r in sorted(summary["modules"].items()) if not modules or m in modules}
    if not rows:
        print("no mutation results yet")
        return
    print(f"{'module':<36} {'mutants':>7} " + " ".join(f"{c:>11}" for c in COLUMNS) + "   score")
    total: Counter[str] = Counter()
    for module, counts in rows.items():
        total.update({c: counts[c] for c in COLUMNS})
        print(
            f"{module:<36} {counts['mutants']:>7} "
            + " ".join(f"{counts[c]:>11}" for c in COLUMNS)
            + f"  {score(counts):>6.1%}"
        )
    n = sum(total[c] for c in COLUMNS)
    print(
        f"{'all':<36} {n:>7} "
        + " ".join(f"{total[c]:>11}" for c in COLUMNS)
        + f"  {score(total):>6.1%}"
    )
    for name, group in summary["groups"].items():
        print(f"group {name}: {', '.join(group['modules'])}: {group['seconds'] / 60:.1f} min")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="module paths, e.g. swarm/_caps.py")
    parser.add_argument("--workers", type=int, default=1, help="mutmut workers (default 1)")
    parser.add_argument("--tests", nargs="+", help="run these tests instead of each group's")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only the mutants whose names match (repeatable; '*__mutmut_*[16]' is about one "
        "in five)",
    )
    parser.add_argument("--report", action="store_true", help="only print the last scores")
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "mutation")
    args = parser.parse_args()
    groups = load_groups()
    by_module = {m: name for name, g in groups.items() for m in g["modules"]}
    wanted = [Path(m).as_posix() for m in args.modules]
    unknown = [m for m in wanted if m not in by_module]
    if unknown:
        raise SystemExit(
            f"not a configured module: {', '.join(unknown)}; the modules are:\n  "
            + "\n  ".join(sorted(by_module))
        )
    base: Path = args.dir.resolve()
    summary_path = base / "summary.json"
    summary: dict[str, Any] = {"groups": {}, "modules": {}}
    if summary_path.exists():
        summary = json.loads(summary_path.read_text())
    if args.report:
        report(summary, wanted or None)
        return
    base.mkdir(parents=True, exist_ok=True)
    for name, group in groups.items():
        modules = [m for m in group["modules"] if not wanted or m in wanted]
        if not modules:
            continue
        tests = args.tests or group["tests"]
        print(f"== {name}: {len(modules)} module(s), tests {' '.join(tests)}", flush=True)
        directory = base / name
        stage(directory, modules, tests)
        seconds = run_group(directory, args.workers, args.only)
        summary["groups"][name] = {
            "modules": modules,
            "tests": tests,
            "only": args.only,
            "seconds": round(seconds),
        }
        record(summary, collect(directory))
        summary_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    report(summary, wanted or None)
    print(f"\nnot killed: {shown(summary_path)}; see one with mutmut show NAME in")
    print(f"{shown(base)}/<group>")


def shown(path: Path) -> str:
    """A path relative to the checkout where it is inside it (``--dir`` may be elsewhere)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


if __name__ == "__main__":
    main()
