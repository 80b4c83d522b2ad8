"""Inspect's attachment references, resolved one value at a time.

Inspect stores a long string of a sample's events (over 100 characters: a long message text, a
tool call's argument, a tool's description) once, in ``sample.attachments``, and puts
``attachment://<hash>`` in its place.  ``resolve_sample_attachments`` resolves every reference of
a whole sample, which at 1,024 members was most of the diagnosis' time; the diagnosis reads only
a few fields, so it resolves just those (the same content, the same rules).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ATTACHMENT", "Resolve", "resolved", "resolver"]

ATTACHMENT = "attachment://"
_EARLIER = "tc://"  # the references' earlier form, read as Inspect reads it

Resolve = Callable[[str], str]
"""A string with an attachment reference swapped for its content (others as they are)."""


def resolver(attachments: Mapping[str, str]) -> Resolve:
    """What ``resolve_sample_attachments`` does to one string: ``attachment://<hash>`` (or
    ``tc://<hash>``) becomes the attachment's content; a reference with no attachment stays."""

    def resolve(text: str) -> str:
        if text.startswith(_EARLIER):
            text = ATTACHMENT + text[len(_EARLIER) :]
        if text.startswith(ATTACHMENT):
            return attachments.get(text[len(ATTACHMENT) :], text)
        return text

    return resolve


def resolved(value: Any, resolve: Resolve) -> Any:
    """A copy of the JSON value ``value`` with every string in it resolved."""
    if isinstance(value, str):
        return resolve(value)
    if isinstance(value, dict):
        return {k: resolved(v, resolve) for k, v in value.items()}
    if isinstance(value, list):
        return [resolved(v, resolve) for v in value]
    return value
