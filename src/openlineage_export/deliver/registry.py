"""The destination kinds, by the name ``openlineage.transport`` gives them.

Each kind is one row: its settings group, its config (built from the settings, secrets
resolved, every rule checked) and its destination class. Adding a destination means one
module in ``deliver/`` (settings group + config + destination) and one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..host.settings import Catalogue, EventSettings, SettingsGroup, setting
from ..trust import check_user_only
from .destination import DeliverySettings, Destination, Opening
from .file import FileConfig, FileDestination, FileSettings
from .http import HttpConfig, HttpDestination, HttpSettings
from .kafka import KafkaConfig, KafkaDestination, KafkaSettings


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


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("http", HttpSettings, HttpConfig.from_settings, HttpDestination,
         "POST each event to openlineage.url (Marquez, DataHub, Atlan...)"),
    Kind("kafka", KafkaSettings, KafkaConfig.from_settings, KafkaDestination,
         "produce each event to openlineage.kafka.topic"),
    Kind("file", FileSettings, FileConfig.from_settings, FileDestination,
         "append each event as a JSON line to openlineage.file.path"),
)}


@dataclass(frozen=True)
class TransportSettings(SettingsGroup):
    """Which destination kind the events go to."""

    title: ClassVar[str] = "destination"

    transport: str = setting(
        "openlineage.transport", "string", "http",
        "Where events go: " + "; ".join(f"{k.name}: {k.description}" for k in KINDS.values())
        + ".", env="OPENLINEAGE_TRANSPORT", choices=tuple(KINDS))


CATALOGUE = Catalogue((EventSettings, TransportSettings, DeliverySettings,
                       *(kind.settings for kind in KINDS.values())))
"""Every setting of the exporter, in the order ``settings list`` shows them."""


def open_destination(opening: Opening) -> Destination:
    """The destination ``openlineage.transport`` names, configured from the settings; what the
    workspace may not decide is refused first (``trust.py``)."""
    check_user_only(opening.settings)
    kind = KINDS[opening.settings.of(TransportSettings).transport]
    config = kind.config(opening)
    return kind.destination(config, opening.supplied)
