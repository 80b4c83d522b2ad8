"""The exceptions swarm-eval raises.

``SwarmError`` is the root.  ``ConfigError`` is what a user sees for a bad topology, roster or
parameter: its message names the field.  ``PluginError`` names the plugin and the hook that
misbehaved, in the style of pluggy's ``PluginValidationError``.  ``UsageError`` is for the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ConfigError",
    "MemberErrors",
    "PluginError",
    "RecordRejected",
    "SwarmError",
    "UsageError",
]


class SwarmError(Exception):
    """Base class of every error swarm-eval raises on purpose."""


class ConfigError(SwarmError, ValueError):
    """A topology, roster, budget or plugin parameter is invalid.

    The message names the field (``members[1].count``) and what was expected.
    """


class PluginError(SwarmError):
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
        self.message = f"Plugin {plugin!r}, hook {hook!r}: {message}"
        super().__init__(self.message)


class UsageError(SwarmError):
    """The command line was used wrongly."""


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
