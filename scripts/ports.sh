#!/usr/bin/env bash
# Where this checkout's services are: their ports and their state, apart from every other
# checkout's on this machine (another clone, a worktree, a colleague's). scripts/test.sh exports
# what it prints before anything starts, so that the tests and the service scripts agree.
#
# Usage: scripts/ports.sh
#
# Prints NAME=VALUE lines: OLX_CACHE, OLX_CHECKOUT_STATE, OLX_PORT_SLOT, every service's port
# (MARQUEZ_PORT, MARQUEZ_ADMIN_PORT, MARQUEZ_WEB_PORT, MARQUEZ_PG_PORT, KAFKA_PORT,
# KAFKA_CONTROLLER_PORT, KAFKA_SASL_PORT, DATA_RENTGEN_PORT, DATA_RENTGEN_CONSUMER_PORT,
# DATA_RENTGEN_UI_PORT, FEAST_PORT), and MARQUEZ_HOME, KAFKA_HOME, DATA_RENTGEN_HOME. It starts nothing; the
# first time, it chooses the checkout's port slot (below) and keeps it.
#
# Each checkout's services are its own:
#   - their state (pid files, configuration, data, logs) is in $OLX_CHECKOUT_STATE
#     [$OLX_CACHE/checkouts/<folder name>-<hash of the checkout's path>]; what every checkout
#     shares is only the builds in $OLX_CACHE [$HOME/.cache/openlineage-export] (Marquez's jars
#     and web UI, Kafka's jars, Data.Rentgen's venv and web UI, code-server, DataHub's
#     converters), each in a folder keyed by a hash of what it is made of; a build no running
#     process uses and none used for 7 days is deleted when another is made;
#   - their ports are the defaults + 10 x the checkout's slot, OLX_PORT_SLOT (0 to 99): slot 0
#     is Marquez on 5000 (admin 5001), its web UI on 3000, PostgreSQL on 55432, Kafka on 59092
#     (controller 59093, SASL 59094), Data.Rentgen on 58000 (consumer 58001), its web UI on
#     53000, Feast on 56580; slot 1 is 5010, 5011, 3010, 55442, 59102... A checkout's slot is
#     chosen once, the first time one of its scripts needs a port, and kept in
#     $OLX_CHECKOUT_STATE/slot: the lowest slot no other checkout holds (a checkout whose
#     folder is gone holds none) and whose
#     ports are all free then. While the state of the scripts from before per-checkout services
#     is there ($OLX_CACHE/marquez/pgdata, $OLX_CACHE/kafka/data), slot 0 is theirs: stop their
#     servers and delete those folders to free it. To move a checkout, stop its services, then
#     delete its slot file (chosen again) or set OLX_PORT_SLOT; a port variable that is set wins
#     over its slot's;
#   - a script stops and restarts only the processes it started from its checkout, and uses no
#     other: when a port of its checkout is held by anything else, it refuses, in one line that
#     names the port, its variable and what holds it (e.g. "Marquez (pid 4242) of the checkout
#     /work/other").
#
# Environment (defaults in brackets): OLX_CACHE, OLX_CHECKOUT_STATE, OLX_PORT_SLOT (above), and
# any of the port and *_HOME variables above, which are printed as they are.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
[[ $# == 0 ]] || { echo "usage: $0" >&2; exit 2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/service.sh
. "$SCRIPT_DIR/lib/service.sh"

checkout_state
checkout_ports
echo "OLX_CACHE=$OLX_CACHE"
echo "OLX_CHECKOUT_STATE=$OLX_CHECKOUT_STATE"
echo "OLX_PORT_SLOT=${OLX_PORT_SLOT:-}"
for entry in "${SERVICE_PORTS[@]}"; do
  name=${entry%%:*}
  echo "$name=${!name}"
done
echo "MARQUEZ_HOME=${MARQUEZ_HOME:-$OLX_CHECKOUT_STATE/marquez}"
echo "KAFKA_HOME=${KAFKA_HOME:-$OLX_CHECKOUT_STATE/kafka}"
echo "DATA_RENTGEN_HOME=${DATA_RENTGEN_HOME:-$OLX_CHECKOUT_STATE/data-rentgen}"
