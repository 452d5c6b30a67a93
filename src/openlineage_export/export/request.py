"""What a host hands to the export: :class:`ExportRequest`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..deliver.destination import Retry
from ..deliver.order import Ordering
from ..host.secrets import SecretStore
from ..host.settings import Settings
from ..hub.model import BadEntry
from ..state.ledger import Ledger
from .report import Progress, RunResult
from .selection import Selection


@dataclass(frozen=True)
class ExportRequest:
    """Everything a host hands to :func:`run_export`; only ``workspace`` is required."""

    workspace: Path | str
    dry_run: bool = False
    output: BinaryIO | None = None
    """Where a dry run writes its JSON Lines (required for a dry run)."""
    settings: Settings | None = None
    """Resolved settings; default: read from the workspace (and ``environ``)."""
    environ: Mapping[str, str] | None = None
    """Environment for OPENLINEAGE_* overrides; None means no overrides."""
    secrets: SecretStore | None = None
    http: Any = None
    """The host's HTTP client for the ``http`` destination: an ``aiohttp.ClientSession`` (used
    on the export's loop), or an httpx client or transport (see ``deliver/http/client.py``)."""
    clients: Mapping[str, Any] | None = None
    """The host's own clients for other destination kinds, by kind (``kafka``: a producer);
    what each kind takes is its row's ``client`` in ``deliver/registry.py``."""
    on_bad_entry: Callable[[BadEntry], None] | None = None
    on_progress: Callable[[Progress], None] | None = None
    """Called as the export moves: each phase (reading the trail, then building or sending),
    with bytes read while reading and runs done after (see :class:`~.report.Progress`)."""
    on_retry: Callable[[Retry], None] | None = None
    """Called when the destination will try an event again (the server refuses connections,
    answers 503...), with the reason, the attempt and the seconds left before it gives up; may
    be called from the sending threads."""
    on_warning: Callable[[str], None] | None = None
    """Called with each warning as it arises, e.g. before sending, that the namespace changed
    since the last export to this destination (all are also in the report)."""
    on_run: Callable[[RunResult], None] | None = None
    """Called once per editor run with its events and what became of it (for reports)."""
    cancel: threading.Event | None = None
    full: bool = False
    """Send every run again, even those the destination already accepted."""
    ledger: Ledger | None = None
    """The export ledger; default: the user's (see ``state.ledger``). Never used by a dry run."""
    order: Callable[[], Ordering] | None = None
    """Makes the order between runs sent at once; default: the causal order
    (``deliver/order.py``), which keeps every read filed under the version a one-at-a-time
    export gives. Another only measures what that order costs (bench/)."""
    selection: Selection | None = None
    """Export only these runs (some pipelines, a window of start times); default: every run.
    The others are neither built, nor sent, nor recorded; with ``full``, the selected runs are
    all sent again."""

    def host_clients(self) -> dict[str, Any]:
        """The clients the host hands in, by destination kind."""
        given = dict(self.clients or {})
        if self.http is not None:
            given["http"] = self.http
        return given
