"""Delivery into Kafka: ours and openlineage-python's KafkaTransport, each into a fresh topic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import Timer, export_to, measurement, plain_events


def fresh_topic(bootstrap: str, prefix: str) -> str:
    """A new topic of 3 partitions, named ``prefix`` and this process's id (one per repeat)."""
    import os

    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"{prefix}-{os.getpid()}"

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    for future in admin.create_topics(
        [NewTopic(name, num_partitions=3, replication_factor=1)]
    ).values():
        future.result(30)
    return name


@measurement
def kafka_ours(ws: str, bootstrap: str, topic: str) -> dict[str, Any]:
    """run_export to a fresh Kafka topic: read + translate + encode + produce + ledger."""
    return export_to(
        ws,
        OPENLINEAGE_TRANSPORT="kafka",
        OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS=bootstrap,
        OPENLINEAGE_KAFKA_TOPIC=fresh_topic(bootstrap, topic),
    )


@measurement
def kafka_ol(ws: str, bootstrap: str, topic: str, flush: bool) -> dict[str, Any]:
    """openlineage-python's KafkaTransport: ``client.emit`` each event (prebuilt, untimed), then
    ``close`` (which flushes); ``flush`` true is its default (a flush after every event)."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

    topic = fresh_topic(bootstrap, topic)
    events = plain_events(Path(ws))
    transport = KafkaTransport(
        KafkaConfig(config={"bootstrap.servers": bootstrap}, topic=topic, flush=flush)
    )
    client = OpenLineageClient(transport=transport)
    with Timer() as timer:
        for event in events:
            client.emit(event)
        transport.close(timeout=60)
    return {"events": len(events), "wall_s": timer.wall_s, "cpu_s": timer.cpu_s}
