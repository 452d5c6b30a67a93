#!/usr/bin/env bash
# Run a real Feast (PyPI's feast[openlineage]: `feast serve_lineage`, its OpenLineage consumer)
# on loopback only, for end-to-end tests and for trying an export into Feast locally
# (docs/feast.md).
#
# Usage: scripts/feast.sh start|stop|status
#
#   start   install feast[openlineage]==$FEAST_VERSION into a venv of its own (Python 3.12 from
#           pyenv, else 3.11 or 3.13; with scripts/feast/constraints.txt, the versions it was
#           tested with), once, into $FEAST_VENVS/<version>-<hash of the recipe>: a build every
#           checkout shares. Write this checkout's feature_store.yaml in $FEAST_HOME (a SQL
#           registry on SQLite in $FEAST_DATA, which its OpenLineage consumer stores into; the
#           consumer enabled, with an API key; retention off: Feast keeps every event); start
#           `feast serve_lineage` on 127.0.0.1:$FEAST_PORT and wait until it answers, and
#           until it refuses an event sent without the key. Idempotent; a Feast of this checkout
#           started with another port, key, version or configuration is started again. Progress
#           goes to stderr; its URL is the only thing printed on stdout.
#   stop    stop this checkout's Feast (SIGTERM: uvicorn finishes the requests it has; SIGKILL
#           after 15 s). Its database stays: the next start serves the same events.
#   status  say whether it runs (exit 0 only when it answers).
#
# What it holds is emptied through its own API: DELETE /api/v1/lineage/openlineage/reset with
# the key (tests/e2e/feast_api.py does, once per test).
#
# Environment (defaults in brackets):
#   FEAST_HOME     this checkout's Feast: feature_store.yaml, api.key, feast.pid, feast.log,
#                  pip.log [the checkout's .cache/feast, which .gitignore covers]
#   FEAST_DATA     the folder of its SQLite database (registry.db: the SQL registry and the
#                  OpenLineage store) [$FEAST_HOME/data]
#   FEAST_VENVS    where the venvs are installed, shared by the checkouts [$OLX_CACHE/feast]
#   FEAST_VERSION  feast version from PyPI [0.67.0]
#   FEAST_PYTHON   Python (3.10 or later) for its venv [pyenv's newest 3.12, else 3.11, else
#                  3.13, else python3.12 / python3.11 / python3.13 on PATH]
#   FEAST_PORT     its port [56580 + 10 x the checkout's port slot]
#   OLX_PORT_SLOT, OLX_CACHE   the checkout's port slot, the shared builds (scripts/ports.sh
#                  --help): each checkout runs a Feast of its own, on its own port; when that
#                  port is held by anything else, this script refuses, in one line naming the
#                  port and what holds it
#   FEAST_API_KEY  the key its consumer requires of a producer (header X-API-Key, or
#                  Authorization: Bearer KEY) [made once, kept in $FEAST_HOME/api.key, mode 0600]
#   FEAST_START_TIMEOUT  seconds to wait for it to answer [120]
#   PIP_INDEX_URL...     pip's own variables, for where the packages come from
#
# It listens on 127.0.0.1 only.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/service.sh
. "$SCRIPT_DIR/lib/service.sh"
CONSTRAINTS="$SCRIPT_DIR/feast/constraints.txt"

FEAST_HOME=${FEAST_HOME:-$SCRIPT_DIR/../.cache/feast}
FEAST_VENVS=${FEAST_VENVS:-$OLX_CACHE/feast}
FEAST_VERSION=${FEAST_VERSION:-0.67.0}
checkout_ports
FEAST_START_TIMEOUT=${FEAST_START_TIMEOUT:-120}

HOST=$LOOPBACK
# shellcheck disable=SC2153  # the port: set by checkout_ports
BASE_URL="http://$HOST:$FEAST_PORT"
PACKAGE="feast[openlineage]==$FEAST_VERSION"

mkdir -p "$FEAST_HOME" "$FEAST_VENVS"
FEAST_HOME=$(cd "$FEAST_HOME" && pwd -P)
FEAST_VENVS=$(cd "$FEAST_VENVS" && pwd -P)
FEAST_DATA=${FEAST_DATA:-$FEAST_HOME/data}
mkdir -p "$FEAST_DATA"
FEAST_DATA=$(cd "$FEAST_DATA" && pwd -P)
REPO="$FEAST_HOME/repo"
PID_FILE="$FEAST_HOME/feast.pid"
LOG="$FEAST_HOME/feast.log"
KEY_FILE="$FEAST_HOME/api.key"
# What our process's command line holds: this checkout's repo folder, so that a Feast another
# checkout started is never taken for ours.
SIGNATURE="-c $REPO serve_lineage"

# ---------------------------------------------------------------- its venv

# Sets PYTHON: an interpreter feast supports (3.10 or later; 3.12 first, as its wheels have
# been there longest).
PYTHON=""
find_python() {
  local candidates=() root c minor
  if [[ -n ${FEAST_PYTHON:-} ]]; then
    candidates=("$FEAST_PYTHON")
  else
    root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
    mapfile -t candidates < <(
      for minor in 12 11 13; do
        for c in "$root"/versions/3."$minor".*/bin/python; do [[ -x $c ]] && echo "$c"; done |
          sort -V -r
      done
      echo python3.12; echo python3.11; echo python3.13)
  fi
  for c in "${candidates[@]}"; do
    if "$c" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      PYTHON=$(command -v "$c")
      return 0
    fi
  done
  die "no Python 3.10 or later found for feast $FEAST_VERSION: install one with pyenv, or set FEAST_PYTHON"
}

# Sets VENV: the venv with feast installed (made now if need be, one install at a time among
# the checkouts: fd 8 on $FEAST_VENVS/.lock).
VENV=""
ensure_venv() {
  find_python
  local key dir t0 python_version
  python_version=$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')
  key=$({ echo "$PACKAGE python $python_version"; cat "$CONSTRAINTS"; } | sha256sum | cut -c1-16)
  dir="$FEAST_VENVS/$FEAST_VERSION-$key"
  VENV=$dir
  [[ -f $dir/.complete && -x $dir/bin/feast ]] && return 0
  exec 8>"$FEAST_VENVS/.lock"
  flock -w 1800 8 || die "another checkout held $FEAST_VENVS/.lock (an install) for 30 minutes"
  if [[ -f $dir/.complete && -x $dir/bin/feast ]]; then
    exec 8>&-
    return 0
  fi
  log "installing $PACKAGE on Python $python_version ($PYTHON)"
  log "  into $dir, once: about two minutes (log: $FEAST_HOME/pip.log)"
  t0=$SECONDS
  # Made where it will live (a venv's scripts name their own path), then marked complete.
  rm -rf "$dir"
  if ! { "$PYTHON" -m venv "$dir" &&
         "$dir/bin/python" -m pip install -q --disable-pip-version-check -c "$CONSTRAINTS" \
           "$PACKAGE"; } >"$FEAST_HOME/pip.log" 2>&1 8>&- 9>&-; then
    show_log_tail 30 "$FEAST_HOME/pip.log"
    rm -rf "$dir"
    die "pip could not install $PACKAGE (log: $FEAST_HOME/pip.log)"
  fi
  echo "$FEAST_VERSION $PYTHON" >"$dir/.complete"
  exec 8>&-
  log "installed feast $FEAST_VERSION in $((SECONDS - t0))s"
}

# ---------------------------------------------------------------- configuration

# The key producers must send: the caller's, or one made once for this checkout.
api_key() {
  if [[ -n ${FEAST_API_KEY:-} ]]; then
    printf '%s' "$FEAST_API_KEY"
    return
  fi
  if [[ ! -s $KEY_FILE ]]; then
    (umask 077 && od -An -tx1 -N24 /dev/urandom | tr -d ' \n' >"$KEY_FILE")
  fi
  cat "$KEY_FILE"
}

# feature_store.yaml: the key is not in it (Feast expands ${FEAST_LINEAGE_API_KEY} from its
# environment when it reads the file).
write_config() {
  mkdir -p "$REPO"
  cat >"$REPO/feature_store.yaml.new" <<EOF
# Written by scripts/feast.sh: this checkout's Feast, for its OpenLineage consumer only.
project: openlineage_export
provider: local
registry:
  registry_type: sql
  path: sqlite:///$FEAST_DATA/registry.db
online_store:
  type: sqlite
  path: $FEAST_DATA/online.db
entity_key_serialization_version: 3
openlineage:
  enabled: false
  consumer:
    enabled: true
    api_key: \${FEAST_LINEAGE_API_KEY}
    retention_days: 0
EOF
  mv "$REPO/feature_store.yaml.new" "$REPO/feature_store.yaml"
}

# What the running process was started with: it is started again when this changes.
config_key() {
  { cat "$REPO/feature_store.yaml"; api_key; echo; echo "$VENV $FEAST_PORT"; } |
    sha256sum | cut -c1-16
}

# ---------------------------------------------------------------- the server

pid_of() { started_pid "$PID_FILE" "$SIGNATURE"; }

healthy() { [[ $(http_status "$FEAST_PORT" /api/v1/lineage/openlineage/namespaces) == 200 ]]; }

# The status of an empty batch posted without a key ("000" when nothing answers): 401 when
# the consumer requires its key (it is checked before the body is read: nothing is stored).
unkeyed_post_status() {
  local code
  # shellcheck disable=SC2016  # the inner script's own variables
  code=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1
    printf "POST /api/v1/lineage/batch HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]" "$1" >&3
    read -r _ c _ <&3; echo "$c"' _ "$HOST" "$FEAST_PORT" 2>/dev/null) || true
  echo "${code:-000}"
}

stop_running() { # stop_running PID
  stop_pid "$1" 15 group
  rm -f "$PID_FILE"
  log "stopped Feast (pid $1)"
}

cmd_start() {
  local pid key want t0 rc code
  take_lock "$FEAST_HOME" 600
  ensure_venv
  write_config
  key=$(api_key)
  want=$(config_key)
  pid=$(pid_of)
  if [[ -n $pid && $(cat "$FEAST_HOME/config.key" 2>/dev/null) != "$want" ]]; then
    log "Feast (pid $pid) was started with another port, key, version or configuration; starting it again"
    stop_running "$pid"
    pid=""
  fi
  if [[ -n $pid ]] && healthy; then
    log "Feast already running at $BASE_URL (pid $pid)"
    return 0
  fi
  if [[ -z $pid ]]; then
    refuse_busy_port
    log "starting Feast $FEAST_VERSION (feast serve_lineage) on $HOST:$FEAST_PORT (database: $FEAST_DATA)"
    # Its own session (setsid): stop ends it and whatever it started. HOME is its own: nothing
    # of the caller's configuration reaches it, and it writes nothing outside FEAST_HOME.
    (cd "$FEAST_HOME" && close_fds && exec nohup setsid env -i "PATH=$VENV/bin:/usr/bin:/bin" \
        "HOME=$FEAST_HOME" LANG=C.UTF-8 PYTHONUNBUFFERED=1 "FEAST_LINEAGE_API_KEY=$key" \
        "$VENV/bin/python" "$VENV/bin/feast" -c "$REPO" serve_lineage --host "$HOST" \
        --port "$FEAST_PORT" >"$LOG" 2>&1 </dev/null 8>&- 9>&-) &
    pid=$!
    echo "$pid" >"$PID_FILE"
    echo "$want" >"$FEAST_HOME/config.key"
  fi
  t0=$SECONDS
  rc=0
  wait_healthy "$pid" "$FEAST_START_TIMEOUT" 0.2 healthy || rc=$?
  case $rc in
    0) ;;
    1) show_log_tail 40 "$LOG"; rm -f "$PID_FILE"
       die "Feast exited during startup (log: $LOG)" ;;
    *) show_log_tail 40 "$LOG"
       die "Feast (pid $pid) did not answer GET $BASE_URL/api/v1/lineage/openlineage/namespaces within ${FEAST_START_TIMEOUT}s" ;;
  esac
  code=$(unkeyed_post_status)
  if [[ $code != 401 ]]; then
    show_log_tail 20 "$LOG"
    stop_running "$pid"
    die "Feast answered $code to an event sent without its key (401 expected): its consumer is not configured as $REPO/feature_store.yaml says"
  fi
  local where=$KEY_FILE
  [[ -n ${FEAST_API_KEY:-} ]] && where=FEAST_API_KEY
  log "Feast ready at $BASE_URL ($((SECONDS - t0))s; its key: $where)"
}

refuse_busy_port() { refuse_port "$FEAST_PORT" FEAST_PORT; }

cmd_stop() {
  local pid
  take_lock "$FEAST_HOME" 600
  pid=$(pid_of)
  if [[ -n $pid ]]; then
    stop_running "$pid"
  else
    log "Feast is not running (for this checkout)"
  fi
}

cmd_status() {
  local pid
  pid=$(pid_of)
  if [[ -n $pid ]] && healthy; then
    echo "Feast: running at $BASE_URL (pid $pid; database $FEAST_DATA)"
  elif [[ -n $pid ]]; then
    echo "Feast: process $pid running but not answering at $BASE_URL"
    return 3
  else
    echo "Feast: not running"
    return 3
  fi
}

case "${1:-}" in
  start) cmd_start; echo "$BASE_URL" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
