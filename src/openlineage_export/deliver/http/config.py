"""The ``http`` destination's config: what the settings say, checked, the key resolved."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ... import DISTRIBUTION
from ...errors import ConfigError
from ...guards.keys import KeySettings
from ...guards.proxy import environment_proxy
from ...guards.secrecy import check_header_safe, check_key_transport, resolve_secret
from ...guards.trust import check_key_destination
from ...translate.asking import Asking
from ...translate.modes import mode_of
from ..destination import DeliverySettings, Opening
from ..retry import RetryPolicy
from .address import url_doubts
from .settings import API_KEY_ENV, HttpSettings, ecosystem_api_key

KIND = "http"
"""The name ``openlineage.transport`` gives this kind (its row in ``registry.py``)."""


@dataclass(frozen=True)
class HttpConfig:
    """Where to post, with what key, and how patiently: checked, the key resolved."""

    url: str
    api_key: str | None = field(default=None, repr=False)
    gzip_body: bool = False
    timeout: float = 10.0
    concurrency: int = 32
    retry: RetryPolicy = RetryPolicy()
    verify: bool | Path = True
    """Verify the server's certificate: with the system's CAs (True), a CA bundle, or not."""
    key_origin: str | None = None
    """Where the API key came from (``the secret 'marquez-prod'``), for messages."""
    key_fix: str | None = None
    """How the user replaces the key, for messages."""
    refusal: Callable[[int, bytes], str | None] | None = None
    """How the server refuses a run in a way of its own (its mode's reading), else None."""
    address: str = "openlineage.url"
    """What the address was set with, for messages: ``openlineage.url``, or ``--url``."""
    doubt: str | None = None
    """What is likely wrong with the url, said before sending (``http_address.py``)."""
    asking: tuple[Asking, ...] = ()
    """The read APIs the server may be asked what it holds through (its mode's row)."""
    batch_events: int = 100
    """Most events in one batch (``openlineage.batch.maxEvents``)."""
    batch_bytes: int = 4 * 1024 * 1024
    """Most bytes in one batch (``openlineage.batch.maxBytes``)."""

    @classmethod
    def from_settings(cls, opening: Opening) -> HttpConfig:
        """The config the settings give; the key from the environment or the secrets store."""
        http = opening.settings.of(HttpSettings)
        delivery = opening.settings.of(DeliverySettings)
        keys = opening.settings.of(KeySettings)
        url = http.events_url
        if url is None:
            raise ConfigError(
                "openlineage.url is not set: set it with "
                f"'{DISTRIBUTION} settings set openlineage.url "
                "http://localhost:5000' (or OPENLINEAGE_URL), or use --dry-run"
            )
        key = None if opening.environ.get(API_KEY_ENV) else ecosystem_api_key(opening)
        key = key or resolve_secret(
            opening.environ,
            http.api_key_secret_ref,
            API_KEY_ENV,
            store=opening.secrets,
            setting="openlineage.apiKey.secretRef",
        )
        if key is not None:
            check_header_safe(key)
            check_key_destination(
                key, [url], opening.settings, opening.secrets, setting="openlineage.url"
            )
        # The proxy our client will really use (a host's own client picks its own).
        proxy = environment_proxy(url) if opening.supplied.client(KIND) is None else None
        check_key_transport(url, key is not None, keys.allow_insecure_key, proxy)
        return cls(
            url,
            api_key=key.value if key else None,
            gzip_body=http.compression == "gzip",
            timeout=delivery.timeout,
            concurrency=delivery.concurrency,
            retry=RetryPolicy(max_time=delivery.retry_max_time),
            verify=keys.tls_ca_bundle or keys.tls_verify,
            key_origin=key.origin if key else None,
            key_fix=key.fix if key else None,
            refusal=mode_of(opening.settings).refusal,
            address="--url"
            if opening.settings.source("openlineage.url") == "given"
            else "openlineage.url",
            doubt=next(iter(url_doubts(opening.settings)), None),
            asking=mode_of(opening.settings).asking,
            batch_events=http.batch_max_events,
            batch_bytes=http.batch_max_bytes,
        )

    @property
    def name(self) -> str:
        """The address events are posted to."""
        return self.url
