"""Finding the sample to draw: in a log file by id and epoch, with errors that say what exists."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.log import (
    EvalLog,
    EvalSample,
    read_eval_log,
    read_eval_log_sample_summaries,
)

from swarm.analysis import read_sample
from swarm.errors import SwarmError

__all__ = ["TimelineError", "choose", "load_sample", "one_line"]

_SHOWN_IDS = 20
_PYDANTIC_LINK = "For further information visit https://errors.pydantic.dev/"


class TimelineError(SwarmError, ValueError):
    """The timeline cannot be drawn: no such log or sample, or no swarm ran in the sample."""


def _listing(ids: list[str]) -> str:
    shown = ", ".join(ids[:_SHOWN_IDS])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > _SHOWN_IDS else "")


def choose(
    where: str, found: list[tuple[str, int]], sample: str | int | None, epoch: int | None
) -> tuple[str, int]:
    """The (id, epoch) to draw among ``found``: the first when ``sample`` is ``None``, and
    the lowest epoch of the sample when ``epoch`` is ``None``."""
    if not found:
        raise TimelineError(f"{where} has no samples")
    ids = list(dict.fromkeys(i for i, _ in found))
    if sample is not None and str(sample) not in ids:
        raise TimelineError(f"{where} has no sample {str(sample)!r}; its samples: {_listing(ids)}")
    wanted = str(sample) if sample is not None else ids[0]
    epochs = sorted(e for i, e in found if i == wanted)
    if epoch is not None and epoch not in epochs:
        listed = ", ".join(map(str, epochs))
        raise TimelineError(
            f"sample {wanted!r} of {where} has no epoch {epoch}; its epochs: {listed}"
        )
    return wanted, epoch if epoch is not None else epochs[0]


def in_log(log: EvalLog, sample: str | int | None, epoch: int | None) -> EvalSample:
    """A sample of a log already read (with its samples)."""
    samples = log.samples or []
    where = log.location or "the log"
    if not samples:
        raise TimelineError(f"{where} has no samples (was it read with header_only?)")
    wanted, chosen = choose(where, [(str(s.id), s.epoch) for s in samples], sample, epoch)
    return next(s for s in samples if str(s.id) == wanted and s.epoch == chosen)


def load_sample(
    log: str | Path, sample: str | int | None = None, epoch: int | None = None
) -> tuple[EvalSample, str | None, int]:
    """Read one sample of the log at ``log``: the sample, the task's name, and how many
    samples (distinct ids) the log has."""
    path = Path(log)
    if not path.exists():
        raise TimelineError(f"no log file at {log}")
    if path.is_dir():
        raise TimelineError(f"{log} is a directory; give the path of one log file")
    try:
        summaries = read_eval_log_sample_summaries(path)
        task = read_eval_log(path, header_only=True).eval.task
    except Exception as ex:
        raise TimelineError(f"{log} could not be read as an Inspect log: {one_line(ex)}") from ex
    found = [(str(s.id), s.epoch) for s in summaries]
    wanted, chosen = choose(str(log), found, sample, epoch)
    original = next(s.id for s in summaries if str(s.id) == wanted)
    samples = len({i for i, _ in found})
    try:
        read = read_sample(path, original, chosen)
    except Exception as ex:  # the summaries list it, but its entry is corrupt or missing
        raise TimelineError(
            f"sample {wanted!r} (epoch {chosen}) of {log} could not be read: {one_line(ex)}"
        ) from ex
    return read, task, samples


def one_line(error: BaseException) -> str:
    """``error``'s message on one line: its lines joined by ``; `` (a pydantic error's link to
    its documentation left out)."""
    lines = [line.strip() for line in str(error).splitlines()]
    kept = [line for line in lines if line and not line.startswith(_PYDANTIC_LINK)]
    return "; ".join(kept) or repr(error)
