"""A picture of one sample's swarm: a lane per member, with everything it did along it.

From Python (a notebook shows a ``Timeline`` as HTML)::

    from swarm.timeline import timeline

    t = timeline("logs/run.eval", sample=1)   # or timeline(eval_sample)
    t.save("run.html")                         # or .svg; t.to_html(), t.to_svg()
    t.run.lane("writer").tool_calls            # the model behind the picture

From the command line: ``swarm timeline LOG [--sample ID] [--epoch N] [-o FILE]``.

Two steps, each pure: ``_extract`` turns a log sample into a ``RunTimeline`` (frozen lanes and
marks), and ``_svg`` / ``_html`` draw it.  This package is a face of the kernel: it reads logs
and the public API, and nothing in the kernel imports it.
"""

from __future__ import annotations

import re as _re
from pathlib import Path

import attrs
from inspect_ai.log import EvalLog, EvalSample

from swarm import RESULT_KEY
from swarm.timeline import _extract, _html, _source, _svg
from swarm.timeline._model import (
    ChannelWrite,
    FindingMark,
    Lane,
    Mark,
    Message,
    ModelCall,
    Notice,
    RunTimeline,
    SpawnMark,
    Stop,
    ToolCall,
    Wait,
)
from swarm.timeline._source import TimelineError

__all__ = [
    "ChannelWrite",
    "FindingMark",
    "Lane",
    "Mark",
    "Message",
    "ModelCall",
    "Notice",
    "RunTimeline",
    "SpawnMark",
    "Stop",
    "Timeline",
    "TimelineError",
    "ToolCall",
    "Wait",
    "Written",
    "default_output",
    "timeline",
    "write_timeline",
]

_FORMATS = {".html": "html", ".htm": "html", ".svg": "svg"}


def _format(path: Path) -> str:
    kind = _FORMATS.get(path.suffix.lower())
    if kind is None:
        raise TimelineError(
            f"{path}: the output's suffix must be .html or .svg, not {path.suffix or 'none'!r}"
        )
    return kind


@attrs.frozen
class Timeline:
    """A drawable timeline: ``run`` is the model, the methods draw it."""

    run: RunTimeline

    def to_svg(self) -> str:
        """A standalone SVG document."""
        return _svg.render_svg(self.run)

    def to_html(self) -> str:
        """A self-contained HTML page (the SVG inline, a lane filter)."""
        return _html.render_html(self.run)

    def _repr_html_(self) -> str:
        return _html.render_fragment(self.run)

    def save(self, path: str | Path) -> Path:
        """Write the timeline to ``path``: HTML or SVG, by its suffix (``.html``, ``.svg``)."""
        path = Path(path)
        text = self.to_html() if _format(path) == "html" else self.to_svg()
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as ex:
            raise TimelineError(f"cannot write {path}: {ex.strerror or ex}") from ex
        return path


def _drawn(sample: EvalSample, task: str | None) -> Timeline:
    try:
        return Timeline(_extract.extract(sample, task=task))
    except _extract.NoSwarmRecords as ex:
        raise TimelineError(
            f"sample {sample.id!r} (epoch {sample.epoch}) has no swarm records: {RESULT_KEY} is "
            "not in its store, so no swarm ran in it"
        ) from ex
    except _extract.MalformedRecord as ex:
        raise TimelineError(
            f"sample {sample.id!r} (epoch {sample.epoch}) has a malformed swarm record: {ex}"
        ) from ex


def timeline(
    source: EvalSample | EvalLog | str | Path,
    sample: str | int | None = None,
    epoch: int | None = None,
) -> Timeline:
    """The timeline of one sample's swarm.

    Args:
        source: a sample, a log read with its samples, or the path of a log file.
        sample: with a log, the sample's id (default: the log's first sample).
        epoch: with a log, the epoch (default: the sample's first).

    Raises:
        TimelineError: no such log, sample or epoch (the message lists what there is), the
            sample cannot be read, no swarm ran in it, or one of its swarm records is
            malformed (the message names the field).
    """
    if isinstance(source, EvalSample):
        return _drawn(source, None)
    if isinstance(source, EvalLog):
        return _drawn(_source.in_log(source, sample, epoch), source.eval.task)
    found, task, _ = _source.load_sample(source, sample, epoch)
    return _drawn(found, task)


@attrs.frozen(kw_only=True)
class Written:
    """What ``write_timeline`` wrote: the file, the sample drawn, and how many samples (ids)
    the log has."""

    path: Path
    sample: str
    epoch: int
    samples: int


def write_timeline(
    log: str | Path,
    output: str | Path | None = None,
    *,
    sample: str | int | None = None,
    epoch: int | None = None,
) -> Written:
    """Draw one sample of the log at ``log`` into ``output`` (``.html`` or ``.svg``; default
    ``default_output()``).  What ``swarm timeline`` runs.

    Raises:
        TimelineError: as ``timeline()``, or the output has another suffix or cannot be written.
    """
    if output is not None:
        _format(Path(output))  # before reading the log
    found, task, count = _source.load_sample(log, sample, epoch)
    drawn = _drawn(found, task)
    path = drawn.save(output if output is not None else default_output(log, drawn.run))
    return Written(path=path, sample=drawn.run.sample_id, epoch=drawn.run.epoch, samples=count)


def default_output(log: str | Path, run: RunTimeline) -> Path:
    """``<log stem>-<sample>.html`` (``-epoch<N>`` added after epoch 1), in the current
    directory."""
    sample = _re.sub(r"[^A-Za-z0-9._-]+", "_", run.sample_id)
    epoch = f"-epoch{run.epoch}" if run.epoch != 1 else ""
    return Path(f"{Path(log).stem}-{sample}{epoch}.html")
