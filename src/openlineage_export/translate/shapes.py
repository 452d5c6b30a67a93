"""The shapes of events, by the server they are made for (``openlineage.server``).

Most servers take the events every server gets (``generic``); a server whose converter would
lose or refuse some of them gets a shape of its own, one module each: ``datahub.py``,
``data_rentgen.py``. Adding a shape means its module and one row here.
"""

from __future__ import annotations

from .data_rentgen import SERVER as DATA_RENTGEN
from .data_rentgen import DataRentgenTranslator
from .data_rentgen import job_namespace as data_rentgen_job_namespace
from .datahub import DataHubTranslator
from .events import TranslationConfig, Translator

TRANSLATORS: dict[str, type[Translator]] = {
    "generic": Translator,
    "datahub": DataHubTranslator,
    DATA_RENTGEN: DataRentgenTranslator,
}
"""The translator of each shape."""

SERVERS = tuple(TRANSLATORS)
"""The values ``openlineage.server`` may take besides ``auto``."""


def translator_for(server: str) -> type[Translator]:
    """The translator of the shape ``server`` names."""
    return TRANSLATORS[server]


def job_namespace(config: TranslationConfig) -> str:
    """The namespace the jobs are sent in: the configured one, but for Data.Rentgen as the
    location it reads (``lineage-hub://<namespace>``)."""
    if config.server == DATA_RENTGEN:
        return data_rentgen_job_namespace(config.namespace)
    return config.namespace
