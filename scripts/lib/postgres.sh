# shellcheck shell=bash
# Sourced (after lib/service.sh, under set -e) by the scripts whose service keeps its data in
# the checkout's PostgreSQL cluster: marquez.sh, and postgres.sh, its command line for any other
# (Data.Rentgen's database lives in the same cluster). One private cluster per checkout on
# loopback, created once, each service's database in it.
#
# The cluster: $MARQUEZ_HOME/pgdata [$OLX_CHECKOUT_STATE/marquez/pgdata], on
# 127.0.0.1:$MARQUEZ_PG_PORT [55432 + 10 x the checkout's port slot: lib/checkout.sh]: it began
# as Marquez's own, and keeps the names that find the clusters made since. PostgreSQL's server comes from Debian's package (as root, installed
# when missing). As root, the cluster runs as the `postgres` OS user (PostgreSQL refuses to run
# as root), otherwise as the invoking user; where that user cannot reach $MARQUEZ_HOME (e.g.
# /root is 0700), the cluster lives under the postgres user's home and pgdata is a symlink to it.
# Admin commands go through a Unix socket with peer authentication; a service's role logs in
# over TCP with its password.
#
#   pg_start                      install, create and start the cluster, as needed
#   pg_stop                       stop it (when it runs)
#   pg_status                     one line: "postgresql: ..."; returns 0 only when it runs
#   pg_database NAME OWNER PASSWORD
#                                 the login role OWNER with PASSWORD, and the database NAME it
#                                 owns, when missing (names: lowercase SQL identifiers; the
#                                 password: letters, digits, _)
#   pg_recreate_database NAME OWNER
#                                 drop database NAME (its clients cut off) and create it empty
#   psql_admin SQL                run SQL as the cluster's owner; prints unaligned tuples
#
# Those that change the cluster hold $MARQUEZ_HOME/.postgres.lock while they do (fd 7), so
# that two services' scripts may start it side by side.

# Never let the caller's libpq settings (PGHOST, PGUSER, PGOPTIONS...) leak into our psql calls.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^PG' || true)

[[ -n ${MARQUEZ_HOME:-} ]] || checkout_state
CLUSTER_HOME=${MARQUEZ_HOME:-$OLX_CHECKOUT_STATE/marquez}
mkdir -p "$CLUSTER_HOME"
CLUSTER_HOME=$(cd "$CLUSTER_HOME" && pwd -P)
checkout_ports
CLUSTER_PORT=$MARQUEZ_PG_PORT
PGDATA_LINK="$CLUSTER_HOME/pgdata"
if [[ $(id -u) == 0 ]]; then IS_ROOT=1; PG_OWNER=postgres; else IS_ROOT=0; PG_OWNER=$(id -un); fi
PGBIN=""
PGDATA=""

pg_start() {
  pg_install
  locked _pg_start
}

pg_stop() {
  find_pgbin || return 0
  locked _pg_stop
}

pg_status() {
  if ! find_pgbin; then
    echo "postgresql: not installed"
    return 3
  fi
  resolve_pgdata
  if [[ ! -f $PGDATA/PG_VERSION ]]; then
    echo "postgresql: no cluster yet ($PGDATA_LINK)"
  elif pg_running; then
    echo "postgresql: running on $LOOPBACK:$(sed -n 4p "$PGDATA/postmaster.pid") (data: $PGDATA)"
    return 0
  else
    echo "postgresql: stopped (data: $PGDATA)"
  fi
  return 3
}

pg_database() { locked _pg_database "$@"; }

pg_recreate_database() { locked _pg_recreate_database "$@"; }

psql_admin() {
  [[ -n $PGBIN ]] || find_pgbin || die "PostgreSQL is not installed (scripts/postgres.sh start)"
  resolve_pgdata
  as_owner "$PGBIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "$(socket_dir)" -p "$CLUSTER_PORT" \
    -U "$PG_OWNER" -d postgres -c "$1"
}

# ---------------------------------------------------------------- the cluster

# FUNCTION with the cluster's lock held (a failure ends the script, and so releases it).
locked() {
  exec 7>"$CLUSTER_HOME/.postgres.lock"
  flock -w 600 7 || die "another script holds $CLUSTER_HOME/.postgres.lock"
  "$@"
  exec 7>&-
}

# Run a command as the cluster's owner; none of this script's files (a lock: fd 7, fd 9, a
# caller's) is passed on: the server it starts would hold it as long as it runs.
as_owner() {
  if [[ $IS_ROOT == 1 ]]; then
    local pg_home
    pg_home=$(getent passwd postgres | cut -d: -f6)
    (cd / && close_fds && exec runuser -u postgres -- env HOME="${pg_home:-/}" "$@")
  else
    (close_fds && exec "$@")
  fi
}

find_pgbin() {
  local d
  PGBIN=""
  for d in $(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V); do
    [[ -x $d/pg_ctl && -x $d/initdb && -x $d/postgres && -x $d/psql ]] && PGBIN=$d
  done
  [[ -n $PGBIN ]]
}

pg_install() {
  find_pgbin && return 0
  [[ $IS_ROOT == 1 ]] || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; install them first (sudo apt-get install postgresql)"
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and apt-get is not available"
  log "installing PostgreSQL server (apt-get install postgresql)"
  if ! apt_get_install "$CLUSTER_HOME/apt.log" postgresql; then
    tail -n 30 "$CLUSTER_HOME/apt.log" >&2
    die "apt-get install postgresql failed (full log: $CLUSTER_HOME/apt.log)"
  fi
  find_pgbin || die "PostgreSQL installed but pg_ctl/initdb not found under /usr/lib/postgresql/*/bin"
}

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
      key=$(printf '%s' "$CLUSTER_HOME" | cksum | cut -d' ' -f1)
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

_pg_start() {
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
         --auth-host=scram-sha-256 >"$CLUSTER_HOME/initdb.log" 2>&1; then
      cat "$CLUSTER_HOME/initdb.log" >&2
      die "initdb failed"
    fi
    # shellcheck disable=SC2016  # $1: the inner shell's argument
    as_owner sh -c 'echo "include_if_exists = '"'"'marquez-local.conf'"'"'" >>"$1/postgresql.conf"' _ "$PGDATA"
  fi
  if pg_running; then
    local port
    port=$(sed -n 4p "$PGDATA/postmaster.pid" 2>/dev/null || true)
    [[ $port == "$CLUSTER_PORT" ]] ||
      die "PostgreSQL cluster $PGDATA runs on port $port, not $CLUSTER_PORT; run '$0 stop' first"
    return 0
  fi
  refuse_port "$CLUSTER_PORT" MARQUEZ_PG_PORT
  # Rewritten on every start so that port changes take effect. (Its name is the one the
  # clusters made so far include.)
  # shellcheck disable=SC2016  # $1: the inner shell's argument
  as_owner sh -c 'cat >"$1/marquez-local.conf"' _ "$PGDATA" <<EOF
# written by scripts/lib/postgres.sh on every start
listen_addresses = '$LOOPBACK'
port = $CLUSTER_PORT
unix_socket_directories = '$(socket_dir)'
synchronous_commit = off
EOF
  if ! as_owner "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/postgresql.log" -w -t 60 start >/dev/null 2>&1; then
    tail -n 30 "$PGDATA/postgresql.log" >&2 || true
    die "PostgreSQL did not start (log: $PGDATA/postgresql.log)"
  fi
  log "PostgreSQL running on $LOOPBACK:$CLUSTER_PORT"
}

_pg_database() {
  [[ $1 =~ ^[a-z_][a-z0-9_]*$ && $2 =~ ^[a-z_][a-z0-9_]*$ ]] ||
    die "a database or role name is a lowercase SQL identifier (a-z, 0-9, _), not '$1' or '$2'"
  [[ $3 =~ ^[A-Za-z0-9_]+$ ]] || die "the password of role $2 is not letters, digits and _ alone"
  if [[ -z $(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = '$2'") ]]; then
    psql_admin "CREATE ROLE $2 LOGIN PASSWORD '$3'" >/dev/null
  else
    psql_admin "ALTER ROLE $2 LOGIN PASSWORD '$3'" >/dev/null  # the password asked for, now
  fi
  if [[ -z $(psql_admin "SELECT 1 FROM pg_database WHERE datname = '$1'") ]]; then
    psql_admin "CREATE DATABASE $1 OWNER $2" >/dev/null
  fi
}

_pg_recreate_database() {
  psql_admin "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null
  psql_admin "CREATE DATABASE $1 OWNER $2" >/dev/null
  log "database $1 recreated"
}

_pg_stop() {
  resolve_pgdata
  if pg_running; then
    as_owner "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 60 stop >/dev/null
    log "PostgreSQL stopped"
  fi
}
