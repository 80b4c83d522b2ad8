"""A griffe extension for the docs site: reST version directives in docstrings, as Markdown.

swarm/hookspecs.py's docstrings end with ``.. versionadded:: 0.1`` (and may carry
``.. versionchanged::`` or ``.. deprecated::``), which mkdocstrings would show as literal text.
This rewrites each such line as an italic sentence, "*Added in version 0.1.*", before rendering.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_DIRECTIVE = re.compile(
    r"^(?P<indent>[ \t]*)\.\. (?P<kind>versionadded|versionchanged|deprecated):: "
    r"(?P<version>\S+)[ \t]*(?P<rest>.*)$",
    re.MULTILINE,
)
_WORDS = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
}


def _sentence(match: re.Match[str]) -> str:
    rest = match.group("rest").strip()
    text = f"*{_WORDS[match.group('kind')]} {match.group('version')}.*"
    return match.group("indent") + (f"{text} {rest}" if rest else text)


class VersionDirectives(Extension):
    """Rewrite ``.. versionadded:: X`` (and its kin) in every docstring."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _DIRECTIVE.sub(_sentence, obj.docstring.value)
