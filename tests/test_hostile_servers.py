"""Servers that are slow, hostile or say no to the key, and hosts that bring their own client.

Each case was seen to break a promise before the asyncio engine: a trickling answer held the
export forever, a cancel needed three presses, a 401 cost one request per run, ``Retry-After``
crashed or turned backoff off, a 100 MB error body was read whole.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from fakeserver import (
    Answer,
    FakeServer,
    fake_server_fixture,  # noqa: F401 - registers fake_server
)
from helpers import WorkspaceMaker, run_record
from test_deliver_http import KEY, configure, export, export_bounded

from openlineage_export.errors import ConfigError
from openlineage_export.export import ExportRequest, run_export_async
from openlineage_export.host.secret_files import FileStore


def test_a_trickling_answer_is_cut_at_the_deadline(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], client_kind: str
) -> None:
    # One byte every 1.5 s: each read is quick, the whole answer never comes in time.
    fake_server.script(lambda req: Answer(201, body="accepted" * 8, trickle=1.5))
    configure(one_run, url=fake_server.url, timeout=2, **{"retry.maxTime": 5})
    report = export_bounded(one_run, environ, limit=60, client=client_kind)
    assert report.runs_failed == 1 and report.exit_code == 1
    assert "within the timeout (2 s, openlineage.timeout)" in report.failed[0].reason


def test_a_cancel_stops_requests_in_flight(
    fake_server: FakeServer, demo: Path, environ: dict[str, str], client_kind: str
) -> None:
    fake_server.script(lambda req: Answer(201, body="x" * 100, trickle=1.5))
    configure(demo, url=fake_server.url, timeout=30, concurrency=4)
    cancel = threading.Event()
    threading.Thread(target=lambda: fake_server.wait_for(4) and cancel.set(), daemon=True).start()
    # Each answer would take 150 s: the export returns long before, without them.
    report = export_bounded(demo, environ, limit=120, cancel=cancel, client=client_kind)
    assert report.cancelled and report.exit_code == 130
    assert report.runs_failed == 0 and report.runs_sent == 0
    count = len(fake_server.requests)
    fake_server.stop()
    assert len(fake_server.requests) == count, "requests went on after the export returned"


@pytest.mark.parametrize("status", [401, 403])
def test_a_key_the_server_refuses_stops_the_export_as_a_configuration_error(
    fake_server: FakeServer, demo: Path, environ: dict[str, str], tmp_path: Path, status: int
) -> None:
    fake_server.script(
        lambda req: Answer(
            status, body={"error": "invalid token", "got": req.headers["authorization"]}
        )
    )
    store = FileStore(tmp_path / "secrets")
    store.set("marquez-prod", KEY)
    store.allow("marquez-prod", fake_server.url.rstrip("/"))
    configure(demo, url=fake_server.url, concurrency=2, **{"apiKey.secretRef": "marquez-prod"})
    with pytest.raises(ConfigError) as caught:
        export(demo, environ, secrets=store)
    message = str(caught.value)
    assert f"HTTP {status}" in message and "the secret 'marquez-prod'" in message
    assert "openlineage-export secrets set marquez-prod" in message and KEY not in message
    assert len(fake_server.requests) <= 5, "not one request per run of the 31"


def test_no_key_and_401_says_the_server_asks_for_one(
    fake_server: FakeServer, demo: Path, environ: dict[str, str]
) -> None:
    fake_server.script(lambda req: Answer(401))
    configure(demo, url=fake_server.url, concurrency=1)
    with pytest.raises(ConfigError, match="asks for an API key: store it with"):
        export(demo, environ)


def test_a_single_403_refuses_only_that_run(
    fake_server: FakeServer, environ: dict[str, str], ws: WorkspaceMaker
) -> None:
    ws.segment("000001.jsonl", [run_record(f"run-{i}") for i in range(6)])
    fake_server.script([Answer(403, body="not in this namespace")])
    configure(ws.root, url=fake_server.url, concurrency=1)
    report = export(ws.root, environ)
    assert (report.runs_failed, report.runs_sent) == (1, 5)
    assert "HTTP 403" in report.failed[0].reason


@pytest.mark.parametrize(
    "retry_after", ["²", "0", "-5", "1e9", formatdate(time.time() - 3600, usegmt=True)]
)
def test_retry_after_never_crashes_nor_shortens_the_backoff(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], retry_after: str
) -> None:
    fake_server.script(lambda req: Answer(503, headers={"Retry-After": retry_after}))
    configure(one_run, url=fake_server.url, concurrency=1, **{"retry.maxTime": 2})
    report = export_bounded(one_run, environ)
    assert report.runs_failed == 1 and "HTTP 503" in report.failed[0].reason
    # Backoff 0.25, 0.5, 1 s (with jitter, at least half of each): at most 6 tries in 2 s,
    # where a Retry-After of 0 once allowed hundreds. (A bound no busy machine can break: the
    # waits are at least that long; how many fit in 2 s on a slow one is not asserted.)
    assert 1 <= len(fake_server.requests) <= 6


def test_a_huge_answer_is_not_downloaded(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], client_kind: str
) -> None:
    fake_server.script(lambda req: Answer(400, huge=100 * 1024 * 1024))
    configure(one_run, url=fake_server.url)
    report = export_bounded(one_run, environ, client=client_kind)
    assert report.runs_failed == 1 and report.failed[0].reason.startswith("HTTP 400")
    assert len(report.failed[0].reason) < 600
    fake_server.stop()  # its sending thread has seen the connection closed
    # What the socket buffers held, not the 100 MB.
    assert fake_server.huge_bytes_sent < 16 * 1024 * 1024


# -- the host's own HTTP client --------------------------------------------------------------


def test_an_asyncio_host_hands_in_its_own_aiohttp_session(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str]
) -> None:
    configure(one_run, url=fake_server.url)

    async def host() -> Any:
        async with aiohttp.ClientSession(headers={"X-Editor": "lineage-hub/4"}) as session:
            report = await run_export_async(
                ExportRequest(workspace=one_run, environ=environ, http=session)
            )
            assert not session.closed, "the host's session is the host's to close"
            return report

    report = asyncio.run(host())
    assert report.exit_code == 0 and report.events_sent == 4
    assert {r.headers.get("x-editor") for r in fake_server.requests} == {"lineage-hub/4"}


def test_a_host_on_httpx_gets_the_slower_path(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str]
) -> None:
    configure(one_run, url=fake_server.url)

    async def host() -> Any:
        async with httpx.AsyncClient(headers={"X-Editor": "httpx-host"}) as client:
            return await run_export_async(
                ExportRequest(workspace=one_run, environ=environ, http=client)
            )

    report = asyncio.run(host())
    assert report.exit_code == 0 and report.events_sent == 4
    assert {r.headers.get("x-editor") for r in fake_server.requests} == {"httpx-host"}
    assert json.loads(fake_server.requests[0].body)["eventType"] == "START"
