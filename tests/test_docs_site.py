"""The docs site: it builds strictly, its references cover the public API and every hook, each
example has a page the guide links to, and nothing on it is fetched from elsewhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import swarm
import swarm.agent_image
import swarm.analysis
import swarm.diagnosis
import swarm.errors
import swarm.experiments
import swarm.records
import swarm.testing
import swarm.timeline
from swarm import hookspecs

ROOT = Path(__file__).resolve().parent.parent
HOOKS = sorted(name for name in vars(hookspecs) if name.startswith("swarm_"))
# the reference page of each public module
REFERENCE = {
    swarm.records: "reference/records",
    swarm.errors: "reference/errors",
    swarm.testing: "reference/testing",
    swarm.analysis: "reference/analysis",
    swarm.experiments: "reference/experiments",
    swarm.timeline: "reference/timeline",
    swarm.diagnosis: "reference/diagnosis",
    swarm.agent_image: "reference/agent_image",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built strictly: the one ``scripts/test.sh`` built before the tests
    (``SWARM_DOCS_SITE``), or a build of its own."""
    built = os.environ.get("SWARM_DOCS_SITE")
    if built and (Path(built) / "index.html").is_file():
        return Path(built)
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return out


def _page(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text()


def _ids(html: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html))


def test_hook_reference_has_a_section_for_every_hook(site: Path) -> None:
    ids = _ids(_page(site, "hooks"))
    missing = [name for name in HOOKS if f"swarm.hookspecs.{name}" not in ids]
    assert not missing, f"the hook reference has no section for {missing}"
    text = _page(site, "hooks")
    # the reST version notes are rendered, not shown as directives
    assert ".. versionadded::" not in text
    assert "Added in version 0.1." in text


@pytest.mark.parametrize("module", list(REFERENCE), ids=lambda m: m.__name__)
def test_module_reference_documents_all_of_it(site: Path, module: types.ModuleType) -> None:
    ids = _ids(_page(site, REFERENCE[module]))
    missing = [name for name in module.__all__ if f"{module.__name__}.{name}" not in ids]
    assert not missing, f"{REFERENCE[module]} does not document {missing}"


def test_swarm_reference_documents_all_of_it(site: Path) -> None:
    # swarm's own API on its page; what it re-exports from swarm.records and swarm.errors on
    # theirs
    ids = _ids(_page(site, "reference/swarm"))
    elsewhere = set(swarm.records.__all__) | set(swarm.errors.__all__)
    missing = [
        name
        for name in swarm.__all__
        if name != "__version__" and name not in elsewhere and f"swarm.{name}" not in ids
    ]
    assert not missing, f"reference/swarm does not document {missing}"


def test_every_example_has_a_page_the_guide_links_to(site: Path) -> None:
    examples = ROOT / "docs" / "examples"
    for path in [*examples.glob("*.py"), *examples.glob("*.yaml"), *examples.glob("*.toml")]:
        page = site / "examples" / path.name / "index.html"
        assert page.is_file(), f"no page for docs/examples/{path.name}"
        assert path.read_text().splitlines()[0] in page.read_text().replace("&quot;", '"')
    # on the site, the guide's links to an example file go to the example's page
    quickstart = _page(site, "quickstart")
    assert 'href="../examples/task.py/"' in quickstart
    assert 'href="examples/task.py"' not in quickstart


def test_nothing_on_the_site_is_fetched_from_elsewhere(site: Path) -> None:
    # no web fonts, scripts or style sheets from other hosts: the site reads offline
    for page in site.rglob("*.html"):
        html = page.read_text()
        fetched = re.findall(r'<(?:link|script)\b[^>]*\b(?:href|src)="(https?://[^"]+)"', html)
        assert not fetched, f"{page.relative_to(site)} loads {fetched}"
        assert "fonts.googleapis.com" not in html


def test_search_index_holds_the_guide_and_the_reference(site: Path) -> None:
    index = (site / "search" / "search_index.json").read_text()
    assert "swarm_on_submission" in index
    assert "Quickstart" in index


def test_the_test_command_keeps_its_fixtures_out_of_the_users_virtualenv() -> None:
    """The README's test command installs the test-only plugin distribution into a virtualenv
    of its own, never into the quick start's ``.venv`` (it once did, so ``swarm plugins`` listed
    the fixtures ``quorum`` and ``bulletin`` afterwards)."""
    readme = (ROOT / "README.md").read_text()
    script = (ROOT / "scripts" / "test.sh").read_text()
    user_venv = re.search(r"python3 -m venv (\S+)", readme)
    assert user_venv is not None and "bash scripts/test.sh" in readme
    default = re.search(r'^VENV="\$\{SWARM_TEST_VENV:-(\S+)\}"$', script, re.MULTILINE)
    assert default is not None, "scripts/test.sh chooses its virtualenv in one VENV= line"
    assert default.group(1) != user_venv.group(1)
    installs = [line for line in script.splitlines() if "-e tests/fixture_plugin" in line]
    assert installs and all(line.startswith('"$VENV/bin/python"') for line in installs)
    assert (ROOT / ".ci" / "run").read_text().count("scripts/test.sh") >= 1
