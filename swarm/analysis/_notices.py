"""The swarm's notices in a log's model inputs: ``notice_text(message)``."""

from __future__ import annotations

from inspect_ai.model import ChatMessage

from swarm.records import INFO_SOURCE, NOTICE_PREFIX, NOTICE_SEPARATOR

__all__ = ["notice_text"]


def notice_text(message: ChatMessage) -> str | None:
    """The swarm notice ``message`` is or carries, from ``[Swarm notice]`` on; ``None`` for a
    message with no notice.

    A turn that ended with tool results gets its notice at the end of the last result (after
    ``NOTICE_SEPARATOR``); a turn that ended without a tool call, or whose last result failed
    or is not plain text, gets it as a user message.
    Either message's metadata names it: ``{"inspect_swarm": {"type": "notice", "id": "n-1",
    ...}}``.  Read a log's messages with their attachments resolved
    (``resolve_sample_attachments``): Inspect keeps a long text as an attachment.
    """
    meta = (message.metadata or {}).get(INFO_SOURCE)
    if not isinstance(meta, dict) or meta.get("type") != "notice":
        return None
    text = message.text
    if message.role == "user" and text.startswith(NOTICE_PREFIX):
        return text
    # the notice is last: a tool result (or an agent's own continue message) comes before it
    at = text.rfind(NOTICE_SEPARATOR + NOTICE_PREFIX)
    return None if at < 0 else text[at + len(NOTICE_SEPARATOR) :]
