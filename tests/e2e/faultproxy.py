"""A fault-injecting HTTP proxy on loopback, in front of a real server (the suite's Marquez).

It passes requests through to the upstream server, except that, at random with a fixed seed,
it misbehaves the way networks and servers do:

- ``error``: answers 500, 502, 503 or 504 itself (the request never reaches the server);
- ``throttle``: answers 429 with ``Retry-After``;
- ``slow``: holds the request longer than the client's timeout; half of the time the server
  had already taken it (a slow answer: the client retries what was accepted), half of the
  time it never reaches the server (a stalled connection);
- ``reset_before``: resets the connection halfway through the request body;
- ``reset_after``: passes the request on, then resets the connection instead of answering
  (the server has the event, the client does not know it: it sends it again).

``first`` scripts the first requests' actions, so that every fault a test names happens.
:meth:`FaultProxy.go_away` makes the server gone, either refusing every connection (nothing
listens on the port any more) or accepting each one and resetting or closing it;
:meth:`FaultProxy.come_back` undoes it, on the same port. The port stays the proxy's all
along (a socket bound to it, never listening, for the proxy's life): while it refuses, no
other program and no client's own outgoing connection can take it. ``gone_after`` refuses by itself
once that many requests were accepted through it, so an outage can start mid-export.

Requests a slow answer holds are passed on *before* the hold, never after: a request that
reached the server after the client gave up could overtake the client's later events, which
says nothing about the exporter (Marquez keeps the state of the last event it received).

    with FaultProxy("http://127.0.0.1:5000", seed=7, faults=Faults(error=0.1)) as proxy:
        ... export to proxy.url ...
        proxy.actions      # Counter of what it did
        proxy.passed       # what it passed to the server, with the answers, in order
        proxy.reads        # the reads (GETs: what the exporter asks) passed on, in order
"""

from __future__ import annotations

import contextlib
import http.client
import random
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "upgrade",
    "host",
    "content-length",
}


@dataclass(frozen=True)
class Faults:
    """How often each fault happens (each a share of requests, 0..1; the rest pass)."""

    error: float = 0.0
    throttle: float = 0.0
    slow: float = 0.0
    reset_before: float = 0.0
    reset_after: float = 0.0
    retry_after: int = 1
    """Seconds the 429 answers ask the client to wait."""
    hold: float = 3.0
    """Seconds a slow request is held: set it beyond the client's timeout."""

    def pick(self, roll: float) -> str:
        """The action for a roll in [0, 1)."""
        for action in ("error", "throttle", "slow", "reset_before", "reset_after"):
            share = getattr(self, action)
            if roll < share:
                return action
            roll -= share
        return "pass"


NO_FAULTS = Faults()


@dataclass(frozen=True)
class Passed:
    """A request the upstream server answered, as the proxy passed it on."""

    body: bytes
    status: int
    answered: bool
    """False when the proxy then withheld the answer (reset or slow)."""


class FaultProxy:
    """A threaded proxy on 127.0.0.1 that injects faults between a client and ``upstream``."""

    def __init__(
        self,
        upstream: str,
        *,
        seed: int,
        faults: Faults = NO_FAULTS,
        first: tuple[str, ...] = (),
        gone_after: int | None = None,
    ) -> None:
        """``first``: actions for the first requests, in order (then the dice decide), so a
        test is sure to meet every fault it names."""
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._faults = faults
        self._first = list(first)
        self._gone_after = gone_after
        self._mode: Literal["up", "refuse", "hangup", "close"] = "up"
        self._clients: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        # Holds the port while nothing listens on it (SO_REUSEADDR on both lets the listener
        # share it; nobody else can bind it, and connections to it are refused meanwhile).
        self._keeper = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._keeper.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._keeper.bind(("127.0.0.1", 0))
        self.port: int = self._keeper.getsockname()[1]
        self.actions: Counter[str] = Counter()
        self.passed: list[Passed] = []
        self.reads: list[str] = []
        """``METHOD target`` of each read passed on to the server (never faulted)."""
        self._listen()

    # -- control ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The proxy's base address, to use as ``openlineage.url``."""
        return f"http://127.0.0.1:{self.port}"

    def set_faults(self, faults: Faults) -> None:
        """Change what goes wrong from now on (``NO_FAULTS``: a transparent proxy)."""
        with self._lock:
            self._faults = faults

    def go_away(self, how: Literal["refuse", "hangup", "close"] = "refuse") -> None:
        """The server is gone: refuse every connection, or accept each one and reset it
        (``hangup``) or close it without a word (``close``).

        Open connections are cut either way (a keep-alive connection would otherwise still
        reach the server).
        """
        with self._lock:
            self._mode = how
            clients = list(self._clients)
        if how == "refuse":
            self._unlisten()
        for client in clients:
            _reset(client)

    def come_back(self) -> None:
        """The server is back, on the same port."""
        with self._lock:
            mode, self._mode = self._mode, "up"
        if mode == "refuse":
            self._listen()

    def reset_counts(self) -> None:
        """Forget what was done so far (between an export and the next)."""
        with self._lock:
            self.actions.clear()
            self.passed.clear()

    def close(self) -> None:
        """Stop listening, cut every connection and let go of the port."""
        self._stopping.set()
        self._unlisten()
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            _reset(client)
        self._keeper.close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- listening ----------------------------------------------------------------------

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.05)
        self._listener = listener
        self._acceptor = threading.Thread(
            target=self._accept, args=(listener,), name=f"faultproxy-{self.port}", daemon=True
        )
        self._acceptor.start()

    def _unlisten(self) -> None:
        listener, acceptor = self._listener, self._acceptor
        self._listener = self._acceptor = None
        if listener is not None:
            listener.close()
        if acceptor is not None and acceptor is not threading.current_thread():
            acceptor.join(5)

    def _accept(self, listener: socket.socket) -> None:
        while not self._stopping.is_set() and self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                mode = self._mode
                if mode in ("hangup", "close"):
                    self.actions[mode] += 1
            if mode in ("hangup", "close"):
                if mode == "hangup":
                    _reset(client)
                else:
                    client.close()
                continue
            client.settimeout(None)
            with self._lock:
                self._clients.add(client)
            threading.Thread(
                target=self._serve, args=(client,), daemon=True, name=f"faultproxy-{self.port}-conn"
            ).start()

    # -- one client connection ----------------------------------------------------------

    def _serve(self, client: socket.socket) -> None:
        upstream: http.client.HTTPConnection | None = None
        reader = client.makefile("rb")
        try:
            while not self._stopping.is_set():
                head = _read_head(reader)
                if head is None:
                    return
                method, target, headers = head
                length = int(headers.get("content-length", "0") or 0)
                if method != "POST":
                    # A read (the exporter asking whether the server forgot what it was sent):
                    # passed on as it is; faults, counts and ``passed`` are the events'.
                    upstream = self._read_through(
                        client,
                        upstream,
                        method,
                        target,
                        headers,
                        reader.read(length) if length else b"",
                    )
                    if upstream is None and self._mode != "up":
                        return
                    continue
                action = self._decide()
                if action == "reset_before":
                    reader.read(length // 2)
                    _reset(client)
                    return
                body = reader.read(length) if length else b""
                if action == "gone":
                    _reset(client)
                    return
                if action == "error":
                    status = self._choose((500, 502, 503, 504))
                    _answer(client, status, b"fault injected by the test proxy")
                    continue
                if action == "throttle":
                    _answer(
                        client, 429, b"slow down", {"Retry-After": str(self._faults.retry_after)}
                    )
                    continue
                if action == "slow" and self._choose((True, False)):
                    time.sleep(self._faults.hold)  # stalled: the server never sees it
                    _reset(client)
                    return
                if upstream is None:
                    upstream = http.client.HTTPConnection(*self._upstream, timeout=120)
                try:
                    status, reason, answer_headers, answer = _forward(
                        upstream, method, target, headers, body
                    )
                except (OSError, http.client.HTTPException):
                    upstream.close()
                    upstream = None
                    _answer(client, 502, b"upstream unavailable")
                    continue
                answered = action == "pass"
                with self._lock:
                    self.passed.append(Passed(body, status, answered))
                    gone = (
                        self._gone_after is not None
                        and sum(1 for p in self.passed if 200 <= p.status < 300) >= self._gone_after
                    )
                if action == "slow":
                    time.sleep(self._faults.hold)  # a slow answer, after the client gave up
                if action == "reset_after":
                    _reset(client)
                    return
                _answer(client, status, answer, answer_headers, reason=reason)
                if gone:
                    self._gone_after = None
                    self.go_away("refuse")
                    return
        except OSError:
            return
        finally:
            with self._lock:
                self._clients.discard(client)
            if upstream is not None:
                upstream.close()
            with contextlib.suppress(OSError):
                reader.close()
                client.close()

    def _read_through(
        self,
        client: socket.socket,
        upstream: http.client.HTTPConnection | None,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
    ) -> http.client.HTTPConnection | None:
        """Pass a read on to the server untouched (reset when the server is gone)."""
        with self._lock:
            up = self._mode == "up"
        if not up:
            _reset(client)
            return None
        if upstream is None:
            upstream = http.client.HTTPConnection(*self._upstream, timeout=120)
        try:
            status, reason, answer_headers, answer = _forward(
                upstream, method, target, headers, body
            )
        except (OSError, http.client.HTTPException):
            upstream.close()
            _answer(client, 502, b"upstream unavailable")
            return None
        with self._lock:
            self.reads.append(f"{method} {target}")
        _answer(client, status, answer, answer_headers, reason=reason)
        return upstream

    def _decide(self) -> str:
        with self._lock:
            if self._mode != "up":
                action = "gone"
            elif self._first:
                action = self._first.pop(0)
            else:
                action = self._faults.pick(self._rng.random())
            self.actions[action] += 1
            return action

    def _choose(self, options: tuple[object, ...]) -> object:
        with self._lock:
            return self._rng.choice(options)


def _read_head(reader: object) -> tuple[str, str, dict[str, str]] | None:
    """Request line and headers of the next request; None when the client closed."""
    readline = reader.readline  # type: ignore[attr-defined]
    line = readline(65537)
    while line in (b"\r\n", b"\n"):
        line = readline(65537)
    if not line:
        return None
    try:
        method, target, _version = line.decode("latin-1").split(" ", 2)
    except ValueError:
        return None  # not HTTP: hang up
    headers: dict[str, str] = {}
    while True:
        line = readline(65537)
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return method, target, headers


def _forward(
    upstream: http.client.HTTPConnection,
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
) -> tuple[int, str, dict[str, str], bytes]:
    sent = {k: v for k, v in headers.items() if k not in _HOP_BY_HOP}
    upstream.request(method, target, body=body, headers=sent)
    response = upstream.getresponse()
    data = response.read()
    kept = {k: v for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP}
    return response.status, response.reason, kept, data


def _answer(
    client: socket.socket,
    status: int,
    body: bytes,
    headers: dict[str, str] | None = None,
    *,
    reason: str | None = None,
) -> None:
    phrase = reason or http.client.responses.get(status, "")
    lines = [f"HTTP/1.1 {status} {phrase}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    lines += [f"Content-Length: {len(body)}", "Connection: keep-alive", "", ""]
    with contextlib.suppress(OSError):  # the client gave up (timeout) or was cut off
        client.sendall("\r\n".join(lines).encode("latin-1") + body)


def _reset(sock: socket.socket) -> None:
    """Close with a TCP RST rather than a FIN: the peer sees 'connection reset'.

    ``SHUT_RD`` wakes a thread blocked reading the socket without sending anything; the RST
    goes out when the last reference closes (the serving thread's, when it has one).
    """
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()
