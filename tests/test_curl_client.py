"""The default HTTP client (libcurl): what it must not do on its own, and its two ways of
being driven by the event loop.

libcurl reads proxies from the environment, may read ``~/.netrc`` and looks for CAs where the
system that built the wheel keeps them; each of these is decided by us instead.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from fakeserver import (
    FakeServer,
    fake_server_fixture,  # noqa: F401 - registers fake_server
    refused_port_fixture,  # noqa: F401 - registers refused_port
)
from test_deliver_http import configure, dry_lines, export, export_bounded
from test_secret_hygiene import Server, self_signed  # noqa: F401 - self_signed: the fixture

from openlineage_export.deliver.http import client as http_client
from openlineage_export.deliver.http import curl_client


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An environment without proxy variables, for the test to set its own."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_the_proxy_the_environment_names_carries_the_events(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], no_proxies: pytest.MonkeyPatch
) -> None:
    no_proxies.setenv("HTTP_PROXY", fake_server.url)
    # Never resolved: the proxy takes the request for it.
    configure(one_run, url="http://lineage.example.invalid")
    report = export(one_run, environ)
    assert report.exit_code == 0, report.to_dict()
    assert {r.path for r in fake_server.requests} == {
        "http://lineage.example.invalid/api/v1/lineage"
    }
    assert [r.raw for r in fake_server.requests] == dry_lines(one_run)


def test_no_proxy_sends_the_events_directly(
    fake_server: FakeServer,
    one_run: Path,
    environ: dict[str, str],
    no_proxies: pytest.MonkeyPatch,
    refused_port: int,
) -> None:
    no_proxies.setenv("HTTP_PROXY", f"http://127.0.0.1:{refused_port}")
    no_proxies.setenv("NO_PROXY", "127.0.0.1")
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ)
    assert report.exit_code == 0, report.to_dict()
    assert {r.path for r in fake_server.requests} == {"/api/v1/lineage"}


def test_libcurl_never_reads_the_proxy_variables_itself(
    fake_server: FakeServer,
    one_run: Path,
    environ: dict[str, str],
    no_proxies: pytest.MonkeyPatch,
    refused_port: int,
) -> None:
    # Whatever environment_proxy answers is the proxy; libcurl would take http_proxy and
    # ALL_PROXY (and ignore NO_PROXY's forms it does not know) on its own.
    dead = f"http://127.0.0.1:{refused_port}"
    no_proxies.setenv("http_proxy", dead)
    no_proxies.setenv("ALL_PROXY", dead)
    no_proxies.setattr(curl_client, "environment_proxy", lambda url: None)
    configure(one_run, url=fake_server.url, **{"retry.maxTime": 1})
    report = export_bounded(one_run, environ)
    assert report.exit_code == 0, report.to_dict()
    assert len(fake_server.requests) == 4


def test_a_netrc_entry_for_the_server_is_never_sent(
    fake_server: FakeServer,
    one_run: Path,
    environ: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text("machine 127.0.0.1 login someone password hunter2\n")
    (home / ".netrc").chmod(0o600)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NETRC", str(home / ".netrc"))
    configure(one_run, url=fake_server.url)
    assert export(one_run, environ).exit_code == 0
    assert all("authorization" not in r.headers for r in fake_server.requests)


def test_the_system_cas_are_the_ones_python_finds(
    one_run: Path,
    environ: dict[str, str],
    self_signed: tuple[Path, Path],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The wheel's libcurl was built on another system and would look for CAs where that one
    # keeps them; SSL_CERT_FILE is how Python's ssl (and so aiohttp, httpx) is told.
    cert, private = self_signed
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, private)
    https = Server(tls=context)
    try:
        configure(one_run, url=https.url, **{"retry.maxTime": 1})
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        report = export_bounded(one_run, environ)
        assert report.exit_code == 0, report.to_dict()
        assert len(https.seen) == 4
        monkeypatch.delenv("SSL_CERT_FILE")
        report = export_bounded(one_run, environ, full=True)
        assert report.outage is not None and "certificate" in report.outage
        assert len(https.seen) == 4
    finally:
        https.stop()


def test_without_epoll_the_loop_watches_each_socket(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where there is no epoll (macOS), libcurl's sockets are the loop's readers and writers."""
    monkeypatch.setattr(curl_client, "_EPOLL", {})
    started: list[curl_client.CurlPoster] = []
    original = curl_client.CurlPoster.start

    async def start(self: curl_client.CurlPoster) -> None:
        await original(self)
        started.append(self)

    monkeypatch.setattr(curl_client.CurlPoster, "start", start)
    configure(one_run, url=fake_server.url, concurrency=4)
    report = export(one_run, environ)
    assert report.exit_code == 0, report.to_dict()
    assert [r.raw for r in fake_server.requests] == dry_lines(one_run)
    assert len(started) == 1 and started[0]._epoll is None


def test_the_default_client_is_libcurl() -> None:
    poster = http_client.poster_for(None, verify=True, concurrency=4, timeout=10, user_agent="x/1")
    assert isinstance(poster, curl_client.CurlPoster)
