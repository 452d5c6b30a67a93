"""The ``http`` destination's settings: the server's address, its endpoint, the name of its
key in the secrets store, compression (whose converter the events are shaped for is the
consumer mode's: ``translate/modes.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ... import DISTRIBUTION
from ...guards.secrecy import Secret
from ...host.setting_row import SettingsGroup, setting
from ..destination import Opening

API_KEY_ENV = "OPENLINEAGE_API_KEY"
"""The environment variable that hands the API key over directly (never a setting)."""

ECOSYSTEM_API_KEY = ("transport.auth.api_key", "transport.auth.apikey")
"""Where openlineage-python's configuration holds the API key: used as ``OPENLINEAGE_API_KEY``
is (only for a server the user named), never stored, never shown."""


@dataclass(frozen=True)
class HttpSettings(SettingsGroup):
    """Where and how the ``http`` destination posts."""

    title: ClassVar[str] = "http destination (openlineage.transport = http)"

    url: str | None = setting(
        "openlineage.url",
        "url",
        None,
        "Base address of the OpenLineage server; it may carry a path prefix. "
        "E.g. http://localhost:5000 for a local Marquez.",
        env="OPENLINEAGE_URL",
        ecosystem="transport.url",
        ascii=True,
    )
    endpoint: str = setting(
        "openlineage.endpoint",
        "string",
        "api/v1/lineage",
        "Path appended to openlineage.url. Marquez: api/v1/lineage; DataHub: "
        "openapi/openlineage/api/v1/lineage; Atlan: "
        "events/openlineage/<connector>/api/v1/lineage.",
        env="OPENLINEAGE_ENDPOINT",
        ecosystem="transport.endpoint",
        pattern=r"[^?#\s\x00-\x1f\x7f]{1,2048}",
        ascii=True,
        pattern_help="a path: no query (?...) or fragment (#...), no spaces; an API key goes "
        "in the secrets store, not in the address",
    )
    api_key_secret_ref: str | None = setting(
        "openlineage.apiKey.secretRef",
        "string",
        None,
        "NAME of the entry in the secrets store that holds the API key (never the key "
        f"itself); store it with: {DISTRIBUTION} secrets set NAME.",
        pattern=r"[A-Za-z0-9._-]{1,128}",
    )
    compression: str = setting(
        "openlineage.compression",
        "string",
        "none",
        "Compression of request bodies.",
        choices=("none", "gzip"),
        ecosystem="transport.compression",
    )

    batch_max_events: int = setting(
        "openlineage.batch.maxEvents",
        "integer",
        100,
        "Most events in one batch, where the server takes the spec's batches (the endpoint "
        "plus /batch: learnt on the first batch, remembered; a server that does not take them "
        "gets one event a request). Events of one run never share a batch.",
        minimum=1,
        maximum=1000,
    )
    batch_max_bytes: int = setting(
        "openlineage.batch.maxBytes",
        "integer",
        4 * 1024 * 1024,
        "Most bytes in one batch (its events' JSON, before compression); a server that "
        "answers 413 gets batches half as large.",
        minimum=64 * 1024,
        maximum=64 * 1024 * 1024,
    )

    @property
    def events_url(self) -> str | None:
        """The address events are posted to: ``url`` and ``endpoint`` joined by one slash."""
        if self.url is None:
            return None
        return self.url.rstrip("/") + "/" + self.endpoint.lstrip("/")


def ecosystem_api_key(opening: Opening) -> Secret | None:
    """The API key openlineage-python's configuration holds (``OPENLINEAGE__TRANSPORT__AUTH__
    API_KEY``, or ``openlineage.yml``): the user's, so it goes, as ``OPENLINEAGE_API_KEY``
    does, only to a server the user named (``check_key_destination``)."""
    from ...host.ecosystem import read_ecosystem

    ecosystem = read_ecosystem(opening.environ, opening.workspace)
    for path in ECOSYSTEM_API_KEY:
        found = ecosystem.get(path)
        if found is None:
            continue
        value, source = found
        if not isinstance(value, str) or not value:
            continue
        if source.startswith("environment ("):
            env = source.removeprefix("environment (").removesuffix(")")
            return Secret(value, f"the environment variable {env}", f"set {env} again", env=env)
        return Secret(value, f"the {source}", f"correct it in the {source}")
    return None
