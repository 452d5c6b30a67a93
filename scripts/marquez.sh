#!/usr/bin/env bash
# Run a real Marquez server (and a private PostgreSQL cluster for it) on loopback only,
# for end-to-end tests and for trying openlineage-export locally.
#
# Usage: scripts/marquez.sh start [--ui]|ui|build-ui|stop|status|reset
#
#   start   install PostgreSQL if needed (Debian apt), create/start this checkout's cluster, get
#           the Marquez API server (see below), start it and wait until GET /api/v1/namespaces
#           answers 200. Idempotent. Progress goes to stderr; the base URL is the only thing
#           printed on stdout.
#   start --ui
#           the same, plus Marquez's own web UI on http://127.0.0.1:$MARQUEZ_WEB_PORT (see
#           below); prints the API's base URL, then the UI's on a second line.
#   ui      the same as start --ui, printing only the UI's URL.
#   build-ui  only build the web UI (when not built yet); prints the folder it is served from.
#   stop    stop this checkout's web UI, Marquez and PostgreSQL cluster.
#   status  say what of this checkout's is running (exit 0 only when its Marquez answers).
#   reset   stop Marquez, drop and recreate the `marquez` database, start Marquez again.
#
# Each checkout runs a Marquez of its own (lib/checkout.sh): its state (pid files, marquez.yml,
# logs, the PostgreSQL cluster) in $MARQUEZ_HOME, its ports from its slot (slot 0: 5000, 5001,
# 3000, 55432; scripts/ports.sh prints them). This script stops and restarts only processes it
# started from this checkout; when one of its ports is held by anything else (another
# checkout's Marquez, a Marquez of your own), it refuses, in one line naming the port and
# what holds it.
#
# Where the Marquez API server comes from, first that applies:
#   1. MARQUEZ_LIB_DIR: jars of your own (marquez-api + its runtime dependencies).
#   2. Its source, ../shared/third_party/marquez-$MARQUEZ_VERSION beside the repository (or
#      MARQUEZ_SOURCE_DIR): built with Maven (scripts/marquez/source/pom.xml) into
#      $OLX_CACHE/marquez/build/<version>-<hash of the source and the pom>/lib, once: about 2
#      minutes the first time (and ~100 MB of dependencies into the local Maven repository),
#      then reused in a second, by every checkout. Nothing is written into the source tree.
#   3. Otherwise io.github.marquezproject:marquez-api from your Maven repository
#      (scripts/marquez/fetch/pom.xml), where it is served, cached in
#      $OLX_CACHE/marquez/fetched/<version>-<hash of the pom>.
#
# The web UI (start --ui, ui) is built from the source's web/ folder, once: copied (without
# node_modules) to $OLX_CACHE/marquez/web/.building-<hash>, then upstream's own `npm ci`, and its
# webpack build with upstream's production configuration as scripts/marquez/web/webpack.olx.js
# amends it (the fonts its CSS names are emitted as the font files they are: upstream's
# file-loader rule, under webpack 5, turns them into JavaScript modules that no browser can
# decode), packages from the npm registry: about 10 minutes on 2 busy cores the first time (~2
# minutes of it npm ci with an empty ~/.npm, ~700 MB of node_modules), log in
# $OLX_CACHE/marquez/web/build.log. Only its dist/ (~40 MB) is kept, in
# $OLX_CACHE/marquez/web/<version>-<hash of the web source and of the build recipe>/, and reused
# in a second. It is served by scripts/marquez/web/server.js (node's http module only: the
# files of dist/, and /api/v1, /api/v2beta passed on to the API, as upstream's setupProxy.js).
# Node.js 16+ and npm are needed (as root, Debian's nodejs and npm are installed when missing).
# A build no running process uses, neither made nor used for 7 days, is deleted when another is made.
#
# Environment (defaults in brackets):
#   MARQUEZ_HOME           this checkout's Marquez state [$OLX_CHECKOUT_STATE/marquez]
#   MARQUEZ_PORT           API port [5000 + 10 x slot]
#   MARQUEZ_ADMIN_PORT     admin port [5001 + 10 x slot]
#   MARQUEZ_PG_PORT        PostgreSQL port [55432 + 10 x slot]
#   MARQUEZ_WEB_PORT       web UI port [3000 + 10 x slot]
#   OLX_PORT_SLOT, OLX_CHECKOUT_STATE, OLX_CACHE
#                          this checkout's port slot, its state, the shared builds (scripts/ports.sh
#                          --help)
#   MARQUEZ_VERSION        Marquez version, built from source or fetched [0.51.1]
#   MARQUEZ_SOURCE_DIR     Marquez source tree to build [../shared/third_party/marquez-$MARQUEZ_VERSION
#                          beside the repository]; set it empty to fetch marquez-api instead
#   MARQUEZ_START_TIMEOUT  seconds to wait for the API to answer [120]
#   MARQUEZ_LIB_DIR        use the jars in this directory (marquez-api + dependencies)
#                          instead of building or fetching them
#   MARQUEZ_MVN_ARGS       extra arguments for mvn (e.g. -s settings.xml, -o,
#                          -Dmaven.repo.local=DIR)
#   MARQUEZ_JAVA_OPTS      JVM options [-Xmx1g -XX:TieredStopAtLevel=1]: the client compiler
#                          only, so that a fresh server is quick from its first requests on a
#                          small, busy machine (with the JVM's default, its first few hundred
#                          events took up to 4 s each here, against 2.4 s; later ones alike)
#   JAVA                   java binary [java]
#   NODE, NPM              node and npm binaries, for the web UI [node, npm]
#
# Everything listens on 127.0.0.1 only. As root, PostgreSQL runs as the `postgres`
# OS user (it refuses to run as root); otherwise as the invoking user. The cluster is the
# checkout's (scripts/postgres.sh, scripts/lib/postgres.sh): its other services keep their
# databases in it too, and `stop` stops it with them.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/service.sh
. "$SCRIPT_DIR/lib/service.sh"
# shellcheck source=lib/apt.sh
. "$SCRIPT_DIR/lib/apt.sh"
# shellcheck source=lib/maven.sh
. "$SCRIPT_DIR/lib/maven.sh"
FETCH_POM="$SCRIPT_DIR/marquez/fetch/pom.xml"
SOURCE_POM="$SCRIPT_DIR/marquez/source/pom.xml"

checkout_state
checkout_ports
MARQUEZ_HOME=${MARQUEZ_HOME:-$OLX_CHECKOUT_STATE/marquez}
MARQUEZ_BUILDS="$OLX_CACHE/marquez"  # every checkout's: builds keyed by their hash
MARQUEZ_VERSION=${MARQUEZ_VERSION:-0.51.1}
# Unset: the default below, used when it exists; empty: never build; set: must exist.
SOURCE_DIR_GIVEN=${MARQUEZ_SOURCE_DIR+1}
MARQUEZ_SOURCE_DIR=${MARQUEZ_SOURCE_DIR-$SCRIPT_DIR/../../shared/third_party/marquez-$MARQUEZ_VERSION}
MARQUEZ_START_TIMEOUT=${MARQUEZ_START_TIMEOUT:-120}
MARQUEZ_JAVA_OPTS=${MARQUEZ_JAVA_OPTS:--Xmx1g -XX:TieredStopAtLevel=1}
MARQUEZ_MVN_ARGS=${MARQUEZ_MVN_ARGS:-}
JAVA=${JAVA:-java}
NODE=${NODE:-node}
NPM=${NPM:-npm}

HOST=$LOOPBACK
# shellcheck disable=SC2153  # the port: set by checkout_ports
BASE_URL="http://$HOST:$MARQUEZ_PORT"
DB_NAME=marquez
DB_USER=marquez
DB_PASSWORD=marquez

mkdir -p "$MARQUEZ_HOME" "$MARQUEZ_BUILDS"
MARQUEZ_HOME=$(cd "$MARQUEZ_HOME" && pwd -P)
MARQUEZ_BUILDS=$(cd "$MARQUEZ_BUILDS" && pwd -P)
CONFIG="$MARQUEZ_HOME/marquez.yml"
PID_FILE="$MARQUEZ_HOME/marquez.pid"
MARQUEZ_LOG="$MARQUEZ_HOME/marquez.log"
MARQUEZ_OUT="$MARQUEZ_HOME/marquez.out"
ACCESS_LOG="$MARQUEZ_HOME/access.log"
# The lock of the builds in MARQUEZ_BUILDS (the scripts before per-checkout state held it too).
BUILD_LOCK="$MARQUEZ_BUILDS/.lock"

# The PostgreSQL cluster ($MARQUEZ_HOME/pgdata, port $MARQUEZ_PG_PORT) and the web UI.
# shellcheck source=lib/postgres.sh
. "$SCRIPT_DIR/lib/postgres.sh"
# shellcheck source=lib/marquez-web.sh
. "$SCRIPT_DIR/lib/marquez-web.sh"

# ---------------------------------------------------------------- helpers

healthy() { [[ $(http_status "$MARQUEZ_PORT" /api/v1/namespaces) == 200 ]]; }

# Like healthy, for wait_healthy: 3 when GET /api/v1/namespaces answers 5xx (in ANSWER).
ANSWER=""
answers() {
  ANSWER=$(http_status "$MARQUEZ_PORT" /api/v1/namespaces)
  case $ANSWER in 200) return 0 ;; 5*) return 3 ;; *) return 1 ;; esac
}

# PID of our Marquez process, or nothing.
marquez_pid() { started_pid "$PID_FILE" " marquez.MarquezApp "; }

# Whether process $1 runs Marquez from the jars in directory $2.
runs_from() {
  tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qxF "$2/*"
}

yaml_quote() { printf "'%s'" "${1//\'/\'\'}"; }

# ---------------------------------------------------------------- Marquez jars

# Sets CLASSPATH_DIR: a directory whose jars run marquez.MarquezApp.
CLASSPATH_DIR=""
ensure_jars() {
  if [[ -n ${MARQUEZ_LIB_DIR:-} ]]; then
    compgen -G "$MARQUEZ_LIB_DIR/marquez-api*.jar" >/dev/null ||
      die "MARQUEZ_LIB_DIR=$MARQUEZ_LIB_DIR has no marquez-api*.jar"
    CLASSPATH_DIR=$(cd "$MARQUEZ_LIB_DIR" && pwd -P)
  elif [[ -n $MARQUEZ_SOURCE_DIR && -d $MARQUEZ_SOURCE_DIR ]]; then
    build_from_source
  elif [[ -n $MARQUEZ_SOURCE_DIR && -n $SOURCE_DIR_GIVEN ]]; then
    die "MARQUEZ_SOURCE_DIR=$MARQUEZ_SOURCE_DIR does not exist (set it empty to fetch marquez-api with Maven instead)"
  else
    fetch_from_maven
  fi
}

# Hash of what a build is made of: the version, our pom and every file of the source tree that
# the API server is built from (the web UI is not).
source_key() {
  {
    echo "marquez $MARQUEZ_VERSION"
    cat "$SOURCE_POM"
    tree_digests "$1" -path ./web -prune -o -type f -print0
  } | sha256sum | cut -c1-16
}

build_from_source() {
  local src key dir
  src=$(cd "$MARQUEZ_SOURCE_DIR" && pwd -P)
  [[ -d $src/api/src/main/java && -d $src/clients/java/src/main/java ]] ||
    die "$src is not a Marquez source tree (it needs api/src/main and clients/java/src/main)"
  key=$(source_key "$src")
  dir="$MARQUEZ_BUILDS/build/$MARQUEZ_VERSION-$key"
  CLASSPATH_DIR="$dir/lib"
  if ! built "$dir"; then
    build_locked "$BUILD_LOCK" 1800 build_jars "$src" "$key" "$dir"
  fi
  touch_build "$dir"
}

built() { [[ -f $1/.complete && -f $1/lib/marquez-api-$MARQUEZ_VERSION.jar ]]; }

# build_jars SOURCE KEY DIR (under the build lock): Maven's build of SOURCE, kept in DIR.
build_jars() {
  local src=$1 key=$2 dir=$3 tmp build_log t0
  built "$dir" && return 0  # another checkout built it while this one waited
  command -v mvn >/dev/null || die "mvn not found (Maven 3 builds Marquez $MARQUEZ_VERSION from $src, once)"
  command -v javac >/dev/null || die "javac not found (a JDK 17 builds Marquez $MARQUEZ_VERSION from $src, once)"
  build_log="$MARQUEZ_BUILDS/maven-build.log"
  log "building Marquez $MARQUEZ_VERSION from its source ($src) with Maven, once for this source:"
  log "  about 2 minutes the first time, more while Maven downloads its ~100 MB of dependencies (log: $build_log)"
  tmp="$MARQUEZ_BUILDS/build/.unfinished"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  t0=$SECONDS
  # shellcheck disable=SC2086
  if ! (cd "$tmp" && mvn -B -U -ntp -Dstyle.color=never $MARQUEZ_MVN_ARGS -f "$SOURCE_POM" \
          -Drevision="$MARQUEZ_VERSION" -Dmarquez.source="$src" -Dmarquez.build="$tmp/target" \
          -DoutputDirectory="$tmp/lib" package dependency:copy-dependencies) >"$build_log" 2>&1 9>&-; then
    show_maven_errors "$build_log"
    rm -rf "$tmp"
    die "Maven could not build Marquez $MARQUEZ_VERSION from $src (log: $build_log)"
  fi
  [[ -f $tmp/target/marquez-api-$MARQUEZ_VERSION.jar ]] ||
    die "Maven ran but $tmp/target/marquez-api-$MARQUEZ_VERSION.jar is missing (log: $build_log)"
  mv "$tmp/target/marquez-api-$MARQUEZ_VERSION.jar" "$tmp/lib/"
  rm -rf "$tmp/target"
  echo "$key $src" >"$tmp/.complete"
  mv "$tmp" "$dir"
  touch_build "$dir"
  # Earlier builds (another source or pom) that nothing runs from and nothing used for a week.
  prune_builds "$dir" "$MARQUEZ_BUILDS/build/"*-????????????????
  log "built Marquez $MARQUEZ_VERSION in $((SECONDS - t0))s ($dir)"
}

fetch_from_maven() {
  local dir
  dir="$MARQUEZ_BUILDS/fetched/$MARQUEZ_VERSION-$(cksum <"$FETCH_POM" | cut -d' ' -f1)"
  CLASSPATH_DIR=$dir
  if [[ ! -f $dir/.complete || ! -f $dir/marquez-api-$MARQUEZ_VERSION.jar ]]; then
    build_locked "$BUILD_LOCK" 1800 fetch_jars "$dir"
  fi
  touch_build "$dir"
}

# fetch_jars DIR (under the build lock): marquez-api and its dependencies from Maven, into DIR.
fetch_jars() {
  local dir=$1 tmp="$MARQUEZ_BUILDS/fetched/.unfinished"
  [[ -f $dir/.complete && -f $dir/marquez-api-$MARQUEZ_VERSION.jar ]] && return 0
  command -v mvn >/dev/null || die "mvn not found (needed once to fetch marquez-api $MARQUEZ_VERSION)"
  if [[ -n $MARQUEZ_SOURCE_DIR ]]; then
    log "no Marquez source at $(realpath -m "$MARQUEZ_SOURCE_DIR") to build"
  fi
  log "fetching marquez-api $MARQUEZ_VERSION and its dependencies with Maven"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # shellcheck disable=SC2086
  if ! (cd "$tmp" && mvn -B -q -U -Dstyle.color=never $MARQUEZ_MVN_ARGS -f "$FETCH_POM" -Dmarquez.version="$MARQUEZ_VERSION" \
          dependency:copy-dependencies -DoutputDirectory="$tmp") >"$MARQUEZ_BUILDS/maven.log" 2>&1 9>&-; then
    sed 's/\x1b\[[0-9;]*m//g' "$MARQUEZ_BUILDS/maven.log" | grep -v '^\[ERROR\] *$' | head -n 5 >&2
    die "Maven could not fetch io.github.marquezproject:marquez-api:$MARQUEZ_VERSION (log: $MARQUEZ_BUILDS/maven.log).
  If your Maven repository does not serve it, build it from its source: put Marquez's source tree
  (its api/ and clients/java/) in ../shared/third_party/marquez-$MARQUEZ_VERSION beside the repository,
  or set MARQUEZ_SOURCE_DIR to it; or put marquez-api-$MARQUEZ_VERSION.jar and its runtime
  dependencies in a directory and set MARQUEZ_LIB_DIR to it."
  fi
  [[ -f $tmp/marquez-api-$MARQUEZ_VERSION.jar ]] || die "Maven ran but $tmp/marquez-api-$MARQUEZ_VERSION.jar is missing"
  echo "marquez-api:$MARQUEZ_VERSION" >"$tmp/.complete"
  mv "$tmp" "$dir"
}

# ---------------------------------------------------------------- Marquez server

# The cluster running, with Marquez's role and database.
start_database() {
  pg_start
  pg_database "$DB_NAME" "$DB_USER" "$DB_PASSWORD"
}

write_config() {
  cat >"$CONFIG" <<EOF
# Written by scripts/marquez.sh on every start; edits are lost.
server:
  applicationConnectors:
    - type: http
      bindHost: $HOST
      port: $MARQUEZ_PORT
      httpCompliance: RFC7230_LEGACY
  adminConnectors:
    - type: http
      bindHost: $HOST
      port: $MARQUEZ_ADMIN_PORT
  requestLog:
    appenders:
      - type: file
        currentLogFilename: $(yaml_quote "$ACCESS_LOG")
        archive: false

db:
  driverClass: org.postgresql.Driver
  url: jdbc:postgresql://$HOST:$MARQUEZ_PG_PORT/$DB_NAME
  user: $DB_USER
  password: $DB_PASSWORD

migrateOnStartup: true

graphql:
  enabled: true

search:
  enabled: false

logging:
  level: INFO
  appenders:
    - type: file
      currentLogFilename: $(yaml_quote "$MARQUEZ_LOG")
      archive: false
EOF
}

start_marquez() {
  local pid
  pid=$(marquez_pid)
  if [[ -n $pid ]]; then
    # Our process exists but does not answer (yet): give it the usual time.
    log "Marquez (pid $pid) is running but not answering yet; waiting"
  else
    refuse_port "$MARQUEZ_PORT" MARQUEZ_PORT
    refuse_port "$MARQUEZ_ADMIN_PORT" MARQUEZ_ADMIN_PORT
    command -v "$JAVA" >/dev/null || die "java not found (Java 17 is needed)"
    write_config
    : >"$MARQUEZ_LOG"
    log "starting Marquez $MARQUEZ_VERSION on $BASE_URL"
    # shellcheck disable=SC2086
    (cd "$MARQUEZ_HOME" && close_fds && exec nohup setsid "$JAVA" $MARQUEZ_JAVA_OPTS -cp "$CLASSPATH_DIR/*" \
        marquez.MarquezApp server "$CONFIG" >"$MARQUEZ_OUT" 2>&1 </dev/null 9>&- 7>&-) &
    pid=$!
    echo "$pid" >"$PID_FILE"
  fi
  local t0=$SECONDS rc=0
  wait_healthy "$pid" "$MARQUEZ_START_TIMEOUT" 1 answers || rc=$?
  ((rc == 0)) || show_log_tail 50 "$MARQUEZ_LOG" "$MARQUEZ_OUT"
  case $rc in
    0) log "Marquez ready at $BASE_URL ($((SECONDS - t0))s)" ;;
    1) rm -f "$PID_FILE"
       die "Marquez exited during startup" ;;
    2) die "Marquez did not answer GET $BASE_URL/api/v1/namespaces with 200 within ${MARQUEZ_START_TIMEOUT}s (pid $pid still running)" ;;
    # Up, but the health query fails: waiting will not help. (Seen when the database holds a
    # namespace name that Marquez accepted on write but cannot read back; 'reset' clears it.)
    *) die "Marquez (pid $pid) is up but GET $BASE_URL/api/v1/namespaces answers $ANSWER; see $MARQUEZ_LOG, or run '$0 reset'" ;;
  esac
}

stop_marquez() {
  local pid
  pid=$(marquez_pid)
  if [[ -z $pid ]]; then
    rm -f "$PID_FILE"
    return 0
  fi
  stop_pid "$pid" 30
  rm -f "$PID_FILE"
  log "Marquez stopped"
}

# ---------------------------------------------------------------- commands

# Start the API (and, with "ui", the web UI); prints nothing on stdout. One invocation at a
# time per state dir (parallel test workers may all call start; a first build takes minutes).
start_all() {
  take_lock "$MARQUEZ_HOME" 1800
  # Built first: if Maven or npm fails, nothing has been started.
  [[ ${1:-} == ui ]] && ensure_web_dist
  local pid
  ensure_jars
  pid=$(marquez_pid)
  if [[ -n $pid ]] && ! runs_from "$pid" "$CLASSPATH_DIR"; then
    log "Marquez (pid $pid) runs another build than $CLASSPATH_DIR; restarting it"
    stop_marquez
    pid=""
  fi
  if [[ -z $pid ]]; then  # refused before anything starts
    refuse_port "$MARQUEZ_PORT" MARQUEZ_PORT
    refuse_port "$MARQUEZ_ADMIN_PORT" MARQUEZ_ADMIN_PORT
  fi
  [[ ${1:-} == ui && -z $(web_pid) ]] && refuse_port "$MARQUEZ_WEB_PORT" MARQUEZ_WEB_PORT
  if [[ -n $pid ]] && healthy; then
    log "Marquez already running at $BASE_URL"
  else
    start_database
    start_marquez
  fi
  [[ ${1:-} == ui ]] && start_web
  return 0
}

cmd_start() {
  case "${1:-}" in
    "") start_all; echo "$BASE_URL" ;;
    --ui) start_all ui; echo "$BASE_URL"; echo "$WEB_URL" ;;
    *) echo "usage: $0 start [--ui]" >&2; exit 2 ;;
  esac
}

cmd_ui() {
  start_all ui
  echo "$WEB_URL"
}

cmd_stop() {
  take_lock "$MARQUEZ_HOME" 1800
  stop_web
  stop_marquez
  pg_stop
}

cmd_status() {
  local pid rc=3
  pid=$(marquez_pid)
  if [[ -z $pid ]] && port_in_use "$MARQUEZ_PORT"; then
    echo "marquez: not running; its port $MARQUEZ_PORT is held by $(port_holder "$MARQUEZ_PORT")"
  elif healthy; then
    echo "marquez: running at $BASE_URL (pid $pid)"
    rc=0
  elif [[ -n $pid ]]; then
    echo "marquez: process $pid running but GET $BASE_URL/api/v1/namespaces answers $(http_status "$MARQUEZ_PORT" /api/v1/namespaces), not 200"
  else
    echo "marquez: not running"
  fi
  web_status
  pg_status || true
  return $rc
}

cmd_reset() {
  take_lock "$MARQUEZ_HOME" 1800
  ensure_jars
  stop_marquez
  start_database
  pg_recreate_database "$DB_NAME" "$DB_USER"
  start_marquez
  echo "$BASE_URL"
}

case "${1:-}" in
  start) cmd_start "${@:2}" ;;
  ui) cmd_ui ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  reset) cmd_reset ;;
  build-ui) ensure_web_dist; echo "$WEB_DIST" ;;
  *) echo "usage: $0 start [--ui]|ui|build-ui|stop|status|reset" >&2; exit 2 ;;
esac
