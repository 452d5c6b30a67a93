"""The seam between translation and the wire: a destination takes one editor run at a time."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

from ..translate.events import TranslatedRun


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What became of one editor run at the destination."""

    accepted: int
    """How many of its events the destination accepted, in order."""
    error: str | None = None
    """Why the rest were not (the server's reason, secrets redacted); None when all were."""

    @property
    def delivered(self) -> bool:
        """True when every event of the run was accepted."""
        return self.error is None


class Destination(Protocol):
    """Where events go: a server over HTTP, a file for the dry run, a broker later.

    ``send`` delivers one editor run's events in order and may be called from several threads
    at once for different runs. It raises :class:`~openlineage_export.errors.DestinationError`
    only when the destination as a whole cannot take events (the export stops); a refusal of
    one run is a :class:`RunOutcome` with an error.
    """

    name: str
    concurrency: int

    def send(self, run: TranslatedRun, cancel: threading.Event) -> RunOutcome:
        """Deliver the run's events in order; stop early (not delivered) when cancelled."""
        ...

    def close(self) -> None:
        """Release connections and flush; called once at the end."""
        ...
