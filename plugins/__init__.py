"""swarm-eval's built-in plugins, installed as ``swarm.plugins``.

Each is discovered through a ``swarm`` entry point exactly like a third-party plugin, and uses
only the public API in ``swarm``.
"""
