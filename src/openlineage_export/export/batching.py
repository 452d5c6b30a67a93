"""Around step *deliver*: whether the server takes batches, as an earlier export learnt it.

A destination that sends the spec's batches where the server takes them
(:class:`~..deliver.destination.Batching`: ``deliver/http/batching.py``) learns it from the
first batch it posts; the ledger remembers it per destination, so that the next export sends
single events to a server that takes no batches without asking again (nor saying so again).
What it learnt is said once, as a note in the summary.
"""

from __future__ import annotations

from ..deliver.destination import Batching, Destination
from .recording import Recorder

_WORDS = {True: "yes", False: "no"}


def recall_batches(destination: Destination, recorder: Recorder) -> None:
    """Tell the destination what an earlier export learnt of its batches."""
    ledger, destination_id = recorder.ledger, recorder.destination_id
    if isinstance(destination, Batching) and ledger is not None and destination_id is not None:
        said = ledger.remembered(destination_id, "batch")
        destination.batches = {"yes": True, "no": False}.get(said or "")


def remember_batches(destination: Destination, recorder: Recorder) -> None:
    """Remember what the destination learnt of its batches, for the next export."""
    ledger, destination_id = recorder.ledger, recorder.destination_id
    if not isinstance(destination, Batching):
        return
    recorder.report.batches += destination.batches_taken
    for note in destination.notes:
        recorder.report.note(note)
    if ledger is None or destination_id is None:
        return
    if destination.batches is not None:
        ledger.remember(destination_id, "batch", _WORDS[destination.batches])
