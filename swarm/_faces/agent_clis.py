"""``swarm/codex`` and ``swarm/claude_code``: agent CLIs as members, each in its own sandbox.

Codex CLI and Claude Code run in the member's sandbox as ``inspect_swe`` packages them
(``codex_cli()``, ``claude_code()``: the CLI reaches its model through Inspect's
``sandbox_agent_bridge()``), with the member's swarm tools (``bridge_tools()``) served to the CLI
over MCP as bridged host tools, so the CLI sends messages, reads them and writes the board as
``mcp__swarm__<tool>``.  Declare the member ``bridged="sandbox"``: its calls are then metered as
the member's, its stop ends the CLI (Inspect kills a command started with ``exec_remote()`` when
its task is cancelled) and the swarm never raises a limit error into Inspect's sandbox service.

The CLI works in ``/workspace`` (the member sandbox's directory, the one its reads are recorded
in) and keeps its own files (configuration, instructions, sessions) under ``/root``, so what it
writes for itself is not counted as the member's reads or work.  ``inspect_swe`` is imported
when the member starts, not when swarm-eval's entry point loads: ``pip install
'swarm-eval[clis]'``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.agent import Agent, AgentState, BridgedToolsSpec, agent
from inspect_ai.tool import Tool

from swarm._faces.worker import inspect_tools
from swarm._run.bridge_tools import bridge_tools
from swarm.errors import ConfigError

__all__ = ["CLI_HOME", "CLI_WORKDIR", "claude_code_member", "codex_member"]

AGENT_COMPOSE = Path(__file__).parents[1] / "agent_image" / "compose.yaml"
"""The agent image's compose file (``swarm agent-image`` builds its image): the sandbox
``("docker", str(AGENT_COMPOSE))`` runs CLI members, a container each with
``sandboxes.per_member`` (also ``swarm.agent_image.COMPOSE``)."""
CLI_WORKDIR = "/workspace"
"""Where a CLI member works: its sandbox's working directory (``sandboxes.per_member``)."""
CLI_HOME = "/root"
"""Where a CLI member keeps its own files, outside the directory whose reads are recorded."""

_RESERVED = ("bridged_tools", "sandbox")


def _swe() -> Any:
    try:
        import inspect_swe
    except ImportError:
        raise ConfigError(
            "members: swarm/codex and swarm/claude_code run the agent CLIs that inspect_swe "
            "packages, and inspect_swe is not installed: pip install 'swarm-eval[clis]'"
        ) from None
    return inspect_swe


def _options(who: str, options: dict[str, Any]) -> dict[str, Any]:
    for key in _RESERVED:
        if key in options:
            raise ConfigError(
                f"{who}.{key}: set by the swarm (the member's own sandbox, and its swarm tools "
                "as bridged tools); give extra host tools as `tools`"
            )
    return options


def _host_tools(who: str, tools: Sequence[Tool | str] | None) -> list[Tool]:
    """``tools`` as Inspect tools: each one given, or built from its registry name (a topology
    file's ``args: {tools: [bash]}``)."""
    found: list[Tool] = []
    for t in tools or []:
        found.extend(inspect_tools([t], f"{who}.tools") if isinstance(t, str) else [t])
    return found


def _bridged(tools: Sequence[Tool]) -> list[Tool | BridgedToolsSpec]:
    """The member's swarm tools as the ``swarm`` MCP server, and ``tools`` as ``tools``."""
    own = bridge_tools()
    served: list[Tool | BridgedToolsSpec] = []
    if own.tools:
        served.append(own.spec())
    served.extend(tools)
    return served


def _cli_agent(
    who: str,
    factory: str,
    tools: Sequence[Tool | str] | None,
    options: dict[str, Any],
    **arguments: Any,
) -> Agent:
    """The member ``who``: inspect_swe's ``factory`` (``codex_cli``, ``claude_code``) built
    when the member starts, with ``arguments``, the user's other ``options`` and the member's
    swarm tools and ``tools`` as bridged tools."""
    extra = _options(who, dict(options))
    host = _host_tools(who, tools)

    async def execute(state: AgentState) -> AgentState:
        make = getattr(_swe(), factory)
        cli = make(bridged_tools=_bridged(host), **arguments, **extra)
        result: AgentState = await cli(state)
        return result

    return execute


@agent(name="codex")
def codex_member(
    version: str = "sandbox",
    system_prompt: str | None = None,
    tools: Sequence[Tool | str] | None = None,
    cwd: str = CLI_WORKDIR,
    home_dir: str = f"{CLI_HOME}/.codex",
    web_search: str = "disabled",
    **options: Any,
) -> Agent:
    """Codex CLI as a swarm member (``inspect_swe.codex_cli()`` in the member's sandbox).

    Args:
        version: the Codex CLI to run: ``"sandbox"`` (default), the one installed in the
            sandbox image (``swarm agent-image``), or any version ``codex_cli()`` accepts.
        system_prompt: instructions added to Codex's own (its ``AGENTS.md``).
        tools: Inspect tools (or their registry names) served to Codex beside the swarm's
            (MCP server ``tools``).
        cwd: where Codex works (default ``/workspace``, the member sandbox's directory).
        home_dir: ``CODEX_HOME`` (default ``/root/.codex``, outside the recorded directory).
        web_search: Codex's web search (default ``"disabled"``: member containers have no
            network).
        **options: any other argument of ``inspect_swe.codex_cli()`` but ``bridged_tools`` and
            ``sandbox``, which the swarm sets.
    """
    return _cli_agent(
        "swarm/codex",
        "codex_cli",
        tools,
        options,
        version=version,
        system_prompt=system_prompt,
        cwd=cwd,
        home_dir=home_dir,
        web_search=web_search,
    )


@agent(name="claude_code")
def claude_code_member(
    version: str = "sandbox",
    system_prompt: str | None = None,
    tools: Sequence[Tool | str] | None = None,
    cwd: str = CLI_WORKDIR,
    **options: Any,
) -> Agent:
    """Claude Code as a swarm member (``inspect_swe.claude_code()`` in the member's sandbox).

    Args:
        version: the Claude Code to run: ``"sandbox"`` (default), the one installed in the
            sandbox image (``swarm agent-image``), or any version ``claude_code()`` accepts.
        system_prompt: instructions appended to Claude Code's own system prompt.
        tools: Inspect tools (or their registry names) served to Claude Code beside the
            swarm's (MCP server ``tools``).
        cwd: where Claude Code works (default ``/workspace``, the member sandbox's directory);
            its own files stay in ``$HOME`` (``/root`` in the image).
        **options: any other argument of ``inspect_swe.claude_code()`` but ``bridged_tools``
            and ``sandbox``, which the swarm sets.
    """
    return _cli_agent(
        "swarm/claude_code",
        "claude_code",
        tools,
        options,
        version=version,
        system_prompt=system_prompt,
        cwd=cwd,
    )
