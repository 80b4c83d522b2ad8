"""How errors reach a person at a command line: one message on stderr, no traceback.

``swarm`` shows swarm-eval's errors (``ConfigError``, ``PluginError``...) and Inspect's
``PrerequisiteError`` (a missing provider package, a missing API key) this way.  Under
``inspect eval``, swarm-eval's user-facing errors are Inspect's ``PrerequisiteError``, which
Inspect prints without a traceback, except that it prints nothing at all when its display is
``none``; ``install_inspect_excepthook()`` shows swarm-eval's on stderr in every display.
"""

from __future__ import annotations

import sys
from types import TracebackType

import click
from rich.console import Console

from swarm._inspect.private import PrerequisiteError, inspect_exception_hook_first
from swarm.errors import SwarmError

__all__ = ["error_text", "install_inspect_excepthook", "show_error"]

_installed = False


def error_text(error: BaseException) -> str:
    """``ConfigError: members[0].count: ...``: the error's class and its plain message, as
    an Inspect command shows swarm-eval's errors."""
    return f"{type(error).__name__}: {error}"


def show_error(error: BaseException) -> None:
    """Print ``error`` to stderr as the ``swarm`` command shows errors: swarm-eval's as
    ``error: <message>``, Inspect's ``PrerequisiteError`` as the rich markup Inspect writes it
    in."""
    if isinstance(error, PrerequisiteError) and not isinstance(error, SwarmError):
        Console(stderr=True, highlight=False, soft_wrap=True).print(error.message)
        return
    click.echo(f"error: {error}", err=True)


def _shown_by_inspect(error: BaseException) -> bool:
    return isinstance(error, SwarmError) and isinstance(error, PrerequisiteError)


def install_inspect_excepthook() -> None:
    """Show swarm-eval's user-facing errors that end an Inspect command on stderr, without a
    traceback, whatever Inspect's display; every other exception goes to the hook that was
    there before (Inspect's, which prints its own ``PrerequisiteError`` the same way).

    Inspect installs its own hook once per process, at its first eval, and that hook prints a
    ``PrerequisiteError`` through its console, which ``display="none"`` mutes: a script whose
    eval ran with display none, then raised a swarm-eval error, exited 1 with nothing said.
    So Inspect's hook is installed first, and this one over it, where Inspect will not replace
    it.

    Idempotent.  Called when Inspect loads swarm-eval's entry point.
    """
    global _installed
    if _installed:
        return
    inspect_exception_hook_first()
    previous = sys.excepthook

    def hook(
        kind: type[BaseException], error: BaseException, traceback: TracebackType | None
    ) -> None:
        if _shown_by_inspect(error):
            sys.stderr.write(f"\n{error_text(error)}\n\n")
            sys.stderr.flush()
            return
        previous(kind, error, traceback)

    sys.excepthook = hook
    _installed = True
