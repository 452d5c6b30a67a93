"""Nothing leaked: the API key never shows up where it does not belong, and travels safely.

One known key goes through every command (secrets set/list/delete, settings list/get/set/
unset, status, dry run, export) and through failures of every kind (a refused run, a server
that echoes the key back in its error reply, its reason phrase or a redirect, a server down, a
missing secret, the key typed where a setting or a secret's name belongs), with logging at its
most verbose (the CLI has no -v option: the root logger is set to DEBUG). Everything printed,
logged or written (workspace files, the ledger, the config folder, reports) is then scanned for
the key and for every 8-character piece of it. The key's one way out is the ``Authorization:
Bearer`` header, to the server in the settings: never over plain http to another machine unless
allowed, never to a server whose TLS certificate does not verify, never along a redirect.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import ipaddress
import json
import logging
import os
import ssl
import stat
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from click.testing import CliRunner, Result
from fakeserver import refused_port_fixture  # noqa: F401 - registers refused_port
from helpers import WorkspaceMaker, cli_command, cli_env, run_record
from support.netns import OTHER_MACHINE, in_netns

from openlineage_export.cli import main

KEY = "olx~Sk3y-9Qz+T4v/Wm7=Lp2Hx8N!rB5"
"""Visible ASCII, as a bearer token is; '~' and '!' fit no secret name, namespace or host;
'+', '/' and '=' change under every encoding a server may echo it in."""


def _encodings(key: str) -> list[str]:
    """The key as servers have been seen (or may plausibly) echo it."""
    data = key.encode()
    return [
        key,
        quote(key, safe=""),
        quote(key, safe="").lower(),
        quote_plus(key),
        json.dumps(key)[1:-1].replace("/", "\\/"),
        "".join(c if c.isalnum() else f"\\u{ord(c):04x}" for c in key),
        html.escape(key).replace("+", "&#43;").replace("/", "&#x2F;"),
        base64.b64encode(data).decode()[:-2],
        base64.urlsafe_b64encode(data).decode()[:-2],
    ]


PIECES = {form[i : i + 8] for form in _encodings(KEY) for i in range(len(form) - 7)}
SECRET_NAME = "prod-key"


def leaks(text: str | bytes) -> list[str]:
    """The pieces of the key found in ``text``."""
    data = text.encode("utf-8", "backslashreplace") if isinstance(text, str) else text
    return sorted(piece for piece in PIECES if piece.encode() in data)


# -- a loopback OpenLineage server that misbehaves with the key --------------------------------


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes


class Server(ThreadingHTTPServer):
    """Records every request; answers by ``mode``, echoing what it was sent when it fails."""

    daemon_threads = True
    request_queue_size = 128  # a real server's listen backlog (fakeserver.BACKLOG)

    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        super().__init__((host, 0), _Handler)
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self.mode = "accept"
        self.redirect_to = ""
        self.seen: list[Seen] = []
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"{self.scheme}://{host}:{port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up, or refused our certificate

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.seen.append(Seen(self.path, headers, body))
        said = headers.get("authorization", "")
        mode = self.server.mode
        if mode == "accept":
            self._answer(201, b"")
        elif mode == "refuse":
            self._answer(400, f"bad request; you sent {said}".encode(), phrase=f"Bad {said}")
        elif mode == "marquez500":
            self._answer(
                500,
                json.dumps({"code": 400, "message": f"Unable to process: {said}"}).encode(),
                content_type="application/json",
            )
        elif mode == "busy":
            self._answer(503, f"busy; your key {said} is fine".encode(), {"Retry-After": "0"})
        elif mode == "urlencoded":
            token = quote(said.removeprefix("Bearer "), safe="")
            self._answer(422, f"invalid token={token}".encode(), phrase=f"Bad {token}")
        elif mode == "jsonescaped":
            body = json.dumps({"error": "bad token", "token": said}).replace("/", "\\/")
            self._answer(
                400, body.replace("+", "\\u002B").encode(), content_type="application/json"
            )
        elif mode == "base64":
            self._answer(400, b"token " + base64.b64encode(said.encode()))
        elif mode == "htmlescaped":
            self._answer(
                400,
                f"<p>{html.escape(said)}</p>".replace("+", "&#43;").encode(),
                content_type="text/html",
            )
        elif mode == "redirect":
            self._answer(
                307, b"", {"Location": f"{self.server.redirect_to}/api/v1/lineage?token={KEY}"}
            )

    def _answer(
        self,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        *,
        phrase: str | None = None,
        content_type: str = "text/plain",
    ) -> None:
        self.send_response(status, phrase)
        for name, value in {"Content-Type": content_type, **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.stop()


# -- running commands, keeping everything they said --------------------------------------------


class Session:
    """Runs CLI commands in this process, with the root logger at DEBUG, keeping every word."""

    def __init__(self, tmp_path: Path) -> None:
        self.config = tmp_path / "config"
        self.state = tmp_path / "state"
        self.env: dict[str, str | None] = {
            k: None for k in os.environ if k.startswith("OPENLINEAGE_")
        }
        self.env.update(
            {
                "OPENLINEAGE_EXPORT_CONFIG_DIR": str(self.config),
                "OPENLINEAGE_EXPORT_STATE_DIR": str(self.state),
                "OPENLINEAGE_EXPORT_SECRETS": "file",
            }
        )
        self.said: list[str] = []
        self.log = _Capture()

    def run(
        self,
        *args: str,
        code: int,
        stdin: str | None = None,
        env: dict[str, str | None] | None = None,
    ) -> Result:
        result = CliRunner().invoke(main, list(args), input=stdin, env={**self.env, **(env or {})})
        self.said += [result.stdout, result.stderr]
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            self.said.append("".join(traceback.format_exception(*result.exc_info)))  # type: ignore[misc]
            raise AssertionError(f"{args} crashed: {result.exception!r}")
        assert result.exit_code == code, (args, result.stdout, result.stderr)
        return result

    def everything(self) -> list[tuple[str, str | bytes]]:
        """What to scan: every word said and logged, every file written outside the store."""
        found: list[tuple[str, str | bytes]] = [
            (f"output #{i}", text) for i, text in enumerate(self.said)
        ]
        found += [(f"log: {record}", record) for record in self.log.records]
        for folder in (self.state, self.config):
            for path in sorted(folder.rglob("*")) if folder.exists() else []:
                if path.is_file() and path.name != "secrets.json":
                    found.append((str(path), path.read_bytes()))
        return found


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "".join(traceback.format_exception(*record.exc_info))
        self.records.append(text)


@pytest.fixture
def verbose_logging() -> Iterator[_Capture]:
    capture = _Capture()
    root = logging.getLogger()
    level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    yield capture
    root.removeHandler(capture)
    root.setLevel(level)


def files_under(root: Path) -> list[tuple[str, bytes]]:
    return [(str(p), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]


# -- the sweep ---------------------------------------------------------------------------------


def test_every_command_and_every_failure_keeps_the_key_to_itself(
    make_workspace: Any,
    server: Server,
    tmp_path: Path,
    verbose_logging: _Capture,
    refused_port: int,
) -> None:
    elsewhere = Server("127.0.0.2")  # where a redirect points: it must never hear from us
    server.redirect_to = elsewhere.url
    ws = make_workspace("ws")
    ws.segment("000001.jsonl", [run_record("r1"), run_record("r2", status="failed")])
    w = str(ws.root)
    s = Session(tmp_path)
    s.log = verbose_logging
    help_text = s.run("export", "--help", code=0).stdout
    report_option = "--report" in help_text
    reports: list[Path] = []

    # Secrets and settings, the way the README tells a user to set things up.
    s.run("secrets", "set", SECRET_NAME, "--for", server.url, stdin=KEY + "\n", code=0)
    assert SECRET_NAME in s.run("secrets", "list", code=0).stdout
    for key, value in [
        ("openlineage.url", server.url),
        ("openlineage.retry.maxTime", "0.3"),
        ("openlineage.timeout", "5"),
        ("openlineage.apiKey.secretRef", SECRET_NAME),
    ]:
        s.run("settings", "set", key, value, "-w", w, code=0)
    s.run("settings", "list", "-w", w, code=0)
    s.run("settings", "list", "--json", "-w", w, code=0)
    assert (
        s.run("settings", "get", "openlineage.apiKey.secretRef", "-w", w, code=0).stdout.strip()
        == SECRET_NAME
    )
    s.run("status", "-w", w, code=0)

    # Dry runs and a good export: the key goes out as the bearer token, and only there.
    s.run("export", "--dry-run", "-w", w, code=0)
    s.run("export", "--dry-run", "-w", w, "-o", str(tmp_path / "events.jsonl"), "--json", code=0)
    s.run("export", "-w", w, code=0)
    s.run("export", "-w", w, "--json", "--full", code=0)
    assert server.seen and all(
        seen.headers["authorization"] == f"Bearer {KEY}" for seen in server.seen
    )
    for seen in server.seen:
        others = {k: v for k, v in seen.headers.items() if k != "authorization"}
        assert not leaks(seen.body + seen.path.encode() + json.dumps(others).encode())
    s.run("status", "-w", w, code=0)
    s.run("status", "--json", "-w", w, code=0)

    # The server echoes the key back in every way it can: nothing of it may be repeated.
    for mode in (
        "refuse",
        "marquez500",
        "busy",
        "redirect",
        "urlencoded",
        "jsonescaped",
        "base64",
        "htmlescaped",
    ):
        server.mode = mode
        result = s.run("export", "--full", "-w", w, code=1)
        # The echo is shown, the key in it masked.
        assert (
            " of daily-sales " in result.stderr and "r1" in result.stderr and "***" in result.stderr
        ), result.stderr
        extra = []
        if report_option:
            reports.append(tmp_path / f"report-{mode}.html")
            extra = ["--report", str(reports[-1])]
        s.run("export", "--full", "--json", "-w", w, *extra, code=1)
        s.run("status", "-w", w, code=0)
    assert elsewhere.seen == [], "a redirect took the event (and the key) to another host"
    elsewhere.stop()
    server.mode = "accept"

    # The server is down.
    down = f"http://127.0.0.1:{refused_port}"
    s.run("secrets", "allow", SECRET_NAME, down, code=0)
    s.run("settings", "set", "openlineage.url", down, "-w", w, code=0)
    s.run("export", "-w", w, code=4)
    s.run("settings", "set", "openlineage.url", server.url, "-w", w, code=0)

    # The key typed where it does not belong: refused without being repeated.
    for key in (
        "openlineage.apiKey",
        "openlineage.apiKey.secretRef",
        "openlineage.timeout",
        "openlineage.concurrency",
        "openlineage.namespace",
    ):
        s.run("settings", "set", key, KEY, "-w", w, code=2)
    s.run("settings", "set", "openlineage.url", f"http://user:{KEY}@example.com", "-w", w, code=2)
    s.run("settings", "set", "openlineage.url", f"https://example.com/?key={KEY}", "-w", w, code=2)
    s.run("secrets", "set", KEY, stdin="value\n", code=2)
    s.run("secrets", "delete", KEY, code=2)

    # A secret that is not there.
    s.run("settings", "set", "openlineage.apiKey.secretRef", "no-such-secret", "-w", w, code=0)
    s.run("export", "-w", w, code=2)
    s.run("settings", "unset", "openlineage.apiKey.secretRef", "-w", w, code=0)
    s.run("settings", "set", "openlineage.apiKey.secretRef", SECRET_NAME, "-w", w, code=0)
    s.run("secrets", "delete", SECRET_NAME, code=0)
    s.run("secrets", "delete", SECRET_NAME, code=1)
    s.run("export", "-w", w, code=2)
    s.run("secrets", "list", code=0)

    # The key in the environment, over plain http to another machine: refused, not shown.
    s.run(
        "export",
        "-w",
        w,
        code=2,
        env={"OPENLINEAGE_API_KEY": KEY, "OPENLINEAGE_URL": "http://198.51.100.7:5000"},
    )

    # A key pasted into settings.json by hand (in a workspace of its own, not scanned).
    pasted = make_workspace("pasted")
    pasted.segment("000001.jsonl", [run_record("r1")])
    pasted.settings({"openlineage.url": server.url, "openlineage.apiKey": KEY})
    s.run("export", "-w", str(pasted.root), code=2)
    s.run("settings", "list", "-w", str(pasted.root), code=0)
    s.run("status", "-w", str(pasted.root), code=2)
    s.run("settings", "unset", "openlineage.apiKey", "-w", str(pasted.root), code=0)
    assert not leaks((pasted.root / ".workspace" / "settings.json").read_bytes())

    scanned = (
        s.everything()
        + files_under(ws.root)
        + files_under(pasted.root)
        + [(str(path), path.read_bytes()) for path in reports]
    )
    assert len(s.said) > 80 and verbose_logging.records
    found = {where: leaks(text) for where, text in scanned if leaks(text)}
    assert found == {}, f"the key leaked: {found}"
    if report_option:
        assert all(path.exists() for path in reports)
    store = s.config / "secrets.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600


def test_a_real_process_with_debug_logging_keeps_the_key_to_itself(
    ws: WorkspaceMaker, server: Server, tmp_path: Path
) -> None:
    """The same through a real process: its stdout, stderr (logging to it at DEBUG) and exit."""
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.retry.maxTime": 0.3})
    server.mode = "refuse"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    env.update(
        {
            "OPENLINEAGE_API_KEY": KEY,
            "OPENLINEAGE_URL": server.url,
            "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "s"),
            "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "c"),
        }
    )
    verbose = (
        "import logging, sys; logging.basicConfig(level=logging.DEBUG); "
        "from openlineage_export.cli import main; "
        "sys.argv[0] = 'openlineage-export'; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", verbose, "export", "-w", str(ws.root)],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    assert b"DEBUG" in result.stderr and b" of daily-sales " in result.stderr
    assert server.seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert not leaks(result.stdout + result.stderr)
    assert not [where for where, data in files_under(tmp_path / "s") if leaks(data)]


@pytest.mark.parametrize(
    "awkward",
    ["with space", "tab\there", "trailing ", "caf\u00e9", "del\x7f", "\u2028sep"],
    ids=["space", "tab", "trailing-space", "non-ascii", "del", "u2028"],
)
@pytest.mark.parametrize("source", ["store", "environment"])
def test_a_key_no_header_can_carry_is_refused_without_showing_it(
    ws: WorkspaceMaker, server: Server, tmp_path: Path, awkward: str, source: str
) -> None:
    key = KEY + awkward
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings(
        {
            "openlineage.url": server.url,
            "openlineage.retry.maxTime": 0.3,
            **({"openlineage.apiKey.secretRef": SECRET_NAME} if source == "store" else {}),
        }
    )
    s = Session(tmp_path)
    if source == "store":
        s.run("secrets", "set", SECRET_NAME, stdin=key, code=0)
        env = {}
    else:
        env = {"OPENLINEAGE_API_KEY": key}
    result = s.run("export", "-w", str(ws.root), code=2, env=env)
    assert "HTTP header" in result.stderr and result.stderr.count("\n") == 1
    assert server.seen == []
    assert not leaks("".join(s.said))


# -- transport security -----------------------------------------------------------------------


def test_the_key_never_goes_over_plain_http_to_another_machine_unless_allowed(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Another machine is 10.200.0.1, in a network namespace of the test's own."""
    ws.segment("000001.jsonl", [run_record("r1")])
    url = f"http://{OTHER_MACHINE}:8080"
    env = cli_env(tmp_path)
    export = cli_command("export", "--full", "-w", str(ws.root))
    with_key = {"openlineage.url": url, "openlineage.apiKey.secretRef": SECRET_NAME}
    settings = ws.root / ".workspace" / "settings.json"
    keyless, keyed = tmp_path / "keyless.json", tmp_path / "keyed.json"
    keyless.write_text(json.dumps({"openlineage.url": url}))
    keyed.write_text(json.dumps(with_key))
    use = [sys.executable, "-c", "import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])"]
    outcome = in_netns(
        tmp_path,
        listen=[f"{OTHER_MACHINE}:8080"],
        runs=[
            {
                "args": cli_command("secrets", "set", SECRET_NAME, "--for", url),
                "env": env,
                "stdin": KEY,
            },
            {"args": [*use, str(keyed), str(settings)]},
            {"args": export, "env": env},
            # Without a key, plain http to another machine is fine: nothing secret travels.
            {"args": [*use, str(keyless), str(settings)]},
            {"args": export, "env": env},
            # With the key, only once the user says this network is trusted.
            {"args": [*use, str(keyed), str(settings)]},
            {"args": export, "env": {**env, "OPENLINEAGE_ALLOW_INSECURE_KEY": "true"}},
        ],
    )
    refused, keyless_run, allowed = outcome.runs[2], outcome.runs[4], outcome.runs[6]
    assert refused["code"] == 2, refused["stderr"]
    assert (
        f"refusing to send the API key over plain http to {OTHER_MACHINE}" in refused["stderr"]
        and "OPENLINEAGE_ALLOW_INSECURE_KEY" in refused["stderr"]
    )
    assert keyless_run["code"] == 0 and allowed["code"] == 0, outcome.runs
    seen = outcome.seen[f"{OTHER_MACHINE}:8080"]
    assert [s["authorization"] for s in seen] == [
        "",
        "",
        "",
        "",
        f"Bearer {KEY}",
        *[f"Bearer {KEY}"] * 3,
    ], "the key went out in clear text before it was allowed"
    said = "".join(run["stdout"] + run["stderr"] for run in outcome.runs)
    assert not leaks(said)


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its private key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = tmp_path_factory.mktemp("tls")
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "openlineage-export test")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert = folder / "cert.pem"
    key = folder / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


def test_tls_certificates_are_verified_unless_the_ca_bundle_vouches_for_them(
    ws: WorkspaceMaker, tmp_path: Path, self_signed: tuple[Path, Path]
) -> None:
    cert, private = self_signed
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, private)
    https = Server(tls=context)
    try:
        ws.segment("000001.jsonl", [run_record("r1")])
        s = Session(tmp_path)
        s.run("secrets", "set", SECRET_NAME, "--for", https.url, stdin=KEY, code=0)
        ws.settings(
            {
                "openlineage.url": https.url,
                "openlineage.apiKey.secretRef": SECRET_NAME,
                "openlineage.retry.maxTime": 30,
            }
        )
        failed = s.run("export", "-w", str(ws.root), code=4)
        stopped = [line for line in failed.stderr.splitlines() if line.startswith("stopped: ")]
        assert len(stopped) == 1, failed.stderr
        assert "certificate" in stopped[0] and "openlineage.tls.caBundle" in stopped[0]
        assert https.seen == [], "a request (and the key) went to an unverified server"
        # A CA bundle that holds no certificate (here: the private key) is a setting error.
        wrong = s.run(
            "export", "-w", str(ws.root), code=2, env={"OPENLINEAGE_TLS_CA_BUNDLE": str(private)}
        )
        assert (
            wrong.stderr.startswith("error: openlineage.tls.caBundle")
            and wrong.stderr.count("\n") == 1
        ), wrong.stderr
        s.run("export", "-w", str(ws.root), code=0, env={"OPENLINEAGE_TLS_CA_BUNDLE": str(cert)})
        assert https.seen and https.seen[0].headers["authorization"] == f"Bearer {KEY}"
        assert not leaks("".join(s.said))
    finally:
        https.stop()
