"""The ``csv-metrics`` fixture's data: eight CSV files of per-minute host samples.

Columns, all integers: ``timestamp`` (Unix seconds), ``host_id``, ``cpu`` (percent),
``memory`` (percent), ``latency_ms`` and ``disk_iops``.  Latency rises with CPU load; memory
drifts per host.  Every shard whose question has a threshold holds rows exactly at it (cpu 90,
memory 80 or 50, latency_ms 10), so ``>`` where ``>=`` is asked, or the reverse, answers wrongly.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ._gen_fixture import GeneratedFixture, GeneratedShard

__all__ = ["COLUMNS", "QUESTIONS", "metrics_fixture"]

COLUMNS = ("timestamp", "host_id", "cpu", "memory", "latency_ms", "disk_iops")
Row = dict[str, int]

QUESTIONS = (
    "What is the maximum value of the cpu column?",
    "What is the sum of the latency_ms column over the rows where cpu is greater than or "
    "equal to 90?",
    "How many rows have a memory value greater than 80?",
    "What is the sum of the latency_ms column over all rows?",
    "How many rows have a cpu value greater than or equal to 90?",
    "What is the sum of the memory column over all rows?",
    "What is the maximum value of the memory column among the rows where latency_ms is less "
    "than 10?",
    "What is the sum of the cpu column over the rows where memory is greater than or equal to 50?",
)

Answer = Callable[[list[Row]], int]

ANSWERS: tuple[Answer, ...] = (
    lambda rows: max(r["cpu"] for r in rows),
    lambda rows: sum(r["latency_ms"] for r in rows if r["cpu"] >= 90),
    lambda rows: sum(1 for r in rows if r["memory"] > 80),
    lambda rows: sum(r["latency_ms"] for r in rows),
    lambda rows: sum(1 for r in rows if r["cpu"] >= 90),
    lambda rows: sum(r["memory"] for r in rows),
    lambda rows: max(r["memory"] for r in rows if r["latency_ms"] < 10),
    lambda rows: sum(r["cpu"] for r in rows if r["memory"] >= 50),
)

# Rows each question's shard gets at its threshold: (cpu, memory, latency_ms); None = random.
EDGE_CASES: dict[int, tuple[tuple[int | None, int | None, int | None], ...]] = {
    1: ((90, None, None), (90, None, None), (89, None, None)),
    2: ((None, 80, None), (None, 80, None), (None, 81, None)),
    4: ((90, None, None), (90, None, None), (90, None, None), (89, None, None)),
    # the highest memory of the file sits at latency 10, just outside "less than 10"
    6: ((None, 99, 10), (None, 98, 10), (None, 70, 9)),
    7: ((None, 50, None), (None, 50, None), (None, 49, None)),
}


def _cpu(rng: random.Random) -> int:
    if rng.randrange(100) < 16:  # a load spike
        return rng.randrange(84, 99)
    return rng.randrange(4, 72)


def _latency(rng: random.Random, cpu: int) -> int:
    latency = rng.randrange(2, 14) + (cpu // 10) * rng.randrange(0, 3)
    if cpu >= 80:
        latency += rng.randrange(15, 140)
    return latency


def _sample(
    rng: random.Random,
    memory: dict[int, int],
    edge: tuple[int | None, int | None, int | None] = (None, None, None),
) -> Row:
    host = rng.choice(sorted(memory))
    memory[host] = min(97, max(22, memory[host] + rng.randrange(-4, 5)))
    cpu = _cpu(rng) if edge[0] is None else edge[0]
    return {
        "host_id": host,
        "cpu": cpu,
        "memory": memory[host] if edge[1] is None else edge[1],
        "latency_ms": _latency(rng, cpu) if edge[2] is None else edge[2],
        "disk_iops": rng.randrange(20, 900) + cpu * rng.randrange(0, 12),
    }


def _csv(rows: list[Row], start: int) -> str:
    lines = [",".join(COLUMNS)]
    for minute, row in enumerate(rows):
        values = {"timestamp": start + 60 * minute, **row}
        lines.append(",".join(str(values[column]) for column in COLUMNS))
    return "\n".join(lines) + "\n"


def _shard(index: int, seed: str) -> GeneratedShard:
    rng = random.Random(f"{seed}/csv-metrics/{index + 1}")
    first_host = rng.randrange(1, 40)
    # one busy host per cluster, the others anywhere from idle to busy
    memory = {first_host: rng.randrange(74, 92)}
    memory |= {first_host + n: rng.randrange(28, 86) for n in range(1, rng.randrange(2, 6))}
    rows = [_sample(rng, memory) for _ in range(rng.randrange(40, 116))]
    for edge in EDGE_CASES.get(index, ()):
        rows.insert(rng.randrange(len(rows) + 1), _sample(rng, memory, edge))
    return GeneratedShard(
        file=f"metrics-{index + 1:02d}.csv",
        question=QUESTIONS[index],
        text=_csv(rows, start=1_714_521_600 + 86_400 * index),
        expected=ANSWERS[index](rows),
    )


def metrics_fixture(seed: str) -> GeneratedFixture:
    """The ``csv-metrics`` fixture, the same for the same ``seed``."""
    return GeneratedFixture(
        name="csv-metrics",
        data_description=(
            "CSV: a header row, then one row per sample with the integer columns "
            + ", ".join(COLUMNS)
        ),
        shards=tuple(_shard(index, seed) for index in range(len(QUESTIONS))),
    )
