#!/usr/bin/env bash
# Build DataHub's own OpenLineage converter (the code DataHub's server runs behind
# POST /openapi/openlineage/api/v1/lineage) at each point of DataHub's history kept in
# ../shared/third_party/datahub-*, with our harness, and run events through it.
#
# Usage: scripts/datahub.sh build [NAME...]
#        scripts/datahub.sh check NAME [--orchestrator ORCHESTRATOR]
#                                      [--connection NAMESPACE=INSTANCE]... <events.jsonl >results.jsonl
#        scripts/datahub.sh list
#
#   build   build each converter NAME (a folder name such as datahub-2025-10-04; all of them
#           when none is given) and print "NAME<TAB>CLASSPATH" for each, one per line. Each
#           build is made once per content of its source, our pom and our harness: with Maven
#           (scripts/datahub/pom.xml: Pegasus's generator, then javac) into
#           $DATAHUB_HOME/build/NAME-<hash>/, about 50 s each the first time (and 65 MB of
#           dependencies into an empty local Maven repository: 3.5 minutes for all three), then
#           reused at once, by every checkout. Nothing is written into the source tree. A build
#           no check runs from, neither made nor used for 7 days, is deleted when another is made.
#   check   run JSON Lines of OpenLineage run events (standard input) through converter NAME,
#           configured as DataHub's REST endpoint configures it, and print one JSON line per
#           event (scripts/datahub/harness: ok, error, the DataFlow, DataJob, DataProcessInstance
#           and dataset URNs, every aspect checked against its Pegasus schema). ORCHESTRATOR is
#           the server's DATAHUB_OPENLINEAGE_ORCHESTRATOR; each --connection gives a dataset
#           namespace (postgres://host:5432) a platform instance (both: the newest converter only).
#   list    the converters there are to build, one NAME per line.
#
# Environment (defaults in brackets):
#   DATAHUB_HOME         the builds, every checkout's (no server runs: nothing of a checkout's
#                        own) [$OLX_CACHE/datahub, $OLX_CACHE: scripts/ports.sh --help]
#   DATAHUB_SOURCES      where the datahub-* source folders are [../shared/third_party beside
#                        the repository]
#   DATAHUB_MVN_ARGS     extra arguments for mvn (e.g. -o, -s settings.xml, -Dmaven.repo.local=DIR)
#   JAVA                 java binary [java]
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/service.sh
. "$SCRIPT_DIR/lib/service.sh"
# shellcheck source=lib/maven.sh
. "$SCRIPT_DIR/lib/maven.sh"
POM="$SCRIPT_DIR/datahub/pom.xml"
HARNESS="$SCRIPT_DIR/datahub/harness"
DATAHUB_HOME=${DATAHUB_HOME:-$OLX_CACHE/datahub}
DATAHUB_SOURCES=${DATAHUB_SOURCES:-$SCRIPT_DIR/../../shared/third_party}
DATAHUB_MVN_ARGS=${DATAHUB_MVN_ARGS:-}
JAVA=${JAVA:-java}

# openlineage-java each converter is built against: the newest converter moved to 1.50.0 (DataHub's
# upgrade notes, 2026-07-03); the 2025 ones build with 1.33.0 (../shared/third_party/README.md).
openlineage_version() {
  case "$1" in
    datahub-master-*) echo 1.50.0 ;;
    *) echo 1.33.0 ;;
  esac
}

sources_dir() {
  [[ -d $DATAHUB_SOURCES ]] || die "no DataHub sources at $(realpath -m "$DATAHUB_SOURCES") (set DATAHUB_SOURCES)"
  (cd "$DATAHUB_SOURCES" && pwd -P)
}

cmd_list() {
  local root d found=0
  root=$(sources_dir)
  for d in "$root"/datahub-*/; do
    [[ -d $d/metadata-integration/java/openlineage-converter ]] || continue
    basename "$d"
    found=1
  done
  [[ $found == 1 ]] || die "no datahub-*/ converter source in $root"
}

# Hash of what a build is made of: its name, openlineage-java's version, our pom and harness, and
# every file of the source tree.
build_key() {
  local src=$1 name=$2
  {
    echo "$name $(openlineage_version "$name")"
    cat "$POM"
    tree_digests "$HARNESS"
    tree_digests "$src"
  } | sha256sum | cut -c1-16
}

# Prints the classpath of converter $1, built now if need be.
classpath() {
  local name=$1 root src key dir tmp build_log t0
  root=$(sources_dir)
  src="$root/$name"
  [[ $name == datahub-* && -d $src/metadata-integration/java/openlineage-converter ]] ||
    die "no converter source $name in $root (there: $(cmd_list 2>/dev/null | paste -sd' '))"
  key=$(build_key "$src" "$name")
  dir="$DATAHUB_HOME/build/$name-$key"
  if [[ ! -f $dir/.complete ]]; then
    command -v mvn >/dev/null || die "mvn not found (Maven 3 builds DataHub's converter $name from $src, once)"
    command -v javac >/dev/null || die "javac not found (a JDK 17 builds DataHub's converter $name, once)"
    build_log="$DATAHUB_HOME/$name-build.log"
    log "building DataHub's converter $name from its source ($src) with Maven, once for this"
    log "  source: about 50 s, more while Maven downloads its dependencies (log: $build_log)"
    tmp="$DATAHUB_HOME/build/.unfinished-$name"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    t0=$SECONDS
    # shellcheck disable=SC2086
    if ! (cd "$tmp" && mvn -B -U -ntp -Dstyle.color=never $DATAHUB_MVN_ARGS -f "$POM" \
            -Ddatahub.source="$src" -Ddatahub.build="$tmp" \
            -Dopenlineage.version="$(openlineage_version "$name")" \
            package dependency:copy-dependencies) </dev/null >"$build_log" 2>&1 9>&-; then
      show_maven_errors "$build_log"
      rm -rf "$tmp"
      die "Maven could not build DataHub's converter $name from $src (log: $build_log)"
    fi
    [[ -f $tmp/datahub-converter-check.jar ]] ||
      die "Maven ran but $tmp/datahub-converter-check.jar is missing (log: $build_log)"
    mv "$tmp/datahub-converter-check.jar" "$tmp/lib/"
    find "$tmp" -mindepth 1 -maxdepth 1 ! -name lib -exec rm -rf {} +
    echo "$key $src" >"$tmp/.complete"
    mv "$tmp" "$dir"
    touch_build "$dir"
    # Earlier builds of this converter (another source, pom or harness) that no check runs from
    # (another checkout's, maybe) and that were neither made nor used for a week.
    prune_builds "$dir" "$DATAHUB_HOME/build/$name-"????????????????
    log "built DataHub's converter $name in $((SECONDS - t0))s ($dir)"
  fi
  touch_build "$dir"
  echo "$dir/lib/*"
}

# One invocation at a time per state dir (parallel test workers may all build).
lock() {
  mkdir -p "$DATAHUB_HOME/build"
  take_lock "$DATAHUB_HOME" 1800
}

cmd_build() {
  local names name cp
  lock
  if (( $# )); then names=("$@"); else mapfile -t names < <(cmd_list); fi
  for name in "${names[@]}"; do
    cp=$(classpath "$name")
    printf '%s\t%s\n' "$name" "$cp"
  done
}

cmd_check() {
  local name=${1:-} cp
  [[ -n $name ]] || die "usage: $0 check NAME [--orchestrator ORCHESTRATOR] <events.jsonl"
  shift
  lock
  cp=$(classpath "$name")
  exec 9>&-
  command -v "$JAVA" >/dev/null || die "java not found (Java 17 is needed)"
  exec "$JAVA" -XX:TieredStopAtLevel=1 -cp "$cp" local.olx.datahub.ConverterCheck "$@"
}

case "${1:-}" in
  build) cmd_build "${@:2}" ;;
  check) cmd_check "${@:2}" ;;
  list) cmd_list ;;
  -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0" ;;
  *) echo "usage: $0 build [NAME...]|check NAME [--orchestrator ORCHESTRATOR]|list" >&2; exit 2 ;;
esac
