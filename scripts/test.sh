#!/usr/bin/env bash
# Set up, then run the whole test suite. Extra arguments go to pytest, e.g.
#   bash scripts/test.sh -m "not slow"      bash scripts/test.sh tests/test_datasets.py -x
# Exits non-zero when any test fails, and also when pytest collects no tests (pytest's exit status 5).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

bash scripts/setup.sh

status=0
python3 -m pytest "$@" || status=$?

if [ "$status" -eq 5 ]; then
    echo "[test] pytest collected no tests (exit status 5): treating this as a failure" >&2
    exit 1
fi
exit "$status"
