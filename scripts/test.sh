#!/usr/bin/env bash
# Set up everything the tests need on this machine, start a real Marquez (and its PostgreSQL,
# and its own web UI), a Kafka broker and a Data.Rentgen (and its web UI) on loopback, install
# Chromium and Graphviz when missing, and run the whole test suite. This is what CI runs
# (.ci/run).
#
# Usage: scripts/test.sh [PYTEST ARGUMENTS...]     e.g. scripts/test.sh tests/test_cli.py -x
#        scripts/test.sh -- --help                  pytest's own help
#
# The services are this checkout's own (scripts/ports.sh --help): their state apart from any
# other checkout's, their ports those of the checkout's slot (slot 0: Marquez on 5000, its web
# UI on 3000, Kafka on 59092, Data.Rentgen on 58000, its web UI on 53000...). What
# scripts/ports.sh prints is exported first (ports, state dirs), then the services' addresses,
# so that the tests and the scripts agree.
#
# Environment (defaults in brackets):
#   MARQUEZ_URL       the Marquez the end-to-end tests use [http://127.0.0.1:$MARQUEZ_PORT]
#   MARQUEZ_WEB_URL   Marquez's web UI the browser tests open [http://127.0.0.1:$MARQUEZ_WEB_PORT]
#   KAFKA_BOOTSTRAP_SERVERS  the Kafka broker the end-to-end tests use [127.0.0.1:$KAFKA_PORT]
#   DATA_RENTGEN_URL  the Data.Rentgen REST API the end-to-end tests use
#                     [http://127.0.0.1:$DATA_RENTGEN_PORT]
#   DATA_RENTGEN_UI_URL  its web UI the browser test opens [http://127.0.0.1:$DATA_RENTGEN_UI_PORT]
#   FEAST_URL         the Feast (its OpenLineage consumer) the end-to-end tests use
#                     [http://127.0.0.1:$FEAST_PORT]
#   OLX_PORT_SLOT, MARQUEZ_PORT, KAFKA_PORT, FEAST_PORT...
#                     this checkout's ports (scripts/ports.sh --help)
#   PYTHON         the Python (3.11 or later) that creates .venv [python3]
#   OLX_TEST_SEED  the seed of the test order [a new one each run]: the tests run shuffled
#                  (modules, and the tests within each), the seed printed on the first line;
#                  give it again to run them in that same order
#   and those of scripts/marquez.sh, scripts/kafka.sh, scripts/data-rentgen.sh,
#   scripts/datahub.sh, scripts/feast.sh and scripts/vscode.sh (see their --help)
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;;
  --) shift ;;
esac
cd "$(dirname "$0")/.."
OLX_TEST_SEED=${OLX_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "test.sh: test order seed $OLX_TEST_SEED (the same order again: OLX_TEST_SEED=$OLX_TEST_SEED" \
  "scripts/test.sh)"
# The services' ports (Kafka's three, Data.Rentgen's two and its UI's, PostgreSQL's, Feast's)
# lie in the range the kernel hands out to outgoing connections (net.ipv4.ip_local_port_range,
# 32768-60999 by default): a test's client, or pip's, could be given one of them just before
# its service binds it (seen on a cold run: Kafka's 59094, "Address already in use"). As root,
# they are taken out of that range (net.ipv4.ip_local_reserved_ports, added to what is there,
# until the machine restarts), first thing, before anything here connects anywhere.
# This checkout's ports and state (scripts/ports.sh), for every script and test below.
checkout_env=$(scripts/ports.sh)
while IFS='=' read -r name value; do
  export "$name=$value"
done <<<"$checkout_env"
reserved_ports=/proc/sys/net/ipv4/ip_local_reserved_ports
if [ "$(id -u)" = 0 ] && [ -w "$reserved_ports" ]; then
  ports="$KAFKA_PORT,$KAFKA_CONTROLLER_PORT,$KAFKA_SASL_PORT"
  ports="$ports,$DATA_RENTGEN_PORT,$DATA_RENTGEN_CONSUMER_PORT"
  ports="$ports,$DATA_RENTGEN_UI_PORT,$MARQUEZ_PG_PORT"
  ports="$ports,$MARQUEZ_PORT,$MARQUEZ_ADMIN_PORT,$MARQUEZ_WEB_PORT"
  ports="$ports,$FEAST_PORT"
  before=$(cat "$reserved_ports")
  if ! echo "${before:+$before,}$ports" 2>/dev/null >"$reserved_ports"; then
    echo "test.sh: could not keep the services' ports ($ports) from outgoing connections" >&2
  fi
fi
scripts/setup.sh --test
# tests/test_scripts.py runs ShellCheck on every script: Debian's, installed when missing.
# Without it that test is skipped, saying why (and in CI, a skip fails the run).
if ! command -v shellcheck >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  # shellcheck source=lib/apt.sh
  . scripts/lib/apt.sh
  apt_log=$(mktemp)
  echo "test.sh: installing shellcheck (apt-get)" >&2
  apt_get_install "$apt_log" shellcheck ||
    { tail -n 20 "$apt_log" >&2; echo "test.sh: apt-get install shellcheck failed" >&2; }
  rm -f "$apt_log"
fi
# tests/test_ci_docs.py runs actionlint on docs/ci/github-actions.yml: built from its source by
# `go install` (the Go module proxy) at a pinned version, once, into ~/.cache/openlineage-export/bin
# (about 21 s of CPU with Go's caches empty: 22 s on 2 quiet cores, a minute on busy ones; 2 s
# with them; nothing when it is there). Without it that check cannot run: stop here.
ACTIONLINT_VERSION=v1.7.12
export ACTIONLINT="$HOME/.cache/openlineage-export/bin/actionlint"
if [ "$("$ACTIONLINT" --version 2>/dev/null | head -n 1)" != "$ACTIONLINT_VERSION" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "test.sh: Go is needed to build actionlint $ACTIONLINT_VERSION (tests/test_ci_docs.py):" \
      "install Go 1.21 or later, then run this again" >&2
    exit 1
  fi
  echo "test.sh: installing actionlint $ACTIONLINT_VERSION (go install, into ${ACTIONLINT%/*})" >&2
  if ! GOBIN="${ACTIONLINT%/*}" go install \
    "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"; then
    echo "test.sh: could not install actionlint $ACTIONLINT_VERSION with go install (Go's" \
      "errors above); tests/test_ci_docs.py needs it" >&2
    exit 1
  fi
fi
# Where the services are, known before they are up: the test modules may read it at import.
export MARQUEZ_URL=${MARQUEZ_URL:-http://127.0.0.1:$MARQUEZ_PORT}
export MARQUEZ_WEB_URL=${MARQUEZ_WEB_URL:-http://127.0.0.1:$MARQUEZ_WEB_PORT}
export KAFKA_BOOTSTRAP_SERVERS=${KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:$KAFKA_PORT}
export DATA_RENTGEN_URL=${DATA_RENTGEN_URL:-http://127.0.0.1:$DATA_RENTGEN_PORT}
export DATA_RENTGEN_UI_URL=${DATA_RENTGEN_UI_URL:-http://127.0.0.1:$DATA_RENTGEN_UI_PORT}
export FEAST_URL=${FEAST_URL:-http://127.0.0.1:$FEAST_PORT}
# What the end-to-end and browser tests need is prepared by scripts/services.sh in the
# background, while the tests that need none of it run; those that do wait for it
# (tests/conftest.py's `services`), and this script waits for it after pytest. Its --help is
# the interface (DIR/log, DIR/env, DIR/status) and says which services a run requires. Once, on
# a fresh machine, that is several minutes of builds from the sources in ../shared/third_party:
# Marquez's API with Maven (~1 min) and its web UI with npm (~4 min), DataHub's converters
# (~1 min), code-server from npm (~1.5 min), the extension's .vsix, Data.Rentgen from PyPI
# (~1 min) and its web UI with npm (~3 min), Feast from PyPI (~2 min); later runs reuse them.
# In CI a skipped test is a missing proof: it fails the run (tests/conftest.py).
if [ "${CI:-}" = true ]; then
  export OLX_NO_SKIPS=1
fi
OLX_SERVICES=$(mktemp -d "${TMPDIR:-/tmp}/openlineage-export-services.XXXXXX")
setsid scripts/services.sh "$OLX_SERVICES" </dev/null >/dev/null 2>&1 &
OLX_SERVICES_PID=$!
export OLX_SERVICES OLX_SERVICES_PID
# Ctrl-C or a stop ends the builds too (they run in their own process group).
trap 'kill -TERM -- "-$OLX_SERVICES_PID" 2>/dev/null; exit 130' INT
trap 'kill -TERM -- "-$OLX_SERVICES_PID" 2>/dev/null; exit 143' TERM
# --durations: the 25 slowest tests are listed before the closing line, so that every run says
# where its time went.
set +e
.venv/bin/python -m pytest -p random_order --random-order-bucket=module \
  --random-order-seed="$OLX_TEST_SEED" --durations=25 --junitxml="$OLX_SERVICES/junit.xml" "$@"
status=$?
wait "$OLX_SERVICES_PID"
services=$?
set -e
# The closing line counts every outcome, skips included (pytest leaves out the zeros): a
# skipped proof is a missing proof, and CI's last line says how many there were.
.venv/bin/python scripts/junit_counts.py "$OLX_SERVICES/junit.xml" || true
if [ "$services" -ne 0 ]; then
  echo "test.sh: the services the tests need could not all be prepared (pytest's \"services\"" \
    "section above; the log: $OLX_SERVICES/log): failing" >&2
  exit 1
fi
rm -rf "$OLX_SERVICES"
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
