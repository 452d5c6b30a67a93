"""The http destination's address, checked for a likely mistake before anything is sent."""

from __future__ import annotations

from urllib.parse import urlsplit

from ...host.settings import Settings
from .settings import HttpSettings


def url_doubts(settings: Settings) -> list[str]:
    """What in the http settings is likely a mistake, said before anything is sent: a url that
    already ends with the endpoint posts to ``.../api/v1/lineage/api/v1/lineage`` (every
    event refused with 404)."""
    http = settings.of(HttpSettings)
    endpoint = http.endpoint.strip("/")
    if http.url is None or not endpoint:
        return []
    path = urlsplit(http.url).path.rstrip("/")
    if not path.endswith("/" + endpoint):
        return []
    base = http.url.rstrip("/")[: -len(endpoint)].rstrip("/")
    return [
        f"openlineage.url already ends with the endpoint ({endpoint}), so events go to "
        f"{http.events_url}: set openlineage.url to {base}"
    ]
