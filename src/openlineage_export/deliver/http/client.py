"""Which HTTP client the ``http`` destination posts through, for what the host handed in.

- nothing: ours, ``CurlPoster`` (``curl_client.py``): libcurl's multi interface on the
  engine's event loop. Measured for this workload (one small POST per event, keep-alive, tens
  of requests in flight) it spends a fraction of aiohttp's CPU per request
  (docs/performance.md). On Windows, whose proactor loop cannot watch libcurl's sockets, aiohttp.
- an ``aiohttp.ClientSession``: ``AiohttpPoster`` (``aiohttp_client.py``) on it.
- an httpx client or transport: ``HttpxPoster`` (``httpx_client.py``), the slowest path.

Each is a :class:`~.poster.Poster`; a client module is imported only when it is chosen.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from .poster import Poster

_HTTPX_CLIENTS = ("Client", "AsyncClient", "BaseTransport", "AsyncBaseTransport")


def poster_for(
    host_http: Any, *, verify: bool | Path, concurrency: int, timeout: float, user_agent: str
) -> Poster:
    """The poster for what the host handed in: nothing (ours), an aiohttp session, or httpx;
    each request's deadline is ``timeout`` seconds, the answer included."""
    if host_http is None and sys.platform != "win32":
        from .curl_client import CurlPoster

        return CurlPoster(
            verify=verify, concurrency=concurrency, timeout=timeout, user_agent=user_agent
        )
    if host_http is None or _instance_of(host_http, "aiohttp", "ClientSession"):
        from .aiohttp_client import AiohttpPoster

        return AiohttpPoster(
            host_http,
            verify=verify,
            concurrency=concurrency,
            timeout=timeout,
            user_agent=user_agent,
        )
    if _instance_of(host_http, "httpx", *_HTTPX_CLIENTS):
        from .httpx_client import HttpxPoster

        return HttpxPoster(
            host_http,
            verify=verify,
            concurrency=concurrency,
            timeout=timeout,
            user_agent=user_agent,
        )
    raise ConfigError(
        f"the host's HTTP client must be an aiohttp.ClientSession, an httpx "
        f"client or an httpx transport, not {type(host_http).__name__}"
    )


def _instance_of(value: object, module: str, *names: str) -> bool:
    """Whether ``value`` is one of ``module``'s classes ``names``; never imports ``module``
    (an object of its classes means it is imported already)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, tuple(getattr(loaded, n) for n in names))
