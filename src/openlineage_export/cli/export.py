"""``export``: send the workspace's runs (or build them: ``--dry-run``), then the summary."""

from __future__ import annotations

import os
import sys
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import DISTRIBUTION as PROG
from ..errors import ExportError, OutputError
from ..files.whose import Checkouts
from ..host import secrets as secrets_mod
from ..terminal.signals import held_signals
from ..terminal.text import shown
from .base import Command
from .echo import echo
from .ending import say_how_it_ended, write_report
from .exit_codes import EXIT_CODES
from .host_words import HOST_ENV
from .selection import selection_of, selection_options
from .workspace import (
    catalogue,
    current_workspace,
    load_settings,
    settings_with_url,
    workspace_option,
)

if TYPE_CHECKING:  # the export stack is imported when the command runs
    from ..export.report import ExportReport
    from ..export.selection import Selection
    from ..host.settings import Settings
    from ..terminal.display import Display
    from ..terminal.signals import Interruption

OTHER_ENVIRONMENT = {
    "OPENLINEAGE_EXPORT_STATE_DIR": f"folder of the ledger [~/.local/state/{PROG}]",
    "OPENLINEAGE_EXPORT_CONFIG_DIR": f"folder of the secrets file [~/.config/{PROG}]",
    "OPENLINEAGE_EXPORT_SECRETS": "file or keyring: force a secrets store",
    "OPENLINEAGE__TRANSPORT__*": "openlineage-python's configuration (URL, ENDPOINT, TYPE, "
    "AUTH__API_KEY...)",
    "OPENLINEAGE_CONFIG": "openlineage-python's openlineage.yml [./openlineage.yml, "
    "~/.openlineage/openlineage.yml]",
    HOST_ENV: "who runs this command: vscode (the extension: hints name Settings and the "
    "open folder); unset or unknown: the command line",
}
"""Environment variables besides the settings' own and the kinds' secrets (those come from
the catalogue and the registry)."""


def _export_sections() -> list[tuple[str, str]]:
    with held_signals():
        from ..deliver.registry import KINDS
    rows = [(row.env, f"{row.key}") for row in catalogue() if row.env]
    rows += [
        (k.secret.env, f"{k.secret.what} (instead of {k.secret.setting})")
        for k in KINDS.values()
        if k.secret is not None
    ]
    rows += list(OTHER_ENVIRONMENT.items())
    width = max(len(name) for name, _ in rows)
    environment = "\n".join(f"{name.ljust(width)}  {what}" for name, what in rows)
    return [("Environment", environment), ("Exit codes", EXIT_CODES)]


@click.command(
    cls=Command,
    sections=_export_sections,
    short_help="Export the workspace's runs to the OpenLineage server in the settings "
    "(or --dry-run).",
    examples=f"""\
{PROG} export --dry-run -o events.jsonl         # every event, nothing sent
{PROG} export --dry-run | jq .eventType         # events on stdout (also: -o -)
{PROG} export                                   # send what is new or changed
{PROG} export --url http://localhost:5000       # another server, for this export only
{PROG} export --full --report report.html       # send everything again, and a report
{PROG} export --pipeline daily-sales --since 7d # one pipeline's runs of the last 7 days
{PROG} export --dry-run --since 2026-11-01 --until 2026-11-03T12:00:00+01:00
{PROG} export --pipeline a --pipeline b --full  # two pipelines' runs, sent again
{PROG} export --json --progress json            # for a host: JSON progress on stderr
{PROG} export --watch                           # then each run as it ends, until Ctrl-C
{PROG} export --watch --dry-run -o events.jsonl # each run's events as it ends""",
)
@workspace_option
@click.option(
    "--dry-run",
    is_flag=True,
    help="Build every event and write it as JSON Lines; send nothing (no server needed).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
    help="With --dry-run: write the events to this file (written whole, or not at "
    "all if interrupted) instead of standard output; '-' is standard output.",
)
@click.option(
    "--url",
    metavar="URL",
    help="Send to this server for this export only, instead of openlineage.url "
    "(the settings are not changed).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the summary as JSON on standard output."
)
@click.option(
    "--full",
    is_flag=True,
    help="Send every run again, not only those new or changed since the last export (and "
    "without first asking a Marquez what it already holds).",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="No summary and no progress on stderr; only the first 10 bad entries.",
)
@click.option(
    "--progress",
    type=click.Choice(["auto", "json", "none"]),
    default="auto",
    show_default=True,
    help="auto: a progress bar when stderr is a terminal; json: one JSON object a line "
    "on stderr (phase, runs done and total, events, failures; bad entries, "
    "retries and warnings too), for a program running this one; none: messages "
    "only.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write an HTML report to this file: the lineage graph, the run history "
    "and what was not exported, one self-contained page.",
)
@selection_options
@click.option(
    "--watch",
    is_flag=True,
    help="Then keep following the trail: send each run once it ends, within about a second, "
    "until Ctrl-C or SIGTERM; an outage is waited out (docs/using.md, Following the trail).",
)
@click.option(
    "--until-stdin-closes",
    is_flag=True,
    help="With --watch: also end it, as SIGTERM does, when standard input reaches its end; "
    "for a program that runs the watch as its child (an editor), so that it ends with it.",
)
def export(
    dry_run: bool,
    output: Path | None,
    url: str | None,
    as_json: bool,
    full: bool,
    quiet: bool,
    progress: str,
    report_path: Path | None,
    pipelines: tuple[str, ...],
    since: str | None,
    until: str | None,
    watch: bool,
    until_stdin_closes: bool,
) -> None:
    """Export the workspace's runs to the OpenLineage server in the settings (or --dry-run).

    Only runs that are new or changed since the last export to the same server are sent (the
    ledger remembers the others); on a first export to a Marquez (an empty ledger, as on a
    CI job's fresh machine) it asks Marquez which runs it already holds, and sends the rest;
    --full sends them all again. --pipeline, --since and --until take a part of the trail:
    the other runs are neither sent nor recorded.
    """
    with held_signals():
        from ..terminal.files import is_stdout

    click.get_current_context().meta["json_progress"] = progress == "json"
    _check_options(dry_run, output, as_json, report_path)
    selection = selection_of(pipelines, since, until)
    if watch and (full or report_path is not None or selection is not None):
        # a watch ends by a signal, never whole; it follows the whole trail
        other = "--full" if full else "--report" if report_path else "--pipeline, --since, --until"
        raise click.UsageError(f"--watch does not go with {other}")
    if until_stdin_closes and not watch:
        raise click.UsageError("--until-stdin-closes goes with --watch")
    to_stdout = dry_run and is_stdout(output)
    root = current_workspace()
    with held_signals():
        from ..html_report import ReportCollector, check_writable
    settings = settings_with_url(root, url) or load_settings(root)
    if not dry_run and progress != "json" and sys.stdin.isatty() and sys.stderr.isatty():
        _approve_on_first_use(root, settings)
    checkouts = Checkouts.around(root, os.environ)
    if report_path is not None:
        check_writable(report_path, checkouts)
    collector = ReportCollector() if report_path is not None else None
    with held_signals():
        from ..terminal.display import Display
        from ..terminal.watching import watch_export
    mode = _display_mode(progress, quiet, to_stdout)
    if watch:
        report, interruption, display = watch_export(
            root, settings, mode, quiet, dry_run, output, until_stdin_closes=until_stdin_closes
        )
    else:
        display = Display(mode, quiet=quiet)
        report, interruption = _send(
            root,
            settings,
            display,
            dry_run=dry_run,
            output=output,
            full=full,
            to_stdout=to_stdout,
            collector=collector,
            selection=selection,
            checkouts=checkouts,
        )
    exit_code = interruption.exit_code or report.exit_code
    if report_path is not None and collector is not None:
        write_report(report_path, collector, report, display, checkouts, quiet=quiet)
    say_how_it_ended(
        root,
        settings,
        report,
        interruption,
        display,
        exit_code,
        events_file=None if to_stdout else str(output),
        as_json=as_json,
        quiet=quiet,
    )
    display.finished(exit_code)
    sys.exit(exit_code)


def _check_options(
    dry_run: bool, output: Path | None, as_json: bool, report_path: Path | None
) -> None:
    from ..terminal.files import is_stdout

    if output is not None and not dry_run:
        raise click.UsageError("--output goes with --dry-run")
    if as_json and dry_run and is_stdout(output):
        raise click.UsageError(
            "with --dry-run and --json, name an --output file for the events "
            "(standard output carries the summary)"
        )
    if report_path is not None and str(report_path) == "-":
        raise click.UsageError("--report needs a file name (the report is an HTML page)")


def _send(
    root: Path,
    settings: Settings,
    display: Display,
    *,
    dry_run: bool,
    output: Path | None,
    full: bool,
    to_stdout: bool,
    collector: Any,
    selection: Selection | None,
    checkouts: Checkouts,
) -> tuple[ExportReport, Interruption]:
    """The export itself, with the display, the signals and the events file around it."""
    with held_signals():
        from ..export import ExportRequest, run_export
        from ..terminal.files import events_file
        from ..terminal.signals import interruptible
    cancel = threading.Event()
    stopping = (
        "stopping after the run being built; nothing is written to the output file"
        if dry_run
        else "finishing the requests in flight"
    )
    try:
        with (
            display,
            interruptible(cancel, display.message, stopping=stopping) as interruption,
            events_file(output, checkouts) if dry_run else nullcontext() as events,
        ):
            for warning in settings.warnings:  # said once, before anything is sent
                display.warning(warning)
            report = run_export(
                ExportRequest(
                    workspace=root,
                    settings=settings,
                    dry_run=dry_run,
                    output=events.stream if events is not None else None,
                    environ=os.environ,
                    on_bad_entry=display.bad_entry,
                    on_progress=display.progress,
                    on_retry=display.retry,
                    on_warning=display.warning,
                    cancel=cancel,
                    full=full,
                    selection=selection,
                    on_run=collector.add if collector is not None else None,
                )
            )
            if events is not None:
                events.keep = not report.cancelled
    except OutputError as exc:
        where = "standard output" if to_stdout else str(output)
        raise OutputError(
            f"cannot write the events to {where}: {exc.reason}", exc.errno, exc.reason
        ) from None
    return report, interruption


def _approve_on_first_use(root: Path, settings: Settings | None) -> None:
    """At a terminal, a stored key this export would send to a server not approved for it:
    ask its owner, before anything is sent. A yes is kept in the user's secrets store (never in
    the workspace); a no (or no answer) leaves the export to refuse, as anywhere else."""
    with held_signals():
        from ..deliver.destination import Opening
        from ..deliver.registry import kind_of
        from ..errors import KeyNotApproved
    try:
        settings = settings or load_settings(root)
        kind = kind_of(settings)
        store = secrets_mod.LazyStore(os.environ, Checkouts.around(root, os.environ))
        opening = Opening(settings, store, os.environ, root)
        for _ in range(64):  # one question per server (a Kafka password: per broker)
            try:
                kind.config(opening)
                return
            except KeyNotApproved as exc:
                if not click.confirm(
                    shown(
                        f"This export would send the secret '{exc.secret_name}' to "
                        f"{exc.origin} ({exc.source}), a server it is not approved for. Send "
                        f"it there, now and from now on?"
                    ),
                    default=False,
                    err=True,
                ):
                    return
                opening.secrets.allow(exc.secret_name, exc.origin)
                echo(
                    f"the secret '{exc.secret_name}' may now be sent to {exc.origin} "
                    f"({PROG} secrets list --json shows where each secret may go)",
                    err=True,
                )
    except ExportError:
        return  # the export itself says what is wrong, in its one line


def _display_mode(progress: str, quiet: bool, events_on_stdout: bool) -> Any:
    if progress == "json":
        return "json"
    if progress == "none" or quiet or not sys.stderr.isatty():
        return "plain"
    if events_on_stdout and sys.stdout.isatty():
        return "plain"  # the events scroll by on the same terminal: no bar among them
    return "bar"
