"""``swarm agent-image``: build the agent CLIs' image (Codex CLI, Claude Code) for CLI members."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["agent_image"]


@click.command("agent-image", short_help="Build the Docker image of the agent CLI members.")
@click.option("--base", default=None, help="The Debian image with python3 to build on.")
@click.option("--tag", default=None, help="The image's tag (default: the pinned versions').")
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where fetched packages are kept (default ~/.cache/swarm-eval/agent-image).",
)
@click.option("--rebuild", is_flag=True, help="Build even if the engine has the image.")
def agent_image(base: str | None, tag: str | None, cache: Path | None, rebuild: bool) -> None:
    """Build the image that swarm/codex and swarm/claude_code members run in: Codex CLI and
    Claude Code at pinned versions, from the npm registry (npm pack, on this machine, once:
    the packages are cached), and curl.  Needs Docker and npm; prints the image's tag.  An
    image the engine already has is kept unless --rebuild is given.

    \b
    Examples:
      swarm agent-image
      swarm agent-image --base python:3.12-slim-bookworm
    """
    from swarm.agent_image import AGENT_IMAGE, BASE_IMAGE, build_agent_image, image_present

    def say(line: str) -> None:
        click.echo(f"agent-image: {line}", err=True)

    tag = tag or AGENT_IMAGE
    if not rebuild and image_present(tag):
        say(f"{tag}: the engine has it (--rebuild to build it again)")
        click.echo(tag)
        return
    click.echo(build_agent_image(tag, base or BASE_IMAGE, cache, say))
