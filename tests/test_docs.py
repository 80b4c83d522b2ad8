"""The documentation's shape: every block says what it is, every example is shown running, the
onboarding steps are right, and the links resolve.

The code blocks themselves are run by ``conftest.py`` at the repository's root (one test per
page of README.md and docs/*.md, its blocks in order in one directory): each ``console`` block's
commands against the whole output shown and their exit statuses, each ``python`` program, each
fragment compiled; test_docs_checker.py tests that checker.  The site is built in
test_docs_site.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points, packages_distributions
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from tests.page_env import closure, installed_by

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
README = ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
GUIDE = [*PAGES, README]
# pages whose anchors mkdocstrings makes (the Markdown holds directives, not headings)
GENERATED = {DOCS / "hooks.md", *DOCS.glob("reference/*.md")}
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(
    r"^(?P<fence>```+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
ACTIVATE = "source .venv/bin/activate"


def _blocks(page: Path) -> list[tuple[str, str, int]]:
    """(language, body, line) of every fenced code block of a page."""
    text = page.read_text()
    return [
        (m.group("info").strip(), m.group("body"), text.count("\n", 0, m.start()) + 1)
        for m in FENCE.finditer(text)
    ]


def _commands() -> list[str]:
    """Every command of every console block, in README.md and the guide."""
    found = []
    for page in GUIDE:
        for language, body, _ in _blocks(page):
            if language == "console":
                found += [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    return found


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.name)
def test_every_code_block_says_what_it_is(page: Path) -> None:
    # a block with no language is neither run nor checked: output shown in one would drift
    for language, body, line in _blocks(page):
        assert language, f"{page.name}:{line}: a code block with no language"
        # a markdown block shows a page's source (docs/index.md#writing-the-docs), blocks and all
        if language not in ("console", "markdown"):
            prompts = [x for x in body.splitlines() if x.startswith("$ ")]
            assert not prompts, (
                f"{page.name}:{line}: a {language} block shows the command {prompts[0]!r}; "
                "make it a console block, with the command's output, so that it is checked"
            )


def test_every_tool_a_page_runs_is_installed_first() -> None:
    # a console block's `python -m MODULE` or console script (`pytest`, `mkdocs`) must come with
    # swarm-eval, or be installed by a `pip install` line earlier on the same page (pytest once
    # was not: testing.md ran `python -m pytest` after a quick start that never installs it)
    base = closure("swarm-eval")
    scripts = {ep.name: ep.dist.name for ep in entry_points(group="console_scripts") if ep.dist}
    modules = packages_distributions()
    for page in GUIDE:
        installed = set(base)
        for language, body, line in _blocks(page):
            for text in body.splitlines():
                if re.match(r"^(\$ )?pip install ", text):
                    installed |= installed_by(text.removeprefix("$ "))
            if language != "console":
                continue
            for command in (x[2:] for x in body.splitlines() if x.startswith("$ ")):
                words = command.split()
                if words[:2] == ["python", "-m"]:
                    needed = modules.get(words[2].split(".")[0], [])
                else:
                    needed = [scripts[words[0]]] if words[0] in scripts else []
                for dist in needed:
                    assert canonicalize_name(dist) in installed, (
                        f"{page.name}:{line}: `{command}` needs {dist}, which swarm-eval does "
                        "not install and no `pip install` above it on the page does"
                    )


def test_every_example_is_shown_running() -> None:
    commands = " ".join(_commands())
    scripts = sorted(EXAMPLES.glob("*.py"))
    assert len(scripts) >= 20
    missing = [p.name for p in scripts if f"docs/examples/{p.name}" not in commands]
    assert not missing, f"no console block of the docs runs {missing}"
    assert "python -m pytest docs/examples/plugin_tests" in commands


@pytest.mark.parametrize(
    "page",
    [
        p
        for p in PAGES
        if p.name
        not in (
            "index.md",
            "hooks.md",
            "architecture.md",
            "inspect-versions.md",
            "mutation.md",
            "mutation-records.md",
            "mutation-accounting.md",
            "mutation-channels.md",
            "mutation-waits.md",
            "mutation-board.md",
            "mutation-spawning.md",
            "mutation-messages.md",
            "mutation-fanout.md",
        )
    ],
    ids=lambda p: p.name,
)
def test_feature_pages_point_to_a_runnable_example(page: Path) -> None:
    linked = re.findall(r"\]\(examples/([\w/]+\.py)\)", page.read_text())
    assert linked, f"{page.name} links no runnable example in docs/examples/"
    for name in linked:
        assert (EXAMPLES / name).is_file(), f"{page.name}: no docs/examples/{name}"


def test_index_links_every_page() -> None:
    text = (DOCS / "index.md").read_text()
    for page in [*PAGES, *DOCS.glob("reference/*.md")]:
        if page.name != "index.md":
            target = page.relative_to(DOCS).as_posix()
            assert f"({target}" in text, f"index.md does not link {target}"


def _anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as MkDocs (Python-Markdown's toc) makes them."""
    from markdown.extensions.toc import slugify

    text = FENCE.sub("", page.read_text())
    return {slugify(m.group(1), "-") for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


@pytest.mark.parametrize("page", [*GUIDE, ROOT / "benchmarks" / "README.md"], ids=str)
def test_relative_links_resolve(page: Path) -> None:
    # in the repository, as GitHub shows the Markdown; the site build checks the site's links
    text = FENCE.sub("", page.read_text())
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: link {target!r} points to a missing file"
        if anchor and resolved.suffix == ".md" and resolved not in GENERATED:
            assert anchor in _anchors(resolved), f"{page.name}: no heading for {target!r}"


# ----------------------------------------------------------------------------------------------
# Onboarding (issue 13, point 6)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", [README, DOCS / "quickstart.md"], ids=lambda p: p.name)
def test_install_steps_activate_the_virtualenv_first(page: Path) -> None:
    # without activation `inspect` and `swarm` are "command not found" after the install
    lines = [
        line.split("#")[0].strip() for _, body, _ in _blocks(page) for line in body.splitlines()
    ]
    assert ACTIVATE in lines, f"{page.name} never says {ACTIVATE!r}"
    first_use = next(
        i for i, line in enumerate(lines) if re.match(r"^(\$ )?(swarm|inspect) ", line)
    )
    assert lines.index(ACTIVATE) < first_use, f"{page.name} uses a command before activating"


def test_readme_and_quickstart_name_one_test_command() -> None:
    """Before: the README said `bash scripts/test.sh`, the quickstart `bash .ci/run` (issue 42)."""

    def commands(page: Path) -> set[str]:
        lines = {line.strip() for _, body, _ in _blocks(page) for line in body.splitlines()}
        return {line for line in lines if line.startswith("bash ")}

    assert commands(README) == commands(DOCS / "quickstart.md") == {"bash scripts/test.sh"}


def test_plugins_page_names_every_built_in_plugin() -> None:
    ours = sorted(ep.name for ep in entry_points(group="swarm") if ep.dist.name == "swarm-eval")
    assert len(ours) == 8
    text = " ".join((DOCS / "plugins.md").read_text().split())
    sentence = re.search(r"swarm-eval declares its own (\w+) plugins.*?\.(?= |$)", text)
    assert sentence, "plugins.md does not say which plugins swarm-eval declares"
    assert sentence.group(1) == "eight"
    assert sorted(re.findall(r"`(\w+)`", sentence.group(0))) == ours


def test_plugins_page_shows_a_complete_pyproject() -> None:
    blocks = _blocks(DOCS / "plugins.md")
    toml_blocks = [body for language, body, _ in blocks if language == "toml"]
    assert len(toml_blocks) == 1
    project = tomllib.loads(toml_blocks[0])
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    assert project["project"]["name"] == "my-package"
    assert "version" in project["project"]
    assert "swarm-eval" in project["project"]["dependencies"]
    assert project["project"]["entry-points"]["swarm"] == {"my_plugin": "my_package.swarm_plugin"}
    assert project["tool"]["setuptools"]["packages"] == ["my_package"]
    # the module the entry point names is the plugin module the page shows
    modules = [body for language, body, _ in blocks if language == "python"]
    assert modules[0].startswith("# my_package/swarm_plugin.py\n")
    assert "def swarm_register_controllers(" in modules[0]


def test_analysis_example_explains_a_missing_pandas(tmp_path: Path) -> None:
    # a pandas that cannot be imported, ahead of the real one
    fake = tmp_path / "no_pandas" / "pandas"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'pandas\'", name="pandas")\n'
    )
    env = dict(os.environ, PYTHONPATH=str(fake.parent), INSPECT_LOG_DIR=str(tmp_path / "logs"))
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "analysis_columns.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        'samples_df() with SwarmColumns needs pandas: pip install "swarm-eval[analysis]"  '
        '(or "pandas>=2.1.0" "pyarrow>=10.0.1")\n'
    )


@pytest.mark.parametrize(
    "page", [*GUIDE, *DOCS.glob("reference/*.md"), ROOT / "benchmarks" / "README.md"], ids=str
)
def test_pages_cite_no_issue_numbers(page: Path) -> None:
    # the issue tracker is the project's own: "issue 14" tells a reader of the site nothing
    found = re.findall(r"\bissues? \d+", page.read_text(), re.IGNORECASE)
    assert not found, f"{page.relative_to(ROOT)} cites {found}; say what changed instead"


def test_benchmarks_readme_cites_only_what_the_repository_has() -> None:
    text = (ROOT / "benchmarks" / "README.md").read_text()
    # the design document is not in the repository; what the suite measures against is here
    assert "the design" not in text.lower()
    assert "## Targets" in text
    for section in re.findall(r'the "([^"]+)" section', text):
        assert f"## {section}" in text, f"benchmarks/README.md cites a missing section {section!r}"
