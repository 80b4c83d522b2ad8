"""The ``inspect_ai`` entry point: makes ``swarm/swarm`` and the ``swarm/scripted`` model known.

Inspect names objects from an installed package ``<package>/<name>``; from an editable install
of a distribution whose name differs from its package it cannot tell the package, so the agent
is registered under its qualified name here as well.
"""

from __future__ import annotations

from inspect_ai.agent._agent import agent_register
from inspect_ai.util import registry_info

from swarm import _inspect_hooks  # noqa: F401
from swarm._agent import swarm
from swarm.testing._scripted import ScriptedModelAPI  # noqa: F401  (registers swarm/scripted)

if registry_info(swarm).name != "swarm/swarm":
    agent_register(swarm, "swarm/swarm")
