"""The real Data.Rentgen, as scripts/data-rentgen.sh starts it: a thin reader of its REST API,
what it holds of one job namespace, and a wait for its Kafka consumer.

Data.Rentgen's consumer reads every topic matching ``input.runs.*`` (the script's pattern); the
tests export to one of them, :func:`shared_topic`, each into a job namespace of its own. When the
export is done,
:func:`settle` observes the consumer take it all: its group's committed offsets reach the
topic's end (it has fetched every event), then one marker event per partition, produced after
that, each with an output, is seen through the REST API with its output: the consumer handles
one batch after the other and saves a batch's outputs last, so by then every event before the
markers is saved, and any it could not parse is on its malformed-messages topic.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlparse

import httpx
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

GROUP = os.environ.get("DATA_RENTGEN_GROUP", "data-rentgen")
MALFORMED = os.environ.get("DATA_RENTGEN_MALFORMED_TOPIC", "input.runs__malformed")
TOPIC = "input.runs.olx-e2e"
"""The tests' topic: one the consumer reads (scripts/data-rentgen.sh: ``^input\\.runs(\\..+)?$``)."""
SINCE = "2026-10-01T00:00:00Z"
"""Before every run the tests send: the demo's and the synthetic trail's start in 2026-11."""
MARK_TIME = datetime(2026, 11, 30, 12, tzinfo=UTC)
"""The markers' time: in a month Data.Rentgen has partitions for (the script makes them)."""
DEADLINE = 900.0
"""Seconds the consumer may take for one export before a test fails (a busy machine's
consumer takes tens of seconds for a few thousand events): only how long to wait."""
QUIET = {"log_level": 0}

STATUS = {"START": "STARTED", "COMPLETE": "SUCCEEDED", "FAIL": "FAILED", "ABORT": "KILLED"}
"""A run's (and an operation's) status in Data.Rentgen after each event type."""
LOCATIONS = {"file": "file://unknown", "bigquery": "bigquery://googleapis.com"}
"""Dataset namespaces that are no URL, as Data.Rentgen's consumer makes them one."""

T = TypeVar("T")


def rest_url() -> str:
    """Data.Rentgen's REST API: as scripts/services.sh says (its env file, read into the
    session's environment by the ``services`` fixture, after this module is imported)."""
    return os.environ.get("DATA_RENTGEN_URL", "http://127.0.0.1:58000").rstrip("/")


def bootstrap() -> str:
    """The Kafka broker its consumer reads from."""
    return os.environ.get(
        "KAFKA_BOOTSTRAP_SERVERS", f"127.0.0.1:{os.environ.get('KAFKA_PORT', '59092')}"
    )


def when(text: str | None) -> datetime | None:
    """A time of an event or of Data.Rentgen's answers, comparable (UTC)."""
    if text is None:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def location(namespace: str) -> str:
    """Where Data.Rentgen files a namespace: ``scheme://name`` (its own reading of it)."""
    lowered = LOCATIONS.get(namespace.lower(), namespace.lower())
    parsed = urlparse(lowered)
    name = (parsed.netloc or parsed.path).split(",")[0] or "unknown"
    return f"{parsed.scheme or 'unknown'}://{name}"


def wait_for(what: str, check: Callable[[], T | None], deadline: float = DEADLINE) -> T:
    """``check()`` again and again until it gives something, for at most ``deadline`` s."""
    end = time.monotonic() + deadline
    while True:
        found = check()
        if found is not None:
            return found
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not seen within {deadline:.0f} s")
        time.sleep(0.5)


# ------------------------------------------------------------------ what a namespace holds


@dataclass(frozen=True)
class RunHeld:
    job: str
    parent: str | None
    status: str
    started: datetime | None
    ended: datetime | None
    external_id: str | None
    attempt: str | None


@dataclass(frozen=True)
class OperationHeld:
    run: str
    name: str
    type: str
    status: str
    started: datetime | None
    ended: datetime | None


@dataclass
class Held:
    """What one job namespace holds: its jobs, runs, operations and their inputs and outputs
    (datasets by ``scheme://location`` and name; outputs with their rows and bytes)."""

    jobs: dict[str, tuple[str, str | None]]
    """job name -> (its type, its parent job's name)"""
    runs: dict[str, RunHeld]
    operations: dict[str, OperationHeld]
    inputs: set[tuple[str, str, str]]
    """(run id, dataset location, dataset name)"""
    outputs: set[tuple[str, str, str, int | None, int | None]]
    """(run id, dataset location, dataset name, rows, bytes)"""
    schemas: dict[tuple[str, str], list[tuple[str, str | None]]]
    """(dataset location, dataset name) -> the fields of its schema (name, type), last written"""

    @property
    def datasets(self) -> set[tuple[str, str]]:
        return {(loc, name) for _, loc, name, *_ in (*self.inputs, *self.outputs)}

    @property
    def parents(self) -> set[tuple[str, str]]:
        """(run, its parent run)"""
        return {(run_id, run.parent) for run_id, run in self.runs.items() if run.parent}


def sent(events: list[dict[str, Any]]) -> Held:
    """What Data.Rentgen should hold once it has taken ``events`` (the export's own bytes)."""
    jobs: dict[str, tuple[str, str | None]] = {}
    runs: dict[str, RunHeld] = {}
    operations: dict[str, OperationHeld] = {}
    inputs: set[tuple[str, str, str]] = set()
    outputs: dict[tuple[str, str, str], tuple[int | None, int | None]] = {}
    schemas: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for event in events:
        job, run, facets = event["job"], event["run"]["runId"], event["run"]["facets"]
        job_type = job["facets"]["jobType"]
        parent = facets.get("parent")
        jobs[job["name"]] = (
            f"{job_type['integration']}_{job_type['jobType']}".upper(),
            parent["job"]["name"] if parent else None,
        )
        before = runs.get(run)
        started = (
            when(event["eventTime"])
            if event["eventType"] == "START"
            else (before.started if before else None)
        )
        ended = None if event["eventType"] == "START" else when(event["eventTime"])
        own = facets.get("dataRentgen_run", {})
        runs[run] = RunHeld(
            job["name"],
            parent["run"]["runId"] if parent else None,
            STATUS[event["eventType"]],
            started,
            ended,
            own.get("external_id"),
            own.get("attempt"),
        )
        if event["inputs"] or event["outputs"]:
            operations[run] = OperationHeld(
                run,
                job["name"],
                job_type["processingType"],
                STATUS[event["eventType"]],
                started,
                ended,
            )
        inputs |= {(run, location(d["namespace"]), d["name"]) for d in event["inputs"]}
        for d in event["outputs"]:
            stats = d.get("outputFacets", {}).get("outputStatistics", {})
            outputs[(run, location(d["namespace"]), d["name"])] = (
                stats.get("rowCount"),
                stats.get("size"),
            )
            if "schema" in d["facets"]:
                schemas[(location(d["namespace"]), d["name"])] = [
                    (f["name"], f.get("type")) for f in d["facets"]["schema"]["fields"]
                ]
    return Held(
        jobs,
        runs,
        operations,
        inputs,
        {(*key, rows, size) for key, (rows, size) in outputs.items()},
        schemas,
    )


class DataRentgen:
    """A reader of Data.Rentgen's REST API, logged in (its dummy auth: any name)."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or rest_url()
        self.http = httpx.Client(base_url=self.url, timeout=120)
        token = self.http.post("/v1/auth/token", data={"username": "olx-e2e", "password": "-"})
        token.raise_for_status()
        self.http.headers["Authorization"] = f"Bearer {token.json()['access_token']}"

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params)
        response.raise_for_status()
        return response.json()

    def items(self, path: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list."""
        page = 1
        while True:
            answer = self.get(path, **params, page=page, page_size=50)
            yield from answer["items"]
            if not answer["meta"]["has_next"]:
                return
            page += 1

    def location_id(self, address: str) -> str | None:
        """The id of the location ``scheme://name``, or None while there is none."""
        kind, _, name = address.partition("://")
        for item in self.items("/v1/locations", location_type=kind, search_query=name):
            if item["data"]["type"] == kind and item["data"]["name"] == name:
                return str(item["id"])
        return None

    def run(self, run_id: str) -> dict[str, Any] | None:
        """A run with its statistics, or None while Data.Rentgen has none of that id."""
        found = self.get("/v1/runs", run_id=[run_id])["items"]
        return found[0] if found else None

    def held(self, job_location: str) -> Held:
        """Everything Data.Rentgen holds of the jobs at ``job_location`` (``scheme://name``)."""
        location_id = self.location_id(job_location)
        if location_id is None:
            return Held({}, {}, {}, set(), set(), {})
        jobs = {str(j["id"]): j["data"] for j in self.items("/v1/jobs", location_id=[location_id])}
        runs: dict[str, RunHeld] = {}
        for job_id, job in jobs.items():
            for item in self.items("/v1/runs", job_id=[job_id], since=SINCE):
                run = item["data"]
                runs[str(run["id"])] = RunHeld(
                    job["name"],
                    run["parent_run_id"],
                    run["status"],
                    when(run["started_at"]),
                    when(run["ended_at"]),
                    run["external_id"],
                    run["attempt"],
                )
        operations: dict[str, OperationHeld] = {}
        ids = sorted(runs)
        for start in range(0, len(ids), 40):
            for item in self.items("/v1/operations", run_id=ids[start : start + 40], since=SINCE):
                op = item["data"]
                operations[str(op["id"])] = OperationHeld(
                    str(op["run_id"]),
                    op["name"],
                    op["type"],
                    op["status"],
                    when(op["started_at"]),
                    when(op["ended_at"]),
                )
        held = Held({}, runs, operations, set(), set(), {})
        self._io(jobs, held)
        names = {job_id: job["name"] for job_id, job in jobs.items()}
        held.jobs = {
            job["name"]: (job["type"], names.get(str(job["parent_job_id"])))
            for job in jobs.values()
        }
        return held

    def _io(self, jobs: dict[str, dict[str, Any]], held: Held) -> None:
        """The inputs and outputs of ``held``'s runs, and the schemas of their datasets, from the
        lineage of each stage's job (a run's reads and writes, its rows and bytes)."""
        for job_id, job in jobs.items():
            if job["parent_job_id"] is None:
                continue  # a pipeline: only its stages read and write
            graph = self.get(
                "/v1/jobs/lineage",
                start_node_id=job_id,
                since=SINCE,
                granularity="RUN",
                depth=1,
                direction="BOTH",
            )
            datasets = {
                key: f"{d['location']['type']}://{d['location']['name']}"
                for key, d in graph["nodes"]["datasets"].items()
            }
            names = {key: d["name"] for key, d in graph["nodes"]["datasets"].items()}
            for key, d in graph["nodes"]["datasets"].items():
                if d.get("schema"):
                    held.schemas[(datasets[key], names[key])] = [
                        (f["name"], f["type"]) for f in d["schema"]["fields"]
                    ]
            for relation in graph["relations"]["inputs"]:
                run, dataset = relation["to"], relation["from"]["id"]
                if run["kind"] == "RUN" and run["id"] in held.runs:
                    held.inputs.add((run["id"], datasets[dataset], names[dataset]))
            for relation in graph["relations"]["outputs"]:
                run, dataset = relation["from"], relation["to"]["id"]
                if run["kind"] == "RUN" and run["id"] in held.runs:
                    held.outputs.add(
                        (
                            run["id"],
                            datasets[dataset],
                            names[dataset],
                            relation["num_rows"],
                            relation["num_bytes"],
                        )
                    )


# ------------------------------------------------------------------ Kafka


def shared_topic(admin: AdminClient) -> str:
    """The topic of 3 partitions the tests export to, which Data.Rentgen's consumer reads:
    made when missing, then kept (the consumer reads every topic of its pattern, and a topic
    deleted under it leaves it failing to commit; one topic for every test, each test in a job
    namespace of its own, keeps what it reads the same from run to run)."""
    try:
        for future in admin.create_topics(
            [NewTopic(TOPIC, num_partitions=3, replication_factor=1)]
        ).values():
            future.result(timeout=30)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise
    return TOPIC


def end_offsets(topic: str) -> dict[int, int]:
    """partition -> the offset after its last message."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap(), "group.id": f"olx-e2e-{uuid.uuid4()}", **QUIET}
    )
    try:
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in partitions
        }
    finally:
        consumer.close()


def committed(admin: AdminClient, topic: str, partitions: list[int]) -> dict[int, int]:
    """partition -> the offset Data.Rentgen's consumer group has committed (-1: none yet;
    empty while the broker cannot answer yet: a group coordinator still being chosen on a
    broker just started, an answer that did not come within a request's 30 s). The caller
    asks again until its own deadline."""
    request = ConsumerGroupTopicPartitions(GROUP, [TopicPartition(topic, p) for p in partitions])
    # A client made before the broker was restarted (the Kafka e2e test stops it) may never
    # answer again: seen, every question timing out for 900 s while a new client answered at
    # once. So a question that fails is asked again by a new client.
    for client in (admin, None):
        try:
            asking = client or AdminClient({"bootstrap.servers": bootstrap(), **QUIET})
            answer = asking.list_consumer_group_offsets([request])[GROUP].result(timeout=30)
        except (TimeoutError, KafkaException):
            continue
        return {tp.partition: tp.offset for tp in answer.topic_partitions}
    return {}


def marker(topic: str, partition: int) -> tuple[str, bytes]:
    """A marker event (its run id, its bytes): a run of its own job, with one output."""
    millis = int(MARK_TIME.timestamp() * 1000)
    value = (millis << 80) | (7 << 76) | (uuid.uuid4().int & ((1 << 76) - 1))
    value = (value & ~(0b11 << 62)) | (0b10 << 62)
    run_id = str(uuid.UUID(int=value))
    where = f"olx-marker://{topic}"
    event = {
        "eventTime": MARK_TIME.isoformat(),
        "eventType": "COMPLETE",
        "producer": "https://github.com/olx-e2e/marker",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id, "facets": {}},
        "job": {"namespace": where, "name": f"marker-{partition}", "facets": {}},
        "inputs": [],
        "outputs": [{"namespace": where, "name": "marker", "facets": {}}],
    }
    return run_id, json.dumps(event).encode()


def settle(rentgen: DataRentgen, admin: AdminClient, topic: str) -> None:
    """Return once Data.Rentgen has saved every event on ``topic`` (module docstring)."""
    ends = end_offsets(topic)

    def fetched() -> bool | None:
        done = committed(admin, topic, list(ends))
        return True if all(done.get(p, -1) >= end for p, end in ends.items()) else None

    wait_for(f"Data.Rentgen's consumer fetching all of {topic} (end offsets {ends})", fetched)
    producer = Producer({"bootstrap.servers": bootstrap(), **QUIET})
    markers = []
    for partition in ends:
        run_id, value = marker(topic, partition)
        producer.produce(topic, value=value, key=run_id.encode(), partition=partition)
        markers.append(run_id)
    assert producer.flush(30) == 0, "the markers were not all acknowledged"

    def saved() -> bool | None:
        for run_id in markers:
            run = rentgen.run(run_id)
            if run is None or run["statistics"]["outputs"]["total_datasets"] != 1:
                return None
        return True

    wait_for(f"Data.Rentgen saving the markers after {topic}'s events", saved)


def malformed_with(text: str) -> list[bytes]:
    """The messages on Data.Rentgen's malformed-messages topic that hold ``text``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap(),
            "group.id": f"olx-e2e-{uuid.uuid4()}",
            "enable.auto.commit": False,
            **QUIET,
        }
    )
    try:
        topics = consumer.list_topics(timeout=30).topics
        if MALFORMED not in topics:
            return []  # created with the first event the consumer could not parse
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(MALFORMED, p), timeout=30)
            for p in topics[MALFORMED].partitions
        }
        wanted = {p: end for p, (low, end) in ends.items() if end > low}
        consumer.assign([TopicPartition(MALFORMED, p, low) for p, (low, _) in ends.items()])
        found: list[bytes] = []
        needle = text.encode()
        while wanted:
            message = consumer.poll(30)
            if message is None:
                raise AssertionError(f"{MALFORMED}: no message within 30 s, {wanted} still due")
            if message.error():
                raise KafkaException(message.error())
            value = message.value() or b""
            if needle in value:
                found.append(value)
            if message.offset() + 1 >= wanted.get(message.partition(), 0):
                wanted.pop(message.partition(), None)
        return found
    finally:
        consumer.close()
