#!/usr/bin/env bash
# VS Code for the extension's tests: code-server from npm, the extension packaged as a .vsix,
# and a code-server on loopback with that .vsix installed.
#
# Usage: scripts/vscode.sh install|package|start|stop|status
#
#   install   code-server@$CODE_SERVER_VERSION into $VSCODE_HOME (once: about a minute, ~300 MB;
#             then nothing). As root, Debian's libkrb5-dev (a native module builds against it)
#             and ripgrep are installed when missing; @vscode/ripgrep, which would download its
#             rg binary, is given Debian's rg instead (through the cache it reads). Prints the
#             code-server binary's path.
#   package   build editor/vscode (npm ci, tsc, its unit tests in editor/vscode/test: a failure
#             packages nothing) with the package's wheel inside, and package it
#             with @vscode/vsce into editor/vscode/dist/openlineage-export-<version>.vsix; prints
#             that path. Only when its sources changed: the .vsix there is kept with a hash of
#             what it is made of (editor/vscode's files but node_modules/, out/, wheel/, dist/;
#             the Python package's: pyproject.toml, README.md, LICENSE, src/ but caches;
#             scripts/vscode_settings.py; this recipe), in editor/vscode/dist/.sources, and a
#             package whose hash is that one is not made again (a second; packaging is 25 s or
#             more). Fails when package.json's settings are not those of the tool (regenerate
#             them with scripts/vscode_settings.py).
#   start [--dir DIR] [--port PORT] [--folder FOLDER] [--vsix FILE]
#             install and package when needed (as above), then start code-server on
#             127.0.0.1:PORT (default: a free port) with --auth none, no telemetry, no update
#             check, no workspace trust, its user data and extensions in DIR (default
#             $OLX_CHECKOUT_STATE/vscode/run: this checkout's), the .vsix installed there,
#             opening FOLDER. Waits until it answers; prints its URL. Its environment is this
#             script's (the extension's export inherits it: HOME, proxies,
#             OPENLINEAGE_EXPORT_*...). Log: DIR/code-server.log.
#   stop [--dir DIR]
#             stop the code-server this checkout started with that DIR.
#   status [--dir DIR]
#             print its URL when it runs (exit 0), else exit 1.
#
# Progress goes to stderr; only the result is printed on stdout. A failure says why and shows
# the end of its log.
#
# Environment (defaults in brackets):
#   VSCODE_HOME           where code-server is installed, for every checkout [$OLX_CACHE/vscode]
#   OLX_CHECKOUT_STATE, OLX_CACHE   this checkout's state, the shared builds (scripts/ports.sh
#                         --help); packaging's log and lock are in $OLX_CHECKOUT_STATE/vscode
#   CODE_SERVER_VERSION   [4.100.3]: the newest that runs on Node 20 (4.103 and later need 22)
#   VSCODE_START_TIMEOUT  seconds to wait for code-server to answer [120]
#   PYTHON                the Python that builds the wheel [.venv/bin/python, else python3]
#   NODE, NPM             [node, npm]
set -euo pipefail
case "${1:-}" in -h|--help|"") sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/service.sh
. "$ROOT/scripts/lib/service.sh"
# shellcheck source=lib/apt.sh
. "$ROOT/scripts/lib/apt.sh"
VSCODE_HOME=${VSCODE_HOME:-$OLX_CACHE/vscode}
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.100.3}
VSCODE_START_TIMEOUT=${VSCODE_START_TIMEOUT:-120}
NODE=${NODE:-node}
NPM=${NPM:-npm}
EXTENSION="$ROOT/editor/vscode"
RIPGREP_CACHE_VERSION=1.15.11   # the @vscode/ripgrep that code-server $CODE_SERVER_VERSION holds
RIPGREP_VERSION=v13.0.0-10      # the rg release that @vscode/ripgrep version downloads

fail_with_log() {  # $1 what failed, $2 its log
  tail -n 40 "$2" >&2 || true
  die "$1 (log: $2)"
}

checkout_state
mkdir -p "$VSCODE_HOME"
VSCODE_HOME=$(cd "$VSCODE_HOME" && pwd -P)
INSTALL_DIR="$VSCODE_HOME/code-server-$CODE_SERVER_VERSION"
CODE_SERVER="$INSTALL_DIR/node_modules/.bin/code-server"

# ---------------------------------------------------------------- install

apt_install() { apt_install_missing "$VSCODE_HOME/apt.log" "$@"; }

ripgrep_target() {  # the rg build @vscode/ripgrep would download for this machine
  case "$(uname -m)" in
    x86_64) echo x86_64-unknown-linux-musl ;;
    aarch64|arm64) echo aarch64-unknown-linux-musl ;;
    *) die "no known ripgrep build for $(uname -m)" ;;
  esac
}

install_code_server() {
  if [ -x "$CODE_SERVER" ] && [ -f "$INSTALL_DIR/.installed" ]; then
    echo "$CODE_SERVER"
    return 0
  fi
  take_lock "$VSCODE_HOME" 1800  # one install or package at a time
  if [ -x "$CODE_SERVER" ] && [ -f "$INSTALL_DIR/.installed" ]; then
    echo "$CODE_SERVER"
    return 0
  fi
  command -v "$NPM" >/dev/null 2>&1 || apt_install nodejs npm
  apt_install libkrb5-dev ripgrep
  local rg
  rg=$(command -v rg) || die "ripgrep's rg is not on PATH"
  # @vscode/ripgrep's postinstall downloads rg unless its cache (in os.tmpdir()) holds the
  # release it wants: put Debian's rg there, in a TMPDIR of our own.
  local tmp="$VSCODE_HOME/tmp" cache
  cache="$tmp/vscode-ripgrep-cache-$RIPGREP_CACHE_VERSION"
  rm -rf "$tmp"
  mkdir -p "$cache/rg-bin"
  cp "$rg" "$cache/rg-bin/rg"
  tar -C "$cache/rg-bin" -czf "$cache/ripgrep-$RIPGREP_VERSION-$(ripgrep_target).tar.gz" rg
  rm -rf "$cache/rg-bin"
  local unfinished="$VSCODE_HOME/.unfinished-$CODE_SERVER_VERSION" install_log="$VSCODE_HOME/install.log"
  rm -rf "$unfinished" "$INSTALL_DIR"
  mkdir -p "$unfinished"
  echo '{"name": "code-server-install", "private": true}' >"$unfinished/package.json"
  log "installing code-server@$CODE_SERVER_VERSION into $INSTALL_DIR (npm, about a minute; log: $install_log)"
  local started=$SECONDS
  # Native modules build against Debian's Node headers (/usr/include/node), not a download.
  if ! (cd "$unfinished" && TMPDIR="$tmp" npm_config_nodedir=/usr npm_config_unsafe_perm=true \
        npm_config_yes=true npm_config_fund=false npm_config_audit=false \
        "$NPM" install --no-save --loglevel=warn "code-server@$CODE_SERVER_VERSION") \
        >"$install_log" 2>&1; then
    fail_with_log "npm install code-server@$CODE_SERVER_VERSION failed" "$install_log"
  fi
  [ -x "$unfinished/node_modules/.bin/code-server" ] ||
    fail_with_log "npm installed no code-server binary" "$install_log"
  touch "$unfinished/.installed"
  mv "$unfinished" "$INSTALL_DIR"
  rm -rf "$tmp"
  log "code-server installed in $((SECONDS - started)) s"
  echo "$CODE_SERVER"
}

# ---------------------------------------------------------------- package

# The hash of what the .vsix is made of (package's help says what): the recipe's text, then
# every file's digest, in a stable order.
extension_sources_key() {
  {
    declare -f package_extension
    (cd "$ROOT" && {
      find editor/vscode \( -path editor/vscode/node_modules -o -path editor/vscode/out \
        -o -path editor/vscode/wheel -o -path editor/vscode/dist \) -prune -o -type f -print0
      find pyproject.toml README.md LICENSE scripts/vscode_settings.py -maxdepth 0 -type f -print0 2>/dev/null
      find src \( -name __pycache__ -o -name '*.egg-info' -o -name '.*' \) -prune -o -type f -print0
    } | LC_ALL=C sort -z | xargs -0 -r sha256sum)
  } | sha256sum | cut -c1-16
}

# Prints the .vsix of the sources as they are: the one there when its hash is theirs, else a new
# one.
package_extension() {
  local state="$OLX_CHECKOUT_STATE/vscode" key stamp="$EXTENSION/dist/.sources" kept
  mkdir -p "$state"
  take_lock "$state" 1800  # one package at a time in this checkout
  key=$(extension_sources_key)
  kept=$(sed -n "s/^$key //p" "$stamp" 2>/dev/null || true)
  if [[ -n $kept && -f $EXTENSION/dist/$kept ]]; then
    log "$EXTENSION/dist/$kept is up to date (its sources' hash $key); not packaging again"
    echo "$EXTENSION/dist/$kept"
    return 0
  fi
  local python=${PYTHON:-}
  if [ -z "$python" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then python="$ROOT/.venv/bin/python"; else python=python3; fi
  fi
  command -v "$NPM" >/dev/null 2>&1 || apt_install nodejs npm
  local package_log="$state/package.log" started=$SECONDS
  : >"$package_log"
  "$python" "$ROOT/scripts/vscode_settings.py" --check >>"$package_log" 2>&1 ||
    fail_with_log "editor/vscode/package.json's settings are not the tool's" "$package_log"
  log "building the extension (npm ci, tsc, the wheel, vsce; log: $package_log)"
  # The wheel rides inside the .vsix: the extension installs it into a private environment.
  rm -rf "$EXTENSION/wheel" "$EXTENSION/dist"
  mkdir -p "$EXTENSION/wheel" "$EXTENSION/dist"
  "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    -w "$EXTENSION/wheel" "$ROOT" >>"$package_log" 2>&1 ||
    "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps \
      -w "$EXTENSION/wheel" "$ROOT" >>"$package_log" 2>&1 ||
    fail_with_log "building the wheel failed" "$package_log"
  rm -rf "$ROOT/build"
  # npm ci once per package-lock.json (it empties node_modules first: a minute or two).
  local npm_stamp="$EXTENSION/node_modules/.olx-package-lock" lock_sum
  lock_sum=$(sha256sum "$EXTENSION/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$npm_stamp" 2>/dev/null)" != "$lock_sum" ]; then
    (cd "$EXTENSION" && "$NPM" ci --no-fund --no-audit --loglevel=warn) >>"$package_log" 2>&1 ||
      fail_with_log "npm ci in editor/vscode failed" "$package_log"
    echo "$lock_sum" >"$npm_stamp"
  fi
  (cd "$EXTENSION" && "$NPM" run --silent compile) >>"$package_log" 2>&1 ||
    fail_with_log "tsc failed" "$package_log"
  # The extension's own unit tests (editor/vscode/test, plain Node): a package that fails them
  # is not made.
  (cd "$EXTENSION" && "$NPM" run --silent test:unit) >>"$package_log" 2>&1 ||
    fail_with_log "the extension's unit tests (editor/vscode/test) failed" "$package_log"
  local version vsix
  version=$("$NODE" -p "require('$EXTENSION/package.json').version")
  vsix="$EXTENSION/dist/openlineage-export-$version.vsix"
  (cd "$EXTENSION" && node_modules/.bin/vsce package --no-dependencies --skip-license \
     --allow-missing-repository -o "$vsix") >>"$package_log" 2>&1 ||
    fail_with_log "vsce package failed" "$package_log"
  # The hash of the sources as they were read above (a change made meanwhile packages again).
  echo "$key ${vsix##*/}" >"$stamp"
  log "packaged $vsix in $((SECONDS - started)) s"
  echo "$vsix"
}

# ---------------------------------------------------------------- start / stop

RUN_DIR="$OLX_CHECKOUT_STATE/vscode/run"
PORT=0
FOLDER=""
VSIX=""
parse_run_options() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) RUN_DIR=$2; shift 2 ;;
      --port) PORT=$2; shift 2 ;;
      --folder) FOLDER=$2; shift 2 ;;
      --vsix) VSIX=$2; shift 2 ;;
      *) die "unknown option $1 (try --help)" ;;
    esac
  done
  mkdir -p "$RUN_DIR"
  RUN_DIR=$(cd "$RUN_DIR" && pwd -P)
}

running_pid() {  # the pid of the code-server started with RUN_DIR, if it still runs
  local pid
  pid=$(started_pid "$RUN_DIR/code-server.pid" "--user-data-dir $RUN_DIR/user-data")
  [ -n "$pid" ] && echo "$pid"
}

listening_url() {  # the address code-server says it listens on
  sed -n 's/.*HTTP server listening on \(http:\/\/[^ ]*\).*/\1/p' "$RUN_DIR/code-server.log" \
    2>/dev/null | tail -n 1 | sed 's:/*$::'
}

start_code_server() {
  if running_pid >/dev/null; then
    listening_url
    return 0
  fi
  install_code_server >/dev/null
  if [ -z "$VSIX" ]; then
    VSIX=$(package_extension)
  fi
  [ -f "$VSIX" ] || die "no .vsix at $VSIX"
  local data="$RUN_DIR/user-data" extensions="$RUN_DIR/extensions" run_log="$RUN_DIR/code-server.log"
  mkdir -p "$data" "$extensions"
  log "installing $(basename "$VSIX") into $extensions"
  "$CODE_SERVER" --config "$RUN_DIR/config.yaml" --user-data-dir "$data" \
    --extensions-dir "$extensions" --install-extension "$VSIX" --force >"$RUN_DIR/install-extension.log" 2>&1 ||
    fail_with_log "code-server could not install $VSIX" "$RUN_DIR/install-extension.log"
  local args=(--config "$RUN_DIR/config.yaml" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry
              --disable-update-check --disable-workspace-trust --disable-getting-started-override
              --user-data-dir "$data" --extensions-dir "$extensions")
  [ -n "$FOLDER" ] && args+=("$FOLDER")
  : >"$run_log"
  # setsid: its own process group, so that stop ends it with every child it started; none of
  # this script's files (close_fds).
  (close_fds && exec setsid "$CODE_SERVER" "${args[@]}") >"$run_log" 2>&1 </dev/null &
  local pid=$! rc=0
  echo "$pid" >"$RUN_DIR/code-server.pid"
  wait_healthy "$pid" "$VSCODE_START_TIMEOUT" 0.2 answers || rc=$?
  case $rc in
    0) echo "$URL" ;;
    1) fail_with_log "code-server exited before it answered" "$run_log" ;;
    *) stop_code_server
       fail_with_log "code-server did not answer within $VSCODE_START_TIMEOUT s" "$run_log" ;;
  esac
}

URL=""
answers() {  # code-server answers at the address it says it listens on (then in URL)
  URL=$(listening_url)
  [ -n "$URL" ] && curl -s --noproxy '*' -o /dev/null -m 5 "$URL/healthz" || return 1
}

stop_code_server() {
  local pid
  if pid=$(running_pid); then
    stop_pid "$pid" 30 group  # the group: code-server and every child it started
  fi
  rm -f "$RUN_DIR/code-server.pid"
}

command=$1
shift
case "$command" in
  install) install_code_server ;;
  package) package_extension ;;
  start) parse_run_options "$@"; start_code_server ;;
  stop) parse_run_options "$@"; stop_code_server ;;
  status) parse_run_options "$@"; running_pid >/dev/null && listening_url ;;
  *) die "unknown command $command (try --help)" ;;
esac
