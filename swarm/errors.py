"""The exceptions swarm-eval raises.

``SwarmError`` is the root.  ``ConfigError`` is what a user sees for a bad topology, roster or
parameter: its message names the field.  ``PluginError`` names the plugin and the hook that
misbehaved, in the style of pluggy's ``PluginValidationError``.  ``UsageError`` is for the CLI.
``MissingExtra`` says which optional extra to install (it is an ``ImportError`` too).

Those three are also Inspect's ``PrerequisiteError``: the exception type Inspect's command line
(``inspect eval``, ``inspect eval-set``) prints as one message with no traceback.  ``str(error)``
is the plain message; ``error.message``, which Inspect prints as rich markup and records as a
sample's error message, is the same text with anything that looks like a markup tag escaped.
``ConfigError`` is still a ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.markup import escape

from swarm._inspect.private import PrerequisiteError

__all__ = [
    "ConfigError",
    "MemberErrors",
    "MissingExtra",
    "PluginError",
    "RecordRejected",
    "SwarmError",
    "UsageError",
]


class SwarmError(Exception):
    """Base class of every error swarm-eval raises on purpose."""


class _Shown(PrerequisiteError):
    """An error Inspect's command line shows as its message alone, without a traceback."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        # Inspect prints ``message`` with rich, which would swallow a "[name]" as a tag
        self.message = escape(message)


class ConfigError(SwarmError, _Shown, ValueError):
    """A topology, roster, budget or plugin parameter is invalid.

    The message names the field (``members[1].count``) and what was expected; for a topology
    file, it starts with the file's name.
    """


class PluginError(SwarmError, _Shown):
    """A plugin broke its contract: it raised in a decision hook or returned the wrong type.

    Args:
        plugin: the name the plugin is registered under.
        hook: the hook that was being called.
        message: what went wrong.
    """

    def __init__(self, plugin: str, hook: str, message: str) -> None:
        self.plugin = plugin
        self.hook = hook
        self.detail = message
        # Inspect shows an error's ``message`` attribute: make it the whole story
        super().__init__(f"Plugin {plugin!r}, hook {hook!r}: {message}")

    def __reduce__(self) -> tuple[type[PluginError], tuple[str, str, str]]:
        return (type(self), (self.plugin, self.hook, self.detail))


class UsageError(SwarmError, _Shown):
    """The command line was used wrongly."""


class MissingExtra(SwarmError, _Shown, ImportError):
    """An optional extra a feature needs is not installed; the message names the package and
    the ``pip install 'swarm-eval[<extra>]'`` that brings it.  The ``swarm`` command exits
    with status 1, as for any error a person can fix (2 is for a wrong option)."""


class MemberErrors(SwarmError):
    """Members' own errors failed the sample.

    Raised, after the swarm's records are written, when every member that started ended
    ``errored``, or at the first member error when the swarm runs with
    ``on_member_error="fail"``.  As a sample error it lets Inspect's ``--retry-on-error`` and
    ``--fail-on-error`` apply.

    Args:
        errors: each failed member's name and its error (``repr`` of the exception).
        why: what made the errors fail the sample.
    """

    def __init__(self, errors: Mapping[str, str], why: str) -> None:
        self.errors = dict(errors)
        listing = "; ".join(f"{name}: {error}" for name, error in self.errors.items())
        self.message = f"{why}: {listing}"
        super().__init__(self.message)


class RecordRejected(Exception):
    """Raised by a channel while applying a record it refuses (a bound, a stale view...)."""

    def __init__(self, control: str, reason: str) -> None:
        super().__init__(reason)
        self.control = control
        self.reason = reason
