#!/usr/bin/env bash
# Every page of the docs run twice in a row in one directory, as a reader who follows it again:
# the same output both times, and nothing left behind that .gitignore does not cover.
# Pages as arguments (docs/timeline.md ...) check only those.  Needs the test virtualenv
# (bash scripts/test.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${SWARM_TEST_VENV:-.venv-test}"
if [ "$#" -eq 0 ]; then set -- README.md docs; fi
SWARM_DOCS_TWICE=1 "$VENV/bin/python" -m pytest -n 2 -q -p no:randomly "$@"
