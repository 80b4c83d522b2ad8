"""``diagnose(sample)``: one swarm run's coordination figures and failure findings."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import attrs
from inspect_ai.log import (
    EvalSample,
    read_eval_log,
    read_eval_log_sample,
    read_eval_log_sample_summaries,
)

from swarm.analysis._read import off_main_thread
from swarm.diagnosis._checks import Finding, run_checks
from swarm.diagnosis._figures import Figures, figures
from swarm.diagnosis._trace import Trace, read_trace

__all__ = ["Diagnosis", "diagnose", "diagnose_log"]


@attrs.frozen
class Diagnosis:
    """What ``diagnose`` found in one sample: its ``figures``, its ``findings`` (in the order
    of ``CHECKS``), and ``unlinked``: the loops whose channel evidence could not be paired with
    their tool calls (``<loop span>:<channel>``; their reads and writes link nothing)."""

    sample_id: str | int | None
    epoch: int
    figures: Figures
    findings: tuple[Finding, ...]
    unlinked: tuple[str, ...]

    def checks_found(self) -> list[str]:
        """The checks with at least one finding, in order."""
        return list(dict.fromkeys(f.check for f in self.findings))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values (what the scorer stores in its metadata)."""
        return {
            "figures": self.figures.as_dict(),
            "findings": [f.as_dict() for f in self.findings],
            "unlinked": list(self.unlinked),
        }


def diagnose(sample: EvalSample, *, checks: Sequence[str] | None = None) -> Diagnosis:
    """The figures and findings of the swarm run in ``sample`` (its attachments resolved).

    Args:
        sample: a sample of a swarm eval, from ``read_eval_log`` (or the ``EvalLog`` of
            ``eval``).
        checks: the checks to run (names of ``CHECKS``); every check by default.

    Raises:
        LookupError: no swarm ran in ``sample`` (it has no ``inspect_swarm:result``).
        KeyError: a check name that is not in ``CHECKS``.
    """
    trace: Trace = read_trace(sample)
    return Diagnosis(
        sample_id=sample.id,
        epoch=sample.epoch,
        figures=figures(trace),
        findings=tuple(run_checks(trace, checks)),
        unlinked=trace.unlinked,
    )


def diagnose_log(path: str | Path) -> Iterator[Diagnosis]:
    """``diagnose`` every sample with a swarm in the log at ``path``, or in every log of the
    directory ``path``; samples with no swarm are skipped."""
    target = Path(path)
    files = (
        sorted(target.glob("*.eval")) + sorted(target.glob("*.json"))
        if target.is_dir()
        else [target]
    )
    for file in files:
        for sample in _samples(file):
            try:
                yield diagnose(sample)
            except LookupError:
                continue


def _samples(file: Path) -> Iterator[EvalSample]:
    """The samples of the log ``file``, in the order ``read_eval_log`` gives them; from an
    ``.eval`` log one at a time (so memory holds one sample, not the log)."""
    if file.suffix != ".eval":
        yield from off_main_thread(lambda: read_eval_log(str(file))).samples or []
        return
    summaries = off_main_thread(lambda: read_eval_log_sample_summaries(str(file)))
    ids = sorted(
        {(s.epoch, s.id) for s in summaries},
        key=lambda e: (e[0], e[1] if isinstance(e[1], str) else str(e[1]).zfill(20)),
    )
    for epoch, id in ids:
        try:
            yield off_main_thread(partial(read_eval_log_sample, str(file), id=id, epoch=epoch))
        except IndexError:  # listed, but not (or not yet) written
            continue
