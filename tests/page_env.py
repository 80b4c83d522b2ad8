"""What a docs page may use: swarm-eval's base install plus what the page says to install.

A page says it at its top, in a line of the form

    > Needs `pip install -e ".[experiments]"` (...)

and any ``pip install`` line of its code blocks adds to it (testing.md shows ``pip install
pytest`` before it runs pytest).  The docs checker (conftest.py) runs the page's blocks with
every other installed distribution hidden (``tests/page_site/sitecustomize.py``), so a page that
needs an extra and does not say so fails its check, here as on a reader's machine after the
README's ``pip install -e .``.
"""

from __future__ import annotations

import re
import shlex
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution, distributions
from importlib.metadata import packages_distributions as _packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

SITE = Path(__file__).resolve().parent / "page_site"
# the line at a page's top that says what to install first, before its first section
NEEDS = re.compile(r"^> Needs `(?P<command>pip install [^`]+)`", re.M)
# what any virtualenv has, installed or not: the installer itself
ALWAYS = frozenset({"pip", "setuptools", "wheel"})


def closure(name: str, extras: frozenset[str] = frozenset()) -> set[str]:
    """The distributions installing ``name[extras]`` installs, itself included (canonical
    names)."""
    found: set[str] = set()
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(name, extras)]
    while todo:
        dist, wanted = todo.pop()
        key = canonicalize_name(dist)
        if (key, wanted) in seen:
            continue
        seen.add((key, wanted))
        found.add(key)
        try:
            requires = distribution(dist).requires or []
        except PackageNotFoundError:  # named on a page, not installed here
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or any(
                req.marker.evaluate({"extra": extra}) for extra in ("", *wanted)
            ):
                todo.append((req.name, frozenset(req.extras)))
    return found


def installed_by(line: str) -> set[str]:
    """The distributions a ``pip install ...`` line installs, by what it names: ``-e .`` and
    ``".[docs]"`` are swarm-eval (with that extra), anything else a requirement."""
    words = shlex.split(line.split("#")[0])
    found: set[str] = set()
    for word in words[words.index("install") + 1 :]:
        if word.startswith("-"):
            continue
        name = "swarm-eval" + word[1:] if word.startswith(".") else word
        req = Requirement(name)
        found |= closure(req.name, frozenset(req.extras))
    return found


def declared(text: str) -> str | None:
    """The ``pip install`` command a page's top says to run first, if it says one: the line must
    come before the page's first section (``## ``)."""
    top = text.split("\n## ", 1)[0]
    found = NEEDS.search(top)
    return found.group("command") if found else None


def allowed(text: str) -> set[str]:
    """The distributions a page may use: the base install, its declaration, its ``pip install``
    lines."""
    found = closure("swarm-eval") | ALWAYS
    command = declared(text)
    if command:
        found |= installed_by(command)
    for line in text.splitlines():
        line = line.strip().removeprefix("$ ")
        if line.startswith("pip install "):
            found |= installed_by(line)
    return found


@cache
def _installed() -> dict[str, set[str]]:
    """Each installed distribution's top-level modules (canonical name -> modules)."""
    modules: dict[str, set[str]] = {}
    for dist in distributions():
        modules.setdefault(canonicalize_name(dist.metadata["Name"]), set())
    for module, names in _packages_distributions().items():
        for name in names:
            modules.setdefault(canonicalize_name(name), set()).add(module)
    return modules


def hidden(text: str) -> tuple[set[str], set[str]]:
    """(distributions, top-level modules) a page's environment must not have."""
    ok = allowed(text)
    installed = _installed()
    dists = {name for name in installed if name not in ok}
    kept = {m for name in ok for m in installed.get(name, ())}
    modules = {m for name in dists for m in installed[name]} - kept
    return dists, modules


def environment(text: str) -> dict[str, str]:
    """The variables that give a page's interpreters only what it may use."""
    dists, modules = hidden(text)
    return {
        "PYTHONPATH": str(SITE),
        "SWARM_PAGE_HIDDEN": ",".join(sorted(dists)),
        "SWARM_PAGE_HIDDEN_MODULES": ",".join(sorted(modules)),
    }
