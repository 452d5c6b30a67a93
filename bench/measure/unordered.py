"""An order between runs that keeps none: what the causal order costs is measured against it.

It is handed to ``run_export`` through ``ExportRequest.order``, the engine's own seam
(``deliver/order.py``'s ``Ordering``), not patched over a private name, so the measurement
cannot silently stop measuring: ``tests/test_engine.py`` sends conflicting runs with this order
and sees them overlap, which the causal order never lets them.
"""

from __future__ import annotations

from openlineage_export.deliver.order import Leg, Ticket
from openlineage_export.translate.encoded import TranslatedRun


class EveryRunAtOnce:
    """Each run one leg that waits for nothing: every run may go at once (up to the
    concurrency), whatever datasets it shares with the runs before it."""

    def legs(self, run: TranslatedRun, *, split: bool = True) -> list[Leg]:
        """The whole run, waiting for no other."""
        return [Leg(0, len(run), Ticket([]))]

    def finish(self, ticket: Ticket) -> None:
        """Nothing waits for a leg; it is done."""
        ticket.done.set()
