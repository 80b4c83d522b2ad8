#!/usr/bin/env bash
# Mutation testing (mutmut) of the accounting, records, bus, waits, board, built-in controllers and
# channels, spawning and the fan-out rubric: scripts/mutation.sh [MODULE...] [--only PATTERN] [--report];
# see docs/mutation.md.  It runs in the test virtualenv that scripts/test.sh makes.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${SWARM_TEST_VENV:-.venv-test}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "no $VENV here: run bash scripts/test.sh once first (it makes the test virtualenv)" >&2
  exit 2
fi
if [ ! -x "$VENV/bin/mutmut" ]; then
  "$VENV/bin/python" -m pip install --quiet -e ".[dev,docs,mutation]" -e tests/fixture_plugin
fi
exec "$VENV/bin/python" scripts/mutation.py "$@"
