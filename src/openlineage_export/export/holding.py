"""Step *held* of the pipe: before a first export to a destination, what the server holds.

A CI job starts on a fresh machine with an empty ledger: without this step every push sends
the whole history again. Where the ledger holds no accepted run of this workspace for the
destination, and the destination can be asked (``deliver/http/held.py``: Marquez's read API), the
server is asked which runs of the trail's jobs it holds; :func:`~.export.translate` then
records each editor run it holds whole, as it is, as accepted (``Recorder.held``) instead of
sending it. ``--full`` skips the question.
"""

from __future__ import annotations

import threading

from ..deliver.destination import Destination, Holding
from ..deliver.engine import unless_cancelled
from ..deliver.http.held import Holdings
from ..deliver.http.recall import CannotAsk
from ..hub.model import Graph
from ..hub.trail import TrailScan
from ..translate import modes
from ..translate.events import TranslationConfig
from .recording import Recorder


async def server_holds(
    destination: Destination,
    recorder: Recorder,
    scan: TrailScan,
    graph: Graph,
    translation: TranslationConfig,
    cancel: threading.Event,
) -> Holdings | None:
    """What the server already holds of the trail's jobs, asked only before a first export
    (the ledger holds no run this destination accepted) of events in the shape every server
    gets; None when it is not asked, or cannot say. A server that could not be asked is one
    line; a cancel ends the asking at once."""
    ledger, destination_id = recorder.ledger, recorder.destination_id
    if (
        not isinstance(destination, Holding)
        or ledger is None
        or destination_id is None
        or not modes.MODES[translation.server].asks_what_it_holds
        or scan.runs == 0
        or ledger.accepted_any(destination_id)
    ):
        return None
    try:
        return await unless_cancelled(
            destination.holdings(
                modes.job_namespace(translation), job_names(graph, translation, scan), scan.runs
            ),
            cancel,
        )
    except CannotAsk as exc:
        recorder.add_warning(
            f"could not ask the server at {destination.name} which runs it already holds "
            f"({exc}); every run is sent"
        )
        return None


def job_names(graph: Graph, translation: TranslationConfig, scan: TrailScan) -> set[str]:
    """The names of the jobs the trail's runs are sent as: each pipeline's and each stage's
    that ran."""
    translator = modes.translator_for(translation)(graph, translation)
    names = {translator.pipeline_job_name(pipeline) for pipeline in scan.pipelines}
    names.update(
        translator.stage_job_name(pipeline, stage) for pipeline, stage in scan.index.stages_run()
    )
    return names
