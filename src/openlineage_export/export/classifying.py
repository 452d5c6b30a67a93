"""Step *classify*: which runs are pending, by the ledger."""

from __future__ import annotations

from collections.abc import Iterator

from ..hub.trail import TrailScan
from ..state.answers import Classified
from ..state.index import EVERY_RUN, RunFilter
from ..state.ledger import Ledger


def classify(
    scan: TrailScan,
    ledger: Ledger | None,
    destination_id: int | None,
    fingerprint: bytes,
    *,
    full: bool = False,
    only: RunFilter = EVERY_RUN,
) -> Iterator[Classified]:
    """Step *classify*: each run of the trail (that ``only`` takes), pending unless the ledger
    says it was accepted."""
    if ledger is None or full:
        return (Classified(winner, True) for winner in scan.index.in_trail_order(only))
    return ledger.classify(scan.index, destination_id, fingerprint, only)
