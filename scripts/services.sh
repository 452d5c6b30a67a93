#!/usr/bin/env bash
# Prepare everything the end-to-end and browser tests need, in two lanes side by side: one
# for Java (Marquez built with Maven and started with its PostgreSQL, a Kafka broker, DataHub's
# converters), one for Node and Debian's packages (Chromium and Graphviz, code-server, the
# extension's .vsix, Marquez's web UI). scripts/test.sh runs it in the background while the
# tests that need none of it run (tests/conftest.py's `services` fixture waits for it).
#
# Usage: scripts/services.sh DIR
#
#   Writes DIR/log (what each script said), DIR/env (KEY=VALUE lines the tests need:
#   KAFKA_BOOTSTRAP_SERVERS, OLX_VSCODE_VSIX, and OLX_REQUIRE_MARQUEZ(_UI) when Marquez (its UI)
#   is up, which scripts/test.sh requires already where their source is), then DIR/status
#   (0, or 1 when something the tests require could not be had: its log says what). Exits
#   with that status.
#
# Environment: that of scripts/marquez.sh, kafka.sh, datahub.sh, vscode.sh (see their --help),
# and OLX_REQUIRE_MARQUEZ, OLX_REQUIRE_MARQUEZ_UI, OLX_REQUIRE_DATAHUB (scripts/test.sh sets
# them where their sources are): with one set, its service failing fails; without, its tests
# are skipped, each saying why.
set -uo pipefail
case "${1:-}" in -h|--help|"") sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
dir=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
: >"$dir/log"
: >"$dir/env.lanes"
exec >>"$dir/log" 2>&1
start=$SECONDS

fail() { echo "services.sh: $*"; return 1; }
say() { echo "services.sh: $*"; }
provide() { echo "$1" >>"$dir/env.lanes"; }  # one line, whole: the lanes append side by side

java_lane() {
  if scripts/marquez.sh start >/dev/null; then
    provide OLX_REQUIRE_MARQUEZ=1
    echo up >"$dir/marquez"
  else
    echo down >"$dir/marquez"
    [ "${OLX_REQUIRE_MARQUEZ:-}" = 1 ] &&
      { fail "Marquez could not be built or started (above), and the tests require it"; return; }
    say "Marquez could not be started (above), and its source (../shared/third_party/marquez-*)" \
      "is not here to build it; the end-to-end tests will be skipped"
  fi
  # The kafka transport's end-to-end tests need a real broker (Apache Kafka from Maven Central,
  # always reachable here): one that cannot be fetched or started fails, never a skipped proof.
  local bootstrap
  bootstrap=$(scripts/kafka.sh start) ||
    { fail "Kafka could not be started (above), and the tests require it"; return; }
  provide "KAFKA_BOOTSTRAP_SERVERS=$bootstrap"
  if compgen -G "../shared/third_party/datahub-*/metadata-integration" >/dev/null; then
    scripts/datahub.sh build >/dev/null ||
      { fail "DataHub's converter could not be built (above), and the tests require it"; return; }
  else
    say "DataHub's converter source (../shared/third_party/datahub-*) is not here to build;" \
      "its tests will be skipped"
  fi
}

node_lane() {
  scripts/browser.sh >/dev/null ||
    { fail "Chromium or Graphviz could not be installed (above), and the tests require them"; return; }
  local vsix
  scripts/vscode.sh install >/dev/null ||
    { fail "code-server could not be installed (above)"; return; }
  vsix=$(scripts/vscode.sh package) ||
    { fail "the VS Code extension could not be packaged (above)"; return; }
  provide "OLX_VSCODE_VSIX=$vsix"
  # The web UI talks to the API: after the Java lane has (or has not) started Marquez.
  while [ ! -s "$dir/marquez" ]; do
    kill -0 "$java" 2>/dev/null || break
    sleep 1
  done
  if [ "$(cat "$dir/marquez" 2>/dev/null)" = up ] && scripts/marquez.sh ui >/dev/null; then
    provide OLX_REQUIRE_MARQUEZ_UI=1
  elif [ "${OLX_REQUIRE_MARQUEZ_UI:-}" = 1 ]; then
    fail "Marquez's web UI could not be built or started (above; or Marquez is not up), and" \
      "the tests require it"
  else
    say "Marquez's web UI could not be started (above), and its source" \
      "(../shared/third_party/marquez-*/web) is not here to build it; its browser tests will be skipped"
  fi
}

java_lane >>"$dir/java.log" 2>&1 &
java=$!
node_lane >>"$dir/node.log" 2>&1 &
node=$!
wait "$java"; java_status=$?
wait "$node"; node_status=$?
cat "$dir/java.log" "$dir/node.log"
status=$(( java_status || node_status ))
mv "$dir/env.lanes" "$dir/env"
if [ "$status" = 0 ]; then
  say "ready after $((SECONDS - start)) s"
else
  say "failed after $((SECONDS - start)) s (above)"
fi
echo "$status" >"$dir/status"
exit "$status"
