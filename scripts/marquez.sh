#!/usr/bin/env bash
# Run a real Marquez server (and a private PostgreSQL cluster for it) on loopback only,
# for end-to-end tests and for trying openlineage-export locally.
#
# Usage: scripts/marquez.sh start [--ui]|ui|stop|status|reset
#
#   start   install PostgreSQL if needed (Debian apt), create/start a private cluster, get the
#           Marquez API server (see below), start it and wait until GET /api/v1/namespaces
#           answers 200. Idempotent. Progress goes to stderr; the base URL is the only thing
#           printed on stdout.
#   start --ui
#           the same, plus Marquez's own web UI on http://127.0.0.1:$MARQUEZ_WEB_PORT (see
#           below); prints the API's base URL, then the UI's on a second line.
#   ui      the same as start --ui, printing only the UI's URL.
#   stop    stop the web UI, Marquez and the PostgreSQL cluster.
#   status  say what is running (exit 0 only when Marquez answers).
#   reset   stop Marquez, drop and recreate the `marquez` database, start Marquez again.
#
# Where the Marquez API server comes from, first that applies:
#   1. MARQUEZ_LIB_DIR: jars of your own (marquez-api + its runtime dependencies).
#   2. Its source, ../shared/third_party/marquez-$MARQUEZ_VERSION beside the repository (or
#      MARQUEZ_SOURCE_DIR): built with Maven (scripts/marquez/source/pom.xml) into
#      $MARQUEZ_HOME/build/<version>-<hash of the source and the pom>/lib, once: about 2 minutes
#      the first time (and ~100 MB of dependencies into the local Maven repository), then reused
#      in a second. Nothing is written into the source tree.
#   3. Otherwise io.github.marquezproject:marquez-api from your Maven repository
#      (scripts/marquez/fetch/pom.xml), where it is served, cached in $MARQUEZ_HOME/lib.
#
# The web UI (start --ui, ui) is built from the source's web/ folder, once: copied (without
# node_modules) to $MARQUEZ_HOME/web/.unfinished, then upstream's own `npm ci` and
# `npm run build` (webpack) there, packages from the npm registry: about 10 minutes on 2 busy
# cores the first time (~2 minutes of it npm ci with an empty ~/.npm, ~700 MB of node_modules),
# log in $MARQUEZ_HOME/web-build.log. Only its dist/ (~40 MB) is kept, in
# $MARQUEZ_HOME/web/<version>-<hash of the web source and of this script's build recipe>/, and
# reused in a second. It is served by scripts/marquez/web/server.js (node's http module only: the
# files of dist/, and /api/v1, /api/v2beta passed on to the API, as upstream's setupProxy.js).
# Node.js 16+ and npm are needed (as root, Debian's nodejs and npm are installed when missing).
#
# Environment (defaults in brackets):
#   MARQUEZ_HOME           state dir [$HOME/.cache/openlineage-export/marquez]
#   MARQUEZ_PORT           API port [5000]
#   MARQUEZ_ADMIN_PORT     admin port [5001]
#   MARQUEZ_PG_PORT        PostgreSQL port [55432]
#   MARQUEZ_WEB_PORT       web UI port [3000]
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
# OS user (it refuses to run as root); otherwise as the invoking user.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$SCRIPT_DIR/lib/apt.sh"
. "$SCRIPT_DIR/lib/maven.sh"
FETCH_POM="$SCRIPT_DIR/marquez/fetch/pom.xml"
SOURCE_POM="$SCRIPT_DIR/marquez/source/pom.xml"

MARQUEZ_HOME=${MARQUEZ_HOME:-$HOME/.cache/openlineage-export/marquez}
MARQUEZ_PORT=${MARQUEZ_PORT:-5000}
MARQUEZ_ADMIN_PORT=${MARQUEZ_ADMIN_PORT:-5001}
MARQUEZ_PG_PORT=${MARQUEZ_PG_PORT:-55432}
MARQUEZ_WEB_PORT=${MARQUEZ_WEB_PORT:-3000}
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

HOST=127.0.0.1
BASE_URL="http://$HOST:$MARQUEZ_PORT"
WEB_URL="http://$HOST:$MARQUEZ_WEB_PORT"
WEB_SERVER="$SCRIPT_DIR/marquez/web/server.js"
DB_NAME=marquez
DB_USER=marquez
DB_PASSWORD=marquez

# Never let the caller's libpq settings (PGHOST, PGUSER, PGOPTIONS...) leak into our psql calls.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^PG' || true)

log() { echo "marquez.sh: $*" >&2; }
die() { echo "marquez.sh: error: $*" >&2; exit 1; }

mkdir -p "$MARQUEZ_HOME"
MARQUEZ_HOME=$(cd "$MARQUEZ_HOME" && pwd -P)
CONFIG="$MARQUEZ_HOME/marquez.yml"
PID_FILE="$MARQUEZ_HOME/marquez.pid"
MARQUEZ_LOG="$MARQUEZ_HOME/marquez.log"
MARQUEZ_OUT="$MARQUEZ_HOME/marquez.out"
ACCESS_LOG="$MARQUEZ_HOME/access.log"
LIB="$MARQUEZ_HOME/lib"
PGDATA_LINK="$MARQUEZ_HOME/pgdata"
WEB_PID_FILE="$MARQUEZ_HOME/web.pid"
WEB_LOG="$MARQUEZ_HOME/web.log"
WEB_BUILD_LOG="$MARQUEZ_HOME/web-build.log"

if [[ $(id -u) == 0 ]]; then IS_ROOT=1; PG_OWNER=postgres; else IS_ROOT=0; PG_OWNER=$(id -un); fi

# ---------------------------------------------------------------- helpers

# One invocation at a time per state dir (parallel test workers may all call start; a
# first build from source takes minutes).
take_lock() {
  exec 9>"$MARQUEZ_HOME/.lock"
  flock -w 1800 9 || die "another marquez.sh holds $MARQUEZ_HOME/.lock"
}

# Run a command as the PostgreSQL cluster owner (fd 9, the lock, is not passed on).
as_owner() {
  if [[ $IS_ROOT == 1 ]]; then
    local pg_home
    pg_home=$(getent passwd postgres | cut -d: -f6)
    (cd / && runuser -u postgres -- env HOME="${pg_home:-/}" "$@") 9>&-
  else
    "$@" 9>&-
  fi
}

# HTTP status code of GET http://127.0.0.1:$2$1 ($2: the API's port unless given; "000" when
# nothing answers). Loopback only.
http_status() {
  local code port=${2:-$MARQUEZ_PORT}
  if command -v curl >/dev/null 2>&1; then
    code=$(curl -s --noproxy '*' -o /dev/null -m 5 -w '%{http_code}' "http://$HOST:$port$1" 2>/dev/null) || true
  else
    code=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1
      printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$3" "$1" >&3
      read -r _ c _ <&3; echo "$c"' _ "$HOST" "$port" "$1" 2>/dev/null) || true
  fi
  echo "${code:-000}"
}

port_in_use() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

healthy() { [[ $(http_status /api/v1/namespaces) == 200 ]]; }

# PID of our Marquez process, or nothing.
marquez_pid() {
  local pid
  [[ -f $PID_FILE ]] || return 0
  pid=$(cat "$PID_FILE" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'marquez\.MarquezApp'; then
    echo "$pid"
  fi
}

# Whether process $1 runs Marquez from the jars in directory $2.
runs_from() {
  tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qxF "$2/*"
}

show_log_tail() {
  local f
  for f in "$MARQUEZ_LOG" "$MARQUEZ_OUT"; do
    if [[ -s $f ]] && grep -q "[^[:space:]]" "$f"; then
      echo "----- last 50 lines of $f -----" >&2
      tail -n 50 "$f" >&2
    fi
  done
}

yaml_quote() { printf "'%s'" "${1//\'/\'\'}"; }

# ---------------------------------------------------------------- PostgreSQL

PGBIN=""
find_pgbin() {
  local d
  PGBIN=""
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
    [[ -x $d/pg_ctl && -x $d/initdb && -x $d/postgres && -x $d/psql ]] && PGBIN=$d
  done
  [[ -n $PGBIN ]]
}

ensure_pg_installed() {
  find_pgbin && return 0
  [[ $IS_ROOT == 1 ]] || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; install them first (sudo apt-get install postgresql)"
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and apt-get is not available"
  log "installing PostgreSQL server (apt-get install postgresql)"
  if ! apt_get_install "$MARQUEZ_HOME/apt.log" postgresql; then
    tail -n 30 "$MARQUEZ_HOME/apt.log" >&2
    die "apt-get install postgresql failed (full log: $MARQUEZ_HOME/apt.log)"
  fi
  find_pgbin || die "PostgreSQL installed but pg_ctl/initdb not found under /usr/lib/postgresql/*/bin"
}

# Data dir: $MARQUEZ_HOME/pgdata. As root, the postgres user may be unable to reach it
# (e.g. /root is 0700); then the cluster lives under the postgres user's home and
# $MARQUEZ_HOME/pgdata is a symlink to it.
PGDATA=""
resolve_pgdata() {
  if [[ -L $PGDATA_LINK ]]; then
    PGDATA=$(readlink -f "$PGDATA_LINK")
  else
    PGDATA=$PGDATA_LINK
  fi
}

create_pgdata_dir() {
  mkdir -p "$PGDATA_LINK"
  if [[ $IS_ROOT == 1 ]]; then
    chown postgres: "$PGDATA_LINK"
    if ! (cd / && runuser -u postgres -- test -w "$PGDATA_LINK"); then
      rmdir "$PGDATA_LINK"
      local pg_home key target
      pg_home=$(getent passwd postgres | cut -d: -f6)
      [[ -n $pg_home && -d $pg_home ]] || pg_home=/var/lib/postgresql
      key=$(printf '%s' "$MARQUEZ_HOME" | cksum | cut -d' ' -f1)
      target="$pg_home/openlineage-export-marquez/$key"
      mkdir -p "$target"
      chown postgres: "$pg_home/openlineage-export-marquez" "$target"
      ln -s "$target" "$PGDATA_LINK"
    fi
  fi
  resolve_pgdata
  chmod 700 "$PGDATA"
}

socket_dir() {
  # Unix socket next to the data (peer auth for admin commands); /tmp if that path is too long.
  if (( ${#PGDATA} + 20 < 100 )); then echo "$PGDATA"; else echo /tmp; fi
}

pg_running() {
  [[ -n $PGDATA && -f $PGDATA/PG_VERSION ]] || return 1
  as_owner "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1
}

psql_admin() { # psql_admin SQL  -> prints unaligned tuples
  as_owner "$PGBIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "$(socket_dir)" -p "$MARQUEZ_PG_PORT" \
    -U "$PG_OWNER" -d postgres -c "$1"
}

ensure_pg_running() {
  ensure_pg_installed
  resolve_pgdata
  if [[ ! -f $PGDATA/PG_VERSION ]]; then
    if [[ -L $PGDATA_LINK ]]; then
      mkdir -p "$PGDATA"
      [[ $IS_ROOT == 1 ]] && chown postgres: "$PGDATA"
      chmod 700 "$PGDATA"
    else
      rmdir "$PGDATA_LINK" 2>/dev/null || true  # left empty by an interrupted run
      create_pgdata_dir
    fi
  fi
  # (create_pgdata_dir may have linked the cluster an earlier state dir of this path left.)
  if [[ ! -f $PGDATA/PG_VERSION ]]; then
    # Whatever is there was left half-made by an interrupted initdb (the folder is ours).
    find "$PGDATA" -mindepth 1 -delete
    log "creating PostgreSQL cluster in $PGDATA"
    if ! as_owner "$PGBIN/initdb" -D "$PGDATA" -E UTF8 --no-locale --auth-local=peer \
         --auth-host=scram-sha-256 >"$MARQUEZ_HOME/initdb.log" 2>&1; then
      cat "$MARQUEZ_HOME/initdb.log" >&2
      die "initdb failed"
    fi
    as_owner sh -c 'echo "include_if_exists = '"'"'marquez-local.conf'"'"'" >>"$1/postgresql.conf"' _ "$PGDATA"
  fi
  if pg_running; then
    local port
    port=$(sed -n 4p "$PGDATA/postmaster.pid" 2>/dev/null || true)
    [[ $port == "$MARQUEZ_PG_PORT" ]] ||
      die "PostgreSQL cluster $PGDATA runs on port $port, not $MARQUEZ_PG_PORT; run '$0 stop' first"
  else
    port_in_use "$MARQUEZ_PG_PORT" && die "port $HOST:$MARQUEZ_PG_PORT is already in use (set MARQUEZ_PG_PORT)"
    # Rewritten on every start so that port changes take effect.
    as_owner sh -c 'cat >"$1/marquez-local.conf"' _ "$PGDATA" <<EOF
# written by scripts/marquez.sh
listen_addresses = '$HOST'
port = $MARQUEZ_PG_PORT
unix_socket_directories = '$(socket_dir)'
synchronous_commit = off
EOF
    if ! as_owner "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/postgresql.log" -w -t 60 start >/dev/null 2>&1; then
      tail -n 30 "$PGDATA/postgresql.log" >&2 || true
      die "PostgreSQL did not start (log: $PGDATA/postgresql.log)"
    fi
    log "PostgreSQL running on $HOST:$MARQUEZ_PG_PORT"
  fi
  if [[ -z $(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'") ]]; then
    psql_admin "CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASSWORD'" >/dev/null
  fi
  if [[ -z $(psql_admin "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'") ]]; then
    psql_admin "CREATE DATABASE $DB_NAME OWNER $DB_USER" >/dev/null
  fi
}

stop_pg() {
  find_pgbin || return 0
  resolve_pgdata
  if pg_running; then
    as_owner "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 60 stop >/dev/null
    log "PostgreSQL stopped"
  fi
}

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
  local src key dir tmp build_log t0
  src=$(cd "$MARQUEZ_SOURCE_DIR" && pwd -P)
  [[ -d $src/api/src/main/java && -d $src/clients/java/src/main/java ]] ||
    die "$src is not a Marquez source tree (it needs api/src/main and clients/java/src/main)"
  key=$(source_key "$src")
  dir="$MARQUEZ_HOME/build/$MARQUEZ_VERSION-$key"
  CLASSPATH_DIR="$dir/lib"
  if [[ -f $dir/.complete && -f $CLASSPATH_DIR/marquez-api-$MARQUEZ_VERSION.jar ]]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found (Maven 3 builds Marquez $MARQUEZ_VERSION from $src, once)"
  command -v javac >/dev/null || die "javac not found (a JDK 17 builds Marquez $MARQUEZ_VERSION from $src, once)"
  build_log="$MARQUEZ_HOME/maven-build.log"
  log "building Marquez $MARQUEZ_VERSION from its source ($src) with Maven, once for this source:"
  log "  about 2 minutes the first time, more while Maven downloads its ~100 MB of dependencies (log: $build_log)"
  tmp="$MARQUEZ_HOME/build/.unfinished"
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
  # Earlier builds of this version (another source or pom) are of no further use.
  rm -rf "$MARQUEZ_HOME/build/$MARQUEZ_VERSION-"????????????????
  mv "$tmp" "$dir"
  log "built Marquez $MARQUEZ_VERSION in $((SECONDS - t0))s ($dir)"
}

fetch_from_maven() {
  CLASSPATH_DIR=$LIB
  local stamp
  stamp="marquez-api:$MARQUEZ_VERSION pom:$(cksum <"$FETCH_POM" | cut -d' ' -f1)"
  if [[ -f $LIB/.complete && $(cat "$LIB/.complete") == "$stamp" &&
        -f $LIB/marquez-api-$MARQUEZ_VERSION.jar ]]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found (needed once to fetch marquez-api $MARQUEZ_VERSION)"
  if [[ -n $MARQUEZ_SOURCE_DIR ]]; then
    log "no Marquez source at $(realpath -m "$MARQUEZ_SOURCE_DIR") to build"
  fi
  log "fetching marquez-api $MARQUEZ_VERSION and its dependencies with Maven"
  local tmp="$MARQUEZ_HOME/lib.tmp"
  rm -rf "$tmp"
  # shellcheck disable=SC2086
  if ! (cd "$MARQUEZ_HOME" && mvn -B -q -U -Dstyle.color=never $MARQUEZ_MVN_ARGS -f "$FETCH_POM" -Dmarquez.version="$MARQUEZ_VERSION" \
          dependency:copy-dependencies -DoutputDirectory="$tmp") >"$MARQUEZ_HOME/maven.log" 2>&1 9>&-; then
    sed 's/\x1b\[[0-9;]*m//g' "$MARQUEZ_HOME/maven.log" | grep -v '^\[ERROR\] *$' | head -n 5 >&2
    die "Maven could not fetch io.github.marquezproject:marquez-api:$MARQUEZ_VERSION (log: $MARQUEZ_HOME/maven.log).
  If your Maven repository does not serve it, build it from its source: put Marquez's source tree
  (its api/ and clients/java/) in ../shared/third_party/marquez-$MARQUEZ_VERSION beside the repository,
  or set MARQUEZ_SOURCE_DIR to it; or put marquez-api-$MARQUEZ_VERSION.jar and its runtime
  dependencies in a directory and set MARQUEZ_LIB_DIR to it."
  fi
  [[ -f $tmp/marquez-api-$MARQUEZ_VERSION.jar ]] || die "Maven ran but $tmp/marquez-api-$MARQUEZ_VERSION.jar is missing"
  rm -rf "$LIB"
  mv "$tmp" "$LIB"
  echo "$stamp" >"$LIB/.complete"
}

# ---------------------------------------------------------------- Marquez server

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
    port_in_use "$MARQUEZ_PORT" && die "port $HOST:$MARQUEZ_PORT is in use by another program (set MARQUEZ_PORT)"
    port_in_use "$MARQUEZ_ADMIN_PORT" && die "port $HOST:$MARQUEZ_ADMIN_PORT is in use by another program (set MARQUEZ_ADMIN_PORT)"
    command -v "$JAVA" >/dev/null || die "java not found (Java 17 is needed)"
    write_config
    : >"$MARQUEZ_LOG"
    log "starting Marquez $MARQUEZ_VERSION on $BASE_URL"
    # shellcheck disable=SC2086
    (cd "$MARQUEZ_HOME" && exec nohup setsid "$JAVA" $MARQUEZ_JAVA_OPTS -cp "$CLASSPATH_DIR/*" \
        marquez.MarquezApp server "$CONFIG" >"$MARQUEZ_OUT" 2>&1 </dev/null 9>&-) &
    pid=$!
    echo "$pid" >"$PID_FILE"
  fi
  local t0=$SECONDS code
  while :; do
    code=$(http_status /api/v1/namespaces)
    [[ $code == 200 ]] && break
    if [[ $code == 5* ]]; then
      # Up, but the health query fails: waiting will not help. (Seen when the database holds a
      # namespace name that Marquez accepted on write but cannot read back; 'reset' clears it.)
      show_log_tail
      die "Marquez (pid $pid) is up but GET $BASE_URL/api/v1/namespaces answers $code; see $MARQUEZ_LOG, or run '$0 reset'"
    fi
    if [[ ! -d /proc/$pid ]]; then
      show_log_tail
      rm -f "$PID_FILE"
      die "Marquez exited during startup"
    fi
    if (( SECONDS - t0 >= MARQUEZ_START_TIMEOUT )); then
      show_log_tail
      die "Marquez did not answer GET $BASE_URL/api/v1/namespaces with 200 within ${MARQUEZ_START_TIMEOUT}s (pid $pid still running)"
    fi
    sleep 1
  done
  log "Marquez ready at $BASE_URL ($((SECONDS - t0))s)"
}

stop_marquez() {
  local pid i
  pid=$(marquez_pid)
  if [[ -z $pid ]]; then
    rm -f "$PID_FILE"
    return 0
  fi
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    [[ -d /proc/$pid ]] || break
    sleep 0.1
  done
  if [[ -d /proc/$pid ]]; then
    kill -9 "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$PID_FILE"
  log "Marquez stopped"
}

# ---------------------------------------------------------------- web UI

# Node.js (and npm, to build) on PATH; as root on Debian, installed from its packages if missing.
have() { local c; for c; do command -v "$c" >/dev/null 2>&1 || return 1; done; }

ensure_node() {
  local need=("$NODE") major
  [[ ${1:-} == npm ]] && need+=("$NPM")
  if ! have "${need[@]}"; then
    if [[ $IS_ROOT != 1 ]] || ! have apt-get; then
      die "Node.js and npm are needed to build and serve Marquez's web UI (sudo apt-get install nodejs npm)"
    fi
    log "installing Node.js and npm (apt-get install nodejs npm)"
    if ! apt_get_install "$MARQUEZ_HOME/apt.log" nodejs npm; then
      tail -n 30 "$MARQUEZ_HOME/apt.log" >&2
      die "apt-get install nodejs npm failed (full log: $MARQUEZ_HOME/apt.log)"
    fi
    have "${need[@]}" || die "Node.js and npm installed, but ${need[*]} not found on PATH"
  fi
  major=$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  (( major >= 16 )) ||
    die "Marquez's web UI needs Node.js 16 or later; $NODE is $("$NODE" --version 2>&1 | head -n 1)"
}

# How the UI is built, in a copy of its source: upstream's own npm ci and npm run build.
web_recipe() {
  npm_config_update_notifier=false "$NPM" ci --no-audit --no-fund --prefer-offline &&
    "$NPM" run build
}

# Hash of what a build of the UI is made of: the version, the web source (without what a build
# adds) and the recipe (web_recipe); other changes to this script keep the build.
web_key() {
  {
    echo "marquez-web $MARQUEZ_VERSION"
    declare -f web_recipe
    (cd "$1" && find . \( -path ./node_modules -o -path ./dist -o -path ./libs/graph/node_modules \) \
       -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -c1-16
}

# npm's and webpack's first errors in the UI's build log, then its tail, on stderr.
show_web_build_errors() {
  local errors
  errors=$(grep -E '^(npm (error|ERR!) +[^ ]|ERROR in |Error: )' "$WEB_BUILD_LOG" | head -n 15 || true)
  if [[ -n $errors ]]; then
    echo "----- first errors in $WEB_BUILD_LOG -----" >&2
    echo "$errors" >&2
  fi
  echo "----- last 15 lines of $WEB_BUILD_LOG -----" >&2
  tail -n 15 "$WEB_BUILD_LOG" >&2
}

# build_web SOURCE DIR: web_recipe in a copy of SOURCE; its dist/ kept in DIR.
build_web() {
  local src=$1 dir=$2 tmp="$MARQUEZ_HOME/web/.unfinished" t0=$SECONDS
  ensure_node npm
  log "building Marquez's web UI from its source ($src) with npm ci and npm run build, once for"
  log "  this source: about 10 minutes on 2 busy cores the first time (log: $WEB_BUILD_LOG)"
  rm -rf "$tmp"
  mkdir -p "$tmp/src"
  # A copy without what a build adds; writable (the source may be read-only).
  tar -C "$src" --exclude=./node_modules --exclude=./dist --exclude=./libs/graph/node_modules -cf - . |
    tar -C "$tmp/src" --no-same-owner -xf -
  chmod -R u+w "$tmp/src"
  if ! (cd "$tmp/src" && web_recipe) >"$WEB_BUILD_LOG" 2>&1 9>&-; then
    show_web_build_errors
    rm -rf "$tmp"
    die "npm could not build Marquez's web UI from $src (log: $WEB_BUILD_LOG)"
  fi
  [[ -f $tmp/src/dist/index.html && -f $tmp/src/dist/bundle.js ]] ||
    die "npm run build ran but left no dist/index.html and dist/bundle.js in $tmp/src (log: $WEB_BUILD_LOG)"
  mv "$tmp/src/dist" "$tmp/dist"
  rm -rf "$tmp/src"  # node_modules, ~700 MB: serving needs dist/ only
  echo "$src" >"$tmp/.complete"
  # Earlier builds of this version (another source or recipe) are of no further use.
  rm -rf "$MARQUEZ_HOME/web/$MARQUEZ_VERSION-"????????????????
  mv "$tmp" "$dir"
  log "built Marquez's web UI in $((SECONDS - t0))s ($dir)"
}

# Sets WEB_DIST: the UI built from the source's web/ folder (built now if need be).
WEB_DIST=""
ensure_web_dist() {
  local web src dir
  [[ -n $MARQUEZ_SOURCE_DIR ]] ||
    die "Marquez's web UI is built from its source (web/), and MARQUEZ_SOURCE_DIR is empty"
  web="$MARQUEZ_SOURCE_DIR/web"
  [[ -f $web/package.json && -f $web/package-lock.json ]] ||
    die "no source of Marquez's web UI to build at $(realpath -m "$web") (its package.json and package-lock.json)"
  src=$(cd "$web" && pwd -P)
  dir="$MARQUEZ_HOME/web/$MARQUEZ_VERSION-$(web_key "$src")"
  WEB_DIST="$dir/dist"
  [[ -f $dir/.complete && -f $WEB_DIST/index.html ]] || build_web "$src" "$dir"
}

# PID of the web UI server started with this MARQUEZ_HOME (from this checkout or another one:
# its pid file is in MARQUEZ_HOME), or nothing.
web_pid() {
  local pid
  [[ -f $WEB_PID_FILE ]] || return 0
  pid=$(cat "$WEB_PID_FILE" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if [[ -r /proc/$pid/cmdline ]] &&
     tr '\0' '\n' <"/proc/$pid/cmdline" | grep -q '/scripts/marquez/web/server\.js$'; then
    echo "$pid"
  fi
}

# What web UI server $1 runs and serves: "SERVER_JS DIST PORT API_URL".
web_serves() { tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | tail -n 4 | paste -sd' '; }

web_healthy() {
  [[ $(http_status / "$MARQUEZ_WEB_PORT") == 200 &&
     $(http_status /api/v1/namespaces "$MARQUEZ_WEB_PORT") == 200 ]]
}

show_web_log_tail() {
  if [[ -s $WEB_LOG ]]; then
    echo "----- last 30 lines of $WEB_LOG -----" >&2
    tail -n 30 "$WEB_LOG" >&2
  fi
}

start_web() {
  local pid t0
  pid=$(web_pid)
  if [[ -n $pid && $(web_serves "$pid") != "$WEB_SERVER $WEB_DIST $MARQUEZ_WEB_PORT $BASE_URL" ]]; then
    log "the web UI (pid $pid) runs another checkout's server or serves another build, port or API; restarting it"
    stop_web
    pid=""
  fi
  if [[ -n $pid ]] && web_healthy; then
    log "web UI already running at $WEB_URL"
    return 0
  fi
  if [[ -z $pid ]]; then
    port_in_use "$MARQUEZ_WEB_PORT" &&
      die "port $HOST:$MARQUEZ_WEB_PORT is in use by another program (set MARQUEZ_WEB_PORT)"
    ensure_node
    log "starting Marquez's web UI on $WEB_URL (API: $BASE_URL)"
    (cd "$MARQUEZ_HOME" && exec nohup setsid "$NODE" "$WEB_SERVER" "$WEB_DIST" "$MARQUEZ_WEB_PORT" \
        "$BASE_URL" >"$WEB_LOG" 2>&1 </dev/null 9>&-) &
    pid=$!
    echo "$pid" >"$WEB_PID_FILE"
  fi
  t0=$SECONDS
  until web_healthy; do
    if [[ ! -d /proc/$pid ]]; then
      show_web_log_tail
      rm -f "$WEB_PID_FILE"
      die "Marquez's web UI exited during startup (log: $WEB_LOG)"
    fi
    if (( SECONDS - t0 >= 30 )); then
      show_web_log_tail
      die "Marquez's web UI (pid $pid) did not answer GET $WEB_URL/ and $WEB_URL/api/v1/namespaces with 200 within 30s"
    fi
    sleep 0.5
  done
  log "web UI ready at $WEB_URL"
}

stop_web() {
  local pid i
  pid=$(web_pid)
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      [[ -d /proc/$pid ]] || break
      sleep 0.1
    done
    [[ -d /proc/$pid ]] && kill -9 "$pid" 2>/dev/null
    log "web UI stopped"
  fi
  rm -f "$WEB_PID_FILE"
}

# ---------------------------------------------------------------- commands

# Start the API (and, with "ui", the web UI); prints nothing on stdout.
start_all() {
  take_lock
  # Built first: if Maven or npm fails, nothing has been started.
  [[ ${1:-} == ui ]] && ensure_web_dist
  local pid
  pid=$(marquez_pid)
  if [[ -z $pid ]] && healthy; then
    log "something already answers like Marquez at $BASE_URL (not started by this script); using it"
  else
    ensure_jars
    if [[ -n $pid ]] && ! runs_from "$pid" "$CLASSPATH_DIR"; then
      log "Marquez (pid $pid) runs another build than $CLASSPATH_DIR; restarting it"
      stop_marquez
      pid=""
    fi
    if [[ -n $pid ]] && healthy; then
      log "Marquez already running at $BASE_URL"
    else
      ensure_pg_running
      start_marquez
    fi
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
  take_lock
  stop_web
  stop_marquez
  stop_pg
}

cmd_status() {
  local pid rc=3
  pid=$(marquez_pid)
  if healthy; then
    echo "marquez: running at $BASE_URL${pid:+ (pid $pid)}"
    rc=0
  elif [[ -n $pid ]]; then
    echo "marquez: process $pid running but GET $BASE_URL/api/v1/namespaces answers $(http_status /api/v1/namespaces), not 200"
  else
    echo "marquez: not running"
  fi
  pid=$(web_pid)
  if [[ -n $pid ]]; then
    local serves port
    read -r -a serves <<<"$(web_serves "$pid")"
    port=${serves[2]:-?}
    if [[ $(http_status / "$port") == 200 ]]; then
      echo "web UI: running at http://$HOST:$port (pid $pid; API ${serves[3]:-?})"
    else
      echo "web UI: process $pid running but GET http://$HOST:$port/ answers $(http_status / "$port")"
    fi
  else
    echo "web UI: not running"
  fi
  if find_pgbin; then
    resolve_pgdata
    if [[ ! -f $PGDATA/PG_VERSION ]]; then
      echo "postgresql: no cluster yet ($PGDATA_LINK)"
    elif pg_running; then
      echo "postgresql: running on $HOST:$(sed -n 4p "$PGDATA/postmaster.pid") (data: $PGDATA)"
    else
      echo "postgresql: stopped (data: $PGDATA)"
    fi
  else
    echo "postgresql: not installed"
  fi
  return $rc
}

cmd_reset() {
  take_lock
  ensure_jars
  stop_marquez
  ensure_pg_running
  psql_admin "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" >/dev/null
  psql_admin "CREATE DATABASE $DB_NAME OWNER $DB_USER" >/dev/null
  log "database $DB_NAME recreated"
  start_marquez
  echo "$BASE_URL"
}

case "${1:-}" in
  start) cmd_start "${@:2}" ;;
  ui) cmd_ui ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  reset) cmd_reset ;;
  -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0" ;;
  *) echo "usage: $0 start [--ui]|ui|stop|status|reset" >&2; exit 2 ;;
esac
