#!/usr/bin/env bash
# Prepare everything the end-to-end and browser tests need, in two lanes side by side: one
# for Java (Marquez built with Maven and started with its PostgreSQL, a Kafka broker,
# Data.Rentgen from PyPI on that broker, DataHub's converters; then Feast from PyPI, whose two
# minutes of pip fit there: the other lane is the longer), one for Node and Debian's
# packages (Chromium and Graphviz, code-server, the extension's .vsix, Data.Rentgen's web UI,
# Marquez's web UI). scripts/test.sh runs it in the background while the
# tests that need none of it run; those that do wait for it (tests/conftest.py's `services`).
#
# Usage: scripts/services.sh DIR
#
# What a test run gets from it, in DIR (an empty folder); DIR/status comes last, whole, and
# once it is there the others are complete:
#
#   DIR/log      what every script said: the Java lane's, then the Node lane's
#   DIR/env      KEY=VALUE lines for the tests' environment:
#                  OLX_REQUIRE_<NAME>=1   for each service that is up: its tests must run (they
#                                         fail, never skip). NAME: MARQUEZ, MARQUEZ_UI, KAFKA,
#                                         DATA_RENTGEN, DATA_RENTGEN_UI, DATAHUB, FEAST,
#                                         BROWSER (Chromium and Graphviz), VSCODE
#                  OLX_VSCODE_VSIX=FILE   the extension's .vsix
#   DIR/status   0, or 1 when a service the run requires is not up (DIR/log says why); this
#                script exits with it
#
# The services are this checkout's own (scripts/ports.sh --help): their state apart from any
# other checkout's, on the ports of its slot; no script here stops, restarts or uses another
# checkout's process (a port it holds is refused, saying so). Their addresses are not in
# DIR/env: they follow from the checkout's ports, which the caller has before (scripts/test.sh
# exports what scripts/ports.sh prints, then MARQUEZ_URL, MARQUEZ_WEB_URL,
# KAFKA_BOOTSTRAP_SERVERS, DATA_RENTGEN_URL, DATA_RENTGEN_UI_URL and FEAST_URL, before pytest
# starts: a test module may read them at import; Data.Rentgen's consumer reads the topics input.runs.*).
#
# Who waits for what: scripts/test.sh starts this script (in a session of its own: setsid) and
# gives pytest DIR as OLX_SERVICES and this script's pid as OLX_SERVICES_PID. tests/conftest.py's
# `services` fixture waits for DIR/status (or for this script to end without writing it: a
# failure); on 1 it fails the test with the tail of DIR/log, on 0 it adds DIR/env to the
# session's environment; pytest's closing summary shows DIR/log whole. scripts/test.sh waits
# for this script after pytest, and fails the run when its status is not 0, whichever tests
# ran. DIR/lanes/ is the lanes' own, on their way: each one's log as it goes (java.log,
# node.log), and a file per service, NAME, that says up or down once it is done (the web UIs
# wait for MARQUEZ, DATA_RENTGEN).
#
# A service the run requires that cannot be had fails the run; one it does not require has its
# tests skipped, each saying why. Required: those with OLX_REQUIRE_<NAME>=1; where that is not
# set, Marquez, its web UI, Data.Rentgen's web UI and DataHub's converters when their source is
# in ../shared/third_party beside the repository, and always Kafka, Data.Rentgen and Feast (their
# source is PyPI), Chromium and Graphviz, and code-server.
#
# Environment: that of scripts/ports.sh, marquez.sh, kafka.sh, data-rentgen.sh, datahub.sh,
# feast.sh, vscode.sh (see their --help), and OLX_REQUIRE_<NAME> (1: required; 0: not).
set -uo pipefail
case "${1:-}" in -h|--help|"") sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
dir=$(cd "$1" && pwd) || exit 1
cd "$(dirname "$0")/.." || exit 1
lanes="$dir/lanes"
mkdir -p "$lanes"
: >"$dir/log"
: >"$lanes/env"
exec >>"$dir/log" 2>&1
start=$SECONDS

say() { echo "services.sh: $*"; }
provide() { echo "$1" >>"$lanes/env"; }  # one line, whole: the lanes append side by side

# Whether the run requires service $1 (see the header).
required() {
  local given="OLX_REQUIRE_$1"
  if [ -n "${!given:-}" ]; then
    [ "${!given}" = 1 ]
    return
  fi
  case $1 in
    MARQUEZ) compgen -G "../shared/third_party/marquez-*/api" >/dev/null ;;
    MARQUEZ_UI) compgen -G "../shared/third_party/marquez-*/web/package.json" >/dev/null ;;
    DATAHUB) compgen -G "../shared/third_party/datahub-*/metadata-integration" >/dev/null ;;
    DATA_RENTGEN_UI) compgen -G "../shared/third_party/data-rentgen-ui-*/package.json" >/dev/null ;;
    *) true ;;
  esac
}

# bring NAME WHAT COMMAND...: COMMAND brings service NAME up (WHAT says what failed, if not).
# Up: OLX_REQUIRE_NAME=1 into DIR/env. Down: returns 1 when the run requires it (its lane stops
# there), else says that its tests will be skipped. Either way, DIR/lanes/NAME says up or down.
bring() {
  local name=$1 what=$2
  shift 2
  if "$@" >/dev/null; then
    provide "OLX_REQUIRE_$name=1"
    echo up >"$lanes/$name"
    return 0
  fi
  echo down >"$lanes/$name"
  if required "$name"; then
    say "$what (above), and the tests require it"
    return 1
  fi
  say "$what (above); the run does not require it (scripts/services.sh --help says when):" \
    "its tests will be skipped"
}

# shellcheck disable=SC2317  # run by bring
vscode_ready() {
  local vsix
  scripts/vscode.sh install && vsix=$(scripts/vscode.sh package) && provide "OLX_VSCODE_VSIX=$vsix"
}

# The web UI: built (npm) while the Java lane prepares what it talks to, started once Marquez
# is up.
# shellcheck disable=SC2317  # run by bring
marquez_ui() {
  scripts/marquez.sh build-ui || return
  while [ ! -s "$lanes/MARQUEZ" ] && kill -0 "$java" 2>/dev/null; do sleep 1; done
  if [ "$(cat "$lanes/MARQUEZ" 2>/dev/null)" != up ]; then
    say "Marquez is not up, for its web UI to talk to" >&2
    return 1
  fi
  scripts/marquez.sh ui
}

# Data.Rentgen's web UI: built (npm) while the Java lane prepares what it talks to, started
# once Data.Rentgen is up.
# shellcheck disable=SC2317  # run by bring
data_rentgen_ui() {
  scripts/data-rentgen.sh build-ui || return
  while [ ! -s "$lanes/DATA_RENTGEN" ] && kill -0 "$java" 2>/dev/null; do sleep 1; done
  if [ "$(cat "$lanes/DATA_RENTGEN" 2>/dev/null)" != up ]; then
    say "Data.Rentgen is not up, for its web UI to talk to" >&2
    return 1
  fi
  scripts/data-rentgen.sh ui
}

java_lane() {
  bring MARQUEZ "Marquez could not be built or started" scripts/marquez.sh start &&
    bring KAFKA "Kafka could not be started" scripts/kafka.sh start &&
    bring DATA_RENTGEN "Data.Rentgen could not be installed or started" \
      scripts/data-rentgen.sh start &&
    bring DATAHUB "DataHub's converters could not be built" scripts/datahub.sh build &&
    bring FEAST "Feast could not be installed or started" scripts/feast.sh start
}

node_lane() {
  bring BROWSER "Chromium or Graphviz could not be installed" scripts/browser.sh &&
    bring VSCODE "code-server could not be installed, or the extension packaged" vscode_ready &&
    bring DATA_RENTGEN_UI "Data.Rentgen's web UI could not be built or started" \
      data_rentgen_ui &&
    bring MARQUEZ_UI "Marquez's web UI could not be built or started" marquez_ui
}

java_lane >>"$lanes/java.log" 2>&1 &
java=$!
node_lane >>"$lanes/node.log" 2>&1 &
node=$!
wait "$java"; java_status=$?
wait "$node"; node_status=$?
cat "$lanes/java.log" "$lanes/node.log"
status=$(( java_status || node_status ))
mv "$lanes/env" "$dir/env"
if [ "$status" = 0 ]; then
  say "ready after $((SECONDS - start)) s"
else
  say "failed after $((SECONDS - start)) s (above)"
fi
echo "$status" >"$dir/status.tmp" && mv "$dir/status.tmp" "$dir/status"  # whole, for readers
exit "$status"
