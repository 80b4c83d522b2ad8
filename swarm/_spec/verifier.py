"""A controller's verifier, resolved when the topology is checked.

A verifier is ``"task"`` (the task's own scorers, through Inspect's ``score()``), the registry
name of an Inspect scorer, or a ``Scorer``; the runtime checks submissions with it
(``swarm._run.gate``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Scorer
from inspect_ai.util import registry_create

from swarm.errors import ConfigError

__all__ = ["Verifier", "named_scorer", "resolve_verifier"]

Verifier = str | Scorer


def resolve_verifier(value: Any) -> Verifier | None:
    """``None``, ``"task"``, a built scorer, or a scorer built from its registry name."""
    if value is None or value == "task":
        return value  # type: ignore[no-any-return]
    if isinstance(value, str):
        hint = (
            "; give 'task' for the task's own scorer, or a registered scorer name such as 'match'"
        )
        return named_scorer(value, "verifier", hint)
    if callable(value):
        return value  # type: ignore[no-any-return]
    raise ConfigError(f"verifier: expected 'task', a scorer name or a Scorer, got {value!r}")


def named_scorer(name: str, where: str, hint: str = "") -> Scorer:
    """The Inspect scorer registered as ``name``, built with its defaults; a ``ConfigError``
    naming ``where`` (then ``hint``) when there is none."""
    try:
        return registry_create("scorer", name)
    except Exception as ex:
        raise ConfigError(f"{where}: no Inspect scorer called {name!r} ({ex}){hint}") from None
