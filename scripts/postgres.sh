#!/usr/bin/env bash
# This checkout's PostgreSQL cluster on loopback, where each of its services that needs one keeps
# its database (Marquez's is `marquez`; scripts/marquez.sh starts the cluster itself): for the
# scripts of another service, and to look inside. Each checkout has a cluster of its own
# (scripts/ports.sh --help).
#
# Usage: scripts/postgres.sh start|stop|status|createdb NAME [OWNER [PASSWORD]]|resetdb NAME [OWNER [PASSWORD]]
#
#   start     install PostgreSQL if needed (as root, Debian's package), create the cluster once,
#             start it. Idempotent. Prints its address, HOST:PORT.
#   stop      stop the cluster: every service's database in it (Marquez's too).
#   status    say whether it runs (exit 0 only when it does).
#   createdb NAME [OWNER [PASSWORD]]
#             start the cluster, then create the login role OWNER [NAME] with PASSWORD [OWNER]
#             and the database NAME it owns, when missing. Prints the database's URL,
#             postgresql://OWNER:PASSWORD@127.0.0.1:PORT/NAME.
#   resetdb NAME [OWNER [PASSWORD]]
#             the same, then drop the database NAME (its clients cut off) and create it empty.
#
# Progress goes to stderr. A name is a lowercase SQL identifier (a-z, 0-9, _), a password
# letters, digits and _: they are test fixtures on loopback, not secrets.
#
# Environment (defaults in brackets):
#   MARQUEZ_HOME      the state dir that holds the cluster, pgdata/ (beside Marquez's state)
#                     [$OLX_CHECKOUT_STATE/marquez]
#   MARQUEZ_PG_PORT   its port [55432 + 10 x the checkout's port slot]
#   OLX_PORT_SLOT, OLX_CHECKOUT_STATE, OLX_CACHE   (scripts/ports.sh --help)
#
# The cluster listens on 127.0.0.1 only. As root, it runs as the `postgres` OS user (it refuses
# to run as root); otherwise as the invoking user.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/service.sh
. "$SCRIPT_DIR/lib/service.sh"
# shellcheck source=lib/apt.sh
. "$SCRIPT_DIR/lib/apt.sh"
# shellcheck source=lib/postgres.sh
. "$SCRIPT_DIR/lib/postgres.sh"

usage() {
  echo "usage: $0 start|stop|status|createdb NAME [OWNER [PASSWORD]]|resetdb NAME [OWNER [PASSWORD]]" >&2
  exit 2
}

# createdb|resetdb NAME [OWNER [PASSWORD]]
cmd_database() {
  local command=$1 name=${2:-}
  [[ -n $name && $# -le 4 ]] || usage
  local owner=${3:-$name}
  local password=${4:-$owner}
  pg_start
  pg_database "$name" "$owner" "$password"
  [[ $command == resetdb ]] && pg_recreate_database "$name" "$owner"
  echo "postgresql://$owner:$password@$LOOPBACK:$CLUSTER_PORT/$name"
}

case "${1:-}" in
  start) pg_start; echo "$LOOPBACK:$CLUSTER_PORT" ;;
  stop) pg_stop ;;
  status) pg_status ;;
  createdb|resetdb) cmd_database "$@" ;;
  *) usage ;;
esac
