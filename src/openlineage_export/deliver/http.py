"""The ``http`` destination: POST each event to an OpenLineage endpoint (Marquez, DataHub...).

The client is the host's: an editor hands in the ``httpx.Client`` it configured (proxies, TLS,
its own transport) as ``Supplied.http``; otherwise one is built from the settings with
:func:`build_client`.
"""

from __future__ import annotations

import gzip
import random
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import httpx
import orjson

from ..errors import ConfigError, DestinationUnreachable
from ..host.settings import SettingsGroup, setting
from ..secrecy import (
    Redactor,
    check_header_safe,
    check_key_transport,
    masked_logs,
    resolve_secret,
)
from ..translate.events import TranslatedRun, encode
from .destination import DeliverySettings, Opening, RunOutcome, Supplied
from .retry import RetryPolicy, retry_after_seconds

USER_AGENT_PREFIX = "openlineage-export"

API_KEY_ENV = "OPENLINEAGE_API_KEY"
"""The environment variable that hands the API key over directly (never a setting)."""


@dataclass(frozen=True)
class HttpSettings(SettingsGroup):
    """Where and how the ``http`` destination posts."""

    title: ClassVar[str] = "http destination (openlineage.transport = http)"

    url: str | None = setting(
        "openlineage.url", "url", None,
        "Base address of the OpenLineage server; it may carry a path prefix. "
        "E.g. http://localhost:5000 for a local Marquez.",
        env="OPENLINEAGE_URL")
    endpoint: str = setting(
        "openlineage.endpoint", "string", "api/v1/lineage",
        "Path appended to openlineage.url. Marquez: api/v1/lineage; DataHub: "
        "openapi/openlineage/api/v1/lineage; Atlan: "
        "events/openlineage/<connector>/api/v1/lineage.",
        env="OPENLINEAGE_ENDPOINT")
    api_key_secret_ref: str | None = setting(
        "openlineage.apiKey.secretRef", "string", None,
        "NAME of the entry in the secrets store that holds the API key (never the key "
        "itself); store it with: openlineage-export secrets set NAME.",
        pattern=r"[A-Za-z0-9._-]{1,128}")
    compression: str = setting(
        "openlineage.compression", "string", "none",
        "Compression of request bodies.", choices=("none", "gzip"))

    @property
    def events_url(self) -> str | None:
        """The address events are posted to: ``url`` and ``endpoint`` joined by one slash."""
        if self.url is None:
            return None
        return self.url.rstrip("/") + "/" + self.endpoint.lstrip("/")


@dataclass(frozen=True)
class HttpConfig:
    """Where to post, with what key, and how patiently: checked, the key resolved."""

    url: str
    api_key: str | None = field(default=None, repr=False)
    gzip_body: bool = False
    timeout: float = 10.0
    concurrency: int = 8
    retry: RetryPolicy = RetryPolicy()
    verify: bool | Path = True
    """Verify the server's certificate: with the system's CAs (True), a CA bundle, or not."""

    @classmethod
    def from_settings(cls, opening: Opening) -> HttpConfig:
        """The config the settings give; the key from the environment or the secrets store."""
        http = opening.settings.of(HttpSettings)
        delivery = opening.settings.of(DeliverySettings)
        url = http.events_url
        if url is None:
            raise ConfigError("openlineage.url is not set: set it with "
                              "'openlineage-export settings set openlineage.url "
                              "http://localhost:5000' (or OPENLINEAGE_URL), or use --dry-run")
        key = resolve_secret(opening.environ, http.api_key_secret_ref, API_KEY_ENV,
                             store=opening.secrets, setting="openlineage.apiKey.secretRef")
        if key is not None:
            check_header_safe(key)
        check_key_transport(url, key is not None, delivery.allow_insecure_key)
        return cls(url, api_key=key.value if key else None,
                   gzip_body=http.compression == "gzip", timeout=delivery.timeout,
                   concurrency=delivery.concurrency,
                   retry=RetryPolicy(max_time=delivery.retry_max_time),
                   verify=delivery.tls_ca_bundle or delivery.tls_verify)

    @property
    def name(self) -> str:
        """The address events are posted to."""
        return self.url


def build_client(config: HttpConfig, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The default client: keep-alive pool sized to the concurrency, no redirects followed."""
    from .. import __version__

    limits = httpx.Limits(max_connections=config.concurrency,
                          max_keepalive_connections=config.concurrency)
    checks = config.verify if isinstance(config.verify, bool) else _ca_bundle(config.verify)
    return httpx.Client(timeout=config.timeout, verify=checks, limits=limits,
                        transport=transport, follow_redirects=False,
                        headers={"User-Agent": f"{USER_AGENT_PREFIX}/{__version__}"})


def _ca_bundle(path: Path) -> ssl.SSLContext:
    """A context trusting the CA certificates in ``path`` (httpx wants a context, not a path)."""
    try:
        return ssl.create_default_context(cafile=str(path))
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise ConfigError(f"openlineage.tls.caBundle: {path} holds no CA certificate we can "
                          f"use ({getattr(exc, 'reason', None) or exc})") from None


@dataclass
class _Health:
    """Shared among the sending threads: when did the server last accept anything."""

    last_success: float
    lock: threading.Lock


class HttpDestination:
    """POSTs each event as JSON; per-run order, retries, and a clear verdict on outages."""

    def __init__(self, config: HttpConfig, supplied: Supplied | None = None, *,
                 seed: int | None = None) -> None:
        host_http = supplied.http if supplied is not None else None
        self._owned: httpx.Client | None = None
        if isinstance(host_http, httpx.Client):
            self.client = host_http
        else:
            self.client = self._owned = build_client(config, transport=host_http)
        self.config = config
        self.url = config.url
        self.name = config.url
        self.concurrency = config.concurrency
        self.retry = config.retry
        self._gzip = config.gzip_body
        self._headers = {"Content-Type": "application/json"}
        if config.gzip_body:
            self._headers["Content-Encoding"] = "gzip"
        if config.api_key:
            self._headers["Authorization"] = f"Bearer {config.api_key}"
        self.redact = Redactor(config.api_key)
        self._masking = masked_logs(self.redact)
        self._masking.__enter__()
        self._health = _Health(time.monotonic(), threading.Lock())
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self.on_retry: Callable[[str, str, int, float], None] | None = None
        """Told (destination, reason, attempt, seconds left) before each wait to retry."""

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
        """Close the client we built (a host's is the host's to close); stop masking logs."""
        try:
            if self._owned is not None:
                self._owned.close()
        finally:
            self._masking.__exit__(None, None, None)

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
            if self.on_retry is not None:
                self.on_retry(self.name, reason, attempt, left)
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
