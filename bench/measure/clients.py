"""The HTTP clients alone: the same prebuilt bodies POSTed, nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import Timer, measurement


def _bodies(events: str, count: int) -> list[bytes]:
    lines = [line for line in Path(events).read_bytes().splitlines() if line]
    return [lines[i % len(lines)] for i in range(count)]


@measurement
def bare_posts(
    client: str, url: str, events: str, requests: int, concurrency: int
) -> dict[str, Any]:
    """One HTTP client alone: ``requests`` POSTs of our dry run's events (prebuilt), at most
    ``concurrency`` in flight, nothing else (no reading, no engine, no ledger).

    ``curl``, ``aiohttp``, ``httpx``: our posters (deliver/), each from ``concurrency`` asyncio
    workers; ``curl-loop``: pycurl's multi interface in a plain loop (no asyncio: libcurl's
    floor); ``pyreqwest``: pyreqwest's async client (if installed)."""
    import asyncio

    bodies = _bodies(events, requests)
    headers = {"Content-Type": "application/json"}
    if client == "curl-loop":
        return _curl_loop(url, bodies, concurrency)

    async def main() -> dict[str, Any]:
        post: Any
        closing: Any = None
        if client == "pyreqwest":
            from pyreqwest.client import ClientBuilder

            http = ClientBuilder().max_connections(concurrency).build()

            async def post(body: bytes) -> int:
                response = (
                    await http.post(url)
                    .body_bytes(body)
                    .header("Content-Type", "application/json")
                    .build()
                    .send()
                )
                return int(response.status)

            closing = http.close
        else:
            from openlineage_export.deliver.http.aiohttp_client import AiohttpPoster
            from openlineage_export.deliver.http.httpx_client import HttpxPoster

            poster: Any
            if client == "curl":
                from openlineage_export.deliver.http.curl_client import CurlPoster

                poster = CurlPoster(
                    verify=True, concurrency=concurrency, timeout=30, user_agent="bench/1"
                )
            elif client == "aiohttp":
                poster = AiohttpPoster(
                    None, verify=True, concurrency=concurrency, timeout=30, user_agent="bench/1"
                )
            else:
                import httpx

                limits = httpx.Limits(max_connections=concurrency)
                poster = HttpxPoster(
                    httpx.AsyncClient(limits=limits, timeout=30),
                    verify=True,
                    concurrency=concurrency,
                    timeout=30,
                    user_agent="bench/1",
                )
            await poster.start()

            async def post(body: bytes) -> int:
                return int((await poster.post(url, body, headers)).status)

            closing = poster.close
        queue = iter(bodies)
        failed = 0

        async def worker() -> None:
            nonlocal failed
            for body in queue:
                if not 200 <= await post(body) < 300:
                    failed += 1

        with Timer() as timer:
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        result = closing()
        if asyncio.iscoroutine(result):
            await result
        return {
            "events": len(bodies),
            "failed": failed,
            "wall_s": timer.wall_s,
            "cpu_s": timer.cpu_s,
        }

    return asyncio.run(main())


def _curl_loop(url: str, bodies: list[bytes], concurrency: int) -> dict[str, Any]:
    import pycurl

    multi = pycurl.CurlMulti()
    idle = []
    for _ in range(concurrency):
        curl = pycurl.Curl()
        curl.setopt(pycurl.URL, url)
        curl.setopt(pycurl.POST, 1)
        curl.setopt(pycurl.HTTPHEADER, ["Content-Type: application/json", "Expect:"])
        curl.setopt(pycurl.WRITEFUNCTION, lambda chunk: None)
        idle.append(curl)
    queue = iter(bodies)
    done = failed = 0
    with Timer() as timer:
        for curl, body in zip(idle, queue, strict=False):
            curl.setopt(pycurl.POSTFIELDS, body)
            multi.add_handle(curl)
        while done < len(bodies):
            multi.select(1.0)
            while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
                pass
            while True:
                queued, ok, errors = multi.info_read()
                for curl in [*ok, *(e[0] for e in errors)]:
                    multi.remove_handle(curl)
                    done += 1
                    failed += curl.getinfo(pycurl.RESPONSE_CODE) // 100 != 2
                    body = next(queue, None)
                    if body is not None:
                        curl.setopt(pycurl.POSTFIELDS, body)
                        multi.add_handle(curl)
                if not queued:
                    break
    return {"events": len(bodies), "failed": failed, "wall_s": timer.wall_s, "cpu_s": timer.cpu_s}
