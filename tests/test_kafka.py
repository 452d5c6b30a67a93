"""The kafka destination: its settings, and keying and acknowledgement against a stand-in producer.

The stand-in (:class:`FakeProducer`) is handed to :class:`KafkaDestination` through its
constructor and behaves as librdkafka does towards us: ``produce`` queues, ``poll`` serves the
delivery reports, a report may be late, an error or never come. The real broker is in
``tests/e2e/test_kafka_e2e.py``; a real librdkafka without a broker is used below where the
point is librdkafka's own behaviour (its configuration names, a broker that is not there).
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from fakeserver import refused_port_fixture  # noqa: F401 - registers refused_port
from helpers import reason_between, run_record
from support.holds import DEADLINE, wait_until

from openlineage_export.deliver.destination import Opening, RunOutcome, Tally
from openlineage_export.deliver.engine import blocking, deliver_async
from openlineage_export.deliver.kafka.config import COMPRESSIONS, KafkaConfig, KafkaSettings
from openlineage_export.deliver.kafka.destination import KafkaDestination
from openlineage_export.deliver.registry import CATALOGUE, TransportSettings, open_destination
from openlineage_export.errors import (
    ConfigError,
    DestinationError,
    DestinationUnreachable,
    KeyNotApproved,
    MissingSecret,
)
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.host.settings import Settings, load_settings
from openlineage_export.translate.encoded import TranslatedRun, encode

PASSWORD = "kafka-pw-7c1e9b"
TOO_LARGE = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE)
TIMED_OUT = KafkaError(KafkaError._MSG_TIMED_OUT)
"""What the stand-in reports; their words (``str()``) are librdkafka's, read from it."""


# --- a stand-in for confluent_kafka.Producer --------------------------------------------------


@dataclass
class Produced:
    topic: str
    key: bytes
    value: bytes


Answer = Callable[[Produced], KafkaError | None]


class FakeProducer:
    """Queues what is produced and reports each message from ``poll`` after ``delay`` seconds,
    with the error ``answer`` gives (None: acknowledged). While ``held`` is clear, nothing is
    reported, as when the broker is slow to acknowledge."""

    def __init__(self, answer: Answer = lambda _m: None, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.produced: list[Produced] = []
        self.reported: list[tuple[Produced, KafkaError | None]] = []
        self.held = threading.Event()
        self.held.set()
        self.purged = 0
        self.most_runs_waiting = 0  # most keys with messages awaiting a report at one time
        self.fail_produce: BaseException | None = None
        self.full_for = 0  # produce raises BufferError this many times first
        self._queue: list[tuple[float, Produced, Callable[..., None]]] = []
        self._lock = threading.Lock()

    def produce(
        self, topic: str, value: bytes, key: bytes, *, on_delivery: Callable[..., None]
    ) -> None:
        with self._lock:
            if self.full_for:
                self.full_for -= 1
                raise BufferError("Local: Queue full")
            if self.fail_produce is not None:
                raise self.fail_produce
            message = Produced(topic, key, value)
            self.produced.append(message)
            self._queue.append((time.monotonic() + self.delay, message, on_delivery))
            waiting = len({queued.key for _, queued, _ in self._queue})
            self.most_runs_waiting = max(self.most_runs_waiting, waiting)

    def poll(self, timeout: float) -> int:
        due = []
        if self.held.is_set():
            with self._lock:
                now = time.monotonic()
                due = [item for item in self._queue if item[0] <= now]
                self._queue = [item for item in self._queue if item[0] > now]
        for _, message, on_delivery in due:
            error = self.answer(message)
            self.reported.append((message, error))
            on_delivery(error, None)
        if not due:
            time.sleep(min(timeout, 0.005))
        return len(due)

    def flush(self, timeout: float) -> int:
        self.poll(0)
        return len(self)

    def purge(self) -> None:
        with self._lock:
            purged, self._queue = self._queue, []
        self.purged += len(purged)
        for _, _message, on_delivery in purged:
            on_delivery(KafkaError(KafkaError._PURGE_QUEUE), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)


def when(condition: Callable[[], bool], then: threading.Event, what: str) -> None:
    """Set ``then`` (in a thread of its own) once ``condition`` holds."""

    def watch() -> None:
        try:
            wait_until(condition, what)
        finally:
            then.set()

    threading.Thread(target=watch, daemon=True).start()


def a_run(
    run_id: str = "0190b4f6-1111-7000-8000-000000000001",
    events: int = 4,
    pipeline: str = "daily-sales",
    blob: dict[int, str] | None = None,
    writes: str | None = None,
) -> TranslatedRun:
    """A translated run whose events say which run and which place they have (and, for the
    events ``blob`` names, a ``blob`` of its text); each event writes the dataset ``writes``."""
    return TranslatedRun.of(
        trace_id=f"trace-{run_id}",
        pipeline=pipeline,
        run_id=run_id,
        status="succeeded",
        events=[
            {
                "eventType": "START" if i == 0 else "COMPLETE",
                "run": {"runId": run_id},
                "n": i,
                **({"blob": blob[i]} if blob and i in blob else {}),
                **({"outputs": [{"namespace": "s3://bucket", "name": writes}]} if writes else {}),
            }
            for i in range(events)
        ],
    )


def destination(
    producer: FakeProducer, *, delivery_timeout: float = 5.0, concurrency: int = 4
) -> KafkaDestination:
    config = KafkaConfig("127.0.0.1:59092", "lineage", delivery_timeout=delivery_timeout)
    return KafkaDestination(config, producer=producer, concurrency=concurrency)


def send(kafka: KafkaDestination, run: TranslatedRun, cancel: threading.Event) -> RunOutcome:
    """One run through the destination on an event loop of its own, cancelled by ``cancel``."""

    async def go() -> RunOutcome:
        stop = asyncio.Event()

        async def watch() -> None:
            while not cancel.is_set():
                await asyncio.sleep(0.01)
            stop.set()

        watcher = asyncio.create_task(watch())
        try:
            return await kafka.send(run, stop, Tally())
        finally:
            watcher.cancel()

    return asyncio.run(go())


def deliver_all(kafka: KafkaDestination, runs: list[TranslatedRun]) -> dict[str, RunOutcome]:
    """Send every run through ``kafka`` and close it, as an export does; each run's outcome."""
    outcomes: dict[str, RunOutcome] = {}

    async def whole() -> None:
        try:
            await deliver_async(
                ((run, None) for run in runs),
                kafka,
                lambda run, _tag, outcome: outcomes.__setitem__(run.run_id, outcome),
                threading.Event(),
            )
        finally:
            await kafka.close()

    blocking(whole())
    return outcomes


@pytest.fixture
def never() -> threading.Event:
    return threading.Event()


# --- keying and acknowledgement ---------------------------------------------------------------


def test_each_event_is_one_message_keyed_by_the_pipeline_run_id_with_the_dry_run_bytes(
    never: threading.Event,
) -> None:
    producer = FakeProducer()
    kafka = destination(producer)
    run = a_run()
    try:
        outcome = send(kafka, run, never)
    finally:
        kafka.close_now()
    assert outcome.delivered and outcome.accepted == 4
    assert [(m.topic, m.key, m.value) for m in producer.produced] == [
        ("lineage", run.run_id.encode(), encode(event)) for event in run.events
    ]
    assert kafka.name == "kafka://127.0.0.1:59092/lineage"


def test_a_run_is_not_delivered_before_the_broker_acknowledged_every_event(
    never: threading.Event,
) -> None:
    producer = FakeProducer()
    producer.held.clear()
    kafka = destination(producer)
    outcomes = []
    sender = threading.Thread(target=lambda: outcomes.append(send(kafka, a_run(), never)))
    try:
        sender.start()
        # All of the run's events are produced at once, none acknowledged yet.
        wait_until(lambda: len(producer.produced) == 4, "the run's four events to be produced")
        assert sender.is_alive() and not outcomes, "send returned before any acknowledgement"
        producer.held.set()
        sender.join(DEADLINE)
    finally:
        producer.held.set()
        kafka.close_now()
    assert outcomes[0].delivered and outcomes[0].accepted == 4


def test_runs_sent_from_many_threads_keep_their_own_order_and_keys() -> None:
    producer = FakeProducer(delay=0.002)
    producer.held.clear()  # until two runs wait for their acknowledgements at once
    kafka = destination(producer, concurrency=6)
    runs = [a_run(f"0190b4f6-0000-7000-8000-{n:012d}", events=3 + n % 5) for n in range(40)]
    when(lambda: producer.most_runs_waiting >= 2, producer.held, "two runs waiting")
    try:
        outcomes = deliver_all(kafka, runs)
    finally:
        kafka.close_now()
    assert all(o.delivered for o in outcomes.values()) and len(outcomes) == 40
    by_key: dict[bytes, list[bytes]] = defaultdict(list)
    for message in producer.produced:
        by_key[message.key].append(message.value)
    assert by_key == {run.run_id.encode(): [encode(e) for e in run.events] for run in runs}
    assert 1 < producer.most_runs_waiting <= 6, "runs waited for their acknowledgements at once"


def test_runs_that_write_the_same_dataset_wait_for_no_other_runs_acknowledgements() -> None:
    """A partition's log is in produce order and Kafka orders nothing across partitions, so a
    run is produced without waiting for the acknowledgements of an earlier run it shares a
    dataset with (the engine keeps no causal order for Kafka)."""
    producer = FakeProducer()
    producer.held.clear()  # no acknowledgement until every run was produced
    kafka = destination(producer, concurrency=4)
    runs = [a_run(f"0190b4f6-0000-7000-8000-{n:012d}", events=3, writes="orders") for n in range(4)]
    when(lambda: len(producer.produced) == 12, producer.held, "every run to be produced")
    try:
        outcomes = deliver_all(kafka, runs)
    finally:
        producer.held.set()
        kafka.close_now()
    assert all(o.delivered for o in outcomes.values()) and len(outcomes) == 4
    assert producer.most_runs_waiting == 4, "each run waited for an earlier run's reports"


def test_runs_are_produced_in_trail_order_even_while_the_queue_is_full() -> None:
    """A run that meets a full queue is produced whole before the next run starts: later runs
    do not overtake it while it waits."""
    producer = FakeProducer()
    producer.full_for = 3  # the first run's first event meets a full queue three times
    kafka = destination(producer, concurrency=4)
    runs = [a_run(f"0190b4f6-0000-7000-8000-{n:012d}", events=2 + n % 3) for n in range(8)]
    try:
        outcomes = deliver_all(kafka, runs)
    finally:
        kafka.close_now()
    assert all(o.delivered for o in outcomes.values()) and len(outcomes) == 8
    assert [(m.key, m.value) for m in producer.produced] == [
        (run.run_id.encode(), encode(event)) for run in runs for event in run.events
    ]


def test_a_refused_event_fails_its_run_with_the_brokers_reason_and_not_the_others(
    never: threading.Event,
) -> None:
    big = a_run("0190b4f6-2222-7000-8000-000000000002")

    def answer(message: Produced) -> KafkaError | None:
        if message.key == big.run_id.encode() and json.loads(message.value)["n"] == 2:
            return TOO_LARGE
        return None

    producer = FakeProducer(answer)
    kafka = destination(producer)
    try:
        refused = send(kafka, big, never)
        other = send(kafka, a_run(), never)
    finally:
        kafka.close_now()
    assert not refused.delivered
    assert refused.accepted == 2
    # The broker's reason, passed along as librdkafka gives it.
    assert refused.error == (
        f"the broker refused event 3 of 4: {TOO_LARGE.name()}: {TOO_LARGE.str()}"
    )
    assert other.delivered


class BatchingProducer(FakeProducer):
    """Reports what is due as one batch, as a broker answers a produce request: a batch with
    a message larger than ``limit`` is refused whole (MSG_SIZE_TOO_LARGE for each of its
    messages, none written). Nothing is reported until ``first_batch`` messages were
    produced: the first batch holds the events of every run sent at once."""

    def __init__(self, limit: int, first_batch: int) -> None:
        super().__init__()
        self.limit = limit
        self.first_batch = first_batch
        self.batches: list[list[Produced]] = []
        self.written: list[Produced] = []

    def poll(self, timeout: float) -> int:
        with self._lock:
            due = [] if len(self.produced) < self.first_batch else self._queue
            self._queue = self._queue if not due else []
        if not due:
            time.sleep(min(timeout, 0.005))
            return 0
        batch = [message for _, message, _ in due]
        self.batches.append(batch)
        too_large = any(len(message.value) > self.limit for message in batch)
        if not too_large:
            self.written += batch
        for _, message, on_delivery in due:
            error = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE) if too_large else None
            self.reported.append((message, error))
            on_delivery(error, None)
        return len(due)


def test_an_event_too_large_for_the_broker_fails_its_own_run_not_those_batched_with_it() -> None:
    """One event larger than the broker takes, in one batch with three small runs: the broker
    refuses the batch whole. The small runs are sent again, each event alone, and delivered;
    the large one is refused with its reason; every event written once, in its run's order."""
    small = [a_run(f"0190b4f6-3333-7000-8000-00000000000{n}") for n in range(3)]
    large = a_run("0190b4f6-4444-7000-8000-000000000004", blob={1: "x" * 60_000})
    runs = [small[0], large, small[1], small[2]]
    producer = BatchingProducer(limit=20_000, first_batch=sum(len(r.events) for r in runs))
    kafka = destination(producer, concurrency=4)
    try:
        outcomes = deliver_all(kafka, runs)
    finally:
        kafka.close_now()
    assert len(producer.batches[0]) == 16, "the premise: every run's events in one batch"
    assert all(outcomes[run.run_id].delivered for run in small), outcomes
    refused = outcomes[large.run_id]
    assert not refused.delivered and refused.accepted == 1
    assert (
        refused.error is not None
        and refused.error.startswith("event 2 of 4 is 60,")
        and "more than the broker takes" in refused.error
    )
    written: dict[bytes, list[bytes]] = defaultdict(list)
    for message in producer.written:
        written[message.key].append(message.value)
    assert written == {
        **{run.run_id.encode(): [encode(e) for e in run.events] for run in small},
        large.run_id.encode(): [encode(large.events[0])],
    }


def test_a_broker_that_answers_nothing_for_the_whole_timeout_is_an_outage(
    never: threading.Event,
) -> None:
    producer = FakeProducer(lambda _m: TIMED_OUT, delay=0.4)
    kafka = destination(producer, delivery_timeout=0.3)
    try:
        with pytest.raises(DestinationUnreachable) as raised:
            send(kafka, a_run(), never)
    finally:
        kafka.close_now()
    assert str(raised.value) == (
        "the Kafka broker at kafka://127.0.0.1:59092/lineage "
        f"acknowledged nothing for 0.3 s ({TIMED_OUT.str()}); nothing "
        "more was sent"
    )


def test_a_timeout_while_other_events_are_acknowledged_fails_only_that_run(
    never: threading.Event,
) -> None:
    unlucky = a_run("0190b4f6-3333-7000-8000-000000000003")

    def answer(message: Produced) -> KafkaError | None:
        return TIMED_OUT if message.key == unlucky.run_id.encode() else None

    producer = FakeProducer(answer)
    kafka = destination(producer, delivery_timeout=30)
    try:
        assert send(kafka, a_run(), never).delivered
        outcome = send(kafka, unlucky, never)
    finally:
        kafka.close_now()
    assert not outcome.delivered and outcome.accepted == 0
    assert outcome.error is not None and outcome.error.startswith("not acknowledged within 30 s")


def test_a_fatal_producer_error_stops_the_export(never: threading.Event) -> None:
    producer = FakeProducer(lambda _m: KafkaError(KafkaError._FATAL, "fenced", fatal=True))
    kafka = destination(producer)
    try:
        with pytest.raises(DestinationError, match="failed for good"):
            send(kafka, a_run(), never)
    finally:
        kafka.close_now()


def test_cancel_while_waiting_for_acknowledgements_reports_the_run_not_delivered() -> None:
    producer = FakeProducer()
    producer.held.clear()
    kafka = destination(producer)
    cancel = threading.Event()
    when(lambda: len(producer.produced) == 4, cancel, "the run's events to be produced")
    try:
        outcome = send(kafka, a_run(), cancel)
    finally:
        producer.held.set()
        kafka.close_now()
    assert not outcome.delivered and outcome.accepted == 0
    assert outcome.error is not None and "cancelled" in outcome.error


def test_a_full_queue_is_waited_out_and_a_refused_produce_fails_the_run(
    never: threading.Event,
) -> None:
    producer = FakeProducer()
    producer.full_for = 3
    kafka = destination(producer)
    try:
        assert send(kafka, a_run(), never).delivered
        producer.fail_produce = KafkaException(TOO_LARGE)
        outcome = send(kafka, a_run("0190b4f6-4444-7000-8000-000000000004"), never)
    finally:
        kafka.close_now()
    assert len(producer.produced) == 4
    assert not outcome.delivered and outcome.accepted == 0
    assert outcome.error == f"the producer refused event 1: {TOO_LARGE.name()}: {TOO_LARGE.str()}"


def test_the_hosts_producer_is_left_alone_on_close() -> None:
    producer = FakeProducer()
    producer.held.clear()
    kafka = destination(producer)
    cancel = threading.Event()
    when(lambda: len(producer.produced) == 4, cancel, "the run's events to be produced")
    outcome = send(kafka, a_run(), cancel)
    kafka.close_now()
    assert not outcome.delivered
    assert producer.purged == 0 and len(producer) == 4, "what the host's producer holds is its own"


def test_without_a_broker_the_real_producer_gives_up_after_the_timeout_in_one_sentence(
    never: threading.Event, refused_port: int
) -> None:
    # librdkafka's connection is refused, again and again.
    config = KafkaConfig(
        f"127.0.0.1:{refused_port}", "lineage", delivery_timeout=1.0, request_timeout=1.0
    )
    kafka = KafkaDestination(config)
    try:
        with pytest.raises(DestinationUnreachable) as raised:
            send(kafka, a_run(), never)
    finally:
        kafka.close_now()
    # Our sentence, passing along librdkafka's reason and the last error it had from the
    # broker (a refused connection), in librdkafka's words.
    reason = reason_between(
        str(raised.value),
        f"the Kafka broker at kafka://127.0.0.1:"
        f"{refused_port}/lineage acknowledged nothing for 1 s (",
        "); nothing more was sent",
    )
    timed_out, said, broker_error = reason.partition("; last broker error: ")
    assert said and timed_out.strip() and broker_error.strip(), reason


# --- configuration ----------------------------------------------------------------------------


def kafka_settings(tmp_path: Path, **values: Any) -> Settings:
    base = {
        "openlineage.transport": "kafka",
        "openlineage.kafka.bootstrapServers": "broker-1:9092,broker-2:9092",
        "openlineage.kafka.topic": "openlineage.events",
    }
    return CATALOGUE.settings({**base, **values}, base=tmp_path)


def test_kafka_settings_are_read_typed_and_overridden_by_the_environment(tmp_path: Path) -> None:
    (tmp_path / ".workspace").mkdir()
    (tmp_path / ".workspace" / "settings.json").write_text(
        json.dumps(
            {
                "openlineage.transport": "kafka",
                "openlineage.kafka.bootstrapServers": "broker-1:9092,[::1]:9093",
                "openlineage.kafka.topic": "lineage",
                "openlineage.kafka.securityProtocol": "SASL_SSL",
                "openlineage.kafka.sasl.mechanism": "SCRAM-SHA-512",
                "openlineage.kafka.sasl.username": "exporter",
                "openlineage.kafka.sasl.password.secretRef": "kafka-prod",
                "openlineage.kafka.compression": "zstd",
                "openlineage.kafka.clientId": "editor-42",
            }
        )
    )
    settings = load_settings(tmp_path, CATALOGUE, {"OPENLINEAGE_KAFKA_TOPIC": "lineage.ci"})
    kafka = settings.of(KafkaSettings)
    assert (settings.of(TransportSettings).transport, kafka.bootstrap_servers, kafka.topic) == (
        "kafka",
        "broker-1:9092,[::1]:9093",
        "lineage.ci",
    )
    assert (
        kafka.security_protocol,
        kafka.sasl_mechanism,
        kafka.sasl_username,
        kafka.sasl_password_secret_ref,
        kafka.compression,
        kafka.client_id,
    ) == ("SASL_SSL", "SCRAM-SHA-512", "exporter", "kafka-prod", "zstd", "editor-42")
    (tmp_path / ".workspace" / "settings.json").unlink()
    defaults = load_settings(tmp_path, CATALOGUE)
    kafka = defaults.of(KafkaSettings)
    assert (
        defaults.of(TransportSettings).transport,
        kafka.security_protocol,
        kafka.compression,
        kafka.client_id,
    ) == ("http", "PLAINTEXT", "none", "openlineage-export")


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("openlineage.transport", "amqp", "must be one of: http, kafka, file"),
        ("openlineage.kafka.bootstrapServers", "broker-1", "host:port"),
        ("openlineage.kafka.bootstrapServers", "a:9092, b:9092", "host:port"),
        ("openlineage.kafka.topic", "open lineage", "at most 249"),
        ("openlineage.kafka.securityProtocol", "sasl_ssl", "SASL_SSL"),
        ("openlineage.kafka.sasl.mechanism", "GSSAPI", "SCRAM-SHA-256"),
        ("openlineage.kafka.compression", "brotli", "zstd"),
        ("openlineage.kafka.sasl.password.secretRef", "my secret", "letters, digits"),
    ],
)
def test_bad_kafka_settings_are_refused_with_what_they_must_be(
    tmp_path: Path, key: str, value: str, says: str
) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as raised:
        CATALOGUE.settings({key: value}, base=tmp_path)
    assert says in str(raised.value)


def test_a_kafka_password_in_the_settings_is_refused_pointing_at_the_secret_ref(
    tmp_path: Path,
) -> None:
    (tmp_path / ".workspace").mkdir()
    (tmp_path / ".workspace" / "settings.json").write_text(
        json.dumps({"openlineage.kafka.sasl.password": PASSWORD})
    )
    with pytest.raises(ConfigError) as raised:
        load_settings(tmp_path, CATALOGUE)
    assert "openlineage.kafka.sasl.password.secretRef" in str(raised.value)
    assert PASSWORD not in str(raised.value)


BROKERS = (
    "kafka://broker-1:9092",
    "kafka://broker-2:9092",
    "kafka://localhost:9092",
    "kafka://127.0.0.1:9093",
)
"""The brokers the test passwords are approved for."""


class Store:
    """A secrets store in memory."""

    description = "the test store"

    def __init__(self, approved: tuple[str, ...] = BROKERS, **secrets: str) -> None:
        self.secrets = secrets
        self.asked: list[str] = []
        self.approved = approved

    def get(self, name: str) -> str | None:
        self.asked.append(name)
        return self.secrets.get(name)

    def set(self, name: str, value: str) -> None:
        self.secrets[name] = value

    def delete(self, name: str) -> bool:
        return self.secrets.pop(name, None) is not None

    def names(self) -> list[str]:
        return sorted(self.secrets)

    def origins(self, name: str) -> list[str]:
        return sorted(self.approved)

    def allow(self, name: str, origin: str) -> None:
        self.approved = (*self.approved, origin)


def opened(
    settings: Settings, store: Store, environ: dict[str, str] | None = None
) -> KafkaDestination:
    destination = open_destination(Opening(settings, store, environ or {}, Path(".")))
    assert isinstance(destination, KafkaDestination)
    destination.close_now()
    return destination


def test_the_sasl_password_comes_from_the_secrets_store_or_the_environment(tmp_path: Path) -> None:
    settings = kafka_settings(
        tmp_path,
        **{
            "openlineage.kafka.securityProtocol": "SASL_SSL",
            "openlineage.kafka.sasl.username": "exporter",
            "openlineage.kafka.sasl.password.secretRef": "kafka-prod",
        },
    )
    store = Store(**{"kafka-prod": PASSWORD})
    kafka = opened(settings, store)
    assert kafka.config.sasl_password == PASSWORD
    assert kafka.config.producer_config()["sasl.password"] == PASSWORD
    assert PASSWORD not in repr(kafka.config)
    assert kafka.name == "kafka://broker-1:9092,broker-2:9092/openlineage.events"

    other = Store()
    from_env = opened(settings, other, {"OPENLINEAGE_KAFKA_SASL_PASSWORD": "from-ci"})
    assert from_env.config.sasl_password == "from-ci" and other.asked == []

    with pytest.raises(
        MissingSecret,
        match="'kafka-prod' named by "
        r"openlineage\.kafka\.sasl\.password\.secretRef",
    ):
        opened(settings, Store())


@pytest.mark.parametrize(
    ("values", "says"),
    [
        (
            {"openlineage.kafka.topic": None},
            "set openlineage.kafka.bootstrapServers and openlineage.kafka.topic",
        ),
        ({"openlineage.kafka.securityProtocol": "SASL_SSL"}, "set openlineage.kafka.sasl.username"),
        ({"openlineage.kafka.sasl.username": "exporter"}, "securityProtocol is PLAINTEXT"),
        (
            {
                "openlineage.kafka.securityProtocol": "SASL_PLAINTEXT",
                "openlineage.kafka.sasl.username": "u",
                "openlineage.kafka.sasl.password.secretRef": "pw",
            },
            "refusing to send the Kafka password in clear text",
        ),
    ],
)
def test_kafka_settings_that_cannot_work_together_are_refused(
    tmp_path: Path, values: dict[str, object], says: str
) -> None:
    with pytest.raises(ConfigError, match=says.replace(".", r"\.")):
        opened(kafka_settings(tmp_path, **values), Store(pw=PASSWORD))


def test_a_clear_text_password_goes_to_loopback_or_with_scram_or_when_allowed(
    tmp_path: Path,
) -> None:
    sasl = {
        "openlineage.kafka.securityProtocol": "SASL_PLAINTEXT",
        "openlineage.kafka.sasl.username": "u",
        "openlineage.kafka.sasl.password.secretRef": "pw",
    }
    store = Store(pw=PASSWORD)
    opened(
        kafka_settings(
            tmp_path,
            **sasl,
            **{"openlineage.kafka.bootstrapServers": "localhost:9092,127.0.0.1:9093"},
        ),
        store,
    )
    opened(
        kafka_settings(tmp_path, **sasl, **{"openlineage.kafka.sasl.mechanism": "SCRAM-SHA-256"}),
        store,
    )
    opened(kafka_settings(tmp_path, **sasl, **{"openlineage.allowInsecureKey": True}), store)


def test_a_stored_password_goes_only_to_the_brokers_approved_for_it(tmp_path: Path) -> None:
    """A workspace naming another broker does not get the stored password; a password from
    the environment goes only to brokers the user named."""
    sasl = {
        "openlineage.kafka.securityProtocol": "SASL_SSL",
        "openlineage.kafka.sasl.username": "u",
        "openlineage.kafka.sasl.password.secretRef": "pw",
    }
    settings = kafka_settings(tmp_path, **sasl)
    store = Store(approved=("kafka://broker-1:9092",), pw=PASSWORD)
    with pytest.raises(KeyNotApproved, match="'pw' is not approved for kafka://broker-2:9092"):
        opened(settings, store)
    store.allow("pw", "kafka://broker-2:9092")
    assert opened(settings, store).config.sasl_password == PASSWORD
    (tmp_path / ".workspace").mkdir()
    (tmp_path / ".workspace" / "settings.json").write_text(
        json.dumps(
            {
                "openlineage.transport": "kafka",
                "openlineage.kafka.topic": "t",
                "openlineage.kafka.bootstrapServers": "broker-1:9092",
                **sasl,
            }
        )
    )
    from_workspace = load_settings(tmp_path, CATALOGUE, {})
    with pytest.raises(
        ConfigError,
        match="Kafka password in the environment variable "
        "OPENLINEAGE_KAFKA_SASL_PASSWORD goes only to a server you name",
    ):
        opened(from_workspace, Store(), {"OPENLINEAGE_KAFKA_SASL_PASSWORD": "from-ci"})
    named = load_settings(
        tmp_path, CATALOGUE, {"OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS": "broker-1:9092"}
    )
    assert (
        opened(named, Store(), {"OPENLINEAGE_KAFKA_SASL_PASSWORD": "from-ci"}).config.sasl_password
        == "from-ci"
    )


def test_the_password_is_checked_against_each_broker_as_kafka_host_port(tmp_path: Path) -> None:
    """The origin a key is approved for is kafka://host:port per broker: a stored password
    approved for kafka://sasl_plaintext (what the old refusal advised) goes nowhere."""
    sasl = {
        "openlineage.kafka.securityProtocol": "SASL_PLAINTEXT",
        "openlineage.kafka.sasl.username": "olx",
        "openlineage.kafka.sasl.password.secretRef": "pw",
        "openlineage.kafka.bootstrapServers": "SASL_PLAINTEXT://127.0.0.1:59094",
    }
    store = Store(approved=("kafka://sasl_plaintext",), pw="olx-test-password")
    with pytest.raises(KeyNotApproved) as refused:
        opened(kafka_settings(tmp_path, **sasl), store)
    assert "'pw' is not approved for kafka://127.0.0.1:59094" in str(refused.value)
    assert "secrets allow pw kafka://127.0.0.1:59094" in str(refused.value)
    store.allow("pw", "kafka://127.0.0.1:59094")
    config = opened(kafka_settings(tmp_path, **sasl), store).config
    assert config.producer_config()["bootstrap.servers"] == "127.0.0.1:59094"
    assert config.name == "kafka://127.0.0.1:59094/openlineage.events"


def test_the_producer_is_idempotent_waits_for_all_replicas_and_times_out_when_told(
    tmp_path: Path,
) -> None:
    settings = kafka_settings(
        tmp_path,
        **{
            "openlineage.timeout": 3,
            "openlineage.retry.maxTime": 12,
            "openlineage.kafka.compression": "lz4",
        },
    )
    config = opened(settings, Store()).config.producer_config()
    assert config["enable.idempotence"] is True and config["acks"] == "all"
    # librdkafka keeps an idempotent producer's order with at most five requests in flight.
    assert 1 <= config["max.in.flight.requests.per.connection"] <= 5
    assert config["message.timeout.ms"] == 12_000 and config["request.timeout.ms"] == 3_000
    assert config["compression.type"] == "lz4"
    assert "ssl.ca.location" not in config and "sasl.username" not in config
    single_try = kafka_settings(tmp_path, **{"openlineage.retry.maxTime": 0})
    assert opened(single_try, Store()).config.producer_config()["message.timeout.ms"] == 10_000


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SSL", "SASL_SSL"])
def test_librdkafka_accepts_every_configuration_we_can_build(
    compression: str, protocol: str, tmp_path: Path
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("")
    config = KafkaConfig(
        "127.0.0.1:1",
        "lineage",
        compression=compression,
        security_protocol=protocol,
        ca_location=str(ca),
        sasl_username="u" if protocol.startswith("SASL") else None,
        sasl_password="p" if protocol.startswith("SASL") else None,
        sasl_mechanism="SCRAM-SHA-256",
    )
    settings = config.producer_config()
    if protocol != "PLAINTEXT":
        settings.pop("ssl.ca.location")  # an empty file is no CA bundle; the name is what counts
    Producer({**settings, "log_level": 0})  # raises KafkaException for an unknown name or value


def test_a_producer_librdkafka_cannot_build_is_a_configuration_error(tmp_path: Path) -> None:
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("not a certificate\n")
    config = KafkaConfig(
        "broker:9093", "lineage", security_protocol="SSL", ca_location=str(not_pem)
    )
    with pytest.raises(ConfigError) as refused:
        KafkaDestination(config)
    # librdkafka's reason, whatever its words.
    reason_between(
        str(refused.value), "cannot set up the Kafka producer for kafka://broker:9093/lineage: ", ""
    )


def test_the_dry_run_never_touches_kafka(tmp_path: Path, ws: Any) -> None:
    ws.segment("000001.jsonl", [run_record()])
    out = io.BytesIO()
    report = run_export(
        ExportRequest(
            workspace=ws.root,
            dry_run=True,
            output=out,
            settings=CATALOGUE.settings({"openlineage.transport": "kafka"}),
        )
    )
    assert report.exit_code == 0 and report.destination == "dry run"
    assert out.getvalue().count(b"\n") == report.events_sent > 0
