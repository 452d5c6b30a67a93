#!/usr/bin/env bash
# Set up everything the tests need on this machine, start a real Marquez (and its PostgreSQL)
# on loopback, and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
scripts/marquez.sh start >/dev/null
export OLX_REQUIRE_MARQUEZ=1 MARQUEZ_URL=${MARQUEZ_URL:-http://127.0.0.1:${MARQUEZ_PORT:-5000}}
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
