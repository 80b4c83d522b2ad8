"""The kernel's layers, checked on its import graph (every import counts: ``TYPE_CHECKING`` ones
and those inside functions too).

Lowest first: ``_inspect`` (Inspect's private API, which the exceptions build on) < the
contract (errors, records, serialization, hookspecs, the stored records' schemas) < ``_hooks``
(plugin machinery) < ``_spec`` (what to run) < ``_accounts`` (what it costs) < ``_report``
(record builders) < ``_run`` (one sample's runtime) < ``_faces`` (the agent, ``swarm/worker``,
the ``bwrap`` provider) < the public package < the tools built on it (``demo``, ``testing``,
``analysis``, ``timeline``, ``experiments``, ``diagnosis``) < the CLI <
the ``inspect_ai`` entry point (``_entry_point``, which registers them all) < the built-in plugins.
A module imports only its own layer and lower ones, no module is on an import cycle, the
built-in plugins import only the public ``swarm`` package, and the hookspecs only the contract.
docs/architecture.md draws the same picture.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("inspect", ("swarm._inspect",)),
    (
        "contract",
        (
            "swarm.errors",
            "swarm.records",
            "swarm.serialization",
            "swarm.hookspecs",
            "swarm._checks",
            "swarm._schemas",
        ),
    ),
    ("hooks", ("swarm._hooks",)),
    ("spec", ("swarm._spec",)),
    ("accounts", ("swarm._accounts",)),
    ("report", ("swarm._report",)),
    ("run", ("swarm._run",)),
    ("faces", ("swarm._faces",)),
    ("api", ("swarm",)),
    (
        "tools",
        (
            "swarm.demo",
            "swarm.testing",
            "swarm.analysis",
            "swarm.timeline",
            "swarm.experiments",
            "swarm.diagnosis",
            "swarm.agent_image",
        ),
    ),
    ("cli", ("swarm.cli",)),
    ("entry point", ("swarm._entry_point",)),
    ("plugins", ("swarm.plugins",)),
]
CONTRACT = LAYERS[1][1]


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the distribution by its import name (``plugins/`` is ``swarm.plugins``)."""
    found: dict[str, Path] = {}
    for top, package in (("swarm", "swarm"), ("plugins", "swarm.plugins")):
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root / top).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def imports_of(name: str, path: Path, modules: Iterable[str]) -> set[str]:
    """The distribution's modules that ``name`` imports, wherever the import statement is."""
    known = set(modules)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import mod`` imports the module pkg.mod when there is one
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def layer_of(module: str) -> int:
    """The index of ``module``'s layer (its longest matching prefix)."""
    best, best_len = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best >= 0, f"{module} belongs to no layer: add it to LAYERS and the architecture page"
    return best


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every import cycle (strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Every broken rule of the layering, as a sentence."""
    problems = [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if module.startswith("swarm.plugins"):
                if target != "swarm" and not target.startswith("swarm.plugins"):
                    problems.append(f"{module} imports {target}: plugins use only `swarm`")
                continue
            if layer_of(target) > layer_of(module):
                problems.append(
                    f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                    f"({LAYERS[layer_of(target)][0]}), a higher layer"
                )
        if module == "swarm.hookspecs":
            for target in targets - set(CONTRACT):
                problems.append(f"swarm.hookspecs imports {target}: it may use only the contract")
    return problems


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = module_files(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_the_kernel_and_plugins_keep_their_layers() -> None:
    graph = import_graph(ROOT)
    assert len(graph) > 60  # the walk found the tree
    assert violations(graph) == []


def test_every_module_is_in_a_layer() -> None:
    for module in import_graph(ROOT):
        layer_of(module)


def test_a_back_import_is_caught_in_a_copy_of_the_tree(tmp_path: Path) -> None:
    for top in ("swarm", "plugins"):
        shutil.copytree(ROOT / top, tmp_path / top)
    accounts = tmp_path / "swarm" / "_accounts" / "accounts.py"
    accounts.write_text(
        accounts.read_text() + "\n\nif TYPE_CHECKING:\n    from swarm._run.engine import SwarmRun\n"
    )
    problems = violations(import_graph(tmp_path))
    assert (
        "swarm._accounts.accounts (accounts) imports swarm._run.engine (run), a higher layer"
        in (problems)
    )
    # and the engine imports the accounts: the back-import closes a cycle too
    assert any(p.startswith("import cycle:") and "swarm._run.engine" in p for p in problems)


def test_the_rules_on_a_synthetic_graph() -> None:
    graph = {
        "swarm.records": set(),
        "swarm.hookspecs": {"swarm.records", "swarm._hooks.calls"},
        "swarm._hooks.calls": {"swarm.records"},
        "swarm._spec.roster": {"swarm._run.engine"},
        "swarm._run.engine": {"swarm._spec.roster"},
        "swarm.plugins.channels.x": {"swarm", "swarm._run.bus"},
        "swarm": set(),
        "swarm._run.bus": set(),
    }
    assert violations(graph) == [
        "import cycle: swarm._run.engine -> swarm._spec.roster",
        "swarm._spec.roster (spec) imports swarm._run.engine (run), a higher layer",
        "swarm.hookspecs (contract) imports swarm._hooks.calls (hooks), a higher layer",
        "swarm.hookspecs imports swarm._hooks.calls: it may use only the contract",
        "swarm.plugins.channels.x imports swarm._run.bus: plugins use only `swarm`",
    ]


def test_a_face_importing_a_higher_face_is_caught() -> None:
    # the Inspect agent may not use the CLI, nor the public package its own faces: only the entry
    # point (the top) brings them together
    graph = {
        "swarm._faces.agent": {"swarm.cli", "swarm"},
        "swarm.testing._scripted": {"swarm.cli._errors"},
        "swarm._entry_point": {"swarm.cli", "swarm.demo", "swarm._faces.agent"},
        "swarm.cli": set(),
        "swarm.cli._errors": set(),
        "swarm.demo": set(),
        "swarm": set(),
    }
    assert violations(graph) == [
        "swarm._faces.agent (faces) imports swarm (api), a higher layer",
        "swarm._faces.agent (faces) imports swarm.cli (cli), a higher layer",
        "swarm.testing._scripted (tools) imports swarm.cli._errors (cli), a higher layer",
    ]


@pytest.mark.parametrize("folder", ["_run"])
def test_no_runtime_module_is_over_400_lines(folder: str) -> None:
    sizes = {
        p.name: len(p.read_text().splitlines()) for p in (ROOT / "swarm" / folder).glob("*.py")
    }
    assert {name: n for name, n in sizes.items() if n > 420} == {}


def test_only_the_engine_imports_the_engine() -> None:
    graph = import_graph(ROOT)
    importers = {m for m, targets in graph.items() if "swarm._run.engine" in targets}
    assert importers <= {"swarm._faces.agent"}, importers
