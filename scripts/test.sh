#!/usr/bin/env bash
# Install everything into ./.venv and run the whole check: lint, types, tests (with the docs'
# code blocks), and a strict build of the docs site.
# Works on a fresh machine with Python 3.11+ and nothing else; offline after the install.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev,docs]" -e tests/fixture_plugin
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# the docs site, into a scratch folder: a broken link, anchor or reference is an error
SITE="$(mktemp -d)"
trap 'rm -rf "$SITE"' EXIT
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$SITE"
.venv/bin/python -m pytest -n 2 -q "$@"
