"""End to end against a real Kafka broker (scripts/kafka.sh): export the demo, consume it back.

Each test exports to a topic of its own (3 partitions) and reads every message back with a
real consumer. What must hold: the messages are the dry run's events, byte for byte; every
event of an editor run has the pipeline run id as its key and its run's events keep their order;
a broker that goes away mid-export is reported as an outage and the next export completes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import DEMO, ROOT, cli_command, reason_between, run_cli

from openlineage_export.deliver.registry import CATALOGUE
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.report import RunResult
from openlineage_export.host.secret_files import FileStore
from openlineage_export.host.settings import load_settings
from openlineage_export.terminal.summary import summary

pytestmark = pytest.mark.e2e

BOOTSTRAP = os.environ.get(
    "KAFKA_BOOTSTRAP_SERVERS", f"127.0.0.1:{os.environ.get('KAFKA_PORT', '59092')}"
)
KAFKA_SH = ROOT / "scripts" / "kafka.sh"
# This checkout's broker (conftest.py has it from scripts/ports.sh when scripts/test.sh has not).
KAFKA_HOME = os.environ["KAFKA_HOME"]
QUIET = {"log_level": 0}  # the test's own clients: librdkafka's chatter is not the point

Message = tuple[bytes, bytes]
"""(key, value) of one consumed message."""


@pytest.fixture(scope="session")
def admin() -> AdminClient:
    """The running broker; skipped (or failed, under scripts/test.sh) when it is not up."""
    client = AdminClient({"bootstrap.servers": BOOTSTRAP, **QUIET})
    try:
        client.list_topics(timeout=5)
    except KafkaException as exc:
        message = (
            f"no Kafka broker at {BOOTSTRAP} ({exc.args[0].str()}); start it with "
            "scripts/kafka.sh start, or run the whole suite with scripts/test.sh"
        )
        if os.environ.get("OLX_REQUIRE_KAFKA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return client


@pytest.fixture
def topic(admin: AdminClient) -> str:
    """A fresh topic with 3 partitions, so that keying decides where each run goes."""
    name = f"olx-e2e-{uuid.uuid4().hex[:12]}"
    for future in admin.create_topics(
        [NewTopic(name, num_partitions=3, replication_factor=1)]
    ).values():
        future.result(timeout=30)
    return name


@pytest.fixture
def env(topic: str, tmp_path: Path) -> dict[str, str]:
    """The CLI's environment: the kafka transport to ``topic``, a private secrets/state dir."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    return {
        **environ,
        "OPENLINEAGE_TRANSPORT": "kafka",
        "OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS": BOOTSTRAP,
        "OPENLINEAGE_KAFKA_TOPIC": topic,
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
    }


def kafka_sh(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(KAFKA_SH), command],
        capture_output=True,
        text=True,
        env={**os.environ, "KAFKA_HOME": KAFKA_HOME},
        timeout=300,
    )


def dry_run(env: dict[str, str], tmp_path: Path) -> list[bytes]:
    """The dry run's lines: the bytes each event must have on the topic."""
    out = tmp_path / "events.jsonl"
    result = run_cli("export", "--dry-run", "-w", str(DEMO), "-o", str(out), "-q", env=env)
    assert result.returncode == 0, result.stderr
    return out.read_bytes().splitlines()


def run_key(line: bytes) -> bytes:
    """The pipeline run id an event belongs to: its own run, or the parent of a stage run."""
    event = json.loads(line)
    parent = event["run"]["facets"].get("parent")
    return str((parent["run"] if parent else event["run"])["runId"]).encode()


def runs_of(lines: list[bytes]) -> dict[bytes, list[bytes]]:
    """pipeline run id -> its events, in the order the dry run wrote them."""
    runs: dict[bytes, list[bytes]] = defaultdict(list)
    for line in lines:
        runs[run_key(line)].append(line)
    return runs


def consume(topic: str) -> dict[int, list[Message]]:
    """Every message on ``topic``, partition by partition, in offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": BOOTSTRAP,
            "group.id": f"olx-e2e-{topic}",
            "enable.auto.commit": False,
            **QUIET,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        wanted: dict[int, tuple[int, int]] = {}
        for p in partitions:
            low, high = watermarks(consumer, TopicPartition(topic, p))
            if high > low:
                wanted[p] = (low, high)
        consumer.assign([TopicPartition(topic, p, low) for p, (low, _) in wanted.items()])
        got: dict[int, list[Message]] = {p: [] for p in partitions}
        left = sum(high - low for low, high in wanted.values())
        idle = 0
        while left and idle < 60:
            message = consumer.poll(0.5)
            if message is None:
                idle += 1
                continue
            assert message.error() is None, message.error()
            partition, offset = message.partition(), message.offset()
            assert partition is not None and offset is not None
            if offset < wanted[partition][1]:
                got[partition].append((message.key() or b"", message.value() or b""))
                left -= 1
        assert left == 0, f"{left} messages could not be read back from {topic}"
        return got
    finally:
        consumer.close()


def watermarks(consumer: Consumer, partition: TopicPartition) -> tuple[int, int]:
    """The partition's first and next offsets, once it has a leader (just after a restart the
    broker answers before it leads every partition again)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            low, high = consumer.get_watermark_offsets(partition, timeout=10)
            return low, high
        except KafkaException as exc:
            if time.monotonic() > deadline or exc.args[0].code() not in (
                KafkaError.NOT_LEADER_FOR_PARTITION,
                KafkaError.LEADER_NOT_AVAILABLE,
            ):
                raise
            time.sleep(0.2)


def by_key(partitions: dict[int, list[Message]]) -> dict[bytes, list[bytes]]:
    """key -> its values in topic order; asserts that each key lives on one partition."""
    homes: dict[bytes, set[int]] = defaultdict(set)
    values: dict[bytes, list[bytes]] = defaultdict(list)
    for partition, messages in partitions.items():
        for key, value in messages:
            homes[key].add(partition)
            values[key].append(value)
    assert all(len(home) == 1 for home in homes.values()), "a run's events span partitions"
    return values


def test_the_demo_lands_on_the_topic_as_the_dry_run_keyed_by_pipeline_run(
    env: dict[str, str], topic: str, tmp_path: Path
) -> None:
    lines = dry_run(env, tmp_path)
    result = run_cli("export", "-w", str(DEMO), "--json", env=env)
    assert result.returncode == 0, result.stderr + result.stdout
    report: dict[str, Any] = json.loads(result.stdout)
    assert report["destination"] == f"kafka://{BOOTSTRAP}/{topic}"
    assert report["runs"]["sent"] == report["runs"]["total"] == 31
    assert report["events"]["sent"] == len(lines) == 236
    assert report["neverRun"] == ["churn-model"]

    partitions = consume(topic)
    assert sum(1 for messages in partitions.values() if messages) > 1, "keys spread the runs"
    values = [value for messages in partitions.values() for _, value in messages]
    assert Counter(values) == Counter(lines)  # the same bytes, each once
    assert by_key(partitions) == runs_of(lines)  # keyed by pipeline run id, in order


def test_exporting_again_adds_no_other_messages_and_full_resends_the_same_ones(
    env: dict[str, str], topic: str, tmp_path: Path
) -> None:
    lines = dry_run(env, tmp_path)
    assert run_cli("export", "-w", str(DEMO), "-q", env=env).returncode == 0
    first = consume(topic)
    pairs = {pair for messages in first.values() for pair in messages}

    again = run_cli("export", "-w", str(DEMO), "-q", env=env)
    assert again.returncode == 0, again.stderr
    second = consume(topic)
    assert {pair for messages in second.values() for pair in messages} == pairs

    full = run_cli("export", "-w", str(DEMO), "-q", "--full", env=env)
    assert full.returncode == 0, full.stderr
    third = consume(topic)
    assert {pair for messages in third.values() for pair in messages} == pairs
    added = Counter(pair for messages in third.values() for pair in messages) - Counter(
        pair for messages in second.values() for pair in messages
    )
    assert sorted(added.elements()) == sorted((run_key(line), line) for line in lines)
    for key, events in runs_of(lines).items():  # each resent run is whole and in order
        assert by_key(third)[key][-len(events) :] == events


SASL_BOOTSTRAP = f"127.0.0.1:{os.environ.get('KAFKA_SASL_PORT', '59094')}"
"""The test broker's SASL_PLAINTEXT listener: PLAIN, user olx (see scripts/kafka.sh)."""


@pytest.mark.parametrize("password", ["olx-test-password", "not-the-password"])
def test_the_sasl_password_from_the_secrets_store_logs_in_or_is_refused_in_one_sentence(
    admin: AdminClient, env: dict[str, str], topic: str, tmp_path: Path, password: str
) -> None:
    store = FileStore(tmp_path / "secrets")
    store.set("kafka-test", password)
    store.allow("kafka-test", f"kafka://{SASL_BOOTSTRAP}")
    settings = load_settings(DEMO, CATALOGUE, env).with_values(
        {
            "openlineage.kafka.bootstrapServers": SASL_BOOTSTRAP,
            "openlineage.kafka.securityProtocol": "SASL_PLAINTEXT",
            "openlineage.kafka.sasl.mechanism": "PLAIN",
            "openlineage.kafka.sasl.username": "olx",
            "openlineage.kafka.sasl.password.secretRef": "kafka-test",
            "openlineage.retry.maxTime": 3.0,
        }
    )
    report = run_export(
        ExportRequest(workspace=DEMO, settings=settings, environ=env, secrets=store)
    )
    if password == "olx-test-password":
        assert report.exit_code == 0, summary(report)
        assert report.destination == f"kafka://{SASL_BOOTSTRAP}/{topic}"
        values = [v for messages in consume(topic).values() for _, v in messages]
        assert len(values) == report.events_sent == 236
    else:
        assert report.exit_code == 4 and report.runs_sent == 0
        assert report.outage is not None
        # One sentence of ours, passing along what librdkafka last heard from the broker (the
        # refusal, in the broker's and librdkafka's words, which are theirs to change).
        reason = reason_between(
            report.outage,
            f"the Kafka broker at kafka://{SASL_BOOTSTRAP}/{topic} acknowledged nothing for 3 s (",
            "); nothing more was sent",
        )
        _, said, broker_error = reason.partition("; last broker error: ")
        assert said and broker_error.strip(), report.outage
        assert password not in report.outage
        assert not any(consume(topic).values())


SASL_PORT = int(SASL_BOOTSTRAP.rsplit(":", 1)[1])


@pytest.mark.parametrize(
    "listed",
    [
        "SASL_PLAINTEXT://127.0.0.1:{sasl}/x:1",  # the finding: read as the host
        "SASL_PLAINTEXT://127.0.0.1:{evil}/x:{sasl}",  # 'sasl_plaintext'; librdkafka: evil
        "sasl_plaintext://127.0.0.1:{evil}",
        "127.0.0.1:{sasl},127.0.0.1:{evil}",  # one approved broker, one not
        "127.0.0.1:{evil} ,127.0.0.1:{sasl}",
        "127.0.0.1:{sasl},SASL_PLAINTEXT://127.0.0.1:{evil}/x:{sasl}",
    ],
)
def test_the_sasl_password_never_goes_to_a_broker_not_approved_for_it(
    admin: AdminClient, env: dict[str, str], topic: str, tmp_path: Path, listed: str
) -> None:
    """Issue 30 (3): with the real broker. The password is approved for the SASL listener
    only (kafka://127.0.0.1:SASL); a workspace's list that names another broker, in whatever
    spelling librdkafka reads, sends nothing: no connection reaches the other broker (a
    listening socket here), no message the topic; what the old refusal advised approving
    (kafka://sasl_plaintext) cannot be approved. The approved list itself goes through."""
    import select
    import shutil
    import socket

    workspace = tmp_path / "ws"
    shutil.copytree(DEMO, workspace)
    user = {
        k: v
        for k, v in env.items()
        if not k.startswith("OPENLINEAGE_KAFKA_") and k != "OPENLINEAGE_TRANSPORT"
    }
    user["OPENLINEAGE_ALLOW_INSECURE_KEY"] = "true"  # the user's: a trusted network; not why
    set_key = subprocess.run(
        cli_command(
            "secrets",
            "set",
            "kafka-pw",
            "--for",
            f"kafka://{SASL_BOOTSTRAP}",
        ),
        input="olx-test-password",
        capture_output=True,
        text=True,
        env=user,
        timeout=120,
    )
    assert set_key.returncode == 0, set_key.stderr
    advised = run_cli("secrets", "allow", "kafka-pw", "kafka://sasl_plaintext", env=user)
    assert advised.returncode == 2 and "kafka://host:port" in advised.stderr, advised.stderr

    def export_listing(servers: str) -> subprocess.CompletedProcess[str]:
        (workspace / ".workspace" / "settings.json").write_text(
            json.dumps(
                {
                    "openlineage.transport": "kafka",
                    "openlineage.kafka.topic": topic,
                    "openlineage.kafka.bootstrapServers": servers,
                    "openlineage.kafka.securityProtocol": "SASL_PLAINTEXT",
                    "openlineage.kafka.sasl.mechanism": "PLAIN",
                    "openlineage.kafka.sasl.username": "olx",
                    "openlineage.kafka.sasl.password.secretRef": "kafka-pw",
                    "openlineage.retry.maxTime": 5,
                }
            )
        )
        return run_cli("export", "-w", str(workspace), "--json", env=user)

    with socket.create_server(("127.0.0.1", 0)) as other:
        evil = other.getsockname()[1]
        refused = export_listing(listed.format(sasl=SASL_PORT, evil=evil))
        reached = select.select([other], [], [], 0.5)[0]
    assert refused.returncode == 2, refused.stdout + refused.stderr
    [line] = refused.stderr.splitlines()
    assert line.startswith("error: ") and "openlineage.kafka.bootstrapServers" in line
    assert "kafka://sasl_plaintext" not in line and "olx-test-password" not in line
    assert not reached, "a connection reached the broker the password is not approved for"
    assert not any(consume(topic).values()), "nothing was produced"

    accepted = export_listing(f"SASL_PLAINTEXT://{SASL_BOOTSTRAP}")
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["destination"] == f"kafka://{SASL_BOOTSTRAP}/{topic}"
    assert sum(len(messages) for messages in consume(topic).values()) == 236


@pytest.fixture
def our_broker(admin: AdminClient) -> Iterator[None]:
    """The broker may be stopped by the test: only when scripts/kafka.sh runs it; restarted."""
    status = kafka_sh("status")
    if status.returncode != 0 or "(pid " not in status.stdout:
        pytest.skip(
            f"the broker at {BOOTSTRAP} was not started by scripts/kafka.sh "
            f"({status.stdout.strip()}); this test stops and starts it"
        )
    try:
        yield
    finally:
        kafka_sh("start")


def test_a_broker_stopped_mid_export_is_an_outage_and_the_next_export_completes(
    our_broker: None, env: dict[str, str], topic: str, tmp_path: Path
) -> None:
    lines = dry_run(env, tmp_path)
    runs = runs_of(lines)
    settings = load_settings(DEMO, CATALOGUE, env).with_values(
        {"openlineage.retry.maxTime": 4.0, "openlineage.concurrency": 2}
    )
    results: list[RunResult] = []

    def on_run(result: RunResult) -> None:
        results.append(result)
        if sum(r.state == "sent" for r in results) == 3:
            stop = kafka_sh("stop")
            assert stop.returncode == 0, stop.stderr

    report = run_export(
        ExportRequest(workspace=DEMO, settings=settings, environ=env, on_run=on_run)
    )
    assert report.outage is not None, summary(report)
    assert report.outage.startswith(
        f"the Kafka broker at kafka://{BOOTSTRAP}/{topic} acknowledged nothing for 4 s ("
    )
    assert report.exit_code == 4
    assert 3 <= report.runs_sent < report.runs_total
    assert f"stopped: {report.outage}" in summary(report)

    started = kafka_sh("start")
    assert started.returncode == 0, started.stderr
    landed = by_key(consume(topic))
    sent = [r.run.run_id.encode() for r in results if r.state == "sent"]
    assert len(sent) == report.runs_sent
    for key in sent:  # reported delivered: every event is on the topic, in order
        assert landed[key][: len(runs[key])] == runs[key]

    again = run_cli("export", "-w", str(DEMO), "--json", env=env)
    assert again.returncode == 0, again.stderr + again.stdout
    assert json.loads(again.stdout)["runs"]["failed"] == 0
    landed = by_key(consume(topic))
    assert set(landed) == set(runs)
    for key, events in runs.items():  # the last copy of every run is whole and in order
        assert landed[key][-len(events) :] == events


def test_an_event_larger_than_the_topic_takes_fails_its_own_run_only(
    admin: AdminClient, env: dict[str, str], tmp_path: Path
) -> None:
    """A topic taking at most 20,000 bytes a batch (max.message.bytes), one partition, three
    small runs and one with an event of 60 kB exported at once: the large run is refused with
    its reason; the small ones are on the topic, whole and once, and in the ledger."""
    from helpers import WorkspaceMaker, run_record

    name = f"olx-e2e-{uuid.uuid4().hex[:12]}"
    for future in admin.create_topics(
        [
            NewTopic(
                name, num_partitions=1, replication_factor=1, config={"max.message.bytes": "20000"}
            )
        ]
    ).values():
        future.result(timeout=30)
    ws = WorkspaceMaker(tmp_path / "ws")
    ws.segment(
        "000001.jsonl",
        [
            run_record("small-1"),
            run_record("large", parameters={"blob": "x" * 60_000}),
            run_record("small-2"),
            run_record("small-3"),
        ],
    )
    env = {**env, "OPENLINEAGE_KAFKA_TOPIC": name}
    out = tmp_path / "events.jsonl"
    assert (
        run_cli("export", "--dry-run", "-o", str(out), "-w", str(ws.root), env=env).returncode == 0
    )
    runs = runs_of(out.read_bytes().splitlines())
    large = next(key for key, events in runs.items() if len(events[0]) > 20_000)

    result = run_cli("export", "-w", str(ws.root), "--json", env=env)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["runs"] == {"total": 4, "sent": 3, "unchanged": 0, "held": 0, "failed": 1}, report
    [failed] = report["failedRuns"]
    assert failed["traceId"] == "large"
    # Ours, then the broker's refusal as librdkafka names it (MSG_SIZE_TOO_LARGE or
    # RECORD_LIST_TOO_LARGE, as the broker's version answers).
    assert re.fullmatch(
        r"event \d of 4 is [\d,]+ bytes, more than the broker takes \(its "
        r"message\.max\.bytes, or the topic's max\.message\.bytes\): \S.*",
        failed["reason"],
    ), failed
    landed = by_key(consume(name))
    assert landed == {key: events for key, events in runs.items() if key != large}
    again = run_cli("export", "-w", str(ws.root), "--json", env=env)
    assert json.loads(again.stdout)["runs"]["unchanged"] == 3  # the ledger kept them
