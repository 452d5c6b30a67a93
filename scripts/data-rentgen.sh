#!/usr/bin/env bash
# Run a real Data.Rentgen (the OpenLineage server fed through Kafka: PyPI's data-rentgen, its
# Kafka consumer and REST server, and with --ui its web UI) on loopback only, against the
# project's Kafka broker and PostgreSQL cluster, for end-to-end tests and for trying the kafka
# transport with Data.Rentgen locally (docs/data-rentgen.md).
#
# Usage: scripts/data-rentgen.sh start [--ui]|ui|build-ui|link JOB [LOCATION]|stop|status
#
#   start   install data-rentgen[server,consumer,postgres]==$DATA_RENTGEN_VERSION into a venv of
#           its own on Python 3.12 or later (pyenv's; with scripts/data-rentgen/constraints.txt,
#           the versions it was tested with), once, into
#           $OLX_CACHE/data-rentgen/venv/<version>-<hash of the recipe> (every checkout's); start
#           this checkout's Kafka broker (scripts/kafka.sh start: idempotent) and create the
#           database `data_rentgen` in its PostgreSQL cluster (scripts/postgres.sh createdb); run
#           its migrations and
#           its partition script for every month from $DATA_RENTGEN_FIRST_MONTH (the demo's and
#           the synthetic trail's runs start in November 2026) to the end of next month; start
#           its consumer (topics matching $DATA_RENTGEN_TOPICS, from their first message) and its
#           REST server, and wait until both answer. Idempotent. Progress goes to stderr; the
#           REST server's URL is the only thing printed on stdout.
#   start --ui
#           the same, plus its web UI on http://127.0.0.1:$DATA_RENTGEN_UI_PORT (log in with any
#           name and password): built from ../shared/third_party/data-rentgen-ui-$DATA_RENTGEN_VERSION
#           (or DATA_RENTGEN_UI_SOURCE) with upstream's own npm ci and npm run build, in a copy,
#           with an empty environment (its vite.config puts the whole of process.env into the
#           page), once: kept in $OLX_CACHE/data-rentgen/web/<version>-<hash of the source and
#           the recipe>/dist (every checkout's); served by scripts/data-rentgen/web/server.js,
#           which passes /v1/ on to the REST server. Prints the REST URL, then the UI's.
#   ui      the same as start --ui, printing only the UI's URL.
#   build-ui  only build the web UI (when not built yet); prints the folder it is served from.
#   link JOB [LOCATION]
#           the web UI's page of the job named JOB (at LOCATION, e.g.
#           lineage-hub://acme-analytics, when several locations have one), at its runs since
#           the first month Data.Rentgen has partitions for (the page's own default is the last
#           week, which holds none of the demo's runs); its Lineage tab then draws at once. The
#           REST server must run. Prints the link (and, on stderr, to log in first: the login
#           page's way back keeps the page, not its filter).
#   stop    stop the web UI, the REST server and the consumer (not Kafka or PostgreSQL: its
#           other services use them; scripts/kafka.sh and scripts/postgres.sh stop them).
#   status  say what is running (exit 0 only when the consumer and the REST server answer).
#
# Each checkout runs a Data.Rentgen of its own (lib/checkout.sh), on its own Kafka broker and
# PostgreSQL cluster: its state (pid files, logs, configuration, token key) in
# $DATA_RENTGEN_HOME, its ports from its slot (slot 0: 58000, 58001, 53000; scripts/ports.sh
# prints them). This script stops and restarts only processes it started from this checkout;
# when one of its ports is held by anything else, it refuses, in one line naming the port and
# what holds it.
#
# What it is given (DATA_RENTGEN__* variables of its own, set here): the database URL, the
# broker, the topic pattern, the malformed-messages topic $DATA_RENTGEN_MALFORMED_TOPIC, the
# consumer group $DATA_RENTGEN_GROUP, auto_offset_reset=earliest (a new topic is read from its
# first message), metadata_max_age_ms=2000 (a new topic is found within seconds), the dummy
# auth provider (any name and password; its token key made once, in $DATA_RENTGEN_HOME/jwt.key).
# DATA_RENTGEN__* variables in the caller's environment are passed on after ours, so they win.
#
# Environment (defaults in brackets):
#   DATA_RENTGEN_HOME         this checkout's Data.Rentgen state [$OLX_CHECKOUT_STATE/data-rentgen]
#   DATA_RENTGEN_VERSION      data-rentgen version from PyPI [0.7.2]
#   DATA_RENTGEN_PYTHON       Python 3.12+ for its venv [pyenv's newest 3.12, else 3.13, else
#                             python3.12 / python3.13 on PATH]
#   DATA_RENTGEN_PORT         REST server port [58000 + 10 x slot]
#   DATA_RENTGEN_CONSUMER_PORT  the consumer's health endpoint port [58001 + 10 x slot]
#   DATA_RENTGEN_UI_PORT      web UI port [53000 + 10 x slot]
#   OLX_PORT_SLOT, OLX_CHECKOUT_STATE, OLX_CACHE
#                             this checkout's port slot, its state, the shared builds
#                             (scripts/ports.sh --help)
#   DATA_RENTGEN_TOPICS       regular expression of the topics its consumer reads
#                             [^input\.runs(\..+)?$: input.runs, and input.runs.<anything>]
#   DATA_RENTGEN_MALFORMED_TOPIC  where it puts events it cannot parse [input.runs__malformed]
#   DATA_RENTGEN_GROUP        its consumer group [data-rentgen]
#   DATA_RENTGEN_FIRST_MONTH  first month (YYYY-MM) it has partitions for [2026-11]
#   DATA_RENTGEN_UI_SOURCE    the web UI's source [../shared/third_party/data-rentgen-ui-$DATA_RENTGEN_VERSION]
#   DATA_RENTGEN_START_TIMEOUT  seconds to wait for each process to answer [120]
#   PIP_INDEX_URL...          pip's own variables, for where the packages come from
#   NODE, NPM                 node and npm binaries, for the web UI [node, npm]
#   and those of scripts/kafka.sh and scripts/postgres.sh (KAFKA_PORT, MARQUEZ_PG_PORT...).
#
# Everything listens on 127.0.0.1 only.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/service.sh
. "$SCRIPT_DIR/lib/service.sh"
CONSTRAINTS="$SCRIPT_DIR/data-rentgen/constraints.txt"
WEB_SERVER="$SCRIPT_DIR/data-rentgen/web/server.js"

checkout_state
checkout_ports
DATA_RENTGEN_HOME=${DATA_RENTGEN_HOME:-$OLX_CHECKOUT_STATE/data-rentgen}
DATA_RENTGEN_BUILDS="$OLX_CACHE/data-rentgen"  # every checkout's: its venv and web UI, by hash
DATA_RENTGEN_VERSION=${DATA_RENTGEN_VERSION:-0.7.2}
DATA_RENTGEN_TOPICS=${DATA_RENTGEN_TOPICS:-'^input\.runs(\..+)?$'}
DATA_RENTGEN_MALFORMED_TOPIC=${DATA_RENTGEN_MALFORMED_TOPIC:-input.runs__malformed}
DATA_RENTGEN_GROUP=${DATA_RENTGEN_GROUP:-data-rentgen}
DATA_RENTGEN_FIRST_MONTH=${DATA_RENTGEN_FIRST_MONTH:-2026-11}
DATA_RENTGEN_UI_SOURCE=${DATA_RENTGEN_UI_SOURCE:-$SCRIPT_DIR/../../shared/third_party/data-rentgen-ui-$DATA_RENTGEN_VERSION}
DATA_RENTGEN_START_TIMEOUT=${DATA_RENTGEN_START_TIMEOUT:-120}
NODE=${NODE:-node}
NPM=${NPM:-npm}

HOST=$LOOPBACK
BASE_URL="http://$HOST:$DATA_RENTGEN_PORT"
UI_URL="http://$HOST:$DATA_RENTGEN_UI_PORT"
DB_NAME=data_rentgen
EXTRAS="server,consumer,postgres"

mkdir -p "$DATA_RENTGEN_HOME" "$DATA_RENTGEN_BUILDS/web"
DATA_RENTGEN_HOME=$(cd "$DATA_RENTGEN_HOME" && pwd -P)
DATA_RENTGEN_BUILDS=$(cd "$DATA_RENTGEN_BUILDS" && pwd -P)
UI_LOG="$DATA_RENTGEN_HOME/web.log"
UI_BUILD_LOG="$DATA_RENTGEN_BUILDS/web-build.log"

# ---------------------------------------------------------------- helpers

# One invocation at a time per state dir. The builds every checkout shares hold locks of their
# own, as long as they build (the scripts before per-checkout state held these too): the venv
# $DATA_RENTGEN_BUILDS/.lock, the web UI $DATA_RENTGEN_BUILDS/web/.lock.
lock() { take_lock "$DATA_RENTGEN_HOME" 1800; }

# PID of our process NAME (consumer, server, web) when it still runs what its pid file says.
pid_of() { started_pid "$DATA_RENTGEN_HOME/$1.pid" "$2"; }

stop_named() { # stop_named NAME PID
  stop_pid "$2" 15
  rm -f "$DATA_RENTGEN_HOME/$1.pid"
  log "$1 stopped"
}

# ---------------------------------------------------------------- its venv

# Sets PYTHON: an interpreter of 3.12 or later (data-rentgen 0.5+ needs it).
PYTHON=""
find_python() {
  local candidates=() root c
  if [[ -n ${DATA_RENTGEN_PYTHON:-} ]]; then
    candidates=("$DATA_RENTGEN_PYTHON")
  else
    root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
    mapfile -t candidates < <(
      for c in "$root"/versions/3.12.*/bin/python; do [[ -x $c ]] && echo "$c"; done | sort -V -r
      for c in "$root"/versions/3.13.*/bin/python; do [[ -x $c ]] && echo "$c"; done | sort -V -r
      echo python3.12; echo python3.13)
  fi
  for c in "${candidates[@]}"; do
    if "$c" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      PYTHON=$(command -v "$c")
      return 0
    fi
  done
  die "no Python 3.12 or later found (data-rentgen $DATA_RENTGEN_VERSION needs it; pip offers only 0.3.1 on 3.11): install one with pyenv, or set DATA_RENTGEN_PYTHON"
}

# Sets VENV: the venv with data-rentgen installed (made now if need be).
VENV=""
ensure_venv() {
  find_python
  local key python_version
  python_version=$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')
  key=$({ echo "data-rentgen[$EXTRAS]==$DATA_RENTGEN_VERSION python $python_version"
          cat "$CONSTRAINTS"; } | sha256sum | cut -c1-16)
  VENV="$DATA_RENTGEN_BUILDS/venv/$DATA_RENTGEN_VERSION-$key"
  venv_made "$VENV" || build_locked "$DATA_RENTGEN_BUILDS/.lock" 1800 make_venv "$VENV" "$python_version"
  touch_build "$VENV"
}

venv_made() { [[ -f $1/.complete && -x $1/bin/python ]]; }

# make_venv DIR PYTHON_VERSION (under the build lock): the venv, made where it will live (a
# venv's scripts name their own path), then marked complete.
make_venv() {
  local dir=$1 python_version=$2 t0=$SECONDS pip_log="$DATA_RENTGEN_BUILDS/pip.log"
  venv_made "$dir" && return 0
  log "installing data-rentgen[$EXTRAS]==$DATA_RENTGEN_VERSION on Python $python_version ($PYTHON)"
  log "  into $dir, once: about a minute (log: $pip_log)"
  mkdir -p "$DATA_RENTGEN_BUILDS/venv"
  rm -rf "$dir"
  if ! { "$PYTHON" -m venv "$dir" &&
         "$dir/bin/python" -m pip install -q --disable-pip-version-check -c "$CONSTRAINTS" \
           "data-rentgen[$EXTRAS]==$DATA_RENTGEN_VERSION"; } >"$pip_log" 2>&1 9>&-; then
    show_log_tail 30 "$pip_log"
    rm -rf "$dir"
    die "pip could not install data-rentgen[$EXTRAS]==$DATA_RENTGEN_VERSION (log: $pip_log)"
  fi
  echo "$DATA_RENTGEN_VERSION $PYTHON" >"$dir/.complete"
  touch_build "$dir"
  # Venvs of earlier recipes that nothing runs from and nothing used for a week.
  prune_builds "$dir" "$DATA_RENTGEN_BUILDS/venv/"*
  log "installed data-rentgen $DATA_RENTGEN_VERSION in $((SECONDS - t0))s"
}

# ---------------------------------------------------------------- configuration

# The token key of the dummy auth provider: made once, kept private.
jwt_key() {
  local file="$DATA_RENTGEN_HOME/jwt.key"
  if [[ ! -s $file ]]; then
    (umask 077 && od -An -tx1 -N24 /dev/urandom | tr -d ' \n' >"$file")
  fi
  cat "$file"
}

# Sets DR_ENV: the environment of Data.Rentgen's processes (DATABASE_URL must be set).
DR_ENV=()
DATABASE_URL=""
configure() {
  local bootstrap=$1 extra
  DR_ENV=(
    "PATH=$VENV/bin:/usr/bin:/bin" "HOME=$DATA_RENTGEN_HOME" "LANG=C.UTF-8"
    "DATA_RENTGEN__DATABASE__URL=$DATABASE_URL"
    "PYTHONUNBUFFERED=1"
    "DATA_RENTGEN__KAFKA__BOOTSTRAP_SERVERS=[\"$bootstrap\"]"
    "DATA_RENTGEN__KAFKA__METADATA_MAX_AGE_MS=2000"
    "DATA_RENTGEN__CONSUMER__TOPICS_LIST=[]"
    "DATA_RENTGEN__CONSUMER__TOPICS_PATTERN=$DATA_RENTGEN_TOPICS"
    "DATA_RENTGEN__CONSUMER__GROUP_ID=$DATA_RENTGEN_GROUP"
    "DATA_RENTGEN__CONSUMER__AUTO_OFFSET_RESET=earliest"
    "DATA_RENTGEN__PRODUCER__MALFORMED_TOPIC=$DATA_RENTGEN_MALFORMED_TOPIC"
    "DATA_RENTGEN__AUTH__PROVIDER=data_rentgen.server.providers.auth.dummy_provider.DummyAuthProvider"
    "DATA_RENTGEN__AUTH__ACCESS_TOKEN__SECRET_KEY=$(jwt_key)"
    "DATA_RENTGEN__AUTH__PERSONAL_TOKENS__ENABLED=false"
    "DATA_RENTGEN__SERVER__STATIC_FILES__ENABLED=false"
  )
  while read -r extra; do
    [[ -n $extra ]] && DR_ENV+=("$extra=${!extra}")
  done < <(compgen -e | grep '^DATA_RENTGEN__' || true)
}

# runs NAME COMMAND...: COMMAND in Data.Rentgen's environment, its output in NAME.log.
run_logged() {
  local name=$1
  shift
  if ! (cd "$DATA_RENTGEN_HOME" && env -i "${DR_ENV[@]}" "$@") >"$DATA_RENTGEN_HOME/$name.log" 2>&1 9>&-; then
    show_log_tail 30 "$DATA_RENTGEN_HOME/$name.log"
    die "$name failed (log: $DATA_RENTGEN_HOME/$name.log)"
  fi
}

# The database, in the project's PostgreSQL cluster (started if need be).
prepare_database() {
  local url
  url=$("$SCRIPT_DIR/postgres.sh" createdb "$DB_NAME" 9>&-) ||
    die "the database $DB_NAME could not be created in the project's PostgreSQL cluster (above)"
  DATABASE_URL="postgresql+asyncpg://${url#postgresql://}"
}

# Its tables (migrations) and the partitions of the months the events fall in.
migrate() {
  local start=$1 end=$2
  run_logged migrations "$VENV/bin/python" -m data_rentgen.db.migrations upgrade head
  run_logged partitions "$VENV/bin/python" -m data_rentgen.db.scripts.create_partitions \
    --start "$start" --end "$end" --granularity month
  log "database $DB_NAME migrated, partitions from $start to $end"
}

# ---------------------------------------------------------------- consumer and REST server

consumer_healthy() { [[ $(http_status "$DATA_RENTGEN_CONSUMER_PORT" /monitoring/ping) == 2* ]]; }
server_healthy() { [[ $(http_status "$DATA_RENTGEN_PORT" /monitoring/ping) == 200 ]]; }

# start_process NAME HEALTH_FUNCTION PORT_VARIABLE MODULE ARGS...
start_process() {
  local name=$1 healthy=$2 port_variable=$3 module=$4 pid t0 logfile="$DATA_RENTGEN_HOME/$1.log"
  local port=${!3}
  shift 4
  pid=$(pid_of "$name" "$VENV/bin/python -m $module")
  if [[ -z $pid ]]; then
    # One of an earlier venv, or of an earlier configuration: started again.
    local old
    old=$(pid_of "$name" "-m $module")
    [[ -n $old ]] && stop_named "$name" "$old"
  fi
  if [[ -n $pid ]] && "$healthy"; then
    log "$name already running (pid $pid)"
    return 0
  fi
  if [[ -z $pid ]]; then
    refuse_port "$port" "$port_variable"
    log "starting its $name on $HOST:$port"
    (cd "$DATA_RENTGEN_HOME" && close_fds && exec nohup setsid env -i "${DR_ENV[@]}" "$VENV/bin/python" -m "$module" \
        "$@" >"$logfile" 2>&1 </dev/null 9>&-) &
    pid=$!
    echo "$pid" >"$DATA_RENTGEN_HOME/$name.pid"
  fi
  t0=$SECONDS
  until "$healthy"; do
    if [[ ! -d /proc/$pid ]]; then
      show_log_tail 40 "$logfile"
      rm -f "$DATA_RENTGEN_HOME/$name.pid"
      die "its $name exited during startup (log: $logfile)"
    fi
    if (( SECONDS - t0 >= DATA_RENTGEN_START_TIMEOUT )); then
      show_log_tail 40 "$logfile"
      die "its $name (pid $pid) did not answer on $HOST:$port within ${DATA_RENTGEN_START_TIMEOUT}s"
    fi
    sleep 0.5
  done
  log "$name ready ($((SECONDS - t0))s)"
}

# Stopped when it was started with another configuration (a broker, a database, a pattern).
restart_if_configured_otherwise() {
  local name pid want
  want=$(printf '%s\n' "${DR_ENV[@]}" | sha256sum | cut -c1-16)
  if [[ -f $DATA_RENTGEN_HOME/config.key && $(cat "$DATA_RENTGEN_HOME/config.key") != "$want" ]]; then
    for name in consumer server; do
      pid=$(pid_of "$name" " -m data_rentgen.")
      [[ -n $pid ]] && stop_named "$name" "$pid"
    done
  fi
  echo "$want" >"$DATA_RENTGEN_HOME/config.key"
}

start_backend() {
  local bootstrap range
  bootstrap=$("$SCRIPT_DIR/kafka.sh" start 9>&-) || die "the Kafka broker could not be started (above)"
  ensure_venv
  prepare_database
  range=$(partition_range)
  configure "$bootstrap"
  restart_if_configured_otherwise
  # shellcheck disable=SC2086 # two words: START END
  migrate $range
  start_process consumer consumer_healthy DATA_RENTGEN_CONSUMER_PORT data_rentgen.consumer \
    --host "$HOST" --port "$DATA_RENTGEN_CONSUMER_PORT"
  start_process server server_healthy DATA_RENTGEN_PORT data_rentgen.server \
    --host "$HOST" --port "$DATA_RENTGEN_PORT"
  log "Data.Rentgen ready at $BASE_URL (consumer reads topics matching $DATA_RENTGEN_TOPICS from $bootstrap)"
}

# "START END": the partitions made: every month from DATA_RENTGEN_FIRST_MONTH (or this month,
# if earlier) to the end of next month.
partition_range() {
  local first start end
  [[ $DATA_RENTGEN_FIRST_MONTH =~ ^[0-9]{4}-[0-9]{2}$ ]] ||
    die "DATA_RENTGEN_FIRST_MONTH=$DATA_RENTGEN_FIRST_MONTH is not YYYY-MM"
  first="$DATA_RENTGEN_FIRST_MONTH-01"
  start=$(date -u +%Y-%m-01)
  [[ $first < $start ]] && start=$first
  end=$(date -u -d "$(date -u +%Y-%m-01) + 2 months" +%Y-%m-01)
  echo "$start $end"
}

# ---------------------------------------------------------------- web UI

ensure_node() {
  local need=("$NODE") major
  [[ ${1:-} == npm ]] && need+=("$NPM")
  if ! have "${need[@]}"; then
    if ! is_root || ! have apt-get; then
      die "Node.js and npm are needed to build and serve Data.Rentgen's web UI (sudo apt-get install nodejs npm)"
    fi
    # shellcheck source=lib/apt.sh
    . "$SCRIPT_DIR/lib/apt.sh"
    log "installing Node.js and npm (apt-get install nodejs npm)"
    if ! apt_get_install "$DATA_RENTGEN_BUILDS/apt.log" nodejs npm; then
      show_log_tail 30 "$DATA_RENTGEN_BUILDS/apt.log"
      die "apt-get install nodejs npm failed (full log: $DATA_RENTGEN_BUILDS/apt.log)"
    fi
    have "${need[@]}" || die "Node.js and npm installed, but ${need[*]} not found on PATH"
  fi
  major=$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  (( major >= 20 )) ||
    die "Data.Rentgen's web UI (Vite 8) needs Node.js 20 or later; $NODE is $("$NODE" --version 2>&1 | head -n 1)"
}

# How the UI is built, in a copy of its source: upstream's own npm ci and npm run build, with
# nothing of the caller's environment (the build puts process.env into the page). NODE_ENV=CI
# is how upstream's CI keeps the bundle visualizer from opening a browser.
web_recipe() {
  local path
  path="$(dirname "$(command -v "$NPM")"):$(dirname "$(command -v "$NODE")"):/usr/bin:/bin"
  env -i PATH="$path" HOME="$HOME" npm_config_update_notifier=false \
    "$NPM" ci --no-audit --no-fund --prefer-offline &&
    env -i PATH="$path" HOME="$HOME" NODE_ENV=CI "$NPM" run build
}

# Hash of what a build is made of: the version, the source (without what a build adds) and
# the recipe (web_recipe); other changes to this script keep the build.
web_key() {
  {
    echo "data-rentgen-ui $DATA_RENTGEN_VERSION"
    declare -f web_recipe
    (cd "$1" && find . \( -path ./node_modules -o -path ./dist \) -prune -o -type f -print0 |
       LC_ALL=C sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -c1-16
}

# build_web SOURCE DIR (under the build lock): web_recipe in a copy of SOURCE; its dist/ kept in
# DIR.
build_web() {
  local src=$1 dir=$2 tmp="$DATA_RENTGEN_BUILDS/web/.unfinished" t0=$SECONDS errors
  web_built "$dir" && return 0  # another checkout built it while this one waited
  ensure_node npm
  log "building Data.Rentgen's web UI from its source ($src) with npm ci and npm run build, once"
  log "  for this source: a few minutes the first time (log: $UI_BUILD_LOG)"
  rm -rf "$tmp"
  mkdir -p "$tmp/src"
  tar -C "$src" --exclude=./node_modules --exclude=./dist -cf - . | tar -C "$tmp/src" --no-same-owner -xf -
  chmod -R u+w "$tmp/src"
  if ! (cd "$tmp/src" && web_recipe) >"$UI_BUILD_LOG" 2>&1 9>&-; then
    errors=$(grep -E '^(npm (error|ERR!) +[^ ]|error |Error: |\[vite\]|✗ Build failed)' "$UI_BUILD_LOG" | head -n 15 || true)
    [[ -n $errors ]] && { echo "----- first errors in $UI_BUILD_LOG -----" >&2; echo "$errors" >&2; }
    show_log_tail 15 "$UI_BUILD_LOG"
    rm -rf "$tmp"
    die "npm could not build Data.Rentgen's web UI from $src (log: $UI_BUILD_LOG)"
  fi
  [[ -f $tmp/src/dist/index.html ]] ||
    die "npm run build ran but left no dist/index.html in $tmp/src (log: $UI_BUILD_LOG)"
  mv "$tmp/src/dist" "$tmp/dist"
  rm -rf "$tmp/src"  # node_modules: serving needs dist/ only
  echo "$src" >"$tmp/.complete"
  mv "$tmp" "$dir"
  touch_build "$dir"
  prune_builds "$dir" "$DATA_RENTGEN_BUILDS/web/"*-????????????????
  log "built Data.Rentgen's web UI in $((SECONDS - t0))s ($dir)"
}

web_built() { [[ -f $1/.complete && -f $1/dist/index.html ]]; }

# Sets WEB_DIST: the UI built from its source (built now if need be).
WEB_DIST=""
ensure_web_dist() {
  local src dir
  [[ -f $DATA_RENTGEN_UI_SOURCE/package.json && -f $DATA_RENTGEN_UI_SOURCE/package-lock.json ]] ||
    die "no source of Data.Rentgen's web UI to build at $(realpath -m "$DATA_RENTGEN_UI_SOURCE") (its package.json and package-lock.json; set DATA_RENTGEN_UI_SOURCE)"
  src=$(cd "$DATA_RENTGEN_UI_SOURCE" && pwd -P)
  dir="$DATA_RENTGEN_BUILDS/web/$DATA_RENTGEN_VERSION-$(web_key "$src")"
  WEB_DIST="$dir/dist"
  web_built "$dir" || build_locked "$DATA_RENTGEN_BUILDS/web/.lock" 1800 build_web "$src" "$dir"
  touch_build "$dir"
}

web_healthy() {
  [[ $(http_status "$DATA_RENTGEN_UI_PORT" /) == 200 &&
     $(http_status "$DATA_RENTGEN_UI_PORT" /v1/users/me) == 401 ]]
}

start_web() {
  local pid t0 serves=("$WEB_SERVER" "$WEB_DIST" "$DATA_RENTGEN_UI_PORT" "$BASE_URL")
  pid=$(pid_of web "$WEB_SERVER")
  [[ -z $pid ]] && pid=$(pid_of web "/data-rentgen/web/server.js")
  if [[ -n $pid && $(tr '\0' ' ' <"/proc/$pid/cmdline") != *"${serves[*]}"* ]]; then
    log "the web UI (pid $pid) serves another build, port or API; restarting it"
    stop_named web "$pid"
    pid=""
  fi
  if [[ -n $pid ]] && web_healthy; then
    log "web UI already running at $UI_URL"
    return 0
  fi
  if [[ -z $pid ]]; then
    refuse_port "$DATA_RENTGEN_UI_PORT" DATA_RENTGEN_UI_PORT
    ensure_node
    log "starting Data.Rentgen's web UI on $UI_URL (API: $BASE_URL)"
    (cd "$DATA_RENTGEN_HOME" && close_fds && exec nohup setsid "$NODE" "${serves[@]}" >"$UI_LOG" 2>&1 </dev/null 9>&-) &
    pid=$!
    echo "$pid" >"$DATA_RENTGEN_HOME/web.pid"
  fi
  t0=$SECONDS
  until web_healthy; do
    if [[ ! -d /proc/$pid ]]; then
      show_log_tail 30 "$UI_LOG"
      rm -f "$DATA_RENTGEN_HOME/web.pid"
      die "Data.Rentgen's web UI exited during startup (log: $UI_LOG)"
    fi
    if (( SECONDS - t0 >= 30 )); then
      show_log_tail 30 "$UI_LOG"
      die "Data.Rentgen's web UI (pid $pid) did not answer GET $UI_URL/ (and its API) within 30s"
    fi
    sleep 0.5
  done
  log "web UI ready at $UI_URL"
}

# ---------------------------------------------------------------- a job's page

# link JOB [LOCATION]: prints the web UI's page of the job, at its runs since the first month
# Data.Rentgen has partitions for (no run it holds is older). The page reads its list's filter
# from the URL (react-admin's `filter`, JSON), and its Lineage tab the same `since`.
cmd_link() {
  local job=${1:-} location=${2:-} since
  [[ -n $job && $# -le 2 ]] || { echo "usage: $0 link JOB [LOCATION]" >&2; exit 2; }
  server_healthy ||
    die "Data.Rentgen's REST server does not answer at $BASE_URL (scripts/data-rentgen.sh start --ui)"
  since="$(partition_range | cut -d' ' -f1)T00:00:00.000Z"
  log "log in first at $UI_URL (any name and password), then open the link: the login page's way" \
    "back keeps the page, not its filter"
  python3 - "$BASE_URL" "$UI_URL" "$job" "$location" "$since" "$SCRIPT_NAME" <<'PYTHON'
import json, sys, urllib.error, urllib.parse, urllib.request

api, ui, job, location, since, me = sys.argv[1:]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def call(path, data=None, token=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with opener.open(urllib.request.Request(api + path, data, headers), timeout=60) as answer:
            return json.load(answer)
    except (OSError, ValueError) as exc:  # urllib's errors are OSErrors; JSON's ValueErrors
        sys.exit(f"{me}: error: {api}{path.split('?')[0]}: {exc}")


form = urllib.parse.urlencode({"username": "olx-link", "password": "-"}).encode()
token = call("/v1/auth/token", form)["access_token"]
found, page = {}, 1
while True:
    query = urllib.parse.urlencode({"search_query": job, "page": page, "page_size": 50})
    answer = call(f"/v1/jobs?{query}", token=token)
    for item in answer["items"]:
        where = "{type}://{name}".format(**item["data"]["location"])
        if item["data"]["name"] == job and location in ("", where):
            found[where] = item["id"]
    if not answer["meta"]["has_next"]:
        break
    page += 1
if not found:
    at = f" at {location}" if location else ""
    sys.exit(f"{me}: error: Data.Rentgen at {api} has no job named {job!r}{at}")
if len(found) > 1:
    places = ", ".join(sorted(found))
    sys.exit(f"{me}: error: jobs named {job!r} are at {places}: name the location too")
(job_id,) = found.values()
view = urllib.parse.quote(json.dumps({"since": since}, separators=(",", ":")), safe="")
print(f"{ui}/jobs/{job_id}/show?filter={view}")
PYTHON
}

# ---------------------------------------------------------------- commands

start_all() {
  [[ ${1:-} == ui ]] && ensure_web_dist  # built first: if npm fails, nothing was started
  lock
  start_backend
  [[ ${1:-} == ui ]] && start_web
  return 0
}

cmd_stop() {
  local name pid
  lock
  pid=$(pid_of web "/data-rentgen/web/server.js")
  [[ -n $pid ]] && stop_named web "$pid"
  for name in server consumer; do
    pid=$(pid_of "$name" " -m data_rentgen.")
    [[ -n $pid ]] && stop_named "$name" "$pid"
  done
  return 0
}

cmd_status() {
  local rc=0 pid
  for name in consumer server; do
    pid=$(pid_of "$name" " -m data_rentgen.")
    if "${name}_healthy"; then
      echo "$name: running${pid:+ (pid $pid)}"
    elif [[ -n $pid ]]; then
      echo "$name: process $pid running but not answering"; rc=3
    else
      echo "$name: not running"; rc=3
    fi
  done
  pid=$(pid_of web "/data-rentgen/web/server.js")
  if [[ -n $pid ]] && web_healthy; then
    echo "web UI: running at $UI_URL (pid $pid)"
  else
    echo "web UI: not running"
  fi
  [[ $rc == 0 ]] && echo "REST API: $BASE_URL"
  return $rc
}

case "${1:-}" in
  start)
    case "${2:-}" in
      "") start_all; echo "$BASE_URL" ;;
      --ui) start_all ui; echo "$BASE_URL"; echo "$UI_URL" ;;
      *) echo "usage: $0 start [--ui]" >&2; exit 2 ;;
    esac ;;
  ui) start_all ui; echo "$UI_URL" ;;
  build-ui) ensure_web_dist; echo "$WEB_DIST" ;;
  link) cmd_link "${@:2}" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 start [--ui]|ui|build-ui|link JOB [LOCATION]|stop|status" >&2; exit 2 ;;
esac
