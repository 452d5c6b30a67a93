# shellcheck shell=bash
# Sourced by lib/service.sh: what of a service is this checkout's own, and what every checkout
# on the machine shares. Each checkout (a clone, a worktree, a colleague's copy) runs services
# of its own: their state apart, on ports of their own; a script never stops, restarts or uses
# a process another checkout started. Builds are shared: they are files keyed by a hash of what
# they are made of, not processes.
#
#   OLX_CACHE           [$HOME/.cache/openlineage-export] the builds every checkout shares
#                       (Marquez's jars and web UI, Kafka's jars, Data.Rentgen's venv and web UI,
#                       code-server, DataHub's converters), each in a folder keyed by its hash
#   OLX_CHECKOUT_STATE  [$OLX_CACHE/checkouts/<folder name>-<hash of the checkout's path>] this
#                       checkout's services: pid files, configuration, data, logs; its file
#                       `checkout` names the checkout, `slot` its ports' slot
#   OLX_PORT_SLOT       [chosen once, then kept in $OLX_CHECKOUT_STATE/slot] this checkout's
#                       ports are each service's default + 10 x slot (0 to 99): slot 0 has the
#                       defaults the docs show (Marquez on 5000, its web UI on 3000...). Chosen
#                       the first time a script of the checkout needs a port: the lowest slot
#                       that no other checkout holds (one whose folder is still there) and whose
#                       ports are all free then. While the state of the scripts from before
#                       per-checkout services is there ($OLX_CACHE/marquez/pgdata,
#                       $OLX_CACHE/kafka/data), slot 0 is theirs. A port variable that is set
#                       (MARQUEZ_PORT...) wins over its slot's.
#
#   checkout_state      sets OLX_CHECKOUT_STATE (made when missing) and CHECKOUT
#   checkout_ports      sets each port variable that is not set yet from OLX_PORT_SLOT (chosen
#                       and kept first, when need be); SERVICE_PORTS lists them with defaults
#   refuse_port PORT VARIABLE [WHAT]
#                       when something listens on 127.0.0.1:PORT, dies in one line naming the
#                       port, its variable and what holds it (port_holder)
#   port_holder PORT    who listens on PORT: "<service> (pid N) of the checkout DIR", "... of the
#                       scripts from before per-checkout services", "pid N (command)", or "a
#                       process this user cannot see"
#   prune_builds KEEP DIR...
#                       deletes each build folder DIR (not KEEP) that no running process names
#                       and that was neither made nor used for 7 days (touch_build marks a use)

OLX_CACHE=${OLX_CACHE:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache/openlineage-export}
CHECKOUT=""
SERVICE_PORTS=(
  MARQUEZ_PORT:5000 MARQUEZ_ADMIN_PORT:5001 MARQUEZ_WEB_PORT:3000 MARQUEZ_PG_PORT:55432
  KAFKA_PORT:59092 KAFKA_CONTROLLER_PORT:59093 KAFKA_SASL_PORT:59094
  DATA_RENTGEN_PORT:58000 DATA_RENTGEN_CONSUMER_PORT:58001 DATA_RENTGEN_UI_PORT:53000
  FEAST_PORT:56580
)

checkout_state() {
  CHECKOUT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
  if [[ -z ${OLX_CHECKOUT_STATE:-} ]]; then
    local key
    key=$(printf '%s' "$CHECKOUT" | sha256sum | cut -c1-12)
    OLX_CHECKOUT_STATE="$OLX_CACHE/checkouts/${CHECKOUT##*/}-$key"
  fi
  mkdir -p "$OLX_CHECKOUT_STATE"
  OLX_CHECKOUT_STATE=$(cd "$OLX_CHECKOUT_STATE" && pwd -P)
  [[ -f $OLX_CHECKOUT_STATE/checkout ]] || echo "$CHECKOUT" >"$OLX_CHECKOUT_STATE/checkout"
}

checkout_ports() {
  local entry name unset=0
  for entry in "${SERVICE_PORTS[@]}"; do
    name=${entry%%:*}
    [[ -n ${!name:-} ]] || unset=1
  done
  ((unset)) || return 0
  [[ -n $CHECKOUT ]] || checkout_state
  port_slot
  for entry in "${SERVICE_PORTS[@]}"; do
    name=${entry%%:*}
    [[ -n ${!name:-} ]] || printf -v "$name" '%s' $((${entry#*:} + 10 * OLX_PORT_SLOT))
  done
}

valid_slot() { [[ $1 =~ ^[0-9]{1,2}$ ]]; }

# Sets OLX_PORT_SLOT: given, kept, or chosen now (and kept).
port_slot() {
  local file="$OLX_CHECKOUT_STATE/slot"
  if [[ -n ${OLX_PORT_SLOT:-} ]]; then
    valid_slot "$OLX_PORT_SLOT" || die "OLX_PORT_SLOT=$OLX_PORT_SLOT is not a slot (0 to 99)"
    return 0
  fi
  if [[ ! -s $file ]]; then
    # One checkout chooses at a time (fd 5, let go at once).
    mkdir -p "$OLX_CACHE/checkouts"
    exec 5>"$OLX_CACHE/checkouts/.lock"
    flock -w 60 5 || die "another script held $OLX_CACHE/checkouts/.lock for a minute"
    [[ -s $file ]] || choose_slot >"$file.new"
    [[ -s $file.new ]] && mv "$file.new" "$file"
    exec 5>&-
  fi
  OLX_PORT_SLOT=$(cat "$file")
  valid_slot "$OLX_PORT_SLOT" || die "$file holds no slot (0 to 99): remove it to choose again"
}

# The slot a checkout without one takes (prints it), saying why when it is not 0.
choose_slot() {
  local held=" " dir owner slot entry free
  for dir in "$OLX_CACHE"/checkouts/*/; do
    dir=${dir%/}
    [[ $dir == "$OLX_CHECKOUT_STATE" ]] && continue
    owner=$(cat "$dir/checkout" 2>/dev/null || true)
    # A checkout that is no longer there holds nothing.
    [[ -n $owner && -d $owner/scripts && -s $dir/slot ]] && held+="$(cat "$dir/slot") "
  done
  if [[ -e $OLX_CACHE/marquez/pgdata || -e $OLX_CACHE/kafka/data ]]; then
    held+="0 "
  fi
  for ((slot = 0; slot < 100; slot++)); do
    [[ $held == *" $slot "* ]] && continue
    free=1
    for entry in "${SERVICE_PORTS[@]}"; do
      port_in_use $((${entry#*:} + 10 * slot)) && { free=0; break; }
    done
    ((free)) && break
  done
  ((slot < 100)) || die "no port slot is free (0 to 99): set OLX_PORT_SLOT"
  if ((slot > 0)); then
    log "this checkout's services take port slot $slot (each default port + $((10 * slot)));" \
      "lower slots are other checkouts' or busy (scripts/ports.sh --help)"
  fi
  echo "$slot"
}

refuse_port() {
  port_in_use "$1" || return 0
  die "port $LOOPBACK:$1 ($2) is held by $(port_holder "$1"): a script never stops or uses" \
    "another checkout's process; stop it where it was started, or give this checkout other" \
    "ports (OLX_PORT_SLOT or $2; scripts/ports.sh --help)"
}

# The pids listening on TCP port $1, as far as /proc shows them to this user.
listening_pids() {
  local hex inodes=() inode expr=()
  hex=$(printf ':%04X' "$1")
  mapfile -t inodes < <(awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
  ((${#inodes[@]})) || return 0
  for inode in "${inodes[@]}"; do
    ((${#expr[@]})) && expr+=(-o)
    expr+=(-lname "socket:\[$inode\]")
  done
  find /proc/[0-9]*/fd -maxdepth 1 \( "${expr[@]}" \) 2>/dev/null | cut -d/ -f3 | sort -un
}

# "<service> (pid N) of ..." when pid $1 (or a process it runs under) is one a script started.
started_by() {
  local pid=$1 file service owner state feast=()
  # Feast keeps its pid file in its checkout (.cache/feast, scripts/feast.sh's FEAST_HOME).
  for state in "$OLX_CACHE"/checkouts/*/checkout; do
    feast+=("$(cat "$state" 2>/dev/null)/.cache/feast/feast.pid")
  done
  while [[ $pid =~ ^[0-9]+$ ]] && ((pid > 1)); do
    for file in "$OLX_CACHE"/checkouts/*/{marquez,kafka,data-rentgen}/*.pid \
      "$OLX_CACHE"/checkouts/*/marquez/pgdata/postmaster.pid "$OLX_CACHE"/checkouts/*/vscode/run/code-server.pid \
      "${feast[@]}" "$OLX_CACHE"/{marquez,kafka,data-rentgen}/*.pid "$OLX_CACHE"/marquez/pgdata/postmaster.pid; do
      [[ -f $file && $(head -n 1 "$file" 2>/dev/null) == "$pid" ]] || continue
      case $file in
        */marquez/marquez.pid) service="Marquez" ;;
        */marquez/web.pid) service="Marquez's web UI" ;;
        */postmaster.pid) service="PostgreSQL" ;;
        */kafka/kafka.pid) service="Kafka" ;;
        */data-rentgen/consumer.pid) service="Data.Rentgen's consumer" ;;
        */data-rentgen/server.pid) service="Data.Rentgen's REST server" ;;
        */data-rentgen/web.pid) service="Data.Rentgen's web UI" ;;
        */code-server.pid) service="code-server" ;;
        */feast/feast.pid) service="Feast" ;;
        *) service="a service" ;;
      esac
      if [[ $file == */.cache/feast/feast.pid ]]; then
        owner=${file%/.cache/feast/feast.pid}
      elif [[ $file == "$OLX_CACHE"/checkouts/* ]]; then
        state=${file#"$OLX_CACHE"/checkouts/}
        owner=$(cat "$OLX_CACHE/checkouts/${state%%/*}/checkout" 2>/dev/null || echo "?")
      else
        owner=""
      fi
      if [[ -n $owner ]]; then
        if [[ $owner == "$CHECKOUT" ]]; then
          echo "$service (pid $pid) of this checkout, started with other settings"
        else
          echo "$service (pid $pid) of the checkout $owner"
        fi
      else
        echo "$service (pid $pid) of the scripts from before per-checkout services (pid file $file)"
      fi
      return 0
    done
    pid=$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null || true)
  done
  return 1
}

port_holder() {
  local pids pid command
  pids=$(listening_pids "$1")
  if [[ -z $pids ]]; then
    echo "a process this user cannot see"
    return 0
  fi
  for pid in $pids; do
    started_by "$pid" && return 0
  done
  pid=${pids%%$'\n'*}
  command=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-100 || true)
  echo "pid $pid (${command% }), no checkout's service"
}

touch_build() { touch "$1/.used" 2>/dev/null || true; }

prune_builds() {
  local keep=$1 dir
  shift
  for dir; do
    [[ -d $dir && $dir != "$keep" ]] || continue
    # Made or used (.complete, .used) within the week.
    [[ -n $(find "$dir" -maxdepth 1 \( -name .used -o -name .complete \) -mtime -7 2>/dev/null) ]] &&
      continue
    grep -qsF -- "$dir" /proc/[0-9]*/cmdline && continue
    rm -rf "$dir"
  done
}
