#!/usr/bin/env bash
# The canary: swarm-eval's private-API tests and a swarm eval against the newest inspect-ai the
# machine can install, beyond pyproject.toml's bound if there is a newer one, in a scratch
# virtualenv.  scripts/inspect-canary.sh [VERSION]  (default: the newest).  See docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="$(mktemp -d)"
trap 'rm -rf "$VENV"' EXIT
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet -e ".[dev]" -e tests/fixture_plugin
# past the bound on purpose: pip says the requirement conflicts, which is the point of a canary
"$VENV/bin/python" -m pip install --quiet --upgrade "inspect-ai${1:+==$1}" 2>&1 \
  | grep -v "dependency resolver\|requires inspect-ai" || true
echo "inspect-ai $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("inspect-ai"))')"
# the private readers, the guard, and real swarm runs on the scripted model
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -n 2 tests/test_inspect_private.py \
  tests/test_run.py tests/test_spawning.py tests/test_ledger.py \
  --deselect tests/test_inspect_private.py::test_inspect_ai_is_within_the_tested_bound
