"""Step *held* of the pipe: before sending, what the server already holds.

A CI job starts on a fresh machine with an empty ledger: without this step every push sends
the whole history again. Where the ledger holds no accepted run of this workspace for the
destination, and the destination can be asked (``deliver/http/held.py``, through the read APIs
the mode's row names: ``translate/asking.py``), the server is asked which of the runs the trail
would send it holds, job by job (:func:`wanted`, read from the trail first). A server that
keeps every event it is given (Feast: an event sent twice is held twice) is asked before every
export that has a run to send, about those runs only: a run that changed, or one an outage
cut, may be held in part. The ledger remembers which server answered. :func:`~.export.translate`
then records each editor run it holds whole as accepted (``Recorder.held``) instead of sending
it, and sends of the others only the events the server lacks. ``--full`` skips the question.
"""

from __future__ import annotations

import asyncio
import threading

from ..deliver.destination import Destination, Holding
from ..deliver.engine import unless_cancelled
from ..deliver.http.held import Holdings, Wanted
from ..deliver.http.recall import CannotAsk
from ..hub.trail import TrailScan
from ..state.index import RunFilter, Winner
from ..state.ledger import Ledger
from ..translate import modes
from ..translate.asking import keeps_duplicates as asking_keeps_duplicates
from .opening import Opened
from .recording import Recorder


async def server_holds(
    destination: Destination,
    recorder: Recorder,
    scan: TrailScan,
    opened: Opened,
    only: RunFilter,
    cancel: threading.Event,
) -> Holdings | None:
    """What the server already holds of the runs of the trail (those ``only`` takes), asked
    before a first export (the ledger holds no run this destination accepted), and before every
    export with runs to send to a server that keeps duplicates; None when it is not asked, or
    cannot say. A server that could not be asked is one line; a cancel ends the asking at once."""
    ledger, destination_id = recorder.ledger, recorder.destination_id
    translation = opened.translation
    asking = modes.MODES[translation.server].asking
    if (
        not isinstance(destination, Holding)
        or ledger is None
        or destination_id is None
        or not asking
        or scan.runs == 0
    ):
        return None
    pending: list[Winner] | None = None
    if ledger.accepted_any(destination_id):
        if not destination.keeps_duplicates:
            return None
        pending = await asyncio.to_thread(_pending, ledger, destination_id, scan, opened, only)
        if not pending:
            return None
    runs = await asyncio.to_thread(wanted, opened, scan, only, cancel, pending)
    if cancel.is_set():
        return None
    try:
        held = await unless_cancelled(
            destination.holdings(modes.job_namespace(translation), runs, scan.runs), cancel
        )
    except CannotAsk as exc:
        recorder.add_warning(
            f"could not ask the server at {destination.name} which runs it already holds "
            f"({exc}); every run is sent"
        )
        return None
    if held is not None:
        ledger.remember(destination_id, "server", held.asking.name)
    return held


def keeps_duplicates(destination: Destination, recorder: Recorder, opened: Opened) -> None:
    """Tell the destination, before anything is sent (``--full`` too, and whether or not the
    server is asked what it holds), whether its server keeps every event it is given: the
    mode's read APIs say so, or the one the server answered through last time (the ledger
    remembers it) does. A Feast found under ``auto`` once is never sent a request again blind."""
    ledger, destination_id = recorder.ledger, recorder.destination_id
    if not isinstance(destination, Holding) or ledger is None or destination_id is None:
        return
    asking = modes.MODES[opened.translation.server].asking
    if asking_keeps_duplicates(asking, ledger.remembered(destination_id, "server")):
        destination.keeps_duplicates = True


def _pending(
    ledger: Ledger, destination_id: int, scan: TrailScan, opened: Opened, only: RunFilter
) -> list[Winner]:
    """The runs of the trail the ledger says are still to send (those ``only`` takes)."""
    classified = ledger.classify(scan.index, destination_id, opened.fingerprint, only)
    return [item.winner for item in classified if item.pending]


def wanted(
    opened: Opened,
    scan: TrailScan,
    only: RunFilter,
    cancel: threading.Event,
    among: list[Winner] | None = None,
) -> Wanted:
    """The runs the trail would send (those ``only`` takes, ``among`` these when given), by
    job: each editor run's pipeline run and stage runs, read from the trail (a segment that
    changed meanwhile is the translation's to report; its runs are not looked for)."""
    translator = modes.translator_for(opened.translation)(opened.graph, opened.translation)
    runs = Wanted()
    winners = scan.index.in_trail_order(only) if among is None else among
    for run, _ in opened.trail.runs(scan, winners, _unsaid):
        if cancel.is_set():
            break
        for job, run_id, started in translator.run_ids(run):
            runs.add(job, run_id, started)
    return runs


def _unsaid(entry: object) -> None:
    return None
