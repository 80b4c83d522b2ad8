"""Inspect's log readers, run where reading a large sample costs only the reading."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from inspect_ai.log import EvalSample, read_eval_log_sample, read_eval_log_sample_summaries

__all__ = ["RECORDS_ONLY", "off_main_thread", "read_sample"]

T = TypeVar("T")


def off_main_thread(read: Callable[[], T]) -> T:
    """``read()`` (a call of one of Inspect's log readers) run in a thread of its own; its
    result, or its exception, comes back here.

    Inspect's synchronous readers run a coroutine with ``anyio.run``.  In the main thread,
    asyncio's runner installs a SIGINT handler that holds the runner's main task, and when the
    run ends it looks the handler up with ``signal.getsignal``, which formats it with ``%r``
    for an enum lookup that fails: the task's repr includes its result, the whole sample.  For
    a 4,096-member sample that repr was half of Inspect's reading time and 450 MB of its peak
    memory (docs/timeline.md, "Reading a 4,096-member log").  Outside the main thread the
    runner installs no handler, so nothing is formatted.
    """
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(read())
        except BaseException as ex:  # handed to the caller, re-raised there
            failed.append(ex)

    worker = threading.Thread(target=run, name="swarm-read-log", daemon=True)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return done[0]


RECORDS_ONLY = frozenset({"events", "messages", "attachments"})
"""What ``read_sample(..., records_only=True)`` leaves out: all but the store, the scores, the
usage and the sample's own fields."""


def read_sample(
    log: str | Path,
    id: str | int | None = None,
    epoch: int = 1,
    *,
    records_only: bool = False,
) -> EvalSample:
    """One sample of the log at ``log``, read by Inspect's ``read_eval_log_sample``.

    Args:
        log: the path of an ``.eval`` (or ``.json``) log.
        id: the sample's id; the log's first sample by default.
        epoch: its epoch.
        records_only: leave out the sample's events, messages and attachments, which the record
            readers (``swarm_ledger``, ``swarm_result``, ``swarm_spawns``, ``swarm_messages``,
            ``swarm_subagents``, ``sample_cost``) do not read; Inspect then skips them in a
            ``.eval`` log without building them (a ``.json`` log is read whole).

    The read runs in a thread of its own (see ``off_main_thread``: in the main thread, Python's
    asyncio formats the whole sample once Inspect has read it).  The figures at 1,024 and
    4,096 members are in docs/timeline.md, "Reading a 4,096-member log".

    Raises:
        IndexError: the log has no such sample (or no sample at all).
    """
    path = str(log)

    def read() -> EvalSample:
        wanted = id
        if wanted is None:
            summaries = read_eval_log_sample_summaries(path)
            if not summaries:
                raise IndexError(f"{path} has no samples")
            wanted = summaries[0].id
        excluded = set(RECORDS_ONLY) if records_only else None
        return read_eval_log_sample(path, id=wanted, epoch=epoch, exclude_fields=excluded)

    return off_main_thread(read)
