"""``swarm scripted-server``: the scripted OpenAI-compatible server, on the loopback."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["scripted_server"]


@click.command("scripted-server", short_help="Serve scripts as an OpenAI-compatible API.")
@click.option(
    "--scripts",
    "scripts",
    metavar="FILE",
    help="The scripts: a .yaml, .yml or .json file of steps by member (as for swarm/scripted).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="0: a free port."
)
@click.option("--answer", default="done", show_default=True, help="What a finished script says.")
def scripted_server(scripts: str | None, port: int, answer: str) -> None:
    """Serve the scripts as an OpenAI-compatible chat completions API on 127.0.0.1, with the
    faults a step asks for (429 with Retry-After, 500, 503, a dropped connection, a slow
    answer), until interrupted.  Point Inspect's openai-api provider at it with the two
    variables it prints, and run with --model openai-api/scripted/<any name>.

    A scripts file that cannot be read or holds a wrong step prints one line naming the file
    and the field (scripts['a'][2].usage.input...) and exits with status 1; a request of the
    wrong shape gets a 400 naming the field.

    \b
    Examples:
      swarm scripted-server --scripts scripts.yaml --port 8765
      SCRIPTED_BASE_URL=http://127.0.0.1:8765/v1 SCRIPTED_API_KEY=scripted \\
        inspect eval task.py --solver swarm/swarm --model openai-api/scripted/model
    """
    from swarm.errors import UsageError
    from swarm.testing._server import SERVICE, ScriptedServer

    path = None if scripts is None else Path(scripts)
    if path is not None and not path.is_dir() and path.suffix not in (".yaml", ".yml", ".json"):
        raise UsageError(f"--scripts: expected a .yaml, .yml or .json file, got {scripts!r}")
    # a file that cannot be read or holds bad scripts: a ConfigError naming the file (and the
    # field), shown as one line with exit status 1
    server = ScriptedServer(path, answer=answer, port=port)
    try:
        server.start()
    except OSError as ex:
        raise UsageError(f"--port: cannot listen on 127.0.0.1:{port} ({ex.strerror})") from None
    name = SERVICE.upper()
    click.echo(f"serving {len(server.scripts.scripts)} script(s) on {server.base_url}")
    click.echo(f"export {name}_BASE_URL={server.base_url}")
    click.echo(f"export {name}_API_KEY={SERVICE}")
    click.echo("model: openai-api/scripted/<any name>; Ctrl-C stops", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
