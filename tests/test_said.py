"""What librdkafka says reaches us as text, whatever bytes a broker sends (deliver/kafka/said.py,
and librdkafka's log lines never made: confluent_kafka decodes them strictly).

A real broker cannot be made to answer a SASL handshake with bytes that are no UTF-8, so a
small one on loopback does (Kafka's wire protocol, the few requests librdkafka sends before it
logs in): ApiVersions, SaslHandshake, then SaslAuthenticate answered with
SASL_AUTHENTICATION_FAILED and the message we choose.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, cli_command, cli_env, reason_between, run_record
from test_kafka import a_run, send

from openlineage_export.deliver.kafka.config import KafkaConfig
from openlineage_export.deliver.kafka.destination import KafkaDestination
from openlineage_export.deliver.kafka.said import SAID_LIMIT, said
from openlineage_export.errors import DestinationUnreachable


class SaslRefusingBroker:
    """A Kafka broker on loopback that refuses every login with ``message`` (any bytes)."""

    def __init__(self, message: bytes) -> None:
        self.message = message
        self.refused = threading.Event()
        """Set once a login was refused with the message: the premise of a test."""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closing = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                while True:
                    (size,) = struct.unpack(">i", _read(connection, 4))
                    request = _read(connection, size)
                    key, version, correlation = struct.unpack(">hhi", request[:8])
                    body = self._answer(key, version)
                    if body is None:
                        return
                    reply = struct.pack(">i", correlation) + body
                    connection.sendall(struct.pack(">i", len(reply)) + reply)
            except (OSError, EOFError):
                return

    def _answer(self, key: int, version: int) -> bytes | None:
        if key == 18:  # ApiVersions: only v0 is spoken here, said with UNSUPPORTED_VERSION
            if version > 0:
                return struct.pack(">hi", 35, 0)
            apis = [(17, 0, 1), (36, 0, 1), (3, 0, 1), (0, 0, 3)]
            return struct.pack(">hi", 0, len(apis)) + b"".join(
                struct.pack(">hhh", *api) for api in apis
            )
        if key == 17:  # SaslHandshake: PLAIN
            return struct.pack(">hih", 0, 1, 5) + b"PLAIN"
        if key == 36:  # SaslAuthenticate: SASL_AUTHENTICATION_FAILED, with our message
            self.refused.set()
            tail = struct.pack(">i", 0) + (struct.pack(">q", 0) if version >= 1 else b"")
            return struct.pack(">hh", 58, len(self.message)) + self.message + tail
        return None

    def close(self) -> None:
        self._closing.set()
        self._listener.close()


def _read(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


@pytest.fixture
def broker(request: pytest.FixtureRequest) -> Iterator[SaslRefusingBroker]:
    server = SaslRefusingBroker(request.param)
    yield server
    server.close()


@pytest.mark.parametrize(
    "broker",
    [b"bad credentials \xff\xfe", b"bad credentials \xe2\x80\xae\x1b[2J", b"\xc3" * 3000],
    indirect=True,
    ids=["not-utf8", "bidi-and-escape", "long"],
)
def test_a_brokers_bytes_that_are_no_utf8_are_an_outage_in_one_sentence(
    broker: SaslRefusingBroker,
) -> None:
    """Before: one byte that is no UTF-8 in the broker's SASL error made confluent_kafka's
    decoding of librdkafka's log line raise out of poll(), and the export failed for good at
    once ("serving its delivery reports failed: UnicodeDecodeError"), its runs half recorded."""
    config = KafkaConfig(
        f"127.0.0.1:{broker.port}",
        "lineage",
        security_protocol="SASL_PLAINTEXT",
        sasl_username="u",
        sasl_password="pw",
        delivery_timeout=2.0,
        request_timeout=1.0,
    )
    kafka = KafkaDestination(config)
    try:
        with pytest.raises(DestinationUnreachable) as raised:
            send(kafka, a_run(), threading.Event())
    finally:
        kafka.close_now()
    assert broker.refused.is_set()
    reason = reason_between(
        str(raised.value),
        f"the Kafka broker at kafka://127.0.0.1:{broker.port}/lineage acknowledged nothing for "
        "2 s (",
        "); nothing more was sent",
    )
    assert "UnicodeDecodeError" not in reason
    _, _, broker_error = reason.partition("; last broker error: ")
    assert broker_error.strip(), reason  # what the broker said, passed along
    assert not any("\ud800" <= c <= "\udfff" for c in reason)
    assert len(broker_error) <= SAID_LIMIT + 3


def test_said_reads_an_error_in_its_own_words() -> None:
    from confluent_kafka import KafkaError

    error = KafkaError(KafkaError._AUTHENTICATION, "bad credentials")
    assert said(error) == "bad credentials"
    assert said(KafkaError(KafkaError._AUTHENTICATION, "x" * 2000)) == "x" * SAID_LIMIT + "..."


@pytest.mark.parametrize("broker", [b"bad credentials \xff"], indirect=True)
def test_the_export_stops_as_an_outage_and_the_ledger_says_so(
    broker: SaslRefusingBroker, tmp_path: Path
) -> None:
    """Through the CLI, as attacker B saw it: exit 4 within a second, the export left "started
    ... and not finished" in the ledger and a run recorded refused by an internal error. Now the
    broker's bytes decide nothing: the outage it is (exit 4), every run pending, and the export
    recorded as stopped."""
    ws = WorkspaceMaker(tmp_path / "ws")
    ws.segment("000001.jsonl", [run_record(f"run-{i}") for i in range(3)])
    ws.settings(
        {
            "openlineage.transport": "kafka",
            "openlineage.kafka.topic": "lineage",
            "openlineage.kafka.securityProtocol": "SASL_PLAINTEXT",
            "openlineage.kafka.sasl.username": "u",
            "openlineage.retry.maxTime": 2,
        }
    )
    env = cli_env(
        tmp_path,
        OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS=f"127.0.0.1:{broker.port}",
        OPENLINEAGE_KAFKA_SASL_PASSWORD="pw",
    )
    done = subprocess.run(
        cli_command("export", "--progress", "none", "-w", str(ws.root)),
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert broker.refused.is_set()
    assert done.returncode == 4 and b"Traceback" not in done.stderr, done.stderr
    assert b"UnicodeDecodeError" not in done.stderr
    status = subprocess.run(
        cli_command("status", "--json", "-w", str(ws.root)),
        env=env,
        capture_output=True,
        timeout=120,
    )
    (destination,) = json.loads(status.stdout)["destinations"]
    assert destination["pending"] == 3 and destination.get("refused", 0) == 0, destination
    assert destination["lastExportOutcome"] != "started", destination
