"""The HTTP clients the ``http`` destination posts through, behind one small interface.

- :class:`AiohttpPoster`, the default: aiohttp on the engine's event loop. Measured for this
  workload (one small POST per event, keep-alive, tens of requests in flight) it spends about a
  tenth of the CPU per request of a shared threaded ``httpx.Client`` (see docs/performance.md).
  A host may hand in its own ``aiohttp.ClientSession`` (proxy, certificates, headers).
- :class:`HttpxPoster`, the slower path for hosts built on httpx: an ``httpx.AsyncClient``, or
  an ``httpx.Client`` / transport whose blocking calls run in worker threads.

The proxy of a request is :func:`environment_proxy`'s answer (``proxy.py``; importable from
here too), the same one the rules for keys check.

Each client's exceptions are translated here, once, into three of ours (:class:`NoAnswer`,
:class:`BadCertificate`, :class:`TransportFailure`); a deadline is the caller's
(``asyncio.timeout``). Only a bounded prefix of any answer's body is read: a server that
answers with 100 MB costs us :data:`BODY_LIMIT` bytes.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigError
from .proxy import environment_proxy

if TYPE_CHECKING:
    import aiohttp
    import httpx

BODY_LIMIT = 64 * 1024
"""The most of an answer's body we read (what a refusal's reason needs, and more)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A server's answer: its status, reason phrase, the headers we use, a prefix of its body."""

    status: int
    reason: str
    retry_after: str | None
    location: str | None
    body: bytes


class NoAnswer(Exception):
    """No answer at all: connection refused, reset or closed before an answer."""


class BadCertificate(Exception):
    """The server's TLS certificate was not accepted."""


class TransportFailure(Exception):
    """Some other failure on the way (an answer that cannot be decoded, a protocol error)."""


class Poster(Protocol):
    """Posts one body and returns the answer, or raises one of the three errors above."""

    async def start(self) -> None:
        """Open what needs the event loop."""
        ...

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        """POST ``body``; never follows a redirect."""
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
        raise ConfigError(f"openlineage.tls.caBundle: {verify} holds no CA certificate we can "
                          f"use ({getattr(exc, 'reason', None) or exc})") from None


def poster_for(host_http: Any, *, verify: bool | Path, concurrency: int,
               user_agent: str) -> Poster:
    """The poster for what the host handed in: nothing (ours), an aiohttp session, or httpx."""
    if host_http is None:
        return AiohttpPoster(None, verify=verify, concurrency=concurrency, user_agent=user_agent)
    module = type(host_http).__module__
    if module.startswith("aiohttp"):
        return AiohttpPoster(host_http, verify=verify, concurrency=concurrency,
                             user_agent=user_agent)
    if module.startswith("httpx"):
        return HttpxPoster(host_http, verify=verify, concurrency=concurrency,
                           user_agent=user_agent)
    raise ConfigError(f"the host's HTTP client must be an aiohttp.ClientSession, an httpx "
                      f"client or an httpx transport, not {type(host_http).__name__}")


class AiohttpPoster:
    """aiohttp: ours (a keep-alive pool sized to the concurrency), or the host's session."""

    def __init__(self, session: aiohttp.ClientSession | None, *, verify: bool | Path,
                 concurrency: int, user_agent: str) -> None:
        self._session = session
        self._owned = session is None
        self._ssl = ssl_context(verify)
        self._concurrency = concurrency
        self._user_agent = user_agent
        self._proxies: dict[str, str | None] = {}

    async def start(self) -> None:
        """Our session, made inside the event loop it will live on."""
        if self._session is None:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=self._concurrency, ssl=self._ssl)
            # trust_env would look the proxy (and ~/.netrc) up in a worker thread on every
            # request, a third of our CPU per event: the proxy is looked up once per URL.
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=None),
                headers={"User-Agent": self._user_agent}, trust_env=False)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        """One POST; the body prefix is read, the rest is never downloaded."""
        import aiohttp

        assert self._session is not None
        if url not in self._proxies:
            self._proxies[url] = environment_proxy(url) if self._owned else None
        try:
            async with self._session.post(url, data=body, headers=headers,
                                          allow_redirects=False,
                                          proxy=self._proxies[url]) as response:
                prefix = await _read_prefix(response.content)
                if not response.content.at_eof():
                    response.close()  # do not download the rest to reuse the connection
                return Answer(response.status, response.reason or "",
                              response.headers.get("Retry-After"),
                              response.headers.get("Location"), prefix)
        except aiohttp.ClientConnectorCertificateError as exc:
            raise BadCertificate(str(exc.certificate_error)) from None
        except aiohttp.ClientConnectorError as exc:
            raise NoAnswer(_os_detail(exc.os_error)) from None
        except aiohttp.ServerDisconnectedError:
            raise NoAnswer("the server closed the connection without answering") from None
        except aiohttp.ClientOSError as exc:
            raise NoAnswer(_os_detail(exc)) from None
        except aiohttp.ClientError as exc:
            raise TransportFailure(_detail(exc)) from None

    async def close(self) -> None:
        """Close our session (and let its connections go)."""
        if self._owned and self._session is not None:
            await self._session.close()
            self._session = None


async def _read_prefix(stream: aiohttp.StreamReader) -> bytes:
    if stream.at_eof():  # an empty answer (Marquez's 201): nothing to wait for
        return b""
    chunks: list[bytes] = []
    size = 0
    while size < BODY_LIMIT:
        chunk = await stream.read(BODY_LIMIT - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if stream.at_eof():
            break
    return b"".join(chunks)


class HttpxPoster:
    """The host's httpx client (or transport). An ``httpx.Client`` is blocking: each POST runs
    in a worker thread, at most ``concurrency`` at once; the slower path, kept for hosts that
    configured their proxies and certificates on an httpx client."""

    def __init__(self, client: httpx.Client | httpx.AsyncClient | httpx.BaseTransport
                 | httpx.AsyncBaseTransport, *, verify: bool | Path, concurrency: int,
                 user_agent: str) -> None:
        import httpx

        self._owned: httpx.Client | httpx.AsyncClient | None = None
        if isinstance(client, httpx.BaseTransport):
            client = self._owned = httpx.Client(transport=client)
        elif isinstance(client, httpx.AsyncBaseTransport):
            client = self._owned = httpx.AsyncClient(transport=client)
        self._client: httpx.Client | httpx.AsyncClient = client
        self._user_agent = user_agent
        self._threads: Any = None
        self._concurrency = concurrency

    async def start(self) -> None:
        """Nothing to open: the client is the host's."""
        import httpx

        if isinstance(self._client, httpx.Client):
            from concurrent.futures import ThreadPoolExecutor

            self._threads = ThreadPoolExecutor(max_workers=self._concurrency,
                                               thread_name_prefix="httpx-post")

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        """One POST through the host's client; never follows a redirect."""
        import httpx

        sent = {"User-Agent": self._user_agent, **headers}
        try:
            if isinstance(self._client, httpx.AsyncClient):
                async with self._client.stream("POST", url, content=body, headers=sent,
                                               follow_redirects=False) as response:
                    prefix = bytearray()
                    async for chunk in response.aiter_bytes():
                        prefix += chunk
                        if len(prefix) >= BODY_LIMIT:
                            break
                    return _httpx_answer(response, bytes(prefix[:BODY_LIMIT]))
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._threads, self._blocking_post, url, body,
                                              sent)
        except httpx.TimeoutException:
            raise TimeoutError from None
        except (httpx.ConnectError, httpx.ReadError, httpx.WriteError,
                httpx.RemoteProtocolError) as exc:
            untrusted = _certificate_refused(exc)
            if untrusted is not None:
                raise BadCertificate(untrusted) from None
            raise NoAnswer(_detail(exc)) from None
        except httpx.HTTPError as exc:
            raise TransportFailure(_detail(exc)) from None

    def _blocking_post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        import httpx

        assert isinstance(self._client, httpx.Client)
        with self._client.stream("POST", url, content=body, headers=headers,
                                 follow_redirects=False) as response:
            prefix = bytearray()
            for chunk in response.iter_bytes():
                prefix += chunk
                if len(prefix) >= BODY_LIMIT:
                    break
            return _httpx_answer(response, bytes(prefix[:BODY_LIMIT]))

    async def close(self) -> None:
        """Close what we wrapped around a host's transport; stop the worker threads."""
        import httpx

        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
        if isinstance(self._owned, httpx.AsyncClient):
            await self._owned.aclose()
        elif self._owned is not None:
            self._owned.close()


def _httpx_answer(response: httpx.Response, prefix: bytes) -> Answer:
    return Answer(response.status_code, response.reason_phrase or "",
                  response.headers.get("Retry-After"), response.headers.get("Location"), prefix)


def _certificate_refused(exc: BaseException) -> str | None:
    """Why the server's TLS certificate was refused, when that is why we could not connect."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return str(cause.verify_message or cause.reason or "not trusted")
        cause = cause.__cause__ or cause.__context__
    return None


def _detail(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _os_detail(exc: OSError) -> str:
    """An operating system's error in a few words: ``connection refused``."""
    if isinstance(exc, socket.gaierror):
        return f"its host name cannot be resolved: {exc.strerror or exc}"
    if exc.errno is not None and exc.errno > 0:
        return os.strerror(exc.errno).lower()
    return _detail(exc)
