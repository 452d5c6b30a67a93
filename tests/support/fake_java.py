#!/usr/bin/env python3
"""A stand-in for ``java`` (scripts' JAVA) where a test's point is what the service scripts keep
track of, not the server: answers what scripts/kafka.sh and scripts/marquez.sh ask of the JVM,
and, started as their server (``kafka.Kafka CONFIG``, ``marquez.MarquezApp server CONFIG``),
listens on the ports the configuration names and answers the scripts' health checks as the real
server does (a Kafka ApiVersions request; GET /api/v1/namespaces), until it is stopped.

Its command line is the one the scripts give java, so a script knows it as its server by it."""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CLUSTER_ID = "b2x4LXRlc3QtY2x1c3Rlcg"
"""What ``kafka.tools.StorageTool random-uuid`` prints: a cluster id of 22 characters."""
API_VERSIONS_ANSWER = b"\x00\x00\x00\x06" + b"\x00\x00\x00\x07" + b"\x00\x00"
"""The start of an ApiVersions answer to kafka.sh's probe (correlation id 7, error code 0)."""


def properties(path: str) -> dict[str, str]:
    """A Java properties file's ``key=value`` lines."""
    pairs = (line.split("=", 1) for line in Path(path).read_text().splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs if not key.startswith("#")}


def listen(host: str, port: int, answer: bytes) -> None:
    """Accept connections on ``host:port`` for good, sending each ``answer`` (after reading what
    the client sent first, when there is an answer to give)."""
    server = socket.create_server((host, port))

    def serve() -> None:
        while True:
            connection, _ = server.accept()
            with connection:
                if answer:
                    connection.recv(64)
                    connection.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()


def kafka(config: str) -> None:
    """Kafka's three listeners; the PLAINTEXT one answers the probe."""
    for listener in properties(config)["listeners"].split(","):
        name, _, address = listener.partition("://")
        host, _, port = address.rpartition(":")
        listen(host, int(port), API_VERSIONS_ANSWER if name == "PLAINTEXT" else b"")
    threading.Event().wait()


class _Namespaces(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"namespaces": [], "stand-in": True}).encode()
        found = self.path.startswith("/api/v1/namespaces")
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def marquez(config: str) -> None:
    """Marquez's API (GET /api/v1/namespaces) and admin ports, from its marquez.yml."""
    text = Path(config).read_text()
    host = re.findall(r"bindHost: (\S+)", text)[0]
    api, admin = (int(port) for port in re.findall(r"port: (\d+)", text)[:2])
    listen(host, admin, b"")
    ThreadingHTTPServer((host, api), _Namespaces).serve_forever()


def main(argv: list[str]) -> int:
    """Does what the scripts ask of java with ``argv``."""
    if "-version" in argv:
        print("    java.specification.version = 17", file=sys.stderr)
        return 0
    if "kafka.tools.StorageTool" in argv:
        command = argv[argv.index("kafka.tools.StorageTool") + 1 :]
        if command[0] == "random-uuid":
            print(CLUSTER_ID)
            return 0
        log_dir = Path(properties(command[command.index("-c") + 1])["log.dirs"])
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / "meta.properties").write_text(f"cluster.id={CLUSTER_ID}\n")
        return 0
    if "kafka.Kafka" in argv:
        kafka(argv[argv.index("kafka.Kafka") + 1])
    if "marquez.MarquezApp" in argv:
        marquez(argv[-1])
    print(f"fake java: nothing to do with {argv}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
