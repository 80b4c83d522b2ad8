"""Write the shipped fan-out fixtures, deterministically, from a fixed seed.

Run ``python -m swarm.plugins.scorers.fanout._generate`` to rewrite the fixtures shipped in this
package, or add ``--out DIR`` to write them elsewhere.  The committed fixtures are this
script's output; a test regenerates them and compares byte for byte.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from ._fixture import FIXTURES_DIR
from ._gen_events import events_fixture
from ._gen_fixture import ARTIFACT, GeneratedFixture, render_task
from ._gen_metrics import metrics_fixture

__all__ = ["SEED", "generate", "main", "write_fixture"]

SEED = "swarm-fanout-2024"
"""Every shard's random generator is seeded from this, the fixture's name and the shard."""


def generate(seed: str = SEED) -> tuple[GeneratedFixture, ...]:
    """Every shipped fixture, built in memory."""
    return (events_fixture(seed), metrics_fixture(seed))


def _manifest(fixture: GeneratedFixture) -> str:
    shards = [
        {
            "file": shard.file,
            "worker": shard.worker,
            "question": shard.question,
            "expected": shard.expected,
        }
        for shard in fixture.shards
    ]
    manifest = {"name": fixture.name, "artifact": ARTIFACT, "shards": shards}
    return json.dumps(manifest, indent=2) + "\n"


def _write(path: Path, text: str) -> None:
    # newline="" keeps "\n" on every platform, so the bytes are the same everywhere
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def write_fixture(fixture: GeneratedFixture, out: Path) -> Path:
    """Write ``fixture`` as ``out/<name>/`` (``fixture.json``, ``task.txt``, ``shards/``).

    Shard files of an earlier generation that this one no longer has are removed.
    """
    directory = out / fixture.name
    shards = directory / "shards"
    shards.mkdir(parents=True, exist_ok=True)
    keep = {shard.file for shard in fixture.shards}
    for stale in shards.iterdir():
        if stale.is_file() and stale.name not in keep:
            stale.unlink()
    for shard in fixture.shards:
        _write(shards / shard.file, shard.text)
    _write(directory / "fixture.json", _manifest(fixture))
    _write(directory / "task.txt", render_task(fixture))
    return directory


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: write every fixture under ``--out`` (default: the shipped folder)."""
    parser = argparse.ArgumentParser(
        prog="python -m swarm.plugins.scorers.fanout._generate",
        description="Write the fan-out fixtures from their fixed seed.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=FIXTURES_DIR,
        help="folder to write the fixtures into (default: the package's own fixtures/)",
    )
    out: Path = parser.parse_args(argv).out
    for fixture in generate():
        print(f"wrote {write_fixture(fixture, out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
