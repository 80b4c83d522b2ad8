"""Generate docs/hooks.md, the hook reference, from swarm/hookspecs.py.

The page is built from the module's source: its docstring, its comment banners (one section per
banner), and each ``swarm_*`` hook's signature and docstring.  Whether a hook is ``firstresult``
is read from the options pluggy's ``HookspecMarker`` attached to it.  The record types named in
the hook signatures are listed at the end, with their fields.

Usage::

    python scripts/gen_hook_docs.py           # write docs/hooks.md
    python scripts/gen_hook_docs.py --check   # exit 1 if docs/hooks.md is out of date
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODULE = "swarm.hookspecs"
OUTPUT = ROOT / "docs" / "hooks.md"

_BANNER_RULE = re.compile(r"^# -{10,}\s*$")
_BANNER_TITLE = re.compile(r"^# (\S.*?)\s*$")
_FIELD = re.compile(r"^:(param\s+(?P<param>\w+)|returns?|raises?\s+\w+):\s*(?P<text>.*)$")
_VERSION = re.compile(r"^\.\. (versionadded|versionchanged|deprecated):: (?P<version>\S+)\s*(.*)$")
_LITERAL = re.compile(r"``(.+?)``")


def _md(text: str) -> str:
    """reStructuredText inline markup to Markdown (only ``literal`` needs changing)."""
    return _LITERAL.sub(r"`\1`", text)


def render_docstring(doc: str) -> str:
    """A hook docstring as Markdown: prose, then Parameters, Returns and version lines."""
    prose: list[str] = []
    params: list[tuple[str, str]] = []
    returns: str | None = None
    versions: list[str] = []
    current: str | None = None  # the field whose indented continuation lines come next
    for line in doc.splitlines():
        stripped = line.strip()
        field = _FIELD.match(stripped)
        version = _VERSION.match(stripped)
        if field:
            if field.group("param"):
                params.append((field.group("param"), field.group("text")))
                current = "param"
            elif stripped.startswith(":return"):
                returns = field.group("text")
                current = "return"
            else:  # :raises X: is kept as prose
                prose.append(stripped)
                current = None
        elif version:
            kind = {
                "versionadded": "Added in version",
                "versionchanged": "Changed in version",
                "deprecated": "Deprecated since version",
            }[version.group(1)]
            rest = version.group(3).strip()
            versions.append(f"*{kind} {version.group('version')}.*" + (f" {rest}" if rest else ""))
            current = None
        elif current is not None and stripped and line.startswith((" ", "\t")):
            if current == "param":
                name, text = params[-1]
                params[-1] = (name, f"{text} {stripped}")
            else:
                returns = f"{returns} {stripped}"
        else:
            current = None
            prose.append(line)
    while prose and not prose[-1].strip():
        prose.pop()
    out = [_md("\n".join(prose)).strip()]
    if params:
        out.append(
            "**Parameters**\n\n" + "\n".join(f"- `{name}`: {_md(text)}" for name, text in params)
        )
    if returns is not None:
        out.append(f"**Returns:** {_md(returns)}")
    out.extend(versions)
    return "\n\n".join(part for part in out if part)


def _banners(source: str) -> list[tuple[int, str]]:
    """(line number, title) of every comment banner: a title line between two rule lines."""
    lines = source.splitlines()
    found = []
    for i in range(1, len(lines) - 1):
        title = _BANNER_TITLE.match(lines[i])
        if (
            title
            and _BANNER_RULE.match(lines[i - 1])
            and _BANNER_RULE.match(lines[i + 1])
            and not _BANNER_RULE.match(lines[i])
        ):
            found.append((i + 1, title.group(1)))
    return found


def _signature(node: ast.FunctionDef) -> str:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"def {node.name}({ast.unparse(node.args)}){returns}"


def _names_in(node: ast.AST | None) -> Iterator[str]:
    if node is None:
        return
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id


def _default(value: ast.expr | None) -> str:
    """`` = <default>`` for a field, reading ``attrs.field(default=..., factory=...)``."""
    if value is None:
        return ""
    if isinstance(value, ast.Call) and ast.unparse(value.func) in ("attrs.field", "field"):
        for kw in value.keywords:
            if kw.arg == "default":
                return f" = {ast.unparse(kw.value)}"
            if kw.arg == "factory":
                return f" = {ast.unparse(kw.value)}()"
        return ""
    return f" = {ast.unparse(value)}"


def _is_property(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Name) and decorator.id == "property"


def _spec_opts(module: Any, name: str) -> dict[str, object]:
    project = module.hookspec.project_name
    opts = getattr(getattr(module, name), f"{project}_spec", None)
    if opts is None:
        raise SystemExit(f"{MODULE}.{name} is not marked with @hookspec")
    return dict(opts)


class _Types:
    """Classes and type aliases of the hook module and of the swarm modules it imports from."""

    def __init__(self, tree: ast.Module) -> None:
        self.where: dict[str, tuple[str, list[ast.stmt], int]] = {}
        self._index(tree)
        for node in ast.walk(tree):  # top level and `if TYPE_CHECKING:` blocks alike
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("swarm."):
                spec = importlib.util.find_spec(node.module)
                if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
                    continue
                self._index(ast.parse(Path(spec.origin).read_text()), node.module)

    def _index(self, tree: ast.Module, module: str = MODULE) -> None:
        for i, node in enumerate(tree.body):
            name = None
            if isinstance(node, ast.ClassDef):
                name = node.name
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and target.id[:1].isupper():
                    name = target.id
            if name and not name.startswith("_") and name not in self.where:
                self.where[name] = (module, tree.body, i)

    def render(self, name: str, exported: set[str]) -> tuple[str, set[str]]:
        """Markdown for one type, and the names its fields mention."""
        module, body, i = self.where[name]
        where = (
            f"Import: `from swarm import {name}`."
            if name in exported
            else f"Defined in `{module}`; not exported from `swarm`."
        )
        node = body[i]
        mentioned: set[str] = set()
        if isinstance(node, ast.Assign):
            doc = ""
            after = body[i + 1] if i + 1 < len(body) else None
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                doc = inspect.cleandoc(str(after.value.value))
            mentioned.update(_names_in(node.value))
            text = f"### `{name}`\n\n```python\n{ast.unparse(node)}\n```\n\n{where}"
            return (text + (f"\n\n{_md(doc)}" if doc else "")), mentioned
        assert isinstance(node, ast.ClassDef)
        doc = ast.get_docstring(node) or ""
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        head = f"class {name}({bases})" if bases else f"class {name}"
        fields: list[str] = []
        members: list[str] = []
        call: ast.FunctionDef | None = None
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                default = _default(item.value)
                fields.append(f"{item.target.id}: {ast.unparse(item.annotation)}{default}")
                mentioned.update(_names_in(item.annotation))
            elif isinstance(item, ast.FunctionDef) and item.name == "__call__":
                call = item
            elif isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                summary = (ast.get_docstring(item) or "").split("\n\n")[0].replace("\n", " ")
                if any(_is_property(d) for d in item.decorator_list):
                    members.append(f"- `{item.name}` (property): {_md(summary)}")
                else:
                    args = ast.unparse(item.args).removeprefix("self").lstrip(", ")
                    members.append(f"- `{item.name}({args})`: {_md(summary)}")
        if call is not None:
            code = f"{head}:\n    {_signature(call)}: ..."
            mentioned.update(_names_in(call.args))
        elif fields:
            code = f"{head}:\n" + "\n".join(f"    {f}" for f in fields)
        else:
            code = head
        parts = [f"### `{name}`", f"```python\n{code}\n```", where]
        if doc:
            parts.append(_md(doc))
        if members:
            parts.append("\n".join(members))
        return "\n\n".join(parts), mentioned


def generate() -> str:
    """The text of docs/hooks.md."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    module = importlib.import_module(MODULE)
    path = Path(inspect.getfile(module))
    source = path.read_text()
    tree = ast.parse(source)
    banners = _banners(source)

    groups: list[tuple[str, list[ast.FunctionDef]]] = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("swarm_")):
            continue
        above = [title for line, title in banners if line < node.lineno]
        title = above[-1] if above else "Hooks"
        if not groups or groups[-1][0] != title:
            groups.append((title, []))
        groups[-1][1].append(node)

    out = [
        "<!-- Generated by scripts/gen_hook_docs.py from swarm/hookspecs.py; do not edit. -->",
        "",
        "# Hook reference",
        "",
        "Generated from the signatures and docstrings in `swarm/hookspecs.py`. "
        "[plugins.md](plugins.md) shows how to write and register a plugin.",
        "",
        _md(inspect.cleandoc(ast.get_docstring(tree) or "")),
        "",
        "## Summary",
        "",
        "| Hook | Kind | firstresult |",
        "|---|---|---|",
    ]
    for title, nodes in groups:
        kind = title.split(":", 1)[0].strip()
        for node in nodes:
            first = "yes" if _spec_opts(module, node.name).get("firstresult") else "no"
            out.append(f"| [`{node.name}`](#{node.name}) | {kind} | {first} |")
    out.append("")
    mentioned: set[str] = set()
    for title, nodes in groups:
        kind, _, note = title.partition(":")
        out += [f"## {kind.strip()}", ""]
        if note.strip():
            out += [f"*{note.strip()[:1].upper()}{note.strip()[1:]}.*", ""]
        for node in nodes:
            opts = _spec_opts(module, node.name)
            flags = [f"firstresult: {'yes' if opts.get('firstresult') else 'no'}"]
            if opts.get("historic"):
                flags.append("historic: yes")
            out += [
                f"### `{node.name}`",
                "",
                "```python",
                "@hookspec" + ("(firstresult=True)" if opts.get("firstresult") else ""),
                _signature(node),
                "```",
                "",
                "; ".join(flags),
                "",
                render_docstring(ast.get_docstring(node) or "*Undocumented.*"),
                "",
            ]
            mentioned.update(_names_in(node.args))
            mentioned.update(_names_in(node.returns))

    types = _Types(tree)
    exported = set(importlib.import_module("swarm").__all__)
    rendered: dict[str, str] = {}
    todo = sorted(n for n in mentioned if n in types.where)
    while todo:
        name = todo.pop()
        if name in rendered:
            continue
        text, more = types.render(name, exported)
        rendered[name] = text
        todo.extend(sorted(n for n in more if n in types.where and n not in rendered))
    if rendered:
        out += [
            "## Types used by the hooks",
            "",
            "Records are frozen attrs classes: a plugin reads them and returns new ones "
            "(`attrs.evolve` makes a changed copy).",
            "",
        ]
        for name in sorted(rendered):
            out += [rendered[name], ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write docs/hooks.md, or with ``--check`` report whether it is up to date."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="default: docs/hooks.md")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        current = args.output.read_text() if args.output.exists() else None
        if current != text:
            print(
                f"{args.output} is out of date: run python scripts/gen_hook_docs.py",
                file=sys.stderr,
            )
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
