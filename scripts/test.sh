#!/usr/bin/env bash
# Set up everything the tests need on this machine, start a real Marquez (and its PostgreSQL,
# and its own web UI) and a Kafka broker on loopback, install Chromium and Graphviz when missing,
# and run the whole test suite. This is what CI runs (.ci/run).
#
# Usage: scripts/test.sh [PYTEST ARGUMENTS...]     e.g. scripts/test.sh tests/test_cli.py -x
#        scripts/test.sh -- --help                  pytest's own help
#
# Environment (defaults in brackets):
#   MARQUEZ_URL       the Marquez the end-to-end tests use [http://127.0.0.1:$MARQUEZ_PORT]
#   MARQUEZ_PORT      its port when MARQUEZ_URL is not set [5000]
#   MARQUEZ_WEB_URL   Marquez's web UI the browser tests open [http://127.0.0.1:$MARQUEZ_WEB_PORT]
#   MARQUEZ_WEB_PORT  its port when MARQUEZ_WEB_URL is not set [3000]
#   PYTHON         the Python (3.11 or later) that creates .venv [python3]
#   and those of scripts/marquez.sh, scripts/kafka.sh and scripts/datahub.sh (see their --help)
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;;
  --) shift ;;
esac
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export MARQUEZ_URL=${MARQUEZ_URL:-http://127.0.0.1:${MARQUEZ_PORT:-5000}}
# The end-to-end tests need the real Marquez, which scripts/marquez.sh builds from its source in
# ../shared/third_party (once: about 2 minutes) and starts. With that source here (always in CI),
# a Marquez that does not build or start fails the run; without it (and without a Maven repository
# serving marquez-api), its tests are skipped, each saying why. Where it starts, they must pass.
if compgen -G "../shared/third_party/marquez-*/api" >/dev/null; then
  export OLX_REQUIRE_MARQUEZ=1
fi
marquez_up=0
if scripts/marquez.sh start >/dev/null; then
  export OLX_REQUIRE_MARQUEZ=1
  marquez_up=1
elif [ "${OLX_REQUIRE_MARQUEZ:-}" = 1 ]; then
  echo "test.sh: Marquez could not be built or started (above), and the tests require it: failing" >&2
  exit 1
else
  echo "test.sh: Marquez could not be started (above), and its source (../shared/third_party/marquez-*)" \
    "is not here to build it; the end-to-end tests will be skipped" >&2
fi
# Marquez's own web UI, next to the API: the browser tests read the export where users look. Built
# from the source's web/ folder with npm (once: about 10 minutes), then served from the build.
# Like the API: with its source here (always in CI), a UI that does not build or start fails the
# run; without it, its tests are skipped, each saying why.
export MARQUEZ_WEB_URL=${MARQUEZ_WEB_URL:-http://127.0.0.1:${MARQUEZ_WEB_PORT:-3000}}
if compgen -G "../shared/third_party/marquez-*/web/package.json" >/dev/null; then
  export OLX_REQUIRE_MARQUEZ_UI=1
fi
if [ "$marquez_up" = 1 ] && scripts/marquez.sh ui >/dev/null; then
  export OLX_REQUIRE_MARQUEZ_UI=1
elif [ "${OLX_REQUIRE_MARQUEZ_UI:-}" = 1 ]; then
  echo "test.sh: Marquez's web UI could not be built or started (above; or Marquez is not up), and the" \
    "tests require it: failing" >&2
  exit 1
else
  echo "test.sh: Marquez's web UI could not be started (above), and its source" \
    "(../shared/third_party/marquez-*/web) is not here to build it; its browser tests will be skipped" >&2
fi
# The kafka transport's end-to-end tests need a real broker (Apache Kafka from Maven Central, KRaft
# mode, loopback). Maven Central is always reachable here: a broker that cannot be fetched or
# started fails the run (its log above), never a skipped proof.
if KAFKA_BOOTSTRAP_SERVERS=$(scripts/kafka.sh start); then
  export KAFKA_BOOTSTRAP_SERVERS OLX_REQUIRE_KAFKA=1
else
  echo "test.sh: Kafka could not be started (above), and the tests require it: failing" >&2
  exit 1
fi
# DataHub's own OpenLineage converter (three points of its history), which the DataHub-mode tests
# run every event through: built with Maven from ../shared/third_party/datahub-* (once: about 3
# minutes). With that source here (always in CI), a converter that does not build fails the run;
# without it, those tests are skipped, each saying why.
if compgen -G "../shared/third_party/datahub-*/metadata-integration" >/dev/null; then
  if scripts/datahub.sh build >/dev/null; then
    export OLX_REQUIRE_DATAHUB=1
  else
    echo "test.sh: DataHub's converter could not be built (above), and the tests require it: failing" >&2
    exit 1
  fi
else
  echo "test.sh: DataHub's converter source (../shared/third_party/datahub-*) is not here to build;" \
    "its tests will be skipped" >&2
fi
# The HTML report's tests draw with Graphviz and open the page in Debian's Chromium: installed
# here when missing; where they are, those tests must run, not skip.
if scripts/browser.sh >/dev/null; then
  export OLX_REQUIRE_BROWSER=1
else
  echo "test.sh: Chromium or Graphviz could not be installed (above), and the tests require them: failing" >&2
  exit 1
fi
# In CI a skipped test is a missing proof: it fails the run (tests/conftest.py).
if [ "${CI:-}" = true ]; then
  export OLX_NO_SKIPS=1
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
