"""swarm-eval's pytest fixtures, loaded through the ``pytest11`` entry point into every pytest
run of an environment where swarm-eval is installed.

A top-level module that imports nothing of swarm-eval's or Inspect's until a test asks for a
fixture: loading it costs a pytest run a few milliseconds, where importing the ``swarm``
package (and with it ``inspect_ai``) would cost every run of the environment about two
seconds, swarm-eval used or not.  The fixtures are documented in ``swarm.testing.pytest_plugin``
(docs/testing.md, "pytest fixtures").

- ``swarm_plugins``: a fresh ``PluginCatalog`` with every installed plugin, for one test;
- ``swarm_log_dir``: a temporary Inspect log directory;
- ``scripted``: the ``scripted_model`` factory;
- ``scripted_server``: the scripted OpenAI-compatible server on the loopback, with no scripts
  and an empty log, and ``SCRIPTED_BASE_URL``/``SCRIPTED_API_KEY`` set for the test (one server
  per test session, ``scripted_server_shared``, stopped when the session ends).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from inspect_ai.model import Model

    from swarm._hooks.catalog import PluginCatalog
    from swarm.testing._server import ScriptedServer


@pytest.fixture
def swarm_plugins() -> PluginCatalog:
    """A freshly loaded plugin catalog (entry points read again)."""
    from swarm._hooks.catalog import PluginCatalog

    return PluginCatalog.load()


@pytest.fixture
def swarm_log_dir(tmp_path: Path) -> Iterator[Path]:
    """A temporary directory for Inspect logs."""
    path = tmp_path / "logs"
    path.mkdir()
    yield path


@pytest.fixture
def scripted() -> Callable[..., Model]:
    """``scripted(scripts, answer=..., delay=...)`` builds a scripted model."""
    from swarm.testing._runner import scripted_model

    def make(*args: Any, **kwargs: Any) -> Model:
        return scripted_model(*args, **kwargs)

    return make


@pytest.fixture(scope="session")
def scripted_server_shared() -> Iterator[ScriptedServer]:
    """The session's scripted server, started on a free loopback port and stopped at the end."""
    from swarm.testing._server import ScriptedServer

    with ScriptedServer() as server:
        yield server


@pytest.fixture
def scripted_server(
    scripted_server_shared: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> ScriptedServer:
    """The scripted server with no scripts and an empty log (``load()`` gives it scripts), and
    the ``openai-api/scripted/...`` provider's environment pointed at it for this test."""
    from swarm.testing._server import SERVICE

    server = scripted_server_shared
    server.load()
    monkeypatch.setenv(f"{SERVICE.upper()}_BASE_URL", server.base_url)
    monkeypatch.setenv(f"{SERVICE.upper()}_API_KEY", SERVICE)
    return server
