#!/usr/bin/env bash
# Mutation testing (mutmut) of the accounting, records, bus, waits, board and built-in
# controllers and channels: scripts/mutation.sh [MODULE...] [--report]; see docs/mutation.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  echo "no .venv here: run scripts/test.sh once first" >&2
  exit 2
fi
if [ ! -x .venv/bin/mutmut ]; then
  .venv/bin/python -m pip install --quiet -e ".[dev,mutation]"
fi
exec .venv/bin/python scripts/mutation.py "$@"
