#!/usr/bin/env bash
# Set up everything the tests need on this machine, start a real Marquez (and its PostgreSQL)
# on loopback, and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export MARQUEZ_URL=${MARQUEZ_URL:-http://127.0.0.1:${MARQUEZ_PORT:-5000}}
# The end-to-end tests need the real Marquez. Where it cannot be had (its API server is not
# served by every Maven mirror), they are skipped, each saying why; where it starts, they must pass.
if scripts/marquez.sh start >/dev/null; then
  export OLX_REQUIRE_MARQUEZ=1
else
  echo "test.sh: Marquez could not be started (above); the end-to-end tests will be skipped" >&2
fi
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
