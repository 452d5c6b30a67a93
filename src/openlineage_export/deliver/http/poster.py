"""The seam between the ``http`` destination and an HTTP client: what a request gives back.

A :class:`Poster` sends one request and returns its :class:`Answer`, or raises one of three
errors of ours (each client translates its own into these, once, in its module):

    NoAnswer           no answer at all: refused, reset, closed before an answer
    └── Refused        nothing listens at the address (the connection was refused)
    BadCertificate     the server's TLS certificate was not accepted
    NoTls              the TLS handshake failed on what was said, not on a certificate nor
                       a broken connection: the server speaks no TLS (an https:// url to a
                       plain http server) or none we share; no retry can change that
    TransportFailure   anything else on the way (an answer that cannot be decoded...)
    TimeoutError       (Python's own) the request outlasted its deadline, answer included

Only a bounded prefix of an answer's body is read (:data:`BODY_LIMIT`): a server that answers
with 100 MB costs us 64 KB. The clients: ``curl_client.py`` (ours, the default),
``aiohttp_client.py`` and ``httpx_client.py`` (a host's own); ``http_client.py`` picks one.
"""

from __future__ import annotations

import os
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ...errors import ConfigError

BODY_LIMIT = 64 * 1024
"""The most of an answer's body we read (what a refusal's reason needs, and more)."""


TEXT_LIMIT = 2048
"""The most characters of an answer's reason phrase, Retry-After or Location kept (libcurl
takes a header line of 100 KB, and a refusal's reason is kept in the ledger for every run)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A server's answer: its status, reason phrase, the headers we use, a prefix of its body.

    The seam where a server's words become our text: each is made Unicode (a client that
    reads a header's bytes as ``surrogateescape`` does, as aiohttp does, would hand over a
    lone surrogate that no ledger, output or terminal can take: a byte that is no UTF-8 is read
    as U+FFFD) and cut at :data:`TEXT_LIMIT`.
    """

    status: int
    reason: str
    retry_after: str | None
    location: str | None
    body: bytes

    def __post_init__(self) -> None:
        for name in ("reason", "retry_after", "location"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, server_text(value))


def server_text(text: str) -> str:
    """A server's ``text`` as Unicode (the bytes of a lone surrogate read as UTF-8, U+FFFD
    where they are none), at most :data:`TEXT_LIMIT` characters."""
    text = text[:TEXT_LIMIT]
    if text.isascii():
        return text
    data = text.encode("utf-8", "surrogateescape" if _escapes_only(text) else "replace")
    return data.decode("utf-8", "replace")


def _escapes_only(text: str) -> bool:
    """Whether every surrogate in ``text`` stands for a byte (``surrogateescape``'s)."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


class NoAnswer(Exception):
    """No answer at all: connection refused, reset or closed before an answer."""


class Refused(NoAnswer):
    """The connection was refused: nothing listens at the address (yet: a server may be
    starting)."""


class BadCertificate(Exception):
    """The server's TLS certificate was not accepted."""


class NoTls(Exception):
    """The TLS handshake failed, not for the certificate and not for a broken connection: what
    answered speaks no TLS (a plain http server addressed with https://), or none we share."""


class TransportFailure(Exception):
    """Some other failure on the way (an answer that cannot be decoded, a protocol error)."""


class Poster(Protocol):
    """Sends one request and returns the answer, or raises one of the errors above.

    Each request has the poster's deadline (answer included: :class:`TimeoutError` past it),
    reads at most :data:`BODY_LIMIT` bytes of the answer, never follows a redirect and goes
    through the proxy :func:`~.proxy.environment_proxy` names (a host's client: its own). A
    request whose task is cancelled is abandoned at once.
    """

    async def start(self) -> None:
        """Open what needs the event loop (once, before the first request)."""
        ...

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, once: bool = False
    ) -> Answer:
        """POST ``body`` to ``url``; ``once``: never sent twice, not even by the client itself
        on a kept-alive connection it finds dead (libcurl resends a request there when nothing
        came back: the server may have taken it, and one that keeps duplicates holds it twice)."""
        ...

    async def get(self, url: str, headers: Mapping[str, str], limit: int = BODY_LIMIT) -> Answer:
        """GET ``url`` (to read what a server holds: ``recall.py``, ``held.py``), reading at
        most ``limit`` bytes of the answer (a page of a read API has a bound of its own)."""
        ...

    async def close(self) -> None:
        """Close what this poster opened (a host's client is the host's to close)."""
        ...


def ssl_context(verify: bool | Path) -> ssl.SSLContext | bool:
    """What the clients take for TLS: the system's CAs (True), a CA bundle's, or no checks."""
    if isinstance(verify, bool):
        return verify
    try:
        return ssl.create_default_context(cafile=str(verify))
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise ConfigError(
            f"openlineage.tls.caBundle: {verify} holds no CA certificate we can "
            f"use ({getattr(exc, 'reason', None) or exc})"
        ) from None


def error_detail(exc: BaseException) -> str:
    """A client's exception in a few words: its message, else its type."""
    return str(exc) or type(exc).__name__


def os_error_detail(exc: OSError) -> str:
    """An operating system's error in a few words: ``connection refused``."""
    if isinstance(exc, socket.gaierror):
        return f"its host name cannot be resolved: {exc.strerror or exc}"
    if exc.errno is not None and exc.errno > 0:
        return os.strerror(exc.errno).lower()
    return error_detail(exc)


_BROKEN_HANDSHAKE = (
    ssl.SSLCertVerificationError,  # the clients say BadCertificate for it first
    ssl.SSLEOFError,
    ssl.SSLSyscallError,
    ssl.SSLZeroReturnError,
    ssl.SSLWantReadError,
    ssl.SSLWantWriteError,
)
"""Python's TLS errors that are a connection broken mid-handshake, not a handshake refused."""


def connection_failure(exc: BaseException) -> Exception | None:
    """What a client's failure to connect is, read from its chain of causes: :class:`NoTls`
    for a TLS handshake that failed on what was said, :class:`Refused` for a connection
    refused; None for neither (the client says :class:`NoAnswer` with its own words)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError) and not isinstance(cause, _BROKEN_HANDSHAKE):
            return NoTls(str(cause.reason or cause))
        if isinstance(cause, ConnectionRefusedError):
            return Refused(os_error_detail(cause))
        cause = cause.__cause__ or cause.__context__
    return None
