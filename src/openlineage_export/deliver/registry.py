"""The destination kinds, by the name ``openlineage.transport`` gives them.

Each kind is one row, and the row says everything the rest of the exporter knows of it: its
settings group (``settings list``, the extension's settings and docs/settings.md are drawn from
the groups), its config (built from the settings, secrets resolved, every rule checked) and
destination class, the setting that holds its address, openlineage-python's ``transport.type``
for it, what to ask when it cannot be reached, how ``status`` names it before anything went to
it, and the secret it may carry. Adding a destination means one module in ``deliver/``
(settings group + config + destination) and one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..guards.keys import KeySettings
from ..guards.trust import Approvable, check_named_destination, check_user_only
from ..host.setting_row import SettingsGroup, setting
from ..host.settings import Catalogue, EventSettings, Settings
from ..translate.modes import ServerSettings
from .console import ConsoleConfig, ConsoleDestination, ConsoleSettings
from .destination import DeliverySettings, Destination, Opening
from .file import FileConfig, FileDestination, FileSettings
from .http.address import url_doubts
from .http.destination import HttpConfig, HttpDestination
from .http.settings import API_KEY_ENV, HttpSettings
from .kafka.config import PASSWORD_ENV, KafkaConfig, KafkaSettings
from .kafka.destination import KafkaDestination


@dataclass(frozen=True)
class Secret:
    """A secret a kind may send: the setting that names it in the secrets store, and the
    environment variable that hands it over directly instead."""

    setting: str
    env: str
    what: str
    """What it is, for a person: ``the API key``."""
    approvable: Approvable
    """The servers it may be approved for (``secrets set --for``, ``secrets allow``)."""


@dataclass(frozen=True)
class Kind:
    """One destination kind: what ``openlineage.transport`` names, and how to open it."""

    name: str
    settings: type[SettingsGroup]
    config: Callable[[Opening], Any]
    """Builds the kind's config from the settings (``Config.from_settings``)."""
    destination: Callable[..., Destination]
    """Called with the config and :class:`~.destination.Supplied`."""
    description: str
    address: str | None = None
    """The setting that says where its events go; an outage's hint names it, and ``--url``
    stands for it when it is ``openlineage.url``."""
    transport_type: str | None = None
    """openlineage-python's ``transport.type`` for it (``OPENLINEAGE__TRANSPORT__TYPE``)."""
    unreachable: str | None = None
    """What to ask when it could not be reached (``is the server running``); None: no hint."""
    planned: Callable[[Settings], str | None] | None = None
    """Its name from the settings alone, so that ``status`` lists it before anything went to
    it; None: ``status`` lists it once it was exported to."""
    secret: Secret | None = None
    client: str | None = None
    """What a host may hand in as its own client for this kind (``ExportRequest.clients``);
    None: it takes none."""
    doubts: Callable[[Settings], list[str]] | None = None
    """What in its settings is likely a mistake (warnings, said before sending); None: none."""


def _events_url(settings: Settings) -> str | None:
    return settings.of(HttpSettings).events_url


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "http",
            HttpSettings,
            HttpConfig.from_settings,
            HttpDestination,
            "POST each event to openlineage.url (Marquez, DataHub, Atlan...)",
            address="openlineage.url",
            transport_type="http",
            unreachable="is the server running",
            planned=_events_url,
            doubts=url_doubts,
            secret=Secret(
                "openlineage.apiKey.secretRef",
                API_KEY_ENV,
                "the API key",
                Approvable(("http", "https"), "an http:// or https:// server"),
            ),
            client="an aiohttp.ClientSession (used on the export's loop), or an httpx client "
            "or transport",
        ),
        Kind(
            "kafka",
            KafkaSettings,
            KafkaConfig.from_settings,
            KafkaDestination,
            "produce each event to openlineage.kafka.topic",
            address="openlineage.kafka.bootstrapServers",
            transport_type="kafka",
            unreachable="are the brokers running",
            secret=Secret(
                "openlineage.kafka.sasl.password.secretRef",
                PASSWORD_ENV,
                "the Kafka SASL password",
                Approvable(
                    ("kafka",),
                    "a Kafka broker",
                    port_required="one for each broker of openlineage.kafka.bootstrapServers",
                ),
            ),
            client="a confluent_kafka.Producer of the host's own (the host closes it)",
        ),
        Kind(
            "file",
            FileSettings,
            FileConfig.from_settings,
            FileDestination,
            "append each event as a JSON line to openlineage.file.path",
            address="openlineage.file.path",
            transport_type="file",
        ),
        Kind(
            "console",
            ConsoleSettings,
            ConsoleConfig.from_settings,
            ConsoleDestination,
            "print each event as a JSON line on openlineage.console.stream",
            address="openlineage.console.stream",
            transport_type="console",
        ),
    )
}


@dataclass(frozen=True)
class TransportSettings(SettingsGroup):
    """Which destination kind the events go to."""

    title: ClassVar[str] = "destination"

    transport: str = setting(
        "openlineage.transport",
        "string",
        "http",
        "Where events go: " + "; ".join(f"{k.name}: {k.description}" for k in KINDS.values()) + ".",
        env="OPENLINEAGE_TRANSPORT",
        choices=tuple(KINDS),
        ecosystem="transport.type",
        ecosystem_values=tuple(
            (k.transport_type, k.name) for k in KINDS.values() if k.transport_type
        ),
    )


CATALOGUE = Catalogue(
    (
        EventSettings,
        ServerSettings,
        TransportSettings,
        DeliverySettings,
        KeySettings,
        *(kind.settings for kind in KINDS.values()),
    )
)
"""Every setting of the exporter, in the order ``settings list`` shows them."""


def kind_of(settings: Settings) -> Kind:
    """The kind ``openlineage.transport`` names in ``settings``."""
    return KINDS[settings.of(TransportSettings).transport]


def doubts(settings: Settings) -> list[str]:
    """What in the settings of the destination in force is likely a mistake."""
    kind = kind_of(settings)
    return kind.doubts(settings) if kind.doubts is not None else []


def check_transport(settings: Settings) -> None:
    """Refuse a transport from the workspace that takes the events away from where the user
    named (``trust.check_named_destination``): an export and ``--url`` ask the same."""
    check_named_destination(
        settings,
        "openlineage.transport",
        kind_of(settings).name,
        {kind.name: kind.address for kind in KINDS.values() if kind.address is not None},
    )


def open_destination(opening: Opening) -> Destination:
    """The destination ``openlineage.transport`` names, configured from the settings; what the
    workspace may not decide is refused first (``guards/trust.py``)."""
    check_user_only(opening.settings)
    check_transport(opening.settings)
    kind = kind_of(opening.settings)
    config = kind.config(opening)
    return kind.destination(config, opening.supplied)


def approvable() -> list[Approvable]:
    """The servers a stored secret may be approved for, those of every kind with a secret."""
    return [kind.secret.approvable for kind in KINDS.values() if kind.secret is not None]
