"""Step *recall* of an export: whether the server lost runs the ledger says it accepted,
asked where it can be (``deliver/http/recall.py``) before anything is sent."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..deliver.destination import Destination, Recalling
from ..deliver.engine import unless_cancelled
from ..deliver.http.recall import SAMPLE as RECALL_SAMPLE
from ..deliver.http.recall import CannotAsk
from ..hub.trail import TrailScan
from ..state.index import EVERY_RUN, RunFilter
from .recording import Recorder

if TYPE_CHECKING:
    from .opening import Opened


async def server_forgot(
    destination: Destination,
    recorder: Recorder,
    scan: TrailScan,
    opened: Opened,
    cancel: threading.Event,
    only: RunFilter = EVERY_RUN,
) -> bool:
    """Step *recall*: whether the server lost runs the ledger says it accepted (a database
    reset, an older backup), where it can be asked (``deliver/http/recall.py``); if so, the
    export says so and sends every run again. A cancel ends the asking at once; a server that
    could not be asked is one line, and nothing changes. Only the runs ``only`` takes are
    asked about (and sent again)."""
    if (
        not isinstance(destination, Recalling)
        or recorder.ledger is None
        or recorder.destination_id is None
    ):
        return False
    sample = recorder.ledger.accepted_sample(
        scan.index, recorder.destination_id, opened.fingerprint, RECALL_SAMPLE, only
    )
    if not sample:
        return False
    try:
        said = await unless_cancelled(
            destination.forgotten(opened.translation.namespace, sample), cancel
        )
    except CannotAsk as exc:
        recorder.add_warning(
            f"could not ask the server at {destination.name} whether it still "
            f"has the runs the ledger says it accepted ({exc}); they are not "
            "sent again (--full sends every run)"
        )
        return False
    if said is None:
        return False
    recorder.add_warning(said)
    return True
