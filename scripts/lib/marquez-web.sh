# shellcheck shell=bash
# Sourced by marquez.sh (after lib/service.sh and lib/apt.sh; it reads marquez.sh's variables):
# Marquez's own web UI, built from the source's web/ folder (into MARQUEZ_BUILDS, which every
# checkout shares) and served on loopback by this checkout (its pid file in MARQUEZ_HOME);
# marquez.sh's header says how, and how long.
#
#   ensure_web_dist   sets WEB_DIST: the build of the UI, made now if need be
#   start_web         serve WEB_DIST on $MARQUEZ_WEB_PORT, passing /api/v1 on to $BASE_URL;
#                     waits until both answer
#   stop_web
#   web_status        one line: "web UI: ..."

WEB_PID_FILE="$MARQUEZ_HOME/web.pid"
WEB_LOG="$MARQUEZ_HOME/web.log"
WEB_BUILD_LOG="$MARQUEZ_BUILDS/web/build.log"  # (web-build.log: the older scripts')
WEB_SERVER="$SCRIPT_DIR/marquez/web/server.js"
WEB_CONFIG="$SCRIPT_DIR/marquez/web/webpack.olx.js"
WEB_URL="http://$HOST:$MARQUEZ_WEB_PORT"

# ---------------------------------------------------------------- build

# Node.js (and npm, to build) on PATH; as root on Debian, installed from its packages if missing.
ensure_node() {
  local need=("$NODE") major
  [[ ${1:-} == npm ]] && need+=("$NPM")
  if ! have "${need[@]}"; then
    if ! is_root || ! have apt-get; then
      die "Node.js and npm are needed to build and serve Marquez's web UI (sudo apt-get install nodejs npm)"
    fi
    log "installing Node.js and npm (apt-get install nodejs npm)"
    if ! apt_get_install "$MARQUEZ_BUILDS/apt.log" nodejs npm; then
      tail -n 30 "$MARQUEZ_BUILDS/apt.log" >&2
      die "apt-get install nodejs npm failed (full log: $MARQUEZ_BUILDS/apt.log)"
    fi
    have "${need[@]}" || die "Node.js and npm installed, but ${need[*]} not found on PATH"
  fi
  major=$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  (( major >= 16 )) ||
    die "Marquez's web UI needs Node.js 16 or later; $NODE is $("$NODE" --version 2>&1 | head -n 1)"
}

# How the UI is built, in a copy of its source: upstream's own npm ci, then its webpack build
# with upstream's production configuration as webpack.olx.js (copied beside it) amends it.
# (Its text, as bash prints it, and webpack.olx.js are part of the build's key: change either,
# and the UI is built again.)
web_recipe() {
  npm_config_update_notifier=false "$NPM" ci --no-audit --no-fund --prefer-offline &&
    node_modules/.bin/webpack --config webpack.olx.js
}

# Hash of what a build of the UI is made of: the version, the web source (without what a build
# adds) and the recipe (web_recipe, webpack.olx.js); other changes to the scripts keep the build.
web_key() {
  {
    echo "marquez-web $MARQUEZ_VERSION"
    declare -f web_recipe
    cat "$WEB_CONFIG"
    (cd "$1" && find . \( -path ./node_modules -o -path ./dist -o -path ./libs/graph/node_modules \) \
       -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -c1-16
}

# npm's and webpack's first errors in the UI's build log, then its tail, on stderr.
show_web_build_errors() {
  local errors
  errors=$(grep -E '^(npm (error|ERR!) +[^ ]|ERROR in |Error: )' "$WEB_BUILD_LOG" | head -n 15 || true)
  if [[ -n $errors ]]; then
    echo "----- first errors in $WEB_BUILD_LOG -----" >&2
    echo "$errors" >&2
  fi
  echo "----- last 15 lines of $WEB_BUILD_LOG -----" >&2
  tail -n 15 "$WEB_BUILD_LOG" >&2
}

# build_web SOURCE DIR (under the build lock): web_recipe in a copy of SOURCE; its dist/ kept in
# DIR.
build_web() {
  # (Not web/.unfinished: the scripts from before per-checkout state built there, under
  # another lock.)
  local src=$1 dir=$2 tmp="$MARQUEZ_BUILDS/web/.building-${2##*-}" t0=$SECONDS
  web_built "$dir" && return 0  # another checkout built it while this one waited
  ensure_node npm
  log "building Marquez's web UI from its source ($src) with npm ci and webpack, once for"
  log "  this source: about 10 minutes on 2 busy cores the first time (log: $WEB_BUILD_LOG)"
  rm -rf "$tmp"
  mkdir -p "$tmp/src"
  # A copy without what a build adds; writable (the source may be read-only).
  tar -C "$src" --exclude=./node_modules --exclude=./dist --exclude=./libs/graph/node_modules -cf - . |
    tar -C "$tmp/src" --no-same-owner -xf -
  chmod -R u+w "$tmp/src"
  cp "$WEB_CONFIG" "$tmp/src/webpack.olx.js"
  if ! (cd "$tmp/src" && web_recipe) >"$WEB_BUILD_LOG" 2>&1 9>&-; then
    show_web_build_errors
    rm -rf "$tmp"
    die "npm could not build Marquez's web UI from $src (log: $WEB_BUILD_LOG)"
  fi
  [[ -f $tmp/src/dist/index.html && -f $tmp/src/dist/bundle.js ]] ||
    die "the build ran but left no dist/index.html and dist/bundle.js in $tmp/src (log: $WEB_BUILD_LOG)"
  mv "$tmp/src/dist" "$tmp/dist"
  rm -rf "$tmp/src"  # node_modules, ~700 MB: serving needs dist/ only
  echo "$src" >"$tmp/.complete"
  mv "$tmp" "$dir"
  touch_build "$dir"
  # Earlier builds (another source or recipe) that nothing serves and nothing used for a week.
  prune_builds "$dir" "$MARQUEZ_BUILDS/web/"*-????????????????
  log "built Marquez's web UI in $((SECONDS - t0))s ($dir)"
}

web_built() { [[ -f $1/.complete && -f $1/dist/index.html ]]; }

WEB_DIST=""
ensure_web_dist() {
  local web src dir
  [[ -n $MARQUEZ_SOURCE_DIR ]] ||
    die "Marquez's web UI is built from its source (web/), and MARQUEZ_SOURCE_DIR is empty"
  web="$MARQUEZ_SOURCE_DIR/web"
  [[ -f $web/package.json && -f $web/package-lock.json ]] ||
    die "no source of Marquez's web UI to build at $(realpath -m "$web") (its package.json and package-lock.json)"
  src=$(cd "$web" && pwd -P)
  dir="$MARQUEZ_BUILDS/web/$MARQUEZ_VERSION-$(web_key "$src")"
  WEB_DIST="$dir/dist"
  web_built "$dir" || build_locked "$MARQUEZ_BUILDS/web/.lock" 1800 build_web "$src" "$dir"
  touch_build "$dir"
}

# ---------------------------------------------------------------- serve

# PID of the web UI server this checkout started (its pid file is in MARQUEZ_HOME), or nothing.
web_pid() { started_pid "$WEB_PID_FILE" "/scripts/marquez/web/server.js "; }

# What web UI server $1 runs and serves: "SERVER_JS DIST PORT API_URL".
web_serves() { tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | tail -n 4 | paste -sd' '; }

web_healthy() {
  [[ $(http_status "$MARQUEZ_WEB_PORT" /) == 200 &&
     $(http_status "$MARQUEZ_WEB_PORT" /api/v1/namespaces) == 200 ]]
}

start_web() {
  local pid rc=0
  pid=$(web_pid)
  if [[ -n $pid && $(web_serves "$pid") != "$WEB_SERVER $WEB_DIST $MARQUEZ_WEB_PORT $BASE_URL" ]]; then
    log "the web UI (pid $pid) serves another build, port or API; restarting it"
    stop_web
    pid=""
  fi
  if [[ -n $pid ]] && web_healthy; then
    log "web UI already running at $WEB_URL"
    return 0
  fi
  if [[ -z $pid ]]; then
    refuse_port "$MARQUEZ_WEB_PORT" MARQUEZ_WEB_PORT
    ensure_node
    log "starting Marquez's web UI on $WEB_URL (API: $BASE_URL)"
    (cd "$MARQUEZ_HOME" && close_fds && exec nohup setsid "$NODE" "$WEB_SERVER" "$WEB_DIST" "$MARQUEZ_WEB_PORT" \
        "$BASE_URL" >"$WEB_LOG" 2>&1 </dev/null 9>&-) &
    pid=$!
    echo "$pid" >"$WEB_PID_FILE"
  fi
  wait_healthy "$pid" 30 0.5 web_healthy || rc=$?
  case $rc in
    0) log "web UI ready at $WEB_URL" ;;
    1) show_log_tail 30 "$WEB_LOG"
       rm -f "$WEB_PID_FILE"
       die "Marquez's web UI exited during startup (log: $WEB_LOG)" ;;
    *) show_log_tail 30 "$WEB_LOG"
       die "Marquez's web UI (pid $pid) did not answer GET $WEB_URL/ and $WEB_URL/api/v1/namespaces with 200 within 30s" ;;
  esac
}

stop_web() {
  local pid
  pid=$(web_pid)
  if [[ -n $pid ]]; then
    stop_pid "$pid" 5
    log "web UI stopped"
  fi
  rm -f "$WEB_PID_FILE"
}

web_status() {
  local pid serves port
  pid=$(web_pid)
  if [[ -z $pid ]]; then
    echo "web UI: not running"
    return 0
  fi
  read -r -a serves <<<"$(web_serves "$pid")"
  port=${serves[2]:-?}
  if [[ $(http_status "$port" /) == 200 ]]; then
    echo "web UI: running at http://$HOST:$port (pid $pid; API ${serves[3]:-?})"
  else
    echo "web UI: process $pid running but GET http://$HOST:$port/ answers $(http_status "$port" /)"
  fi
}
