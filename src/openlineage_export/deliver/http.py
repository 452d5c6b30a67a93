"""Deliver events to an OpenLineage HTTP endpoint (Marquez, DataHub, Atlan...) through httpx.

The client is the host's: an editor hands in the ``httpx.Client`` it configured (proxies, TLS,
its own transport); the CLI builds one from the settings with :func:`build_client`.
"""

from __future__ import annotations

import gzip
import ipaddress
import logging
import random
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import orjson

from ..errors import ConfigError, DestinationUnreachable
from ..translate.events import TranslatedRun, encode
from .destination import RunOutcome
from .retry import RetryPolicy, retry_after_seconds

USER_AGENT_PREFIX = "openlineage-export"


def is_loopback(url: str) -> bool:
    """True when the URL's host is this machine (localhost, 127.0.0.0/8, ::1)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_key_transport(url: str, has_key: bool, allow_insecure: bool) -> None:
    """Refuse to send a key in clear text to another machine unless the user opted in."""
    if has_key and urlsplit(url).scheme == "http" and not is_loopback(url) and not allow_insecure:
        raise ConfigError(
            f"refusing to send the API key over plain http to {urlsplit(url).hostname}: use https, "
            "or set openlineage.allowInsecureKey to true if this network is trusted")


def build_client(*, timeout: float, verify: bool | str, concurrency: int,
                 transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The default client: keep-alive pool sized to the concurrency, no redirects followed."""
    from .. import __version__

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    checks: bool | ssl.SSLContext = verify if isinstance(verify, bool) else _ca_bundle(verify)
    return httpx.Client(timeout=timeout, verify=checks, limits=limits, transport=transport,
                        follow_redirects=False,
                        headers={"User-Agent": f"{USER_AGENT_PREFIX}/{__version__}"})


def _ca_bundle(path: str) -> ssl.SSLContext:
    """A context trusting the CA certificates in ``path`` (httpx wants a context, not a path)."""
    try:
        return ssl.create_default_context(cafile=path)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise ConfigError(f"openlineage.tls.caBundle: {path} holds no CA certificate we can "
                          f"use ({getattr(exc, 'reason', None) or exc})") from None


class Redactor:
    """Removes a secret from any text we are about to show (a server may echo it back)."""

    def __init__(self, *secrets: str | None) -> None:
        # Also as a JSON string and a bytes repr show it: a server's JSON error, a log line.
        forms = {form for s in secrets if s for form in
                 (s, orjson.dumps(s).decode()[1:-1], repr(s.encode("utf-8"))[2:-1])}
        self._secrets = sorted(forms, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


_HTTP_LOGGERS = ("httpx", "httpcore.connection", "httpcore.http11", "httpcore.http2",
                 "httpcore.proxy", "httpcore.socks")
"""The loggers of the HTTP stack: at INFO and DEBUG they log the server's status line."""


class _RedactingLogFilter(logging.Filter):
    """Masks the key in what the HTTP stack logs: a server may echo it in its reason phrase."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        masked = self._redact(text)
        if masked != text:
            record.msg, record.args = masked, None
        return True


@dataclass
class _Health:
    """Shared among the sending threads: when did the server last accept anything."""

    last_success: float
    lock: threading.Lock


class HttpDestination:
    """POSTs each event as JSON; per-run order, retries, and a clear verdict on outages."""

    def __init__(self, client: httpx.Client, url: str, *, api_key: str | None = None,
                 retry: RetryPolicy | None = None, gzip_body: bool = False,
                 concurrency: int = 8, seed: int | None = None) -> None:
        self.client = client
        self.url = url
        self.name = url
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self._gzip = gzip_body
        self._headers = {"Content-Type": "application/json"}
        if gzip_body:
            self._headers["Content-Encoding"] = "gzip"
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self.redact = Redactor(api_key)
        self._log_filter = _RedactingLogFilter(self.redact) if api_key else None
        if self._log_filter is not None:
            for name in _HTTP_LOGGERS:
                logging.getLogger(name).addFilter(self._log_filter)
        self._health = _Health(time.monotonic(), threading.Lock())
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    def send(self, run: TranslatedRun, cancel: threading.Event) -> RunOutcome:
        """POST the run's events one after the other; the first refusal ends the run."""
        for accepted, event in enumerate(run.events):
            if cancel.is_set():
                return RunOutcome(accepted, "cancelled before every event was sent")
            body = encode(event)
            if self._gzip:
                body = gzip.compress(body, mtime=0)
            error = self._post(body, cancel)
            if error is not None:
                return RunOutcome(accepted, error)
        return RunOutcome(len(run.events))

    def close(self) -> None:
        """Stop masking the key in the HTTP stack's logs (the client is the host's to close)."""
        if self._log_filter is not None:
            for name in _HTTP_LOGGERS:
                logging.getLogger(name).removeFilter(self._log_filter)

    def _post(self, body: bytes, cancel: threading.Event) -> str | None:
        """One event until accepted (None), refused (the reason), or out of retry time."""
        policy = self.retry
        started = time.monotonic()
        attempt = 0
        # Whether the last attempt got no answer at all (refused, reset, closed): an event whose
        # connection broke when the server went away, then found none for the rest of its time,
        # met an outage.
        unreachable = True
        while True:
            attempt += 1
            wait: float | None = None
            try:
                # Per request: a host's client may follow redirects, we never do (the key
                # would travel, and httpx turns a redirected POST into a GET that "succeeds").
                response = self.client.post(self.url, content=body, headers=self._headers,
                                            follow_redirects=False)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                untrusted = _certificate_refused(exc)
                if untrusted is not None:  # no retry will make it trusted: stop now
                    raise DestinationUnreachable(
                        f"the server at {self.url} could not be reached securely: its TLS "
                        f"certificate was not accepted ({untrusted}); if it is the right server, "
                        "point openlineage.tls.caBundle at the certificate of the CA that "
                        "signed it") from None
                unreachable = True
                reason = f"cannot connect to {self.url} ({self._detail(exc)})"
            except httpx.TimeoutException:
                unreachable = False
                reason = f"no answer from {self.url} within the timeout"
            except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
                # The connection broke, or closed, with no answer: if that lasts, no server.
                unreachable = True
                reason = f"connection to {self.url} failed ({self._detail(exc)})"
            except httpx.RequestError as exc:  # other transport errors, an undecodable answer
                unreachable = False
                reason = f"connection to {self.url} failed ({self._detail(exc)})"
            else:
                unreachable = False
                status = response.status_code
                if 200 <= status < 300:
                    with self._health.lock:
                        self._health.last_success = time.monotonic()
                    return None
                reason = self._describe(response)
                if status not in policy.status_forcelist or _says_client_error(response):
                    return reason
                wait = retry_after_seconds(response.headers.get("Retry-After"), time.time())
            elapsed = time.monotonic() - started
            left = policy.max_time - elapsed
            if left <= 0 and unreachable:
                # No server now: an outage once nothing was accepted for a whole window. An
                # event sent just before the server went away waits for that (at most one more
                # window), rather than being given up as if the server had refused its run.
                left = self._until_outage(reason, policy.max_time)
                if elapsed >= 2 * policy.max_time:
                    left = 0
            if left <= 0:
                return f"gave up after {attempt} attempts in {elapsed:.0f} s: {reason}"
            if wait is None:
                with self._rng_lock:
                    wait = policy.backoff(attempt, self._rng)
            if cancel.wait(min(wait, left)):
                return "cancelled before every event was sent"

    def _detail(self, exc: Exception) -> str:
        return self.redact(str(exc)) or type(exc).__name__

    def _until_outage(self, reason: str, window: float) -> float:
        """Seconds until nothing will have been accepted for ``window``; raises
        :class:`DestinationUnreachable` when that is already so."""
        with self._health.lock:
            quiet_for = time.monotonic() - self._health.last_success
        if quiet_for >= window:
            raise DestinationUnreachable(
                f"the server at {self.url} could not be reached for {window:.0f} s "
                f"({reason}); nothing more was sent")
        return window - quiet_for

    def _describe(self, response: httpx.Response) -> str:
        # Redact before cutting: a key straddling the cut would otherwise leave its start.
        text = self.redact(response.text.strip().replace("\n", " "))
        if len(text) > 500:
            text = text[:500] + "..."
        phrase = response.reason_phrase or ""
        location = response.headers.get("Location")
        if 300 <= response.status_code < 400 and location:
            text = f"redirects to {location}; set openlineage.url to the final address"
        return self.redact(f"HTTP {response.status_code} {phrase}".strip()
                           + (f": {text}" if text else ""))


def _certificate_refused(exc: BaseException) -> str | None:
    """Why the server's TLS certificate was refused, when that is why we could not connect."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return str(cause.verify_message or cause.reason or "not trusted")
        cause = cause.__cause__ or cause.__context__
    return None


def _says_client_error(response: httpx.Response) -> bool:
    """Marquez answers malformed JSON with a 500 whose body says 400: that is a refusal."""
    if response.status_code != 500:
        return False
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return False
    code = body.get("code") if isinstance(body, dict) else None
    return isinstance(code, int) and 400 <= code < 500
