"""The agent CLIs' image: Codex CLI and Claude Code at pinned versions, for ``swarm/codex`` and
``swarm/claude_code`` members in per-member Docker sandboxes (``swarm agent-image`` builds it).

The CLIs come from the npm registry as their static builds for the engine's architecture (``npm
pack`` on the host, cached), so the image builds where no image registry is reachable, on any
Debian image with ``python3`` (``BASE``).  inspect_swe's readiness probe of the bridged MCP
tools runs ``curl`` in the sandbox: when the base has none, its Debian packages are fetched on
the host (``apt-get download``, on a Debian host) and installed from the build context, so the
build itself needs no network; elsewhere the build installs curl with apt.

Use it in a task as the sandbox ``("docker", COMPOSE)``, with ``sandboxes.per_member``.
"""

from __future__ import annotations

from swarm.agent_image._build import (
    AGENT_IMAGE,
    BASE_IMAGE,
    CLAUDE_CODE_VERSION,
    CODEX_VERSION,
    COMPOSE,
    DOCKERFILE,
    build_agent_image,
    default_cache,
    image_present,
    npm_packages,
)

__all__ = [
    "AGENT_IMAGE",
    "BASE_IMAGE",
    "CLAUDE_CODE_VERSION",
    "CODEX_VERSION",
    "COMPOSE",
    "DOCKERFILE",
    "build_agent_image",
    "default_cache",
    "image_present",
    "npm_packages",
]
