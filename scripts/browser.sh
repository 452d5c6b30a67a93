#!/usr/bin/env bash
# Make sure what the HTML report's tests need is on this machine: Graphviz (the report's graph)
# and Debian's Chromium (the tests open the report in it, headless, driven by Playwright).
# Installs only what is missing (apt-get update first, unless the lists are fresh); run
# again, it does nothing.
# Prints "ready" when both are there (exit 0), else says why on stderr (exit 1).
#
# Usage: scripts/browser.sh
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
# shellcheck source=lib/service.sh
. scripts/lib/service.sh
# shellcheck source=lib/apt.sh
. scripts/lib/apt.sh

missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  # Chromium draws text with the system's fonts; Debian's chromium only recommends some.
  dpkg -s fonts-dejavu-core >/dev/null 2>&1 || missing+=(fonts-dejavu-core)
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "${missing[*]} missing; install with: sudo apt-get install ${missing[*]}"
    exit 1
  fi
  log=$(mktemp)
  log "installing ${missing[*]} (apt-get)"
  if ! apt_get_install "$log" "${missing[@]}"; then
    tail -n 20 "$log" >&2
    rm -f "$log"
    log "apt-get install ${missing[*]} failed"
    exit 1
  fi
  rm -f "$log"
fi
echo ready
