"""Step *held* of the pipe: before a first export to a destination, what the server holds.

A CI job starts on a fresh machine with an empty ledger: without this step every push sends
the whole history again. Where the ledger holds no accepted run of this workspace for the
destination, and the destination can be asked (``deliver/http/held.py``: Marquez's read API), the
server is asked which of the runs the trail would send it holds, job by job, until each job's
are found (:func:`wanted`, read from the trail first); :func:`~.export.translate` then
records each editor run it holds whole, as it is, as accepted (``Recorder.held``) instead of
sending it. ``--full`` skips the question.
"""

from __future__ import annotations

import asyncio
import threading

from ..deliver.destination import Destination, Holding
from ..deliver.engine import unless_cancelled
from ..deliver.http.held import Holdings, Wanted
from ..deliver.http.recall import CannotAsk
from ..hub.trail import TrailScan
from ..state.index import RunFilter
from ..translate import modes
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
    only before a first export (the ledger holds no run this destination accepted) of events
    in the shape every server gets; None when it is not asked, or cannot say. A server that
    could not be asked is one line; a cancel ends the asking at once."""
    ledger, destination_id = recorder.ledger, recorder.destination_id
    translation = opened.translation
    if (
        not isinstance(destination, Holding)
        or ledger is None
        or destination_id is None
        or not modes.MODES[translation.server].asks_what_it_holds
        or scan.runs == 0
        or ledger.accepted_any(destination_id)
    ):
        return None
    runs = await asyncio.to_thread(wanted, opened, scan, only, cancel)
    if cancel.is_set():
        return None
    try:
        return await unless_cancelled(
            destination.holdings(modes.job_namespace(translation), runs, scan.runs), cancel
        )
    except CannotAsk as exc:
        recorder.add_warning(
            f"could not ask the server at {destination.name} which runs it already holds "
            f"({exc}); every run is sent"
        )
        return None


def wanted(opened: Opened, scan: TrailScan, only: RunFilter, cancel: threading.Event) -> Wanted:
    """The runs the trail would send (those ``only`` takes), by job: each editor run's
    pipeline run and stage runs, read from the trail (a segment that changed meanwhile is the
    translation's to report; its runs are not looked for)."""
    translator = modes.translator_for(opened.translation)(opened.graph, opened.translation)
    runs = Wanted()
    for run, _ in opened.trail.runs(scan, scan.index.in_trail_order(only), _unsaid):
        if cancel.is_set():
            break
        for job, run_id in translator.run_ids(run):
            runs.add(job, run_id)
    return runs


def _unsaid(entry: object) -> None:
    return None
