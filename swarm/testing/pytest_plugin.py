"""pytest fixtures for swarm-eval plugin authors.

The ``pytest11`` entry point loads them from the top-level module ``swarm_eval_pytest``, which
imports nothing of swarm-eval's or Inspect's until a test asks for a fixture; this module names
the same fixtures for a ``pytest_plugins = ["swarm.testing.pytest_plugin"]`` line.

- ``swarm_plugins``: a fresh ``PluginCatalog`` with every installed plugin, for one test;
- ``swarm_log_dir``: a temporary Inspect log directory;
- ``scripted``: the ``scripted_model`` factory;
- ``scripted_server``: the scripted OpenAI-compatible server on the loopback, with no scripts
  and an empty log, and ``SCRIPTED_BASE_URL``/``SCRIPTED_API_KEY`` set for the test (one server
  per test session, ``scripted_server_shared``, stopped when the session ends).
"""

from __future__ import annotations

from swarm_eval_pytest import (
    scripted,
    scripted_server,
    scripted_server_shared,
    swarm_log_dir,
    swarm_plugins,
)

__all__ = [
    "scripted",
    "scripted_server",
    "scripted_server_shared",
    "swarm_log_dir",
    "swarm_plugins",
]
