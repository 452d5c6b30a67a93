"""aiohttp as the ``http`` destination's client: ours on Windows (whose proactor loop cannot
watch libcurl's sockets), or the ``aiohttp.ClientSession`` a host hands in (its proxy,
certificates, headers). About two and a half times libcurl's CPU per request
(docs/performance.md). aiohttp's exceptions become ours (``poster.py``) here, once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...guards.proxy import environment_proxy
from .poster import (
    BODY_LIMIT,
    Answer,
    BadCertificate,
    NoAnswer,
    TransportFailure,
    connection_failure,
    error_detail,
    os_error_detail,
    ssl_context,
)

if TYPE_CHECKING:
    import aiohttp


class AiohttpPoster:
    """aiohttp: ours (a keep-alive pool sized to the concurrency), or the host's session."""

    def __init__(
        self,
        session: aiohttp.ClientSession | None,
        *,
        verify: bool | Path,
        concurrency: int,
        timeout: float,
        user_agent: str,
    ) -> None:
        self._session = session
        self._timeout = timeout
        self._owned = session is None
        self._ssl = ssl_context(verify)
        self._concurrency = concurrency
        self._user_agent = user_agent
        self._proxies: dict[str, str | None] = {}
        self._ours: dict[str, str] = {}
        """Headers we add to each request: our User-Agent, unless the host's session has one."""

    async def start(self) -> None:
        """Our session, made inside the event loop it will live on."""
        if self._session is not None and "User-Agent" not in self._session.headers:
            self._ours = {"User-Agent": self._user_agent}
        if self._session is None:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=self._concurrency, ssl=self._ssl)
            # trust_env would look the proxy (and ~/.netrc) up in a worker thread on every
            # request, a third of our CPU per event: the proxy is looked up once per URL.
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None),
                headers={"User-Agent": self._user_agent},
                trust_env=False,
            )

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, once: bool = False
    ) -> Answer:
        """One POST; the body prefix is read, the rest is never downloaded. aiohttp resends
        no POST by itself: ``once`` holds as it is."""
        return await self._request("POST", url, headers, body)

    async def get(self, url: str, headers: Mapping[str, str], limit: int = BODY_LIMIT) -> Answer:
        """One GET, as a POST goes (at most ``limit`` bytes of its answer read)."""
        return await self._request("GET", url, headers, None, limit)

    async def _request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None,
        limit: int = BODY_LIMIT,
    ) -> Answer:
        import aiohttp

        assert self._session is not None
        if url not in self._proxies:
            self._proxies[url] = environment_proxy(url) if self._owned else None
        try:
            async with (
                asyncio.timeout(self._timeout),
                self._session.request(
                    method,
                    url,
                    data=body,
                    headers={**headers, **self._ours} if self._ours else headers,
                    allow_redirects=False,
                    proxy=self._proxies[url],
                ) as response,
            ):
                prefix = await _read_prefix(response.content, limit)
                if not response.content.at_eof():
                    response.close()  # do not download the rest to reuse the connection
                return Answer(
                    response.status,
                    response.reason or "",
                    response.headers.get("Retry-After"),
                    response.headers.get("Location"),
                    prefix,
                )
        except aiohttp.ClientConnectorCertificateError as exc:
            raise BadCertificate(str(exc.certificate_error)) from None
        except aiohttp.ClientConnectorError as exc:
            raise connection_failure(exc.os_error) or NoAnswer(
                os_error_detail(exc.os_error)
            ) from None
        except aiohttp.ServerDisconnectedError:
            raise NoAnswer("the server closed the connection without answering") from None
        except aiohttp.ClientOSError as exc:
            raise NoAnswer(os_error_detail(exc)) from None
        except aiohttp.ClientError as exc:
            raise TransportFailure(error_detail(exc)) from None

    async def close(self) -> None:
        """Close our session (and let its connections go)."""
        if self._owned and self._session is not None:
            await self._session.close()
            self._session = None


async def _read_prefix(stream: aiohttp.StreamReader, limit: int) -> bytes:
    if stream.at_eof():  # an empty answer (Marquez's 201): nothing to wait for
        return b""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = await stream.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if stream.at_eof():
            break
    return b"".join(chunks)
