#!/usr/bin/env bash
# Run a real single-node Apache Kafka broker (KRaft mode: broker and controller in one JVM) on
# loopback only, for end-to-end tests and for trying the kafka transport locally.
#
# Usage: scripts/kafka.sh start|stop|status|reset
#
#   start   fetch kafka_2.13 and its dependencies with Maven (once, into
#           $OLX_CACHE/kafka/jars/<version>-<hash of the pom>, which every checkout shares),
#           format the log directory once (kafka.tools.StorageTool, --standalone controller),
#           start the broker and wait until it answers a Kafka ApiVersions request. Idempotent.
#           Progress goes to stderr; the bootstrap address is the only thing printed on stdout.
#   stop    stop the broker (SIGTERM: a controlled shutdown; SIGKILL after 60 s).
#   status  say whether it runs (exit 0 only when this checkout's broker answers).
#   reset   stop the broker, delete its log directory (every topic), start a fresh one.
#
# Each checkout runs a broker of its own (lib/checkout.sh): its state (pid file, configuration,
# log directory) in $KAFKA_HOME, its ports from its slot (slot 0: 59092, 59093, 59094;
# scripts/ports.sh prints them). This script stops only the broker it started from this
# checkout; when one of its ports is held by anything else (another checkout's broker, a broker
# of your own), it refuses, in one line naming the port and what holds it.
#
# Environment (defaults in brackets):
#   KAFKA_HOME            this checkout's broker state [$OLX_CHECKOUT_STATE/kafka]
#   KAFKA_PORT            broker (PLAINTEXT) port [59092 + 10 x slot]
#   KAFKA_CONTROLLER_PORT KRaft controller port [59093 + 10 x slot]
#   KAFKA_SASL_PORT       SASL_PLAINTEXT port, mechanism PLAIN, user olx, password
#                         olx-test-password (a test fixture: loopback only) [59094 + 10 x slot]
#   OLX_PORT_SLOT, OLX_CHECKOUT_STATE, OLX_CACHE
#                         this checkout's port slot, its state, the shared builds
#                         (scripts/ports.sh --help)
#   KAFKA_VERSION         org.apache.kafka:kafka_2.13 version fetched from Maven [4.1.1]
#   KAFKA_START_TIMEOUT   seconds to wait for the broker to answer [120]
#   KAFKA_LIB_DIR         use the jars in this directory (kafka_2.13 + dependencies)
#                         instead of fetching them with Maven
#   KAFKA_MVN_ARGS        extra arguments for mvn (e.g. -s settings.xml, -o)
#   KAFKA_JAVA_OPTS       JVM options [-Xms256m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1]
#                         (quick to start on a small, busy machine: about half the time of the
#                         JVM's defaults; for benchmarking the broker, give it e.g. -Xmx1g alone)
#   JAVA                  java binary, version 17 or later [java]
#
# Everything listens on 127.0.0.1 only.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0; fi

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/service.sh
. "$SCRIPT_DIR/lib/service.sh"
POM="$SCRIPT_DIR/kafka/pom.xml"

checkout_state
checkout_ports
KAFKA_HOME=${KAFKA_HOME:-$OLX_CHECKOUT_STATE/kafka}
KAFKA_BUILDS="$OLX_CACHE/kafka"  # every checkout's: the jars, keyed by version and pom
KAFKA_VERSION=${KAFKA_VERSION:-4.1.1}
KAFKA_START_TIMEOUT=${KAFKA_START_TIMEOUT:-120}
KAFKA_JAVA_OPTS=${KAFKA_JAVA_OPTS:--Xms256m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}
KAFKA_MVN_ARGS=${KAFKA_MVN_ARGS:-}
JAVA=${JAVA:-java}

HOST=$LOOPBACK
# shellcheck disable=SC2153  # the port: set by checkout_ports
BOOTSTRAP="$HOST:$KAFKA_PORT"

mkdir -p "$KAFKA_HOME" "$KAFKA_BUILDS"
KAFKA_HOME=$(cd "$KAFKA_HOME" && pwd -P)
KAFKA_BUILDS=$(cd "$KAFKA_BUILDS" && pwd -P)
CONFIG="$KAFKA_HOME/server.properties"
DATA="$KAFKA_HOME/data"
PID_FILE="$KAFKA_HOME/kafka.pid"
KAFKA_OUT="$KAFKA_HOME/kafka.out"

# ---------------------------------------------------------------- helpers

# True when a Kafka broker answers on $KAFKA_PORT: an ApiVersions v0 request (correlation id 7)
# must come back with correlation id 7 and error code 0. Plain bash, no JVM to start.
healthy() {
  local answer
  # shellcheck disable=SC2016  # the inner script's own variables
  answer=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1
    printf "\x00\x00\x00\x0d\x00\x12\x00\x00\x00\x00\x00\x07\x00\x03olx" >&3
    head -c 10 <&3 | od -An -tx1 | tr -d " \n"' _ "$HOST" "$KAFKA_PORT" 2>/dev/null) || true
  [[ ${answer:8:12} == 000000070000 ]]
}

# PID of our broker process, or nothing.
kafka_pid() { started_pid "$PID_FILE" "kafka.Kafka $CONFIG"; }

check_java() {
  command -v "$JAVA" >/dev/null || die "java not found (the Kafka $KAFKA_VERSION broker needs Java 17 or later)"
  local major
  major=$("$JAVA" -XshowSettings:properties -version 2>&1 |
          sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' || true)
  [[ -n $major && $major -ge 17 ]] ||
    die "$JAVA is Java ${major:-of an unknown version}; the Kafka $KAFKA_VERSION broker needs 17 or later (set JAVA)"
}

# ---------------------------------------------------------------- jars

CLASSPATH_DIR=""
ensure_jars() {
  if [[ -n ${KAFKA_LIB_DIR:-} ]]; then
    compgen -G "$KAFKA_LIB_DIR/kafka_2.13-*.jar" >/dev/null ||
      die "KAFKA_LIB_DIR=$KAFKA_LIB_DIR has no kafka_2.13-*.jar"
    CLASSPATH_DIR=$(cd "$KAFKA_LIB_DIR" && pwd -P)
    return 0
  fi
  CLASSPATH_DIR="$KAFKA_BUILDS/jars/$KAFKA_VERSION-$(cksum <"$POM" | cut -d' ' -f1)"
  jars_fetched "$CLASSPATH_DIR" || build_locked "$KAFKA_BUILDS/.lock" 600 fetch_jars "$CLASSPATH_DIR"
  touch_build "$CLASSPATH_DIR"
}

jars_fetched() { [[ -f $1/.complete && -f $1/kafka_2.13-$KAFKA_VERSION.jar ]]; }

# fetch_jars DIR (under the build lock): kafka_2.13 and its dependencies from Maven, into DIR.
fetch_jars() {
  local dir=$1 tmp="$KAFKA_BUILDS/jars/.unfinished"
  jars_fetched "$dir" && return 0
  command -v mvn >/dev/null || die "mvn not found (needed once to fetch kafka_2.13 $KAFKA_VERSION)"
  log "fetching kafka_2.13 $KAFKA_VERSION and its dependencies with Maven"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # shellcheck disable=SC2086
  if ! (cd "$tmp" && mvn -B -q -U -Dstyle.color=never $KAFKA_MVN_ARGS -f "$POM" -Dkafka.version="$KAFKA_VERSION" \
          dependency:copy-dependencies -DoutputDirectory="$tmp") >"$KAFKA_BUILDS/maven.log" 2>&1 9>&-; then
    sed 's/\x1b\[[0-9;]*m//g' "$KAFKA_BUILDS/maven.log" | grep -v '^\[ERROR\] *$' | head -n 5 >&2
    die "Maven could not fetch org.apache.kafka:kafka_2.13:$KAFKA_VERSION (log: $KAFKA_BUILDS/maven.log).
  If your Maven repository does not serve it, put kafka_2.13-$KAFKA_VERSION.jar and its runtime
  dependencies (the libs/ folder of a Kafka download) in a directory and set KAFKA_LIB_DIR to it."
  fi
  [[ -f $tmp/kafka_2.13-$KAFKA_VERSION.jar ]] || die "Maven ran but $tmp/kafka_2.13-$KAFKA_VERSION.jar is missing"
  echo "kafka_2.13:$KAFKA_VERSION" >"$tmp/.complete"
  mv "$tmp" "$dir"
  touch_build "$dir"
  prune_builds "$dir" "$KAFKA_BUILDS/jars/"*
}

# ---------------------------------------------------------------- broker

write_config() {
  cat >"$CONFIG" <<EOF
# Written by scripts/kafka.sh on every start; edits are lost.
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT,SASL_PLAINTEXT://$HOST:$KAFKA_SASL_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT,SASL_PLAINTEXT://$HOST:$KAFKA_SASL_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
# A login with a password, for the tests of the SASL path (fixed test credentials, loopback only).
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_olx="olx-test-password";
inter.broker.listener.name=PLAINTEXT
controller.quorum.bootstrap.servers=$HOST:$KAFKA_CONTROLLER_PORT
log.dirs=$DATA
num.partitions=3
auto.create.topics.enable=true
# One node: every internal topic has one replica (and few partitions, so they come up fast).
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
}

# The log directory is formatted once (a new cluster id); later starts reuse it and its topics.
ensure_formatted() {
  [[ -f $DATA/meta.properties ]] && return 0
  rm -rf "$DATA"
  local cluster_id
  cluster_id=$("$JAVA" -cp "$CLASSPATH_DIR/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
  [[ $cluster_id =~ ^[A-Za-z0-9_-]{22}$ ]] || die "kafka.tools.StorageTool random-uuid gave no cluster id"
  log "formatting $DATA (cluster $cluster_id)"
  if ! "$JAVA" -cp "$CLASSPATH_DIR/*" kafka.tools.StorageTool format -t "$cluster_id" \
       -c "$CONFIG" --standalone >"$KAFKA_HOME/format.log" 2>&1 9>&-; then
    tail -n 20 "$KAFKA_HOME/format.log" >&2
    die "kafka.tools.StorageTool format failed (log: $KAFKA_HOME/format.log)"
  fi
}

start_kafka() {
  local pid
  pid=$(kafka_pid)
  if [[ -n $pid ]]; then
    log "Kafka (pid $pid) is running but not answering yet; waiting"
  else
    refuse_port "$KAFKA_PORT" KAFKA_PORT
    refuse_port "$KAFKA_CONTROLLER_PORT" KAFKA_CONTROLLER_PORT
    refuse_port "$KAFKA_SASL_PORT" KAFKA_SASL_PORT
    write_config
    ensure_formatted
    log "starting Kafka $KAFKA_VERSION on $BOOTSTRAP"
    # shellcheck disable=SC2086
    (cd "$KAFKA_HOME" && close_fds && exec nohup setsid "$JAVA" $KAFKA_JAVA_OPTS -Djava.awt.headless=true \
        -Dorg.slf4j.simpleLogger.showDateTime=true \
        -Dorg.slf4j.simpleLogger.dateTimeFormat="yyyy-MM-dd'T'HH:mm:ss.SSS" \
        -cp "$CLASSPATH_DIR/*" kafka.Kafka "$CONFIG" >"$KAFKA_OUT" 2>&1 </dev/null 9>&-) &
    pid=$!
    echo "$pid" >"$PID_FILE"
  fi
  local t0=$SECONDS rc=0
  wait_healthy "$pid" "$KAFKA_START_TIMEOUT" 0.2 healthy || rc=$?
  case $rc in
    0) log "Kafka ready at $BOOTSTRAP ($((SECONDS - t0))s)" ;;
    1) show_log_tail 40 "$KAFKA_OUT"
       rm -f "$PID_FILE"
       die "Kafka exited during startup" ;;
    *) show_log_tail 40 "$KAFKA_OUT"
       die "Kafka did not answer on $BOOTSTRAP within ${KAFKA_START_TIMEOUT}s (pid $pid still running)" ;;
  esac
}

stop_kafka() {
  local pid
  pid=$(kafka_pid)
  if [[ -z $pid ]]; then
    rm -f "$PID_FILE"
    return 0
  fi
  stop_pid "$pid" 60  # SIGTERM: a controlled shutdown
  rm -f "$PID_FILE"
  log "Kafka stopped"
}

# ---------------------------------------------------------------- commands

cmd_start() {
  take_lock "$KAFKA_HOME" 600
  if [[ -n $(kafka_pid) ]] && healthy; then
    log "Kafka already running at $BOOTSTRAP"
    echo "$BOOTSTRAP"
    return 0
  fi
  check_java
  ensure_jars  # first: if Maven fails, nothing has been started
  start_kafka
  echo "$BOOTSTRAP"
}

cmd_stop() {
  take_lock "$KAFKA_HOME" 600
  stop_kafka
}

cmd_status() {
  local pid
  pid=$(kafka_pid)
  if [[ -z $pid ]] && port_in_use "$KAFKA_PORT"; then
    echo "kafka: not running; its port $KAFKA_PORT is held by $(port_holder "$KAFKA_PORT")"
  elif healthy; then
    echo "kafka: running at $BOOTSTRAP (pid $pid)"
    return 0
  elif [[ -n $pid ]]; then
    echo "kafka: process $pid running but $BOOTSTRAP does not answer (yet)"
  else
    echo "kafka: not running"
  fi
  return 3
}

cmd_reset() {
  take_lock "$KAFKA_HOME" 600
  check_java
  ensure_jars
  stop_kafka
  rm -rf "$DATA"
  log "log directory $DATA deleted"
  start_kafka
  echo "$BOOTSTRAP"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  reset) cmd_reset ;;
  *) echo "usage: $0 start|stop|status|reset" >&2; exit 2 ;;
esac
