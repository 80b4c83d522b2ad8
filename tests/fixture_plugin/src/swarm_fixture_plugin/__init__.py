"""A third-party swarm-eval plugin for tests: the ``quorum`` controller, the ``bulletin`` channel.

Installed as the distribution ``swarm-fixture-plugin``, so its names are
``swarm-fixture-plugin/quorum`` and ``swarm-fixture-plugin/bulletin``.  It uses only the public
API (``from swarm import ...``), as any third-party plugin must.
"""

from __future__ import annotations

from swarm_fixture_plugin.plugin import Bulletin, Quorum, bulletin, quorum

__all__ = ["Bulletin", "Quorum", "bulletin", "quorum"]
