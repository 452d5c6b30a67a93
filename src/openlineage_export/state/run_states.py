"""Each run of the trail and where it stands with one destination: exported, pending (new or
changed since), or refused last time with the server's reason (``status --runs``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .index import RunIndex
from .ledger import Ledger


@dataclass(frozen=True, slots=True)
class RunState:
    """One run of the trail, as one destination has it."""

    trace_id: str
    pipeline: str
    state: str
    """``exported`` (this very record, with these settings), ``refused`` (last time, and not
    changed since: it is sent again), or ``pending`` (never sent, or changed since)."""
    reason: str | None
    """The server's reason, for a refused run."""
    run_id: str | None
    """The OpenLineage run id it was last sent under, if it was."""


def run_states(
    index: RunIndex, ledger: Ledger | None, destination_id: int | None, config: bytes
) -> Iterator[RunState]:
    """Every run of the trail, in trail order, with its standing at ``destination_id``."""
    if ledger is None or destination_id is None:
        for trace_id, pipeline in _winners(index):
            yield RunState(trace_id, pipeline, "pending", None, None)
        return
    with ledger.attached(index) as db:
        rows = db.execute(
            "SELECT w.trace_id, w.pipeline, r.state, r.reason, r.run_id, "
            "  (r.line_fingerprint IS w.fingerprint AND r.config_fingerprint IS ?) "
            "FROM winners AS w LEFT JOIN ledger.runs AS r "
            "  ON r.destination_id = ? AND r.trace_id = w.trace_id "
            "ORDER BY w.segment, w.line",
            (config, destination_id),
        )
        for trace_id, pipeline, state, reason, run_id, same in rows:
            if state == "delivered" and same:
                yield RunState(trace_id, pipeline, "exported", None, run_id)
            elif state == "failed" and same:
                yield RunState(trace_id, pipeline, "refused", reason, run_id)
            else:
                yield RunState(trace_id, pipeline, "pending", None, run_id)


def _winners(index: RunIndex) -> Iterator[tuple[str, str]]:
    index.seal()
    yield from index.db.execute("SELECT trace_id, pipeline FROM winners ORDER BY segment, line")
