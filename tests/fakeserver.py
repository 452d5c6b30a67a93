"""A scripted OpenLineage HTTP server on loopback, for what a real server cannot be made to do.

A real threaded HTTP/1.1 server (keep-alive) in a background thread. It records every request
(method, path, headers, raw and decoded body, arrival time) and answers from a script: a
function of the request, or a queue of answers consumed in order (then the default answer).
An answer can delay, or reset the connection instead of answering.

    from fakeserver import fake_server_fixture  # registers the fixture ``fake_server``

    def test_x(fake_server):
        fake_server.script([Answer(503), Answer(201)])   # then the default (201)
        fake_server.script(lambda req: Answer(400, body="no") if ... else Answer(201))
        ... export to fake_server.url ...
        fake_server.requests                              # every Recorded, in arrival order

Reads (GETs) are what an export asks before it sends (deliver/http/held.py before a first export,
deliver/http/recall.py before a later one). By default the server answers them as a server that is
not Marquez would (a 404 page), keeps them in ``reads`` and never shows them to the script or
in ``requests``: a test of the events sees the events. ``FakeServer(reads=True)`` (or setting
``answers_reads``) hands them to the script and records them in ``requests`` like the rest.

:class:`MarquezLike` is a script that plays Marquez: it keeps the events posted to it and
answers Marquez's read API from them (a namespace, its jobs and their runs, paged; a run by id).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest


@dataclass(frozen=True)
class Answer:
    """What the server does with one request."""

    status: int = 201
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | str | dict[str, Any] | list[Any] | None = None
    """bytes/str as they are; a dict or list as JSON (with Content-Type application/json)."""
    delay: float = 0.0
    """Seconds to wait before answering (cut short when the server stops)."""
    hold: threading.Event | None = None
    """Answer only once this is set (or the server stops): the test decides when."""
    reset: bool = False
    """Reset the connection (TCP RST) instead of answering."""
    trickle: float = 0.0
    """Send the body one byte every this many seconds (a server that answers, but slowly)."""
    huge: int = 0
    """Answer with a body of this many bytes (made as it is sent, never held whole)."""
    reason: str | None = None
    """The status line's reason phrase, each character one byte (latin-1): any bytes."""

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, (dict, list)):
            data = json.dumps(self.body).encode()
            headers.setdefault("Content-Type", "application/json")
        elif isinstance(self.body, str):
            data = self.body.encode()
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        else:
            data = self.body or b""
        return data, headers


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    raw: bytes
    """The body as it came over the wire."""
    body: bytes
    """The body decoded (gzip / deflate undone)."""
    at: float
    """time.monotonic() when the request was complete."""

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def run_id(self) -> str | None:
        """The event's run id, when the body is an OpenLineage run event."""
        try:
            run_id = self.json()["run"]["runId"]
        except (ValueError, KeyError, TypeError):
            return None
        return run_id if isinstance(run_id, str) else None


Script = Callable[[Recorded], "Answer | int"]

BACKLOG = 128
"""The listen backlog of a loopback server that stands in for a real one (Java's default is
50, nginx's 511, uvicorn's 2048; Python's socketserver has 5). An export opens up to
``openlineage.concurrency`` connections at once (32 by default, together once the first batch
showed the server takes none): a backlog of 5 drops the handshakes past it, the kernel tries
them again 1, 3, 7 and 15 s later, and on a busy machine a request then outlasts its timeout
after the server took it, and is sent again."""


class FakeServer:
    """The server; use the :func:`fake_server` fixture, or ``with FakeServer() as s``."""

    def __init__(
        self,
        default: Answer | None = None,
        *,
        bound: socket.socket | None = None,
        reads: bool = False,
        batches: bool = False,
    ) -> None:
        self.default = default or Answer(201)
        self.answers_reads = reads
        """Whether GETs go to the script and into ``requests`` (else: a 404, into ``reads``)."""
        self.reads: list[str] = []
        """The paths of the GETs answered with a 404 page, not scripted (``answers_reads``)."""
        self.answers_batches = batches
        """Whether POSTs to ``<endpoint>/batch`` go to the script and into ``requests`` (else:
        a 404, as a server without the spec's batch endpoint answers, into ``batches``)."""
        self.batches: list[str] = []
        """The paths of the batches answered with a 404, not scripted (``answers_batches``)."""
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._queue: deque[Answer | int] = deque()
        self._fn: Script | None = None
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._handlers: list[threading.Thread] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.huge_bytes_sent = 0
        """How much of the huge bodies made it into the socket (a careful client stops early)."""
        self.errors: list[BaseException] = []
        """Exceptions raised by a script (or a body that would not decode): stop() fails."""
        if bound is None:
            self._httpd = _Server(("127.0.0.1", 0), _handler_class(self))
        else:
            # Serve on a port held refused until now (:func:`refused_port`): the server comes
            # back at the address a client was given.
            self._httpd = _Server(("127.0.0.1", 0), _handler_class(self), bind_and_activate=False)
            self._httpd.socket.close()
            self._httpd.socket = bound
            self._httpd.server_address = bound.getsockname()
            self._httpd.server_activate()
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fakeserver-{self.port}",
            daemon=True,
        )
        self._thread.start()

    # -- scripting ---------------------------------------------------------------------------

    def script(self, answers: Script | Iterable[Answer | int]) -> None:
        """Answer with a function of each request, or with these answers in order (then the
        default). An int is a status with an empty body."""
        with self._lock:
            if callable(answers):
                self._fn, self._queue = answers, deque()
            else:
                self._fn, self._queue = None, deque(answers)

    def _answer_for(self, request: Recorded) -> Answer:
        with self._lock:
            fn = self._fn
            answer: Answer | int = self._queue.popleft() if self._queue else self.default
        if fn is not None:
            answer = fn(request)
        return Answer(answer) if isinstance(answer, int) else answer

    # -- what was received -------------------------------------------------------------------

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def events(self) -> list[dict[str, Any]]:
        """The decoded JSON bodies, in arrival order."""
        return [r.json() for r in self.requests]

    def wait_for(self, count: int, timeout: float = 120.0) -> bool:
        """Wait until at least ``count`` requests arrived; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrived.wait(left)
            return True

    def wait_for_get(self, since: int = 0, timeout: float = 120.0) -> bool:
        """Wait until a GET (a question) is among the requests from the ``since``-th on;
        False on timeout."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not any(r.method == "GET" for r in self._requests[since:]):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrived.wait(left)
            return True

    def _record(self, request: Recorded) -> None:
        with self._arrived:
            self._requests.append(request)
            self._arrived.notify_all()

    # -- life --------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop serving, drop every open connection, end every handler thread."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
            handlers = list(self._handlers)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # wakes a handler blocked reading keep-alive
        for thread in handlers:
            thread.join(5)
        self._httpd.server_close()
        self._thread.join(5)
        alive = [t.name for t in handlers if t.is_alive()]
        assert not alive, f"fake server handler threads did not stop: {alive}"
        assert not self.errors, f"the fake server's script failed: {self.errors!r}"

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = BACKLOG
    owner: FakeServer

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            daemon=True,
            name=f"fakeserver-{self.owner.port}-conn",
        )
        with self.owner._lock:
            self.owner._handlers = [t for t in self.owner._handlers if t.is_alive()]
            self.owner._handlers.append(thread)
        thread.start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (timeout, reset, the test stopping) is no error of ours.
        pass


def _handler_class(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10  # an idle keep-alive connection is closed after this
        server_version = "FakeOpenLineage/1"

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self._serve()

        do_PUT = do_GET = do_DELETE = do_PATCH = do_POST

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                body = _decode(raw, headers.get("content-encoding", ""))
            except (OSError, EOFError, zlib.error) as exc:
                server.errors.append(exc)
                body = raw
            request = Recorded(self.command, self.path, headers, raw, body, time.monotonic())
            unscripted = self.command == "GET" and not server.answers_reads
            batch = self.command == "POST" and self.path.rstrip("/").endswith("/batch")
            if unscripted or (batch and not server.answers_batches):
                with server._lock:
                    (server.reads if unscripted else server.batches).append(self.path)
                page = b"<html>not here</html>"
                self.send_response(404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                self.wfile.flush()
                return
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                server._record(request)
                try:
                    answer = server._answer_for(request)
                except Exception as exc:  # reported by stop()
                    server.errors.append(exc)
                    answer = Answer(599, body=f"fake server script failed: {exc!r}")
                if answer.delay and server._stopping.wait(answer.delay):
                    self.close_connection = True
                    return
                if answer.hold is not None and not _held(answer.hold, server._stopping):
                    self.close_connection = True
                    return
                if answer.reset:
                    self._reset()
                    return
                data, extra = answer.encoded()
                self.send_response(answer.status, answer.reason)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(answer.huge or len(data)))
                self.end_headers()
                if answer.huge:
                    self._send_huge(answer.huge)
                elif answer.trickle:
                    self._send_trickle(data, answer.trickle)
                elif self.command != "HEAD":
                    self.wfile.write(data)
                self.wfile.flush()
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _send_trickle(self, data: bytes, every: float) -> None:
            for byte in data:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                if server._stopping.wait(every):
                    return

        def _send_huge(self, size: int) -> None:
            chunk = b"x" * (1 << 20)
            sent = 0
            try:
                while sent < size and not server._stopping.is_set():
                    piece = chunk[: size - sent]
                    self.wfile.write(piece)
                    sent += len(piece)
                    with server._lock:
                        server.huge_bytes_sent += len(piece)
            except OSError:  # the client stopped reading: what a careful client does
                self.close_connection = True

        def _reset(self) -> None:
            """Close with SO_LINGER 0: the client gets a TCP RST, not an answer."""
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.wfile.close()
            self.rfile.close()
            self.connection.close()

    return Handler


def _held(until: threading.Event, stopping: threading.Event) -> bool:
    """Wait until ``until`` is set (True) or the server stops (False)."""
    while not until.wait(0.05):
        if stopping.is_set():
            return False
    return True


def _decode(raw: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    return raw


def refusing_socket() -> socket.socket:
    """A loopback socket bound, never listened on: connections to its port are refused until
    a :class:`FakeServer` is made on it (``bound=``), which serves them from then on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port where every connection is refused, for as long as the block runs.

    The port is bound but never listened on: the kernel refuses connections to it, and no
    other program (another test run's server, or a client's own outgoing connection) can take
    it meanwhile. A port found free and let go again may be anyone's by the time it is used."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@pytest.fixture(name="refused_port")
def refused_port_fixture() -> Iterator[int]:
    """A loopback port that refuses connections for the whole test (:func:`refused_port`)."""
    with refused_port() as port:
        yield port


@pytest.fixture(name="fake_server")
def fake_server_fixture() -> Iterator[FakeServer]:
    """A started fake OpenLineage server; stopped (cleanly) after the test."""
    server = FakeServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(name="make_fake_server")
def make_fake_server_fixture() -> Iterator[Callable[[], FakeServer]]:
    """Factory for more servers in one test (e.g. a redirect target); all stopped after it."""
    servers: list[FakeServer] = []

    def make() -> FakeServer:
        servers.append(FakeServer())
        return servers[-1]

    try:
        yield make
    finally:
        for server in servers:
            server.stop()


# -- Marquez's read API --------------------------------------------------------------------------

MARQUEZ_STATES = {"START": "RUNNING", "COMPLETE": "COMPLETED", "ABORT": "ABORTED", "FAIL": "FAILED"}
"""The state Marquez gives a run by the type of its last event (``RunState.forType``)."""


class MarquezLike:
    """A script (``fake_server.script(MarquezLike())``) that plays Marquez 0.51: it accepts
    every event posted and answers the read API from them, as Marquez shapes its answers
    (``api/src/main/java/marquez/api/JobResource.java``, ``NamespaceResource.java``):

    - ``GET /api/v1/namespaces/{namespace}``: ``{"name", "isHidden", ...}``, or 404;
    - ``GET /api/v1/namespaces/{namespace}/jobs?limit&offset``: ``{"jobs": [...],
      "totalCount"}``, each job with its ``latestRun`` and ten ``latestRuns``;
    - ``GET /api/v1/namespaces/{namespace}/jobs/{job}/runs?limit&offset``: ``{"runs": [...],
      "totalCount"}``, the latest started first, or 404 (no such namespace, no such job);
    - ``GET /api/v1/jobs/runs/{id}``: the run, or 404.

    A run is ``{"id", "state", "startedAt", "endedAt", "facets", ...}``: its state from its last
    event, ``endedAt`` the time of its last event when that one ends it. ``run_bytes`` pads each
    run's facets to about that many bytes (Marquez writes about 2.5 KB per stage run); a
    test may change ``runs`` (a run forgotten, another state) or ``hidden`` between exports.
    Every 404 is Marquez's JSON error (``{"code": 404, "message": ...}``)."""

    def __init__(self, run_bytes: int = 0) -> None:
        self.run_bytes = run_bytes
        self.lock = threading.Lock()
        self.runs: dict[str, dict[str, Any]] = {}
        """Run id -> the run as Marquez shows it, plus ``_namespace`` and ``_job``."""
        self.hidden: set[str] = set()
        self.namespaces: set[str] = set()

    def __call__(self, request: Recorded) -> Answer:
        if request.method == "POST":
            self.take(request.json())
            return Answer(201)
        parts = urlsplit(request.path)
        path = [unquote(p) for p in parts.path.split("/")]
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self.lock:
            return self._read(path[1:], query)

    def take(self, event: dict[str, Any]) -> None:
        """An event, as Marquez records it."""
        namespace, job = event["job"]["namespace"], event["job"]["name"]
        with self.lock:
            self.namespaces.add(namespace)
            self.hidden.discard(namespace)
            run = self.runs.setdefault(
                event["run"]["runId"],
                {"id": event["run"]["runId"], "_namespace": namespace, "_job": job},
            )
            state = MARQUEZ_STATES.get(event["eventType"], "OTHER")
            run.update(state=state, updatedAt=event["eventTime"])
            if event["eventType"] == "START":
                run["startedAt"] = event["eventTime"]
            run.setdefault("startedAt", None)
            run["endedAt"] = event["eventTime"] if state != "RUNNING" else run.get("endedAt")
            run["facets"] = {"padding": "x" * self.run_bytes} if self.run_bytes else {}

    def held(self, namespace: str) -> dict[str, str]:
        """Run id -> state of every run of ``namespace``."""
        with self.lock:
            return {i: r["state"] for i, r in self.runs.items() if r["_namespace"] == namespace}

    def _read(self, path: list[str], query: dict[str, str]) -> Answer:
        if path[:3] != ["api", "v1", "namespaces"] or len(path) < 4:
            if path[:4] == ["api", "v1", "jobs", "runs"] and len(path) == 5:
                run = self.runs.get(path[4])
                return _missing("Run", path[4]) if run is None else Answer(200, body=_shown(run))
            return Answer(404, body=f"<html>{'/'.join(path)}: not here</html>")
        namespace = path[3]
        if namespace not in self.namespaces or namespace in self.hidden:
            if len(path) == 4:
                if namespace in self.hidden:
                    return Answer(200, body={"name": namespace, "isHidden": True})
                return _missing("Namespace", namespace)
            if path[4:] == ["jobs"]:
                return Answer(200, body={"jobs": [], "totalCount": 0})
            return _missing("Namespace", namespace)
        limit, offset = int(query.get("limit", 100)), int(query.get("offset", 0))
        runs = [r for r in self.runs.values() if r["_namespace"] == namespace]
        if len(path) == 4:
            return Answer(200, body={"name": namespace, "isHidden": False, "ownerName": "x"})
        jobs = sorted({r["_job"] for r in runs})
        if path[4:] == ["jobs"]:
            page = [
                {"name": job, "namespace": namespace, "latestRuns": self._of(runs, job)[:10]}
                for job in jobs[offset : offset + limit]
            ]
            for job in page:
                job["latestRun"] = job["latestRuns"][0] if job["latestRuns"] else None
            return Answer(200, body={"jobs": page, "totalCount": len(jobs)})
        if len(path) == 7 and path[4] == "jobs" and path[6] == "runs":
            if path[5] not in jobs:
                return _missing("Job", path[5])
            of_job = self._of(runs, path[5])
            return Answer(
                200, body={"runs": of_job[offset : offset + limit], "totalCount": len(of_job)}
            )
        return Answer(404, body={"code": 404, "message": "HTTP 404 Not Found"})

    @staticmethod
    def _of(runs: list[dict[str, Any]], job: str) -> list[dict[str, Any]]:
        of_job = [r for r in runs if r["_job"] == job]
        of_job.sort(key=lambda r: (r["startedAt"] or "", r["id"]), reverse=True)
        return [_shown(r) for r in of_job]


def _shown(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if not k.startswith("_")}


def _missing(what: str, name: str) -> Answer:
    return Answer(404, body={"code": 404, "message": f"{what} '{name}' not found."})
