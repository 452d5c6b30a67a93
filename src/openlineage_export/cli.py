"""The command line: a thin host over the library. Errors become messages and exit codes here.

Exit codes (also in the README): 0 everything exported; 1 something was left behind (bad
entries, refused runs); 2 usage or configuration error; 3 workspace error; 4 the server could
not be reached; 130 interrupted.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import click
import orjson

from . import __version__
from .errors import ConfigError, ExportError
from .host import secrets as secrets_mod
from .host import settings as settings_mod

if TYPE_CHECKING:  # the export stack is imported by the commands that use it, so that
    # --help, settings and secrets start fast
    from .hub.model import BadEntry
    from .report import ExportReport, Progress

workspace_option = click.option(
    "--workspace", "-w", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
    show_default="the current folder", help="The workspace folder (the one holding .workspace/).")


class _Commands(click.Group):
    """The one error boundary: the library's errors become one line and their exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ExportError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)


def _catalogue() -> settings_mod.Catalogue:
    from .deliver.registry import CATALOGUE

    return CATALOGUE


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="openlineage-export")
def main() -> None:
    """Publish this workspace's Lineage hub runs as OpenLineage events (Marquez, DataHub, Atlan)."""


@main.command()
@workspace_option
@click.option("--dry-run", is_flag=True,
              help="Build every event and write it as JSON Lines; send nothing (no server needed).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="With --dry-run: write the events to this file instead of standard output.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as JSON on standard output.")
@click.option("--full", is_flag=True,
              help="Send every run again, not only those new or changed since the last export.")
@click.option("--quiet", "-q", is_flag=True, help="No summary and no progress on stderr.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write an HTML report to this file: the lineage graph, the run history "
                   "and what was not exported, one self-contained page.")
def export(workspace: Path, dry_run: bool, output: Path | None, as_json: bool, full: bool,
           quiet: bool, report_path: Path | None) -> None:
    """Export the workspace's runs to the OpenLineage server in the settings (or --dry-run)."""
    from .export import ExportRequest, run_export
    from .html_report import ReportCollector, check_writable, write_report

    if output is not None and not dry_run:
        raise click.UsageError("--output goes with --dry-run")
    if as_json and dry_run and output is None:
        raise click.UsageError("with --dry-run and --json, name an --output file for the events")
    cancel = threading.Event()
    collector = ReportCollector() if report_path is not None else None
    if report_path is not None:
        check_writable(report_path)

    def on_bad(entry: BadEntry) -> None:
        click.echo(f"bad entry: {entry}", err=True)

    with _interruptible(cancel), _events_sink(output if dry_run else None, dry_run) as sink, \
            _progress_bar(enabled=not quiet and not dry_run) as on_progress:
        report = run_export(ExportRequest(
            workspace=workspace, dry_run=dry_run, output=sink, environ=os.environ,
            on_bad_entry=on_bad, on_progress=on_progress, cancel=cancel, full=full,
            on_run=collector.add if collector is not None else None))
    if report_path is not None and collector is not None:
        written = write_report(report_path, collector, report)
        if written.warning:
            click.echo(f"warning: {written.warning}", err=True)
    if as_json:
        click.echo(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode())
    elif not quiet:
        click.echo(summary(report), err=True)
    sys.exit(report.exit_code)


def summary(report: ExportReport) -> str:
    """The human summary printed at the end of an export."""
    lines = []
    if report.dry_run:
        lines.append(f"dry run: {report.runs_total} runs, {report.events_sent} events built "
                     f"(namespace {report.namespace}); nothing was sent")
    else:
        lines.append(f"exported to {report.destination}: {report.runs_sent} of "
                     f"{report.runs_total} runs sent ({report.events_sent} events)"
                     + (f", {report.runs_unchanged} unchanged" if report.runs_unchanged else "")
                     + (f", {report.runs_failed} failed" if report.runs_failed else ""))
    for failure in report.failed:
        lines.append(f"  failed: run {failure.trace_id} ({failure.pipeline}, run id "
                     f"{failure.run_id}): {failure.reason}")
    if report.runs_failed > len(report.failed):
        lines.append(f"  ... and {report.runs_failed - len(report.failed)} more failed runs")
    if report.namespace_from is not None:
        lines.append(f"namespace: {report.namespace} (from {report.namespace_from!r})")
    for warning in report.warnings:
        lines.append(f"warning: {warning}")
    for pipeline in report.never_run:
        lines.append(f"never run: {pipeline} (OpenLineage is a log of runs; nothing to export)")
    if report.bad_entries:
        lines.append(f"{report.bad_entries} bad entr{'y' if report.bad_entries == 1 else 'ies'} "
                     "on the audit trail were skipped (listed above)")
    if report.outage:
        lines.append(f"stopped: {report.outage}")
    if report.state_error:
        lines.append(f"stopped: {report.state_error}")
    if report.cancelled:
        lines.append("interrupted: what was accepted is kept; run the export again to finish")
    return "\n".join(lines)


@contextmanager
def _interruptible(cancel: threading.Event) -> Iterator[None]:
    """First Ctrl-C asks the export to stop cleanly; a second one stops at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        click.echo("\ninterrupting: finishing the requests in flight (Ctrl-C again to quit now)",
                   err=True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    except KeyboardInterrupt:
        # The second Ctrl-C: still exit 130 (interrupted), not click's "Aborted!" and 1.
        click.echo("interrupted: what was accepted is kept; run the export again to finish",
                   err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _events_sink(output: Path | None, dry_run: bool) -> Iterator[BinaryIO | None]:
    if not dry_run:
        yield None
    elif output is None:
        yield sys.stdout.buffer
    else:
        try:
            stream = output.open("wb")
        except OSError as exc:
            raise ExportError(f"cannot write {output}: {exc.strerror}") from None
        with stream:
            yield stream


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[Progress], None] | None]:
    """A rich progress bar on a terminal; nothing at all when stderr is not one."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
    from rich.progress import Progress as Bar

    console = Console(stderr=True)
    with Bar(TextColumn("exporting"), BarColumn(), MofNCompleteColumn(),
             TextColumn("runs · {task.fields[events]} events · {task.fields[failed]} failed"),
             console=console, transient=True) as bar:
        task = bar.add_task("export", total=None, events=0, failed=0)

        def update(progress: Progress) -> None:
            bar.update(task, completed=progress.runs_done, total=progress.runs_total,
                       events=progress.events_sent, failed=progress.runs_failed)

        yield update


@main.command()
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(workspace: Path, as_json: bool) -> None:
    """Per destination: runs exported, pending and failed, and when the last export ran."""
    from .status import export_status

    standing = export_status(workspace, os.environ)
    if as_json:
        click.echo(orjson.dumps({"runs": standing.runs, "badEntries": standing.bad_entries,
                                 "destinations": [
            {"destination": s.destination, "exported": s.exported, "pending": s.pending,
             "failed": s.failed, "lastExportStarted": s.last_export_started,
             "lastExportFinished": s.last_export_finished,
             "lastExportOutcome": s.last_export_outcome} for s in standing.destinations]},
            option=orjson.OPT_INDENT_2).decode())
        return
    bad = standing.bad_entries
    click.echo(f"{standing.runs} runs on the trail" + (f", {bad} bad entries" if bad else ""))
    if not standing.destinations:
        click.echo("never exported (a dry run does not count)")
    for state in standing.destinations:
        click.echo(f"{state.destination}: {state.exported} exported, {state.pending} pending"
                   + (f" ({state.failed} of them refused last time)" if state.failed else "")
                   + f"; last export {_last_export(state)}")


def _last_export(state: Any) -> str:
    if state.last_export_started is None:
        return "never"
    if state.last_export_outcome is None:
        return f"started {state.last_export_started}, still running or killed"
    if state.last_export_outcome == "finished":
        return f"finished {state.last_export_finished}"
    return f"{state.last_export_outcome} {state.last_export_finished}"


@main.group()
def settings() -> None:
    """Read and change the exporter's settings (in .workspace/settings.json; they travel)."""


@settings.command("list")
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
def settings_list(workspace: Path, as_json: bool) -> None:
    """Every setting: its value in force, where it comes from, and what it does."""
    rows = settings_mod.describe(_catalogue(), workspace, os.environ)
    if as_json:
        click.echo(orjson.dumps(rows, option=orjson.OPT_INDENT_2, default=str).decode())
        return
    for row in rows:
        value = "(not set)" if row["value"] is None else _show(row["value"])
        click.echo(f"{row['key']} = {value}  [{row['source']}]")
        click.echo(f"    {row['type']}; {row['description']}"
                   + (f" Env: {row['env']}." if row["env"] else ""))


@settings.command("get")
@workspace_option
@click.argument("key")
def settings_get(workspace: Path, key: str) -> None:
    """Print the value in force of one setting (empty and exit 1 when not set)."""
    rows = {row["key"]: row for row in settings_mod.describe(_catalogue(), workspace,
                                                              os.environ)}
    if key not in rows:
        raise ConfigError(f"unknown setting {key!r}; 'openlineage-export settings list' "
                          "shows them all")
    value = rows[key]["value"]
    if value is None:
        sys.exit(1)
    click.echo(_show(value))


@settings.command("set")
@workspace_option
@click.argument("key")
@click.argument("value")
def settings_set(workspace: Path, key: str, value: str) -> None:
    """Set KEY to VALUE in the workspace's settings (other keys are left untouched)."""
    stored = settings_mod.set_setting(workspace, _catalogue(), key, value)
    click.echo(f"{key} = {_show(stored)}")


@settings.command("unset")
@workspace_option
@click.argument("key")
def settings_unset(workspace: Path, key: str) -> None:
    """Remove KEY from the workspace's settings (it falls back to its default)."""
    removed = settings_mod.unset_setting(workspace, _catalogue(), key)
    click.echo(f"{key} {'removed' if removed else 'was not set'}")


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@main.group()
def secrets() -> None:
    """Keep API keys in the secrets store (OS keyring, else a private file), never in settings."""


@secrets.command("set")
@click.argument("name")
def secrets_set(name: str) -> None:
    """Store a secret under NAME: read from stdin when piped, else prompted without echo."""
    if sys.stdin.isatty():
        value = click.prompt(f"value for {name}", hide_input=True, confirmation_prompt=False)
    else:
        value = sys.stdin.read().strip("\r\n")
    store = secrets_mod.default_store(os.environ)
    store.set(name, value)
    click.echo(f"stored secret {name!r} in {store.description}; point "
               f"openlineage.apiKey.secretRef at it with: openlineage-export settings set "
               f"openlineage.apiKey.secretRef {name}")


@secrets.command("list")
def secrets_list() -> None:
    """The names of the stored secrets (never their values)."""
    store = secrets_mod.default_store(os.environ)
    for name in store.names():
        click.echo(name)


@secrets.command("delete")
@click.argument("name")
def secrets_delete(name: str) -> None:
    """Delete the secret NAME (exit 1 when there was none)."""
    store = secrets_mod.default_store(os.environ)
    if not store.delete(name):
        click.echo(f"no secret named {name!r} in {store.description}", err=True)
        sys.exit(1)
    click.echo(f"deleted secret {name!r}")
