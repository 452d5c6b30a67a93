"""Run commands in a network namespace of their own, where "another machine" can be faked
safely: ``10.200.0.1`` is an address of the namespace (not loopback, yet no packet leaves it)
and ``/etc/hosts`` says what the test wants names to resolve to.

:func:`in_netns` starts recording HTTP servers on the addresses asked for, runs the commands
one after the other, and returns what each command said and every request each server got.
Run as a script, this file is the part that runs inside the namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

OTHER_MACHINE = "10.200.0.1"
"""An address of the namespace that is not loopback: "another machine" for the exporter."""

_SETUP = 'mount --bind "$0" /etc/hosts && exec "$@"'
"""Inside the namespace: the test's hosts file, then the command (unshare and mount are
util-linux's; the addresses are set by :func:`_bring_up`, without iproute2)."""


@dataclass(frozen=True)
class Outcome:
    """What the commands said (``runs``: code, stdout, stderr) and what each server saw
    (``seen["host:port"]``: one dict per request, with ``target`` and ``authorization``)."""

    runs: list[dict[str, Any]]
    seen: dict[str, list[dict[str, str]]]


def can_make_netns() -> str | None:
    """Why :func:`in_netns` cannot work here, or None when it can."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "no unshare(1) or mount(8) here"
    probe = subprocess.run(
        ["unshare", "-rnm", "sh", "-c", _SETUP, "/etc/hosts", "true"],
        capture_output=True,
        text=True,
    )
    return None if probe.returncode == 0 else f"cannot make a network namespace: {probe.stderr}"


def in_netns(
    tmp_path: Path,
    *,
    listen: list[str],
    runs: list[dict[str, Any]],
    hosts: str = "127.0.0.1 localhost\n",
) -> Outcome:
    """Serve on each ``host:port`` of ``listen`` and run each ``{"args": [...], "env": {...},
    "stdin": "..."}`` of ``runs`` (in order), inside a fresh network namespace."""
    why = can_make_netns()
    assert why is None, why
    hosts_file = tmp_path / "netns-hosts"
    hosts_file.write_text(hosts)
    scenario = tmp_path / "netns-scenario.json"
    scenario.write_text(json.dumps({"listen": listen, "runs": runs}))
    done = subprocess.run(
        [
            "unshare",
            "-rnm",
            "sh",
            "-c",
            _SETUP,
            str(hosts_file),
            sys.executable,
            __file__,
            str(scenario),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    return Outcome(result["runs"], result["seen"])


class _Recorder(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a real server's listen backlog (fakeserver.BACKLOG)

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.seen: list[dict[str, str]] = []


class _Handler(BaseHTTPRequestHandler):
    server: _Recorder
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.seen.append(
            {"target": self.path, "authorization": self.headers.get("Authorization", "")}
        )
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _bring_up() -> None:
    """Loopback up, and ``10.200.0.1/32`` on it (as ``lo:1``): the ioctls ``ip`` would make."""
    import fcntl
    import socket
    import struct

    def ifreq(name: str, data: bytes = b"") -> bytes:
        return struct.pack("16s", name.encode()) + data.ljust(24, b"\0")

    def inet(address: str) -> bytes:
        return struct.pack("HH4s8s", socket.AF_INET, 0, socket.inet_aton(address), b"")

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
        flags = struct.unpack("16sH", fcntl.ioctl(control, 0x8913, ifreq("lo"))[:18])[1]
        fcntl.ioctl(control, 0x8914, ifreq("lo", struct.pack("H", flags | 0x1)))  # IFF_UP
        fcntl.ioctl(control, 0x8916, ifreq("lo:1", inet(OTHER_MACHINE)))  # SIOCSIFADDR
        fcntl.ioctl(control, 0x891C, ifreq("lo:1", inet("255.255.255.255")))  # netmask


def _main(scenario_file: str) -> None:
    _bring_up()
    scenario = json.loads(Path(scenario_file).read_text())
    servers = {}
    for where in scenario["listen"]:
        host, _, port = where.rpartition(":")
        server = _Recorder((host, int(port)))
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers[where] = server
    runs = []
    for run in scenario["runs"]:
        done = subprocess.run(
            run["args"],
            env={**os.environ, **run.get("env", {})},
            input=run.get("stdin", ""),
            capture_output=True,
            text=True,
            timeout=300,
        )
        runs.append({"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr})
    for server in servers.values():
        server.shutdown()
    print(json.dumps({"runs": runs, "seen": {k: s.seen for k, s in servers.items()}}))


if __name__ == "__main__":
    _main(sys.argv[1])
