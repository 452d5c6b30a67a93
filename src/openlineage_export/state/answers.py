"""What the ledger answers: each run of the trail and whether a destination still needs it,
and per destination what was accepted and how the last export ended."""

from __future__ import annotations

from dataclasses import dataclass

from .index import Winner


@dataclass(frozen=True, slots=True)
class Classified:
    """A run of the trail and whether the destination still needs it."""

    winner: Winner
    pending: bool
    """False when the destination already accepted this very record with these settings."""

    @property
    def trace_id(self) -> str:
        """The run's trace id."""
        return self.winner.trace_id

    @property
    def segment(self) -> int:
        """The segment of the run's current record."""
        return self.winner.segment

    @property
    def line(self) -> int:
        """The line of the run's current record."""
        return self.winner.line

    @property
    def check(self) -> int:
        """The quick checksum of the run's current record, as the first pass read it."""
        return self.winner.check


@dataclass(frozen=True, slots=True)
class DestinationStatus:
    """What the ledger knows about one destination of a workspace."""

    destination: str
    delivered: int
    failed: int
    last_export_started: str | None
    last_export_finished: str | None
    last_export_outcome: str | None
    """``finished``, ``interrupted`` or ``stopped`` (an outage); None before any export."""
