"""MkDocs hooks: each file in docs/examples/ becomes a page of the site showing its source.

The guide links to the examples as files (``[examples/task.py](examples/task.py)``), which is
what works when reading the Markdown in the repository.  On the site, each of those files gets a
generated page, ``examples/task.py/``, with the file's text highlighted and the command that runs
it, and every link to the file is pointed at that page.  The files themselves are left out of the
site (``exclude_docs`` in mkdocs.yml).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

EXAMPLES = "examples"
LANGUAGES = {".py": "python", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json"}
# a Markdown link or image target: ](target) or ](target#anchor)
_LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")


def _examples(docs_dir: Path) -> list[str]:
    """The example files, as paths relative to docs_dir (``examples/task.py``)."""
    root = docs_dir / EXAMPLES
    return sorted(
        path.relative_to(docs_dir).as_posix()
        for path in root.rglob("*")
        if path.is_file() and path.suffix in LANGUAGES and "__pycache__" not in path.parts
    )


def _how_to_run(relative: str) -> str:
    """How the reader runs an example, from the repository root."""
    path = f"docs/{relative}"
    if relative.startswith(f"{EXAMPLES}/plugin_tests/"):
        return f"Run it with `python -m pytest {posixpath.dirname(path)}`."
    if relative.endswith(".py"):
        return f"Run it with `python {path}`."
    return "A topology file: `swarm(config=...)` or `inspect eval ... -S config=...` reads it."


def _page(relative: str, text: str) -> str:
    name = relative.removeprefix(f"{EXAMPLES}/")
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    language = LANGUAGES[Path(relative).suffix]
    guide = posixpath.relpath("index.md", posixpath.dirname(relative))
    return (
        f"# {name}\n\n"
        f"`docs/{relative}` in the repository, run from the repository root. "
        f"{_how_to_run(relative)} The [guide]({guide}#examples) lists every example.\n\n"
        f"{fence}{language}\n{text.rstrip()}\n{fence}\n"
    )


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    """Add a generated page ``examples/<file>.md`` for each example file."""
    docs_dir = Path(config.docs_dir)
    for relative in _examples(docs_dir):
        text = (docs_dir / relative).read_text(encoding="utf-8")
        files.append(File.generated(config, f"{relative}.md", content=_page(relative, text)))
    return files


def on_page_markdown(markdown: str, *, page: Page, config: MkDocsConfig, **_: Any) -> str:
    """Point links to an example file at the example's page."""
    examples = set(_examples(Path(config.docs_dir)))
    here = posixpath.dirname(page.file.src_uri)

    def repoint(match: re.Match[str]) -> str:
        target = match.group("target")
        if "://" in target or target.startswith("/"):
            return match.group(0)
        if posixpath.normpath(posixpath.join(here, target)) not in examples:
            return match.group(0)
        return f"]({target}.md{match.group('anchor') or ''})"

    return _LINK.sub(repoint, markdown)
