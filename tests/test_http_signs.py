"""A wrong address said in one line at its first sign (``deliver/http/signs.py``): every event
refused with 404, nothing listening, https:// to a plain http server; and a server's HTML page
never shown as a run's reason. Through run_export, with each client, against loopback servers."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from fakeserver import (
    Answer,
    FakeServer,
    fake_server_fixture,  # noqa: F401 - registers fake_server
    refused_port_fixture,  # noqa: F401 - registers refused_port
)
from helpers import WorkspaceMaker, run_record
from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_export.deliver.destination import Retry
from openlineage_export.deliver.http.poster import Answer as Got
from openlineage_export.deliver.http.signs import describe_answer, host_port, page_title
from openlineage_export.export import ExportRequest, run_export, run_export_async
from openlineage_export.export.report import ExportReport
from openlineage_export.guards.secrecy import Redactor

PAGE = (
    "<!DOCTYPE html>\n<html><head><title>Error 404 &amp; Not Found</title></head>\n"
    "<body><h2>HTTP ERROR 404</h2><pre>Not Found</pre><p>Powered by Jetty</p></body></html>"
)
"""What Marquez's admin port (Jetty) answers a POST to a path it does not serve."""


@pytest.fixture
def five_runs(ws: WorkspaceMaker) -> Path:
    ws.segment(
        "000001.jsonl",
        [run_record(f"run-{i}", pipeline="daily-sales") for i in range(3)]
        + [run_record(f"other-{i}", pipeline="never") for i in range(2)],
    )
    return ws.root


def configure(root: Path, **values: Any) -> None:
    (root / ".workspace" / "settings.json").write_text(
        json.dumps({f"openlineage.{k}": v for k, v in values.items()})
    )


def export(root: Path, environ: dict[str, str], client: str, said: list[Any]) -> ExportReport:
    """run_export through ``client``, every warning and retry kept in ``said`` in order."""
    kw: dict[str, Any] = {
        "workspace": root,
        "environ": environ,
        "on_warning": said.append,
        "on_retry": said.append,
    }
    if client == "curl":
        return run_export(ExportRequest(**kw))
    if client == "httpx":
        with httpx.Client(timeout=None, trust_env=False) as http:
            return run_export(ExportRequest(http=http, **kw))

    async def host() -> ExportReport:
        async with aiohttp.ClientSession() as session:
            return await run_export_async(ExportRequest(http=session, **kw))

    return asyncio.run(host())


def warnings(said: list[Any]) -> list[str]:
    return [line for line in said if isinstance(line, str)]


def test_every_event_refused_with_404_is_said_once_at_the_first_refusal(
    fake_server: FakeServer, five_runs: Path, environ: dict[str, str], client_kind: str
) -> None:
    fake_server.default = Answer(404, headers={"Content-Type": "text/html"}, body=PAGE)
    configure(five_runs, url=fake_server.url, concurrency=1)
    said: list[Any] = []
    report = export(five_runs, environ, client_kind, said)
    assert report.runs_failed == 5 and report.runs_sent == 0
    signs = [w for w in warnings(said) if "404" in w]
    assert len(signs) == 1, said
    assert signs[0].startswith("every event so far refused with 404 Not Found by ")
    assert "openlineage.url" in signs[0] and "openlineage.endpoint" in signs[0]
    assert signs[0] in report.warnings
    # The page is named by its title, never printed: no markup in any reason.
    reasons = {failed.reason for failed in report.failed}
    assert reasons == {"HTTP 404 Not Found: an HTML page: 'Error 404 & Not Found'"}


def test_a_404_after_an_accepted_event_is_no_sign_of_a_wrong_address(
    fake_server: FakeServer, five_runs: Path, environ: dict[str, str]
) -> None:
    answers = iter([Answer(201)] * 4 + [Answer(404)] * 100)
    fake_server.script(lambda req: next(answers))
    configure(five_runs, url=fake_server.url, concurrency=1)
    said: list[Any] = []
    report = export(five_runs, environ, "curl", said)
    assert report.runs_sent == 1 and report.runs_failed == 4
    assert not [w for w in warnings(said) if "404" in w], said


def test_a_url_that_ends_with_the_endpoint_is_said_before_sending_and_named_at_the_404(
    fake_server: FakeServer, five_runs: Path, environ: dict[str, str]
) -> None:
    fake_server.default = Answer(404)
    configure(five_runs, url=fake_server.url + "/api/v1/lineage", concurrency=1)
    said: list[Any] = []
    report = export(five_runs, environ, "curl", said)
    doubt, sign = warnings(said)
    assert doubt.startswith("openlineage.url already ends with the endpoint")
    assert f"set openlineage.url to {fake_server.url}" in doubt
    assert sign.startswith("every event so far refused with 404")
    assert "as warned, openlineage.url already ends with the endpoint" in sign
    assert report.warnings == [doubt, sign]
    assert {r.path for r in fake_server.requests} == {"/api/v1/lineage/api/v1/lineage"}


def test_https_to_a_plain_http_server_stops_at_once_without_retrying(
    fake_server: FakeServer, five_runs: Path, environ: dict[str, str], client_kind: str
) -> None:
    https = fake_server.url.replace("http://", "https://")
    configure(five_runs, url=https, concurrency=1, **{"retry.maxTime": 600})
    said: list[Any] = []
    report = export(five_runs, environ, client_kind, said)
    assert report.exit_code == 4 and report.outage is not None
    assert not [s for s in said if isinstance(s, Retry)], "a handshake that fails is not retried"
    assert report.outage.startswith(
        f"the server at 127.0.0.1:{fake_server.port} does not speak TLS"
    )
    assert f"use {fake_server.url}/api/v1/lineage" in report.outage
    assert "\n" not in report.outage and report.outage_explained
    assert report.runs_failed == 0  # every run stays pending


def test_nothing_listening_is_said_once_before_the_retries_go_on(
    refused_port: int, five_runs: Path, environ: dict[str, str], client_kind: str
) -> None:
    configure(
        five_runs, url=f"http://127.0.0.1:{refused_port}", concurrency=2, **{"retry.maxTime": 1}
    )
    said: list[Any] = []
    report = export(five_runs, environ, client_kind, said)
    assert report.exit_code == 4
    signs = [w for w in warnings(said) if w.startswith("nothing listens at")]
    assert signs == [
        f"nothing listens at 127.0.0.1:{refused_port}: is openlineage.url right, or is the server "
        "starting? (trying again for up to 1 s, openlineage.retry.maxTime)"
    ]
    assert said[0] == signs[0], "said at the first sign, before any retry"
    assert not report.warnings, "not kept: the summary says what came of it (the outage)"
    assert any(isinstance(s, Retry) for s in said), "a server may be starting: it is retried"


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (
            b"  <!-- x --> <HTML lang=en><title>\n Bad\x1b[31m   gateway </title>",
            "'Bad\\x1b[31m gateway'",  # repr: the escape shown, never acted on
        ),
        (b"\xef\xbb\xbf<!doctype html><p>no title", ""),
        (b"<html><title>" + b"x" * 200 + b"</title>", "'" + "x" * 80 + "...'"),
    ],
)
def test_an_html_page_is_named_by_its_title(body: bytes, shown: str) -> None:
    reason = describe_answer(Got(502, "Bad Gateway", None, None, body), Redactor())
    assert reason == "HTTP 502 Bad Gateway: an HTML page" + (f": {shown}" if shown else "")


def test_an_html_page_title_never_shows_the_key() -> None:
    key = "olx-SECRET-0123456789abcdef"
    body = f"<html><title>token {key} refused</title>".encode()
    reason = describe_answer(Got(401, "Unauthorized", None, None, body), Redactor(key))
    assert key not in reason and "an HTML page" in reason


def test_host_port_names_the_scheme_s_port() -> None:
    assert host_port("https://user:pw@example.com/x") == "example.com:443"
    assert host_port("http://[::1]:5000/x") == "[::1]:5000"
    assert host_port("http://example.com") == "example.com:80"


# -- a server's words: Unicode and bounded, at the seam (poster.Answer), whatever the client ---


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("Bad \xff\xfe Request", "Bad \ufffd\ufffd Request"),  # bytes that are no UTF-8
        ("Bad \xc3\xa4 Request", "Bad \xe4 Request"),  # UTF-8, read as such
        ("Refused \xe2\x80\xae", "Refused \u202e"),  # a bidi override: escaped when shown
    ],
)
def test_a_reason_phrase_of_any_bytes_is_unicode_and_the_run_recorded(
    fake_server: FakeServer,
    one_run: Path,
    environ: dict[str, str],
    client_kind: str,
    reason: str,
    expected: str,
) -> None:
    """Before: aiohttp reads a status line's bytes as ``surrogateescape`` does, and the lone
    surrogate in the run's reason could not be written to the ledger (a traceback)."""
    fake_server.script(lambda req: Answer(400, body="no", reason=reason))
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ, client_kind, [])
    assert report.exit_code == 1 and report.runs_failed == 1
    said = report.failed[0].reason
    if client_kind == "httpx" and not expected.isascii():
        assert said.startswith("HTTP 400") and said.isascii()  # httpx drops what is no ASCII
    else:
        assert said == f"HTTP 400 {expected}: no"
    assert not any("\ud800" <= c <= "\udfff" for c in said)


def test_a_reason_phrase_or_location_of_any_length_is_cut() -> None:
    redact = Redactor(None)
    long = Got(400, "R" * 99_000, None, None, b"")
    assert len(long.reason) <= 2048
    assert describe_answer(long, redact) == "HTTP 400 " + "R" * 200 + "..."
    moved = Got(301, "Moved", None, "http://elsewhere/" + "x" * 99_000, b"")
    assert len(describe_answer(moved, redact)) < 700


def test_a_surrogate_a_client_decoded_is_read_as_its_bytes() -> None:
    got = Got(400, "Bad \udcc3\udca4 \udcff", "\udcff", "http://h/\udcc3\udca4", b"")
    assert (got.reason, got.retry_after, got.location) == (
        "Bad \xe4 \ufffd",
        "\ufffd",
        "http://h/\xe4",
    )


OLD_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.I | re.S)
"""How the title was found before: quadratic in a body that repeats ``<title`` and never closes
one (half a second of CPU for each event refused with such a 64 KB page)."""


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"<title", b"<TiTle x>", b">", b"</title", b"</TITLE>", b"a", b"\xe4"]),
        max_size=12,
    ).map(b"".join)
)
def test_the_title_is_found_with_plain_searches_as_the_pattern_found_it(body: bytes) -> None:
    found = OLD_TITLE.search(body)
    assert page_title(body) == (found.group(1) if found else None)
