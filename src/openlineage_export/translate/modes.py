"""The consumer modes: the server the events are made for (``openlineage.server``).

Most servers take the events every server gets (``generic``: Marquez, Atlan, OpenMetadata...);
a server whose converter would lose or refuse some of them has a mode of its own, one module
each (``datahub.py``, ``data_rentgen.py``, ``feast.py``), and one row in :data:`MODES`. A row says
everything the rest of the exporter knows of a mode: its translator (the events' shape), the
endpoint that recognises it when ``openlineage.server`` is ``auto``, the namespace its jobs are
sent in, whether its job names are checked for clashes, how it refuses a run in words of its
own, and how the server is asked what it already holds (``asking.py``). Adding a mode means its
module and one row here; ``openlineage.server``'s choices and help come from the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

from ..host.setting_row import SettingsGroup, setting
from ..host.settings import Settings
from . import data_rentgen, datahub, feast
from .asking import MARQUEZ, Asking
from .events import TranslationConfig, Translator


def _same(namespace: str) -> str:
    return namespace


@dataclass(frozen=True)
class Mode:
    """One consumer mode: what ``openlineage.server`` names, and what it changes."""

    name: str
    translator: type[Translator]
    description: str
    """What it is for, for a person (``openlineage.server``'s help)."""
    server_name: str = ""
    """The server's own name, as a person writes it (``DataHub``)."""
    endpoint: str | None = None
    """The path (under the server's address) that is this server's OpenLineage endpoint:
    ``auto`` picks the mode when events are posted there. None: never picked by ``auto``."""
    job_namespace: Callable[[str], str] = _same
    """The namespace the jobs are sent in, from the configured one."""
    checks_job_names: bool = True
    """Whether two jobs could share a name (False: the mode's names encode the ids)."""
    refusal: Callable[[int, bytes], str | None] | None = None
    """The reason of a run the server refused in a way of its own (status, body), said in its
    words; None: its answers read as every server's."""
    asking: tuple[Asking, ...] = ()
    """The read APIs the server may answer, asked which of the trail's runs (or events) it
    already holds before they are sent (``asking.py``), in turn: the first it answers as its
    own is what it holds. Empty: it is never asked."""

    def recognises(self, events_url: str) -> bool:
        """Whether ``events_url`` (an address or a path) is this server's endpoint."""
        if self.endpoint is None:
            return False
        path = urlsplit(events_url).path if "://" in events_url else events_url
        return ("/" + path.strip("/")).endswith("/" + self.endpoint)


GENERIC = Mode(
    "generic",
    Translator,
    "any other server (Marquez...)",
    asking=(MARQUEZ, feast.ASKING),  # a Feast behind auto is told apart by its answers
)

MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode(
            "datahub",
            datahub.DataHubTranslator,
            "DataHub's, so that it keeps every run and dataset (docs/datahub.md)",
            server_name="DataHub",
            endpoint=datahub.ENDPOINT,
            checks_job_names=False,
            refusal=datahub.refusal,
        ),
        Mode(
            data_rentgen.SERVER,
            data_rentgen.DataRentgenTranslator,
            "Data.Rentgen's, which takes only UUIDv7 run ids (docs/data-rentgen.md)",
            job_namespace=data_rentgen.job_namespace,
        ),
        Mode(
            feast.SERVER,
            Translator,
            feast.DESCRIPTION,
            server_name=feast.SERVER_NAME,
            asking=(feast.ASKING,),
        ),
        GENERIC,
    )
}
"""Every mode, by the name ``openlineage.server`` gives it."""

AUTO = "auto"
"""``openlineage.server``'s default: the mode whose endpoint events are posted to, else
``generic``."""


@dataclass(frozen=True)
class ServerSettings(SettingsGroup):
    """Whose converter the events are shaped for."""

    title: ClassVar[str] = "events"
    """Shown with the other settings of the events: to a person they are one group."""

    server: str = setting(
        "openlineage.server",
        "string",
        AUTO,
        "Whose OpenLineage converter the events are shaped for, whatever the transport. "
        + "; ".join(f"{mode.name}: {mode.description}" for mode in MODES.values())
        + "; auto: "
        + ", ".join(
            f"{mode.name} when openlineage.endpoint is {mode.server_name}'s ({mode.endpoint})"
            for mode in MODES.values()
            if mode.endpoint
        )
        + ", else generic. Set it for a proxy in front of DataHub, and for Data.Rentgen.",
        env="OPENLINEAGE_SERVER",
        choices=(AUTO, *MODES),
    )


def mode_of(settings: Settings) -> Mode:
    """The mode the settings choose; ``auto``: the one whose endpoint events are posted to
    (over HTTP), else ``generic``."""
    chosen = settings.of(ServerSettings).server
    if chosen != AUTO:
        return MODES[chosen]
    if settings.value("openlineage.transport") != "http":
        return GENERIC
    url = settings.value("openlineage.url")
    endpoint = str(settings.value("openlineage.endpoint") or "")
    events_url = f"{str(url).rstrip('/')}/{endpoint.lstrip('/')}" if url else endpoint
    return next((m for m in MODES.values() if m.recognises(events_url)), GENERIC)


def translator_for(config: TranslationConfig) -> type[Translator]:
    """The translator of the mode ``config.server`` names."""
    return MODES[config.server].translator


def job_namespace(config: TranslationConfig) -> str:
    """The namespace the jobs are sent in: the configured one, as the mode writes it (for
    Data.Rentgen, the location it reads: ``lineage-hub://<namespace>``)."""
    return MODES[config.server].job_namespace(config.namespace)
