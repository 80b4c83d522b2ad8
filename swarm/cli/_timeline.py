"""``swarm timeline``: one sample's swarm drawn as a self-contained HTML page or SVG."""

from __future__ import annotations

import click

__all__ = ["timeline"]


@click.command(short_help="Draw one sample's swarm as an HTML page or SVG.")
@click.argument("log")
@click.option("--sample", "sample_id", help="The sample's id (default: the log's first).")
@click.option("--epoch", type=int, help="The sample's epoch (default: its first).")
@click.option(
    "-o", "--output", help="The file to write, .html or .svg [default: <log stem>-<sample>.html]."
)
def timeline(log: str, sample_id: str | None, epoch: int | None, output: str | None) -> None:
    """Draw one sample's swarm from the eval log LOG as a timeline: a lane per member with its
    model calls, tool calls, channel writes, waits, notices and messages, the stop and the
    answer.  Writes a self-contained HTML page or an SVG file (by the output's suffix).

    \b
    Examples:
      swarm timeline logs/run.eval
      swarm timeline logs/run.eval --sample 3 --epoch 2 -o run.html
      swarm timeline logs/run.eval -o run.svg
    """
    from swarm.timeline import write_timeline

    written = write_timeline(log, output, sample=sample_id, epoch=epoch)
    more = f"; the log has {written.samples} samples" if written.samples > 1 else ""
    click.echo(f"wrote {written.path} (sample {written.sample}, epoch {written.epoch}{more})")
