#!/usr/bin/env bash
# Install everything into its own virtualenv and run the whole check: lint, types, tests (with
# the docs' code blocks), and a strict build of the docs site.
# Works on a fresh machine with Python 3.11+ and nothing else; offline after the install.
# The virtualenv is .venv-test (not the .venv the quick start makes): the suite installs a
# test-only plugin distribution (tests/fixture_plugin), which must not show up in your swarm.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${SWARM_TEST_VENV:-.venv-test}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e ".[dev,docs]" -e tests/fixture_plugin
# the agent CLI members' tests run Codex CLI and Claude Code in a Docker image: built where an
# engine answers, from npm packages fetched once (~/.cache/swarm-eval/agent-image), else the
# tests that need it are skipped and say so
if docker image inspect swarm-eval-base:bookworm >/dev/null 2>&1; then
  "$VENV/bin/swarm" agent-image >/dev/null || echo "test: no agent image built (above)" >&2
fi
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
"$VENV/bin/mypy"
# the docs site, into a scratch folder: a broken link, anchor or reference is an error
SITE="$(mktemp -d)"
trap 'rm -rf "$SITE"' EXIT
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --quiet --site-dir "$SITE"
export SWARM_DOCS_SITE="$SITE"  # the site tests (tests/test_docs_site.py) read this build
# no test may write into the checkout's logs/ (the quick start's log directory, which
# `inspect view` and samples_df("logs") show): the suite's evals log under a temp dir
listing() { find logs -printf '%p %s %T@\n' 2>/dev/null | sort || true; }
LOGS_BEFORE="$(listing)"
# three workers on two cores: much of a test's time is spent waiting (on subprocesses, on the
# Docker engine), and the Docker tests run on one worker in turn, first (tests/conftest.py)
"$VENV/bin/python" -m pytest -n 3 -q "$@"
if [ "$(listing)" != "$LOGS_BEFORE" ]; then
  echo "the test suite wrote into ./logs (a test ran an eval with no log_dir outside the" \
    "suite's temp dir):" >&2
  diff <(echo "$LOGS_BEFORE") <(listing) >&2 || true
  exit 1
fi
