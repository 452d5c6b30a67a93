"""``status``: per destination, the runs exported and pending, and how the last export ended;
``status --forget`` drops what the ledger knows of one."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import DISTRIBUTION as PROG
from ..errors import ConfigError
from ..files.walk import shown_path
from ..files.whose import Checkouts
from ..terminal.signals import held_signals
from .base import Command
from .echo import echo, echo_json
from .workspace import current_workspace, load_settings, settings_with_url, workspace_option

if TYPE_CHECKING:
    from ..export.status import DestinationState
    from ..host.settings import Settings


@click.command(
    cls=Command,
    short_help="Per destination: runs exported, pending (and refused), and how the last export "
    "ended.",
    examples=f"""\
{PROG} status
{PROG} status --url http://localhost:5000       # one server only
{PROG} status --json
{PROG} status --runs                            # each run, exported, pending or refused
{PROG} status --forget http://old-host:5000/api/v1/lineage""",
)
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option(
    "--url",
    metavar="URL",
    help="Only this server (instead of openlineage.url), exported to or not.",
)
@click.option(
    "--runs",
    "each_run",
    is_flag=True,
    help="Each run of the trail, in trail order, and where it stands with the server in "
    "force (or --url's): exported, pending (new or changed), or refused last time with the "
    "server's reason.",
)
@click.option(
    "--forget",
    metavar="DESTINATION",
    help="Drop everything the ledger knows of DESTINATION (as status lists it): the "
    "next export to it sends every run again.",
)
def status(as_json: bool, url: str | None, each_run: bool, forget: str | None) -> None:
    """Per destination: runs exported, pending and failed, and when the last export ran."""
    root = current_workspace()
    if forget is not None:
        _forget(root, forget)
        return
    if each_run:
        _runs(root, url, as_json)
        return
    with held_signals():
        from ..export.status import export_status

    settings = settings_with_url(root, url)
    standing = export_status(root, os.environ, settings=settings)
    destinations = _listed(root, standing.destinations, standing.runs, settings)
    if as_json:
        echo_json(
            {
                "runs": standing.runs,
                "badEntries": standing.bad_entries,
                "destinations": [
                    {
                        "destination": s.destination,
                        "exported": s.exported,
                        "pending": s.pending,
                        "failed": s.failed,
                        "lastExportStarted": s.last_export_started,
                        "lastExportFinished": s.last_export_finished,
                        "lastExportOutcome": s.last_export_outcome,
                    }
                    for s in destinations
                ],
            }
        )
        return
    bad = standing.bad_entries
    echo(
        f"{standing.runs} runs on the trail"
        + (f", {bad} bad {'entry' if bad == 1 else 'entries'}" if bad else "")
    )
    if not destinations:
        echo("never exported (a dry run does not count)")
    for state in destinations:
        echo(f"{state.destination}: {_standing(state)}")
        echo(f"  last export: {_last_export(state)}")


def _listed(
    root: Path, destinations: list[DestinationState], runs: int, given: Settings | None
) -> list[DestinationState]:
    """The destinations to show: only the one ``--url`` names (``given``: its settings), else
    every one the ledger knows, and the one the settings name (its kind's row says how) even
    before anything went to it."""
    from ..deliver.registry import kind_of
    from ..export.status import DestinationState

    never = DestinationState("", runs, 0, runs, 0, None, None, None)
    if given is not None:
        kind = kind_of(given)
        wanted = (kind.planned(given) if kind.planned is not None else None) or ""
        return [s for s in destinations if s.destination == wanted] or [
            dataclasses.replace(never, destination=wanted)
        ]
    in_force = load_settings(root)
    kind = kind_of(in_force)
    configured = kind.planned(in_force) if kind.planned is not None else None
    if configured and all(s.destination != configured for s in destinations):
        return [*destinations, dataclasses.replace(never, destination=configured)]
    return destinations


def _standing(state: DestinationState) -> str:
    """Exported, then pending with the refused ones as a part of it."""
    if state.last_export_started is None and not state.exported:
        return f"never exported; {state.pending} runs pending"
    refused = min(state.failed, state.pending)
    parts = [f"{state.exported} of {state.runs} runs exported"]
    if state.pending:
        detail = []
        if refused:
            detail.append(f"{refused} refused last time")
        if state.pending - refused:
            detail.append(f"{state.pending - refused} new or changed")
        parts.append(f"{state.pending} pending ({', '.join(detail)})")
    return "; ".join(parts)


def _last_export(state: DestinationState) -> str:
    if state.last_export_started is None:
        return "never"
    if state.last_export_outcome is None:
        return (
            f"started {state.last_export_started} and not finished: still running, or "
            "killed (the next export sends what it did not record)"
        )
    if state.last_export_outcome == "finished":
        return f"finished {state.last_export_finished}"
    if state.last_export_outcome == "interrupted":
        return (
            f"interrupted {state.last_export_finished} (Ctrl-C, SIGTERM or SIGHUP); "
            "export again to send the rest"
        )
    if state.last_export_outcome == "stopped":
        return f"stopped {state.last_export_finished}: the destination could not be reached"
    return f"{state.last_export_outcome} {state.last_export_finished}"


def _runs(root: Path, url: str | None, as_json: bool) -> None:
    """``status --runs``: each run and where it stands with the destination in force."""
    with held_signals():
        from ..deliver.registry import kind_of
        from ..export.status import runs_standing
        from ..translate.names import pipeline_job

    settings = settings_with_url(root, url)
    in_force = settings if settings is not None else load_settings(root)
    kind = kind_of(in_force)
    destination = kind.planned(in_force) if kind.planned is not None else None
    if not destination:  # a file, Kafka...: the one of them last exported to
        with held_signals():
            from ..state.ledger import Ledger

        ledger = Ledger.open_read_only(os.environ, Checkouts.around(root, os.environ))
        known = [] if ledger is None else ledger.status(shown_path(root))
        if ledger is not None:
            ledger.close()
        if not known:
            raise ConfigError(
                f"{root} was never exported: every run is pending (status --runs names the "
                "runs of a destination once an export went to it)"
            )
        destination = max(known, key=lambda s: s.last_export_started or "").destination
    standing = runs_standing(root, os.environ, destination, settings=settings)
    if as_json:
        echo_json(
            {
                "destination": standing.destination,
                "namespace": standing.namespace,
                "runs": [
                    {
                        "traceId": run.trace_id,
                        "pipeline": run.pipeline,
                        "job": pipeline_job(run.pipeline),
                        "state": run.state,
                        "reason": run.reason,
                        "runId": run.run_id,
                    }
                    for run in standing.runs
                ],
            }
        )
        return
    echo(f"{standing.destination} (namespace {standing.namespace}): {len(standing.runs)} runs")
    for run in standing.runs:
        why = f": {run.reason}" if run.reason else ""
        echo(f"  {run.state:<8}  {run.pipeline}  {run.trace_id}{why}")


def _forget(root: Path, destination: str) -> None:
    with held_signals():
        from ..state.ledger import Ledger

    ledger = Ledger.open_read_only(os.environ, Checkouts.around(root, os.environ))
    known = [] if ledger is None else [s.destination for s in ledger.status(shown_path(root))]
    if ledger is not None:
        ledger.close()
    if destination not in known:
        raise ConfigError(
            f"the ledger knows no destination {destination!r} for {root}"
            + (f"; it knows: {', '.join(known)}" if known else " (it was never exported)")
        )
    ledger = Ledger.open(os.environ, Checkouts.around(root, os.environ))
    try:
        ledger.forget(shown_path(root), destination)
    finally:
        ledger.close()
    echo(f"forgot {destination}: the next export to it sends every run")
