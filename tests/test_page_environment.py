"""The docs checker's environment for a page: swarm-eval's base install plus what the page says
to install (tests/page_env.py, tests/page_site/sitecustomize.py).  Before it, every page ran
with every extra of the test environment, so a page that needed inspect-flow or matplotlib
passed its check and failed for a reader after the README's ``pip install -e .``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.page_env import allowed, closure, declared, environment, hidden
from tests.test_docs_checker import checker

PROBE = """
import importlib.metadata as md
import importlib.util
import json
out = {"spec": importlib.util.find_spec("openai") is not None}
try:
    import openai  # noqa: F401
    out["import"] = "ok"
except ModuleNotFoundError as ex:
    out["import"] = f"{type(ex).__name__}: {ex} ({ex.name})"
try:
    md.version("openai")
    out["version"] = "found"
except md.PackageNotFoundError:
    out["version"] = "missing"
out["entry_points"] = sorted(ep.value for ep in md.entry_points(group="inspect_ai"))
out["swarm"] = importlib.util.find_spec("swarm") is not None
print(json.dumps(out))
"""


def _probe(text: str) -> dict[str, object]:
    import json

    env = dict(os.environ, **environment(text))
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def test_a_page_that_declares_nothing_has_only_the_base_install() -> None:
    seen = _probe("# A page\n\nNothing to install.\n")
    assert seen == {
        "spec": False,
        "import": "ModuleNotFoundError: No module named 'openai' (openai)",
        "version": "missing",
        # inspect-scout and inspect-swe register inspect_ai entry points too: hidden with them
        "entry_points": [
            "swarm._entry_point",
            "swarm.plugins.scorers.fanout._inspect_registry",
        ],
        "swarm": True,
    }


def test_a_page_that_declares_the_bridge_extra_has_openai() -> None:
    page = '# Bridged\n\n> Needs `pip install -e ".[bridge]"` (the OpenAI SDK).\n\n## Use\n'
    assert declared(page) == 'pip install -e ".[bridge]"'
    seen = _probe(page)
    assert (seen["spec"], seen["import"], seen["version"]) == (True, "ok", "found")


def test_a_declaration_below_the_first_section_does_not_count() -> None:
    page = '# Late\n\n## First\n\n> Needs `pip install -e ".[bridge]"`\n'
    assert declared(page) is None
    assert "openai" not in allowed(page)


def test_a_pip_install_line_in_a_block_counts_for_the_page() -> None:
    page = "# Testing\n\n```bash\npip install pytest\n```\n"
    assert "pytest" in allowed(page)
    assert "pytest" not in allowed("# Bare\n")


def test_what_is_hidden_is_what_the_extras_add_and_never_the_base() -> None:
    base = closure("swarm-eval")
    assert {"inspect-ai", "pyyaml", "pluggy"} <= base
    dists, modules = hidden("# Bare\n")
    assert not dists & base
    # the extras of the test environment: flow, matplotlib, scout, openai, pandas, pytest
    assert {"inspect-flow", "matplotlib", "inspect-scout", "openai", "pandas", "pytest"} <= dists
    assert {"inspect_flow", "matplotlib", "inspect_scout", "openai", "pandas", "pytest"} <= modules
    assert "inspect_ai" not in modules and "yaml" not in modules
    experiments = '# E\n\n> Needs `pip install -e ".[experiments]"`\n'
    dists, modules = hidden(experiments)
    assert "inspect-flow" not in dists and "matplotlib" not in dists
    assert "openai" in dists


def test_a_page_that_uses_an_extra_it_does_not_declare_fails_its_check(
    tmp_path: Path,
) -> None:
    block = checker.Block(language="python", body="import matplotlib\n", line=3)
    with pytest.raises(checker.BlockFailed, match="ModuleNotFoundError: No module named"):
        checker.run_block(block, tmp_path, "page.md", environment("# Plot\n"))
    # declared, the same block runs
    page = '# Plot\n\n> Needs `pip install -e ".[experiments]"`\n'
    checker.run_block(block, tmp_path, "page.md", environment(page))
