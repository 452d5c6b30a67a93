# shellcheck shell=bash
# Sourced by the scripts that run or build a service (marquez.sh, kafka.sh, datahub.sh,
# vscode.sh, browser.sh, postgres.sh): what each of them does alike. A helper reads its
# arguments (and SCRIPT_NAME), never another script's variables.
#
#   log MESSAGE, die MESSAGE   "NAME: MESSAGE", "NAME: error: MESSAGE" on stderr; die exits 1
#   have COMMAND...            every COMMAND is on PATH
#   is_root                    this script runs as root (and may install Debian's packages)
#   take_lock DIR SECONDS      one invocation at a time per state dir DIR (DIR/.lock, on fd 9:
#                              a child that outlives the script is started with 9>&-)
#   close_fds                  in the (sub)shell that runs it, closes every file descriptor above
#                              2: run before it execs a server, which then holds none of its
#                              caller's files (a lock the caller holds, flock(1)'s
#                              `flock /work/e2e.lock scripts/test.sh` one too: the server would
#                              hold it as long as it runs)
#   build_locked LOCK_FILE SECONDS COMMAND...
#                              COMMAND in a subshell holding LOCK_FILE (fd 6): one build at a
#                              time into a folder every checkout shares; a failure ends the script
#   port_in_use PORT           something listens on 127.0.0.1:PORT
#   http_status PORT PATH      the status code of GET http://127.0.0.1:PORT/PATH, "000" when
#                              nothing answers
#   started_pid PID_FILE TEXT  the pid in PID_FILE when that process runs and its command line
#                              holds TEXT (a pid the system gave another program since is not
#                              ours); nothing otherwise
#   alive PID                  process PID has not ended
#   stop_pid PID SECONDS [group]
#                              SIGTERM (with "group": to its process group, which a setsid start
#                              made), SIGKILL when it has not ended after SECONDS
#   wait_healthy PID SECONDS INTERVAL CHECK...
#                              run CHECK every INTERVAL seconds until it succeeds, while PID runs,
#                              for SECONDS at most: returns 0 (healthy), 1 (PID ended first), 2
#                              (time ran out), or CHECK's own status when that is 3 or more (a
#                              state waiting will not mend; 1 is "not yet"); the caller says
#                              which, with
#   show_log_tail LINES FILE...
#                              the last LINES lines of each FILE that holds more than blanks,
#                              under a header, on stderr
#
# and, from lib/checkout.sh, what is this checkout's own and what checkouts share: its state dir,
# its ports, what holds a port, the builds' folders (checkout_state, checkout_ports, refuse_port,
# port_holder, touch_build, prune_builds).

SCRIPT_NAME=${0##*/}
LOOPBACK=127.0.0.1

log() { echo "$SCRIPT_NAME: $*" >&2; }
die() { echo "$SCRIPT_NAME: error: $*" >&2; exit 1; }

have() { local c; for c; do command -v "$c" >/dev/null 2>&1 || return 1; done; }

is_root() { [[ $(id -u) == 0 ]]; }

take_lock() {
  exec 9>"$1/.lock"
  flock -w "$2" 9 || die "another $SCRIPT_NAME holds $1/.lock"
}

close_fds() {
  local fd
  for fd in "/proc/$BASHPID/fd/"*; do
    fd=${fd##*/}
    if ((fd > 2)); then exec {fd}>&-; fi
  done
}

build_locked() {
  local file=$1 seconds=$2
  shift 2
  mkdir -p "$(dirname "$file")"
  (
    flock -w "$seconds" 6 || die "a build held $file for $seconds s"
    "$@"
  ) 6>"$file" || exit 1
}

port_in_use() { (exec 3<>"/dev/tcp/$LOOPBACK/$1") 2>/dev/null; }

http_status() {
  local code
  if have curl; then
    code=$(curl -s --noproxy '*' -o /dev/null -m 5 -w '%{http_code}' "http://$LOOPBACK:$1$2" 2>/dev/null) || true
  else
    # shellcheck disable=SC2016  # the inner script's own variables
    code=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1
      printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$3" "$1" >&3
      read -r _ c _ <&3; echo "$c"' _ "$LOOPBACK" "$1" "$2" 2>/dev/null) || true
  fi
  echo "${code:-000}"
}

started_pid() {
  local pid
  [[ -f $1 ]] || return 0
  pid=$(cat "$1" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 0
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2"; then
    echo "$pid"
  fi
}

alive() { [[ -d /proc/$1 ]]; }

stop_pid() {
  local pid=$1 tenths=$(($2 * 10)) group=${3:-} i
  if [[ $group == group ]]; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  else
    kill -TERM "$pid" 2>/dev/null || true
  fi
  for ((i = 0; i < tenths; i++)); do
    alive "$pid" || break
    sleep 0.1
  done
  if [[ $group == group ]]; then
    kill -KILL -- "-$pid" 2>/dev/null || true  # and whatever it started that is still there
  elif alive "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
}

wait_healthy() {
  local pid=$1 seconds=$2 interval=$3 t0=$SECONDS rc
  shift 3
  while :; do
    rc=0
    "$@" || rc=$?
    if ((rc == 0 || rc >= 3)); then return "$rc"; fi
    alive "$pid" || return 1
    if ((SECONDS - t0 >= seconds)); then return 2; fi
    sleep "$interval"
  done
}

show_log_tail() {
  local lines=$1 f
  shift
  for f; do
    if [[ -s $f ]] && grep -q '[^[:space:]]' "$f"; then
      echo "----- last $lines lines of $f -----" >&2
      tail -n "$lines" "$f" >&2
    fi
  done
}

# shellcheck source=checkout.sh
. "$(dirname "${BASH_SOURCE[0]}")/checkout.sh"
