#!/usr/bin/env bash
# Install everything into ./.venv and run the whole check: lint, types, tests.
# Works on a fresh machine with Python 3.11+ and nothing else; offline after the install.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev]" -e tests/fixture_plugin
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest -n 2 -q "$@"
