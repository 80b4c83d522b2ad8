"""Every hook is typed and documented, the hook reference covers it, and ``__all__`` is complete."""

from __future__ import annotations

import ast
import inspect
import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy
import pytest

import swarm
import swarm.agent_image
import swarm.analysis
import swarm.diagnosis
import swarm.testing
from swarm import hookspecs

ROOT = Path(__file__).resolve().parent.parent
HOOKS_MD = ROOT / "docs" / "hooks.md"
# a mkdocstrings directive rendering one object: "::: swarm.hookspecs.swarm_start"
DIRECTIVE = re.compile(r"^::: (\S+)\s*$", re.MULTILINE)
FIRSTRESULT_SENTENCE = "Stops at first non-None result"

HOOKS: dict[str, Callable[..., Any]] = {
    name: func
    for name, func in vars(hookspecs).items()
    if name.startswith("swarm_") and inspect.isfunction(func)
}


def _pm() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _doc(name: str) -> str:
    doc = inspect.getdoc(HOOKS[name])
    assert doc, f"hook {name} has no docstring"
    return doc


def test_there_are_hooks() -> None:
    assert len(HOOKS) >= 10


def test_every_hook_function_is_a_hookspec() -> None:
    assert set(HOOKS) == {name for name in vars(_pm().hook) if name.startswith("swarm_")}


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_has_docstring_with_summary(name: str) -> None:
    summary = _doc(name).splitlines()[0]
    assert summary.strip(), f"hook {name}: the docstring should open with a one-line summary"


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_has_return_annotation(name: str) -> None:
    sig = inspect.signature(HOOKS[name])
    assert sig.return_annotation is not inspect.Signature.empty, (
        f"hook {name} has no return annotation"
    )


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_arguments_are_annotated(name: str) -> None:
    for param in inspect.signature(HOOKS[name]).parameters.values():
        assert param.annotation is not inspect.Parameter.empty, (
            f"hook {name}: argument {param.name!r} has no annotation"
        )


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_documents_every_argument(name: str) -> None:
    doc = _doc(name)
    documented = re.findall(r"^:param (\w+):", doc, re.MULTILINE)
    arguments = list(inspect.signature(HOOKS[name]).parameters)
    missing = [a for a in arguments if a not in documented]
    assert not missing, f"hook {name}: no ':param {missing[0]}:' line in its docstring"
    unknown = [d for d in documented if d not in arguments]
    assert not unknown, f"hook {name}: ':param {unknown[0]}:' documents no argument"


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_documents_its_return(name: str) -> None:
    assert re.search(r"^:returns?:", _doc(name), re.MULTILINE), (
        f"hook {name}: no ':return:' line in its docstring"
    )


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_firstresult_hooks_say_so(name: str) -> None:
    caller = getattr(_pm().hook, name)
    assert caller.spec is not None
    firstresult = bool(caller.spec.opts.get("firstresult"))
    says = FIRSTRESULT_SENTENCE in " ".join(_doc(name).split())
    if firstresult:
        assert says, f"firstresult hook {name} should say {FIRSTRESULT_SENTENCE!r}"
    else:
        assert not says, f"hook {name} is not firstresult but says {FIRSTRESULT_SENTENCE!r}"


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_firstresult_hooks_are_sync(name: str) -> None:
    caller = getattr(_pm().hook, name)
    assert caller.spec is not None
    if caller.spec.opts.get("firstresult"):
        assert not inspect.iscoroutinefunction(HOOKS[name]), (
            f"firstresult hook {name} must not be async (a coroutine is never None)"
        )


def test_hook_reference_renders_every_hook() -> None:
    # docs/hooks.md is rendered by mkdocstrings: one directive per hook, grouped by kind (the site
    # build, test_docs_site.py, checks that each becomes a section of the page)
    rendered = DIRECTIVE.findall(HOOKS_MD.read_text())
    assert rendered[0] == "swarm.hookspecs"  # the module's docstring: the four kinds
    hooks = [name.removeprefix("swarm.hookspecs.") for name in rendered[1:]]
    assert len(hooks) == len(set(hooks)), "docs/hooks.md renders a hook twice"
    assert set(hooks) == set(HOOKS), (
        f"docs/hooks.md lacks {sorted(set(HOOKS) - set(hooks))}, "
        f"or renders what is not a hook: {sorted(set(hooks) - set(HOOKS))}"
    )


def _public_names(module: types.ModuleType) -> set[str]:
    """Names a package's ``__init__.py`` defines or imports, except private ones and modules."""
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {
        name
        for name in names
        if not name.startswith("_")
        and name != "annotations"  # from __future__ import annotations
        and not isinstance(getattr(module, name, None), types.ModuleType)
    }


@pytest.mark.parametrize(
    "module",
    [swarm, swarm.testing, swarm.diagnosis, swarm.analysis, swarm.agent_image],
    ids=lambda m: m.__name__,
)
def test_all_is_complete(module: types.ModuleType) -> None:
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{module.__name__}.__all__ has duplicates"
    missing = sorted(_public_names(module) - set(exported))
    assert not missing, f"{module.__name__}.__all__ lacks {missing}"
    absent = sorted(name for name in exported if not hasattr(module, name))
    assert not absent, f"{module.__name__}.__all__ lists names that do not exist: {absent}"
