"""One libcurl transfer (an easy handle) and what it received, and libcurl's failures as ours
(``poster.py``): the parts of the curl client that know nothing of the event loop."""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Mapping
from errno import ECONNREFUSED

import pycurl

from ...files import named
from .poster import BODY_LIMIT, Answer, BadCertificate, NoAnswer, NoTls, Refused, TransportFailure

_TIMEOUT = frozenset({pycurl.E_OPERATION_TIMEDOUT})
_CERTIFICATE = frozenset(
    {
        pycurl.E_PEER_FAILED_VERIFICATION,
        pycurl.E_SSL_CACERT_BADFILE,
        getattr(pycurl, "E_SSL_PINNEDPUBKEYNOTMATCH", -1),
    }
)
_NO_ANSWER = frozenset(
    {
        pycurl.E_COULDNT_CONNECT,
        pycurl.E_COULDNT_RESOLVE_HOST,
        pycurl.E_COULDNT_RESOLVE_PROXY,
        pycurl.E_GOT_NOTHING,
        pycurl.E_SEND_ERROR,
        pycurl.E_RECV_ERROR,
        pycurl.E_SSL_CONNECT_ERROR,
    }
)


class Transfer:
    """One easy handle and what its current request has received so far."""

    __slots__ = (
        "body",
        "curl",
        "done",
        "fresh",
        "get",
        "header_lines",
        "headers",
        "limit",
        "overflow",
        "size",
        "url",
    )

    def __init__(self, curl: pycurl.Curl) -> None:
        self.curl = curl
        self.url: str | None = None
        self.headers: Mapping[str, str] | None = None
        self.done: asyncio.Future[int] | None = None
        self.body: list[bytes] = []
        self.size = 0
        self.overflow = False
        self.fresh = False
        """Set up for a new connection (a POST that must never be sent twice)."""
        self.limit = BODY_LIMIT
        """The most of this request's answer body kept (a read API's page: more)."""
        self.get = False
        """Set up for a GET (``recall.py``'s questions), not a POST."""
        self.header_lines: list[bytes] = []
        """The answer's header lines as they came (``list.append`` is the callback: no Python
        frame per line); read only when the answer is not a success."""

    def on_body(self, chunk: bytes) -> int | None:
        """libcurl's write callback: keep a prefix; past the limit, abort the transfer."""
        room = self.limit - self.size
        if room > 0:
            self.body.append(chunk[:room])
            self.size += min(room, len(chunk))
        if self.size >= self.limit:
            self.overflow = True
            return 0  # fewer bytes than given: libcurl stops with CURLE_WRITE_ERROR
        return None

    def answer(self, status: int) -> Answer:
        """The answer; its reason phrase, Retry-After and Location only when they may matter
        (not for a success)."""
        body = b"".join(self.body) if self.body else b""
        if 200 <= status < 300:
            return Answer(status, "", None, None, body)
        reason = ""
        retry_after = location = None
        for line in self.header_lines:
            if line.startswith(b"HTTP/"):
                # A new answer (after a 100 Continue, or a proxy's): forget the last one's.
                parts = line.split(None, 2)
                reason = parts[2].decode("utf-8", "replace").strip() if len(parts) > 2 else ""
                retry_after = location = None
                continue
            name, sep, value = line.partition(b":")
            if sep:
                lowered = name.strip().lower()
                if lowered == b"retry-after":
                    retry_after = value.decode("utf-8", "replace").strip()
                elif lowered == b"location":
                    location = value.decode("utf-8", "replace").strip()
        return Answer(status, reason, retry_after, location, body)


def system_cas(curl: pycurl.Curl) -> None:
    """The CAs Python's ``ssl`` trusts here (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` included):
    the wheel's libcurl was built elsewhere and would look in that system's places."""
    paths = ssl.get_default_verify_paths()
    if paths.cafile and named.kind_at(paths.cafile) is not None:
        curl.setopt(pycurl.CAINFO, paths.cafile)
    if paths.capath and named.kind_at(paths.capath) == "folder":
        curl.setopt(pycurl.CAPATH, paths.capath)


def curl_error(code: int, curl: pycurl.Curl) -> Exception:
    """libcurl's failure as one of ours (a deadline as :class:`TimeoutError`)."""
    # Raw: libcurl may quote the server's own bytes (a Transfer-Encoding it does not know),
    # which need not be UTF-8; errstr() would fail decoding them.
    message = curl.errstr_raw().decode("utf-8", "replace") or f"libcurl error {code}"
    if code in _TIMEOUT:
        return TimeoutError()
    if code in _CERTIFICATE:
        return BadCertificate(message)
    errno = curl.getinfo(pycurl.OS_ERRNO)
    if code == pycurl.E_SSL_CONNECT_ERROR and errno <= 0:
        # The handshake failed on what the server said (a plain http server's answer read as
        # TLS: OpenSSL's "wrong version number"), not on a broken connection: no retry helps.
        return NoTls(message)
    if code == pycurl.E_COULDNT_CONNECT and errno == ECONNREFUSED:
        return Refused(os.strerror(errno).lower())
    if code in _NO_ANSWER:
        if code == pycurl.E_COULDNT_RESOLVE_HOST:
            return NoAnswer(f"its host name cannot be resolved: {message}")
        if errno > 0 and code in (
            pycurl.E_COULDNT_CONNECT,
            pycurl.E_SEND_ERROR,
            pycurl.E_RECV_ERROR,
        ):
            return NoAnswer(os.strerror(errno).lower())
        if code == pycurl.E_GOT_NOTHING:
            return NoAnswer("the server closed the connection without answering")
        return NoAnswer(message)
    return TransportFailure(message)
