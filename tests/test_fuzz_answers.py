"""Hostile server answers: whatever bytes a server writes back, our client gives an answer or
one of our errors, never another exception; the reason a refused run shows is one bounded
line with the key masked; the server-forgot check reads it as Marquez's answer or as none.

A raw TCP server on loopback writes each drawn answer byte for byte (status lines, headers,
bodies, chunked and compressed bodies that lie, answers cut short), to the real libcurl client
the export uses (``CurlPoster``) and to aiohttp's (a host's session: it reads a status line's
and headers' bytes as ``surrogateescape`` does); the parsers of what comes back (``http._describe``,
``http._says_client_error``, ``recall``'s readers, ``retry.retry_after_seconds``) see it as
the export would.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, cli_command, cli_env, run_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openlineage_export.deliver.http import recall
from openlineage_export.deliver.http.aiohttp_client import AiohttpPoster
from openlineage_export.deliver.http.batches import read_answer
from openlineage_export.deliver.http.curl_client import CurlPoster
from openlineage_export.deliver.http.destination import (
    HttpConfig,
    HttpDestination,
    _says_client_error,
)
from openlineage_export.deliver.http.poster import (
    BODY_LIMIT,
    TEXT_LIMIT,
    Answer,
    BadCertificate,
    NoAnswer,
    TransportFailure,
)
from openlineage_export.deliver.http.signs import PHRASE_LIMIT, REASON_LIMIT
from openlineage_export.deliver.retry import retry_after_seconds

KEY = "olx-SECRET-answers-0123456789"
FUZZ = settings(
    max_examples=int(__import__("os").environ.get("OLX_FUZZ_EXAMPLES", "120")),
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


class RawServer:
    """Answers each connection with the bytes of :attr:`answer`, then closes it."""

    def __init__(self) -> None:
        self.answer = b""
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(5)
                try:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = connection.recv(65536)
                        if not chunk:
                            break
                        request += chunk
                    connection.sendall(self.answer)
                    connection.shutdown(socket.SHUT_WR)
                    connection.recv(65536)  # until the client lets go
                except OSError:
                    continue

    def close(self) -> None:
        self._socket.close()


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.close()


token = st.sampled_from(
    [
        b"",
        b" ",
        b"\t",
        b":",
        b"\r\n",
        b"\n",
        b"\x00",
        b"\xff",
        b"\xc3\xa9",
        b"\xed\xb3\xbf",  # a lone surrogate, as UTF-8 would write it (it does not)
        b"\xe2\x80\xae",  # RIGHT-TO-LEFT OVERRIDE
        b"\xc2\x9b",
        b"\x9b",
        b"chunked",
        b"gzip",
        b"0",
        b"-1",
        b"99999999999999999999",
        b"Sun, 06 Nov 1994 08:49:37 GMT",
        b"Fri, 31 Dec 9999 23:59:59 GMT",
        b"http://other.example/",
        b"{",
        b"}",
        b'"code"',
        b"404",
        b"400",
        KEY.encode(),
        b"%s" % KEY.encode().hex().encode(),
    ]
)
text = st.lists(st.one_of(token, st.binary(max_size=8)), max_size=8).map(b"".join)
header_name = st.sampled_from(
    [
        b"Content-Length",
        b"Transfer-Encoding",
        b"Content-Encoding",
        b"Retry-After",
        b"Location",
        b"Content-Type",
        b"Connection",
        b"X-" + b"a" * 300,
        b"",
        b" Bad",
        b"HTTP/1.1 200 OK",
    ]
)
body = st.one_of(
    text,
    st.builds(lambda n: b'{"code": %d, "message": "x"}' % n, st.integers(-(10**20), 10**20)),
    st.just(b'{"name": "test-ws", "isHidden": true}'),
    st.just(b"[1, 2, 3]"),
    st.just(b'"\\ud800"'),
    st.integers(BODY_LIMIT - 10, BODY_LIMIT * 3).map(lambda n: b"x" * n),
)


@st.composite
def raw_answer(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(well_formed_answer())
    version = draw(st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2", b"HTTP/1.1", b"ICY", b""]))
    status = draw(st.one_of(st.integers(0, 999).map(lambda n: str(n).encode()), text))
    reason = draw(text)
    lines = [version + b" " + status + b" " + reason]
    for name, value in draw(st.lists(st.tuples(header_name, text), max_size=6)):
        lines.append(name + b": " + value)
    if draw(st.booleans()):
        lines.insert(0, b"HTTP/1.1 100 Continue\r\n")
    head = b"\r\n".join(lines) + b"\r\n\r\n"
    content = draw(body)
    cut = draw(st.one_of(st.none(), st.integers(0, len(head) + len(content))))
    whole = head + content
    return whole if cut is None else whole[:cut]


@st.composite
def well_formed_answer(draw: st.DrawFn) -> bytes:
    """An answer every client reads whole, whose words (reason phrase, Location, Retry-After,
    the body) are any bytes: what reaches the seam where they become our text."""
    status = draw(st.sampled_from([400, 404, 409, 422, 500, 503, 301, 302, 429]))
    content = draw(text | st.binary(max_size=200))
    headers = [b"Content-Length: %d" % len(content)]
    for name in draw(st.lists(st.sampled_from([b"Location", b"Retry-After"]), max_size=2)):
        headers.append(name + b": " + draw(text).replace(b"\r", b"").replace(b"\n", b""))
    reason = draw(text).replace(b"\r", b"").replace(b"\n", b"")
    return (
        b"HTTP/1.1 %d " % status + reason + b"\r\n" + b"\r\n".join(headers) + b"\r\n\r\n" + content
    )


async def _ask(port: int, get: bool, client: str = "curl") -> Answer | BaseException:
    poster: CurlPoster | AiohttpPoster = (
        CurlPoster(verify=True, concurrency=1, timeout=5.0, user_agent="fuzz")
        if client == "curl"
        else AiohttpPoster(None, verify=True, concurrency=1, timeout=5.0, user_agent="fuzz")
    )
    await poster.start()
    try:
        url = f"http://127.0.0.1:{port}/api/v1/lineage"
        if get:
            return await poster.get(url, {})
        return await poster.post(url, b"{}", {"Content-Type": "application/json"})
    except (NoAnswer, BadCertificate, TransportFailure, TimeoutError) as exc:
        return exc
    finally:
        await poster.close()


@FUZZ
@given(answer=raw_answer(), get=st.booleans(), client=st.sampled_from(["curl", "aiohttp"]))
def test_any_answer_is_an_answer_or_one_of_our_errors_and_reads_as_one_line(
    raw: RawServer, answer: bytes, get: bool, client: str
) -> None:
    raw.answer = answer
    started = time.monotonic()
    got = asyncio.run(_ask(raw.port, get, client))
    assert time.monotonic() - started < 30
    if isinstance(got, BaseException):
        assert "\n" not in str(got)
        return
    assert isinstance(got.status, int) and len(got.body) <= BODY_LIMIT
    # The server's words are Unicode (aiohttp reads their bytes as surrogateescape does: the
    # seam reads those back as UTF-8) and bounded, whatever the client.
    for words in (got.reason, got.retry_after or "", got.location or ""):
        words.encode("utf-8")
        assert len(words) <= TEXT_LIMIT
    destination = HttpDestination(HttpConfig("http://127.0.0.1:1/api/v1/lineage", api_key=KEY))
    reason = destination.describe(got)
    reason.encode("utf-8")  # no lone surrogate: the ledger and every output can take it
    assert "\n" not in reason and "\r" not in reason
    assert KEY not in reason
    assert len(reason) <= REASON_LIMIT + 3 + PHRASE_LIMIT + 3 + 20  # each part of it is cut
    # Each reading of an answer takes any answer, and tells only of the statuses it knows.
    assert not _says_client_error(got) or got.status == 500
    assert recall._gone(got) in {200: (False,), 404: (True, None)}.get(got.status, (None,))
    assert recall._namespace_gone(got) is None or got.status in (200, 404)
    asked = retry_after_seconds(got.retry_after, time.time())
    assert asked is None or 0 <= asked < float("inf")


@settings(max_examples=300, deadline=None, database=None)
@given(
    value=st.one_of(st.none(), st.text(max_size=40), text.map(lambda b: b.decode("latin-1"))),
    now=st.floats(0, 4e9),
)
def test_any_retry_after_asks_for_a_finite_wait_or_nothing(value: str | None, now: float) -> None:
    asked = retry_after_seconds(value, now)
    assert asked is None or (0 <= asked < float("inf") and asked == asked)


@FUZZ
@given(content=body, status=st.sampled_from([200, 404, 500, 401]))
def test_the_forgot_check_reads_any_body_as_marquez_or_as_none(content: bytes, status: int) -> None:
    answer = Answer(status, "", None, None, content[:BODY_LIMIT])
    gone = recall._gone(answer)
    if status not in (200, 404):
        assert gone is None
    assert recall._namespace_gone(answer) in (True, False, None)


def test_a_header_libcurl_quotes_in_its_error_need_not_be_utf8(raw: RawServer) -> None:
    """Found by the test above: libcurl's error for a Transfer-Encoding it does not know
    quotes the header's bytes, and pycurl's errstr() decoded them as UTF-8: a
    UnicodeDecodeError instead of the failure. Now the run fails with libcurl's reason."""
    raw.answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: \x80!\r\n\r\n"
    got = asyncio.run(_ask(raw.port, get=False))
    assert isinstance(got, TransportFailure), got
    assert "Transfer-Encoding (\ufffd!)" in str(got)


def test_the_export_names_that_failure_in_one_line(
    raw: RawServer, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    raw.answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: \x80!\r\n\r\n"
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.retry.maxTime": 0})
    proc = subprocess.run(
        cli_command("export", "--json", "-w", str(ws.root)),
        env=cli_env(tmp_path, OPENLINEAGE_URL=f"http://127.0.0.1:{raw.port}"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    [failed] = json.loads(proc.stdout)["failedRuns"]
    assert failed["reason"].endswith("failed (Unsolicited Transfer-Encoding (\ufffd!) found)"), (
        failed
    )


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
_ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "index": st.integers(-3, 12) | st.booleans() | st.text(max_size=3) | st.floats(),
        "reason": st.text() | st.binary().map(lambda b: b.decode("utf-8", "surrogateescape")),
        "retriable": _JSON,
    },
)
_BATCH_BODY = st.one_of(
    st.binary(max_size=512),
    _JSON.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda status, failed: json.dumps(
            {"status": status, "failed_events": failed}, ensure_ascii=False
        ).encode("utf-8", "surrogatepass"),
        st.sampled_from(["partial_success", "success", "PARTIAL_SUCCESS"]) | st.text(max_size=5),
        st.lists(_ENTRY | _JSON, max_size=6) | _JSON,
    ),
)


@FUZZ
@given(
    status=st.sampled_from([200, 201, 202, 204, 207, 299]),
    body=_BATCH_BODY,
    size=st.integers(1, 10),
)
def test_any_answer_to_a_batch_reads_as_taken_failed_by_index_or_unsaid(
    status: int, body: bytes, size: int
) -> None:
    """A stranger's answer to a batch (``batches.read_answer``): every event taken, the failed
    ones each named once by an index within the batch with a reason that is Unicode and
    bounded, or "some failed, not which" (never resent blind where that could duplicate); never
    an exception, whatever the body."""
    read = read_answer(status, body, size)
    if read.failed is None:
        return
    indexes = [failed.index for failed in read.failed]
    assert indexes == sorted(set(indexes)) and all(0 <= i < size for i in indexes)
    for failed in read.failed:
        assert type(failed.index) is int and isinstance(failed.retriable, bool)
        failed.reason.encode("utf-8")  # no lone surrogate
        assert 0 < len(failed.reason) <= TEXT_LIMIT and "\n" not in failed.reason
