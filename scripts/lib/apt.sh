# shellcheck shell=bash
# Sourced by the scripts that install Debian packages when missing (browser.sh, postgres.sh and
# marquez.sh, vscode.sh, test.sh).
#
# apt_install_missing LOG PACKAGE...
#   those of PACKAGE... that are not installed, with apt_get_install, saying so; as another user
#   than root (or without apt-get), dies saying what to install (log and die: lib/service.sh).
#
# apt_get_install LOG PACKAGE...
#   apt-get install PACKAGE... (apt-get update first, unless the package lists are under an
#   hour old), its output into LOG; returns apt-get's failure. One at a time on this machine:
#   scripts/services.sh runs two of these scripts side by side, and a second apt-get would
#   fail on dpkg's lock, not wait for it.
apt_get_install() {
  local log=$1
  shift
  (
    flock -w 1800 8 || { echo "another apt-get install held /run/lock/openlineage-export-apt.lock for 30 minutes"; exit 1; }
    if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | head -n 1)" ]; then
      DEBIAN_FRONTEND=noninteractive apt-get update -q || exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
  ) 8>/run/lock/openlineage-export-apt.lock 9>&- >"$log" 2>&1
}

apt_install_missing() {
  local log=$1 missing=() package
  shift
  for package in "$@"; do dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    die "${missing[*]} missing; install with: sudo apt-get install ${missing[*]}"
  fi
  log "installing ${missing[*]} (apt-get)"
  if ! apt_get_install "$log" "${missing[@]}"; then
    tail -n 40 "$log" >&2 || true
    die "apt-get install ${missing[*]} failed (log: $log)"
  fi
}
