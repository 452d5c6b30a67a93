"""httpx as the ``http`` destination's client, for hosts built on it: the host's
``httpx.AsyncClient``, or an ``httpx.Client`` / transport whose blocking calls run in worker
threads. The slowest path (docs/performance.md), kept for hosts that configured their proxies
and certificates on an httpx client. httpx's exceptions become ours (``poster.py``) here, once.

httpx is not a dependency of ours: a host that hands in an httpx client has it.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .poster import (
    BODY_LIMIT,
    Answer,
    BadCertificate,
    NoAnswer,
    TransportFailure,
    connection_failure,
    error_detail,
)

if TYPE_CHECKING:
    import httpx


class HttpxPoster:
    """The host's httpx client (or transport). An ``httpx.Client`` is blocking: each request
    runs in a worker thread, at most ``concurrency`` at once."""

    def __init__(
        self,
        client: httpx.Client | httpx.AsyncClient | httpx.BaseTransport | httpx.AsyncBaseTransport,
        *,
        verify: bool | Path,
        concurrency: int,
        timeout: float,
        user_agent: str,
    ) -> None:
        import httpx

        self._timeout = timeout
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

            self._threads = ThreadPoolExecutor(
                max_workers=self._concurrency, thread_name_prefix="httpx-post"
            )

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, once: bool = False
    ) -> Answer:
        """One POST through the host's client; never follows a redirect. httpx resends no
        request by itself: ``once`` holds as it is."""
        return await self._request("POST", url, headers, body)

    async def get(self, url: str, headers: Mapping[str, str], limit: int = BODY_LIMIT) -> Answer:
        """One GET through the host's client, as a POST goes (at most ``limit`` bytes read)."""
        return await self._request("GET", url, headers, None, limit)

    async def _request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None,
        limit: int = BODY_LIMIT,
    ) -> Answer:
        import httpx

        sent = {"User-Agent": self._user_agent, **headers}
        try:
            async with asyncio.timeout(self._timeout):
                return await self._send(method, url, body, sent, limit)
        except httpx.TimeoutException:
            raise TimeoutError from None
        except (
            httpx.ConnectError,
            httpx.ReadError,
            httpx.WriteError,
            httpx.RemoteProtocolError,
        ) as exc:
            untrusted = _certificate_refused(exc)
            if untrusted is not None:
                raise BadCertificate(untrusted) from None
            raise connection_failure(exc) or NoAnswer(error_detail(exc)) from None
        except httpx.HTTPError as exc:
            raise TransportFailure(error_detail(exc)) from None

    async def _send(
        self, method: str, url: str, body: bytes | None, headers: dict[str, str], limit: int
    ) -> Answer:
        import httpx

        if isinstance(self._client, httpx.AsyncClient):
            async with self._client.stream(
                method, url, content=body, headers=headers, follow_redirects=False
            ) as response:
                prefix = bytearray()
                async for chunk in response.aiter_bytes():
                    prefix += chunk
                    if len(prefix) >= limit:
                        break
                return _answer(response, bytes(prefix[:limit]))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._threads, self._blocking_send, method, url, body, headers, limit
        )

    def _blocking_send(
        self, method: str, url: str, body: bytes | None, headers: dict[str, str], limit: int
    ) -> Answer:
        import httpx

        assert isinstance(self._client, httpx.Client)
        with self._client.stream(
            method, url, content=body, headers=headers, follow_redirects=False
        ) as response:
            prefix = bytearray()
            for chunk in response.iter_bytes():
                prefix += chunk
                if len(prefix) >= limit:
                    break
            return _answer(response, bytes(prefix[:limit]))

    async def close(self) -> None:
        """Close what we wrapped around a host's transport; stop the worker threads."""
        import httpx

        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
        if isinstance(self._owned, httpx.AsyncClient):
            await self._owned.aclose()
        elif self._owned is not None:
            self._owned.close()


def _answer(response: httpx.Response, prefix: bytes) -> Answer:
    return Answer(
        response.status_code,
        response.reason_phrase or "",
        response.headers.get("Retry-After"),
        response.headers.get("Location"),
        prefix,
    )


def _certificate_refused(exc: BaseException) -> str | None:
    """Why the server's TLS certificate was refused, when that is why we could not connect."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return str(cause.verify_message or cause.reason or "not trusted")
        cause = cause.__cause__ or cause.__context__
    return None
