"""The human summary printed at the end of an export: what happened first, then what was left
behind (grouped, in a stable order), then what is worth knowing."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..export.report import MAX_LISTED, ExportReport, FailedRun
from .text import shown_lines

IDS_LISTED = 10
"""Trace ids listed per group of runs left behind for the same reason."""


@dataclass(frozen=True)
class Ending:
    """How the command saw the export end, besides the report."""

    stop_signal: str | None = None
    """``Ctrl-C`` or ``SIGTERM`` when one interrupted it."""
    events_file: str | None = None
    """Where a dry run's events went: a file, or None for standard output."""
    bad_entries_shown: int = 0
    """How many bad entries were printed while it ran."""
    outage_hint: str | None = None
    """What to check when the destination could not be reached (e.g. openlineage.url)."""


def summary(report: ExportReport, ending: Ending | None = None) -> str:
    """The summary: one line of what happened, then the details, one a line (a stranger's
    control characters, e.g. a line break in a pipeline id, shown escaped within its line)."""
    ending = ending or Ending()
    lines = _head(report, ending)
    if report.selection is not None:
        lines.append(selection_line(report))
    lines += refused_lines(report)
    if report.dataset_namespaces:
        lines.append(dataset_namespaces_line(report))
    if report.namespace_from is not None:
        lines.append(f"namespace: {report.namespace} (from {report.namespace_from!r})")
    lines += [f"warning: {warning}" for warning in report.warnings]
    lines += [f"note: {note}" for note in report.notes]
    lines += [
        f"never run: {pipeline} (OpenLineage is a log of runs; nothing to export)"
        for pipeline in report.never_run[:MAX_LISTED]
    ]
    if len(report.never_run) > MAX_LISTED:
        lines.append(
            f"... and {len(report.never_run) - MAX_LISTED:,} more pipelines never run "
            "(--json lists them all)"
        )
    if report.bad_entries:
        lines.append(bad_entries_line(report.bad_entries, ending.bad_entries_shown))
    return shown_lines(lines)


def _batches(report: ExportReport) -> str:
    """How the events went, where the server took the spec's batches."""
    if not report.batches:
        return ""
    return f" in {report.batches} batch{'es' if report.batches != 1 else ''}"


def _head(report: ExportReport, ending: Ending) -> list[str]:
    signal = f" ({ending.stop_signal})" if ending.stop_signal else ""
    done = report.runs_sent + report.runs_failed + report.runs_unchanged
    pending = max(0, report.runs_total - report.runs_sent - report.runs_unchanged)
    if report.dry_run:
        if report.cancelled:
            where = (
                f"nothing was written to {ending.events_file}"
                if ending.events_file
                else "the events of those runs are on standard output"
            )
            return [
                f"interrupted{signal}: {report.runs_sent} of {report.runs_total} runs built "
                f"({report.events_sent} events) before it stopped; {where}; nothing was sent"
            ]
        lines = [
            f"dry run: {report.runs_total} runs, {report.events_sent} events built "
            f"(namespace {report.namespace}); nothing was sent"
        ]
        if ending.events_file:
            lines.append(f"events written to {ending.events_file}")
        return lines
    stopped = report.outage if report.outage is not None else report.state_error
    if stopped is not None:
        lines = [
            f"stopped: {stopped}",
            f"{report.runs_sent} of {report.runs_total} runs sent before it stopped "
            f"({report.events_sent} events)"
            + _kept(report)
            + f"; {pending} pending: the next export sends them",
        ]
        if ending.outage_hint and report.outage is not None:
            lines.append(ending.outage_hint)
        return lines
    # Nothing taken and something refused is no export: its first line must not read as one.
    nothing = not report.runs_sent and not report.events_sent and report.runs_failed
    lines = [
        f"{'nothing exported' if nothing else 'exported'} to {report.destination}: "
        f"{report.runs_sent} of "
        f"{report.runs_total} runs sent ({report.events_sent} events{_batches(report)})"
        + _kept(report)
        + (f", {report.runs_failed} failed" if report.runs_failed else "")
    ]
    if report.cancelled:
        left = report.runs_total - done
        lines.append(
            f"interrupted{signal}: what was accepted is kept; run the export again "
            f"to finish ({pending} runs pending"
            + (f", {left} not tried yet" if 0 < left < pending else "")
            + ")"
        )
    return lines


def selection_line(report: ExportReport) -> str:
    """How many runs the selection took, of how many, and what became of the others."""
    assert report.selection is not None
    left = report.runs_on_trail - report.runs_total
    fate = (
        "not built"
        if report.dry_run
        else "neither sent nor recorded: status counts them as it did before"
    )
    return (
        f"selected {report.runs_total} of {report.runs_on_trail} runs on the trail: "
        f"{report.selection.describe()} ({left} left out, {fate})"
    )


def _kept(report: ExportReport) -> str:
    """The runs not sent because the destination has them: those the ledger says it accepted
    (unchanged), and those the server was found to hold before a first export."""
    unchanged = report.runs_unchanged - report.runs_held
    return (f", {unchanged} unchanged" if unchanged else "") + (
        f", {report.runs_held} already held by the server" if report.runs_held else ""
    )


NAMESPACES_LISTED = 12
"""Dataset namespaces named in the summary (--json lists those the report keeps)."""


def dataset_namespaces_line(report: ExportReport) -> str:
    """Where a server lists the datasets: each in its own namespace, not the jobs' (a
    server's page of the jobs' namespace shows no dataset)."""
    names = sorted(report.dataset_namespaces)
    shown = ", ".join(names[:NAMESPACES_LISTED])
    if report.dataset_namespaces_more:
        more = f" and more (--json lists the first {len(names)})"
    elif len(names) > NAMESPACES_LISTED:
        more = f" and {len(names) - NAMESPACES_LISTED} more (--json lists them)"
    else:
        more = ""
    verb = "built" if report.dry_run else "written"
    return (
        f"datasets {verb} in their own namespaces: {shown}{more} (the jobs are in "
        f"{report.namespace})"
    )


def refused_lines(report: ExportReport) -> list[str]:
    """The runs left behind, one group per pipeline and reason (ids listed once), in a stable
    order whatever order the destination answered in; a reason runs of several pipelines
    share (a wrong url refuses them all) is one group, said once."""
    pipelines: dict[str, set[str]] = defaultdict(set)
    for failure in report.failed:
        pipelines[failure.reason].add(failure.pipeline)
    groups: dict[tuple[str | None, str], list[FailedRun]] = defaultdict(list)
    for failure in report.failed_in_order():
        shared = len(pipelines[failure.reason]) > 1
        groups[None if shared else failure.pipeline, failure.reason].append(failure)
    lines = []
    for (pipeline, reason), failures in groups.items():
        count = len(failures)
        verb = "failed" if reason.startswith("gave up") else "refused"
        runs = "1 run" if count == 1 else f"{count} runs"
        of = pipeline if pipeline is not None else f"{len(pipelines[reason])} pipelines"
        lines.append(f"{runs} of {of} {verb}: {reason}")
        ids = [_run_name(f) for f in failures[:IDS_LISTED]]
        more = f" and {count - IDS_LISTED} more" if count > IDS_LISTED else ""
        lines.append(f"  {'run' if count == 1 else 'runs'}: {', '.join(ids)}{more}")
    unlisted = report.runs_failed - len(report.failed)
    if unlisted > 0:
        lines.append(
            f"... and {unlisted:,} more runs left behind (the first {MAX_LISTED} are "
            "grouped above; --json lists them with their run ids)"
        )
    return lines


def _run_name(failure: FailedRun) -> str:
    """A run by its trace id; its run id too only when that is another id."""
    if failure.run_id == failure.trace_id.lower():
        return failure.trace_id
    return f"{failure.trace_id} (run id {failure.run_id})"


def bad_entries_line(count: int, shown: int) -> str:
    """How many bad entries were skipped, and where to find those not printed."""
    noun = "bad entry" if count == 1 else "bad entries"
    if shown >= count:
        where = "listed above"
    elif shown:
        where = f"the first {shown} listed above; --json lists the first {MAX_LISTED}"
    else:
        where = f"--json lists the first {MAX_LISTED}"
    verb = "was" if count == 1 else "were"
    return f"{count:,} {noun} on the audit trail {verb} skipped ({where})"


def more_bad_entries_line(hidden: int) -> str:
    """After the capped list of bad entries (``-q``): how many more there were."""
    noun = "bad entry" if hidden == 1 else "bad entries"
    return f"... and {hidden:,} more {noun}; --json lists the first {MAX_LISTED}"
