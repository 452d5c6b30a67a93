"""The command line: a thin host over the library. Errors become messages and exit codes here.

Exit codes (also in docs/exit-codes.md): 0 everything exported; 1 something was left behind (bad
entries, refused runs); 2 usage or configuration error; 3 workspace error; 4 the server could
not be reached; 5 another export of the same workspace to the same destination is
running; 129 stopped by SIGHUP; 130 interrupted (Ctrl-C); 141 standard output's
reader went away; 143 stopped by SIGTERM.

The export's terminal side (progress, messages, signals, the events file, the summary) is in
``terminal/``.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import CompletionItem

from . import __version__, jsonout
from .errors import ConfigError, ExportError, OutputError
from .host import secrets as secrets_mod
from .host import settings as settings_mod
from .host.workspace import Workspace
from .terminal.signals import exit_interrupted, held_signals
from .terminal.streams import STDOUT, detach, write_err, write_out
from .terminal.text import shown

if TYPE_CHECKING:  # the export stack is imported by the commands that use it, so that
    # --help, settings and secrets start fast
    from .host.settings import Settings
    from .report import ExportReport
    from .status import DestinationState

PROG = "openlineage-export"

EXIT_CODES = """\
0    everything on the trail was exported (or dry-run built)
1    done, but something was left behind: bad entries, runs the server refused
2    usage or configuration error (an option, a setting, a missing secret)
3    workspace error: not a workspace, graph.json missing or not JSON
4    the server could not be reached for openlineage.retry.maxTime seconds
5    another export of this workspace to this destination is running: nothing was sent
129  stopped by SIGHUP, the terminal closed (the same: what was accepted is kept)
130  interrupted by Ctrl-C (what was accepted is kept)
141  standard output's reader went away (| head): the command ended quietly
143  stopped by SIGTERM (the same: what was accepted is kept)"""

EXIT_READER_GONE = 141
"""128 + SIGPIPE: what a shell reports for a command whose output's reader went away."""

OTHER_ENVIRONMENT = {
    "OPENLINEAGE_API_KEY": "the API key (instead of openlineage.apiKey.secretRef)",
    "OPENLINEAGE_KAFKA_SASL_PASSWORD": "the Kafka SASL password (instead of its secretRef)",
    "OPENLINEAGE_EXPORT_STATE_DIR": "folder of the ledger [~/.local/state/openlineage-export]",
    "OPENLINEAGE_EXPORT_CONFIG_DIR": "folder of the secrets file [~/.config/openlineage-export]",
    "OPENLINEAGE_EXPORT_SECRETS": "file or keyring: force a secrets store",
    "OPENLINEAGE__TRANSPORT__*": "openlineage-python's configuration (URL, ENDPOINT, TYPE, "
                                 "AUTH__API_KEY...)",
    "OPENLINEAGE_CONFIG": "openlineage-python's openlineage.yml [./openlineage.yml, "
                          "~/.openlineage/openlineage.yml]",
}
"""Environment variables besides the settings' own (those come from the catalogue)."""


def _echo(text: str, *, err: bool = False) -> None:
    """Print one line for a person: a stranger's control characters in it (a setting's value,
    a server's reply, a pipeline id) are shown escaped (``terminal/text.py``). Standard output
    that cannot be written is an OutputError; standard error, nothing (``terminal/streams.py``).
    """
    (write_err if err else write_out)(shown(text))


def _echo_json(value: object, *, indent: bool = True) -> None:
    """Print a JSON document on standard output, every control character escaped (C1 too:
    ``jsonout.py``)."""
    write_out(jsonout.dumps(value, indent=indent, default=str).decode())


# -- the command classes: one error boundary, help with examples -------------------------------


class _Command(click.Command):
    """A command whose help ends with its examples (and sections built only when asked)."""

    def __init__(self, *args: Any, examples: str = "",
                 sections: Callable[[], Sequence[tuple[str, str]]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = examples
        self.sections = sections

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Examples, then any further sections (environment, exit codes, keys), verbatim."""
        super().format_epilog(ctx, formatter)
        extra = [("Examples", self.examples)] if self.examples else []
        extra += list(self.sections() if self.sections is not None else [])
        for title, text in extra:
            with formatter.section(title):
                for line in text.splitlines():
                    formatter.write(" " * formatter.current_indent + line + "\n")


class _Commands(click.Group):
    """The one error boundary: the library's errors become one line and their exit code.

    It also owns how the command ends (click's standalone mode would say "Aborted!" and exit 1
    on Ctrl-C): Ctrl-C anywhere is exit 130 with no traceback.
    """

    command_class = _Command
    group_class = type  # subgroups are _Commands too

    def __init__(self, *args: Any, examples: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = examples

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an ExportError is one line (JSON with --progress json)."""
        try:
            return super().invoke(ctx)
        except OutputError as exc:
            detach(STDOUT)  # nothing more goes out, nor fails at the interpreter's last flush
            if exc.errno == errno.EPIPE:
                ctx.exit(EXIT_READER_GONE)  # | head -1: the reader had what it wanted
            self._error(ctx, exc)
        except ExportError as exc:
            self._error(ctx, exc)

    @staticmethod
    def _error(ctx: click.Context, exc: ExportError) -> None:
        """One line on stderr (JSON with --progress json), and the error's exit code."""
        if ctx.meta.get("json_progress"):
            write_err(jsonout.dumps({"event": "error", "message": str(exc),
                                     "exitCode": exc.exit_code}).decode())
        else:
            _echo(f"error: {exc}", err=True)
        ctx.exit(exc.exit_code)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        """Parse, run, and exit with the command's code: 130 for Ctrl-C wherever it comes."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.Abort as exc:
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, KeyboardInterrupt):
                exit_interrupted("interrupted")
            _echo("aborted: no input", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            exit_interrupted("\ninterrupted")
        except click.ClickException as exc:
            _show_click_error(exc)
            sys.exit(exc.exit_code)
        except OSError as exc:  # click's own output (--help, a usage error) to a closed pipe
            if exc.errno != errno.EPIPE:
                raise
            detach(STDOUT)
            sys.exit(EXIT_READER_GONE)
        sys.exit(code if isinstance(code, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each subcommand with its whole summary (wrapped, never cut short with "...")."""
        rows = [(name, command.get_short_help_str(limit=1000))
                for name in self.list_commands(ctx)
                if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The group's examples, verbatim."""
        super().format_epilog(ctx, formatter)
        if self.examples:
            with formatter.section("Examples"):
                for line in self.examples.splitlines():
                    formatter.write(" " * formatter.current_indent + line + "\n")


def _show_click_error(exc: click.ClickException) -> None:
    """Click's own errors (a bad option, a missing argument) in the tool's one style: the usage
    and how to get help, then ``error: ...`` as every other error of the tool says it."""
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        help_option = next(iter(ctx.help_option_names), None)
        _echo(ctx.get_usage(), err=True)
        if help_option is not None and ctx.command.get_help_option(ctx) is not None:
            _echo(f"Try '{ctx.command_path} {help_option}' for help.", err=True)
        _echo("", err=True)
    _echo(f"error: {exc.format_message()}", err=True)


# -- the workspace: -w before or after the subcommand, else found like git finds a repository --


def _workspace_callback(ctx: click.Context, param: click.Parameter,
                        value: Path | None) -> Path | None:
    if value is not None:
        ctx.ensure_object(dict)["workspace"] = value
    return value


def workspace_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``-w/--workspace DIR``: accepted before the subcommand too."""
    return click.option(
        "--workspace", "-w", type=click.Path(file_okay=False, path_type=Path), default=None,
        callback=_workspace_callback, expose_value=False, is_eager=True,
        help="The workspace folder (the one holding .workspace/); default: the current folder "
             "or the nearest one above it that is a workspace.")(function)


def _workspace() -> Path:
    """The workspace named with -w (before or after the subcommand), else the one holding the
    current folder, found by walking up like git. Errors name the absolute path."""
    ctx = click.get_current_context()
    given = next((c.obj["workspace"] for c in _contexts(ctx)
                  if isinstance(c.obj, dict) and "workspace" in c.obj), None)
    if given is not None:
        return Workspace.open(given).root
    return Workspace.find(Path.cwd()).root


def _contexts(ctx: click.Context | None) -> Iterator[click.Context]:
    while ctx is not None:
        yield ctx
        ctx = ctx.parent


def _catalogue() -> settings_mod.Catalogue:
    with held_signals():
        from .deliver.registry import CATALOGUE

    return CATALOGUE


def _settings_with_url(root: Path, url: str | None) -> Settings | None:
    """The workspace's settings with ``--url`` on top (None: let the library read them)."""
    if url is None:
        return None
    with held_signals():
        from .deliver.registry import TransportSettings
    settings = settings_mod.load_settings(root, _catalogue(), os.environ)
    transport = settings.of(TransportSettings).transport
    if transport != "http":
        raise ConfigError(f"--url goes with the http transport; openlineage.transport is "
                          f"{transport} (from {settings.source('openlineage.transport')})")
    return settings.with_values({"openlineage.url": url}, base=root,
                                subjects={"openlineage.url": "--url"})


# -- the group ----------------------------------------------------------------------------------


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"],
                                              "max_content_width": 100},
             examples=f"""\
{PROG} export --dry-run -o events.jsonl     # build every event, send nothing
{PROG} settings set openlineage.url http://localhost:5000
{PROG} export                               # send what is new since the last export
{PROG} -w ~/work/acme status                # a workspace elsewhere
eval "$(_OPENLINEAGE_EXPORT_COMPLETE=bash_source {PROG})"   # shell completion (bash)""")
@click.version_option(__version__, "-V", "--version", prog_name=PROG)
@workspace_option
def main() -> None:
    """Publish this workspace's Lineage hub runs as OpenLineage events (Marquez, DataHub, Atlan).

    Run it anywhere inside a workspace (like git, the workspace is found by walking up from the
    current folder), or name one with -w DIR.
    """


# -- export -------------------------------------------------------------------------------------


def _export_sections() -> list[tuple[str, str]]:
    rows = [(row.env, f"{row.key}") for row in _catalogue() if row.env]
    rows += list(OTHER_ENVIRONMENT.items())
    width = max(len(name) for name, _ in rows)
    environment = "\n".join(f"{name.ljust(width)}  {what}" for name, what in rows)
    return [("Environment", environment), ("Exit codes", EXIT_CODES)]


@main.command(
    sections=_export_sections,
    short_help="Export the workspace's runs to the OpenLineage server in the settings "
               "(or --dry-run).",
    examples=f"""\
{PROG} export --dry-run -o events.jsonl         # every event, nothing sent
{PROG} export --dry-run | jq .eventType         # events on stdout (also: -o -)
{PROG} export                                   # send what is new or changed
{PROG} export --url http://localhost:5000       # another server, for this export only
{PROG} export --full --report report.html       # send everything again, and a report
{PROG} export --json --progress json            # for a host: JSON progress on stderr""")
@workspace_option
@click.option("--dry-run", is_flag=True,
              help="Build every event and write it as JSON Lines; send nothing (no server needed).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
              help="With --dry-run: write the events to this file (written whole, or not at "
                   "all if interrupted) instead of standard output; '-' is standard output.")
@click.option("--url", metavar="URL",
              help="Send to this server for this export only, instead of openlineage.url "
                   "(the settings are not changed).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as JSON on standard output.")
@click.option("--full", is_flag=True,
              help="Send every run again, not only those new or changed since the last export.")
@click.option("--quiet", "-q", is_flag=True,
              help="No summary and no progress on stderr; only the first 10 bad entries.")
@click.option("--progress", type=click.Choice(["auto", "json", "none"]), default="auto",
              show_default=True,
              help="auto: a progress bar when stderr is a terminal; json: one JSON object a line "
                   "on stderr (phase, runs done and total, events, failures; bad entries, "
                   "retries and warnings too), for a program running this one; none: messages "
                   "only.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write an HTML report to this file: the lineage graph, the run history "
                   "and what was not exported, one self-contained page.")
def export(dry_run: bool, output: Path | None, url: str | None, as_json: bool, full: bool,
           quiet: bool, progress: str, report_path: Path | None) -> None:
    """Export the workspace's runs to the OpenLineage server in the settings (or --dry-run).

    Only runs that are new or changed since the last export to the same server are sent (the
    ledger remembers the others); --full sends them all again.
    """
    with held_signals():
        from .terminal.display import Display
        from .terminal.files import events_file, is_stdout
        from .terminal.signals import interruptible
        from .terminal.summary import Ending, more_bad_entries_line, summary

    click.get_current_context().meta["json_progress"] = progress == "json"
    if output is not None and not dry_run:
        raise click.UsageError("--output goes with --dry-run")
    to_stdout = dry_run and is_stdout(output)
    if as_json and to_stdout:
        raise click.UsageError("with --dry-run and --json, name an --output file for the events "
                               "(standard output carries the summary)")
    if report_path is not None and str(report_path) == "-":
        raise click.UsageError("--report needs a file name (the report is an HTML page)")
    root = _workspace()
    with held_signals():
        from .export import ExportRequest, run_export
        from .html_report import ReportCollector, check_writable, write_report
    settings = _settings_with_url(root, url) or settings_mod.load_settings(
        root, _catalogue(), os.environ)
    if not dry_run and progress != "json" and sys.stdin.isatty() and sys.stderr.isatty():
        _approve_on_first_use(root, settings)

    if report_path is not None:
        check_writable(report_path)
    collector = ReportCollector() if report_path is not None else None
    display = Display(_display_mode(progress, quiet, to_stdout), quiet=quiet)
    cancel = threading.Event()
    stopping = ("stopping after the run being built; nothing is written to the output file"
                if dry_run else "finishing the requests in flight")
    try:
        with display, interruptible(cancel, display.message,
                                    stopping=stopping) as interruption, \
                (events_file(output) if dry_run else nullcontext()) as events:
            for warning in settings.warnings:  # said once, before anything is sent
                display.warning(warning)
            report = run_export(ExportRequest(
                workspace=root, settings=settings, dry_run=dry_run,
                output=events.stream if events is not None else None, environ=os.environ,
                on_bad_entry=display.bad_entry, on_progress=display.progress,
                on_retry=display.retry, on_warning=display.warning, cancel=cancel, full=full,
                on_run=collector.add if collector is not None else None))
            if events is not None:
                events.keep = not report.cancelled
    except OutputError as exc:
        where = "standard output" if to_stdout else str(output)
        raise OutputError(f"cannot write the events to {where}: {exc.reason}", exc.errno,
                          exc.reason) from None
    exit_code = interruption.exit_code or report.exit_code
    if report_path is not None and collector is not None:
        written = write_report(report_path, collector, report)
        if written.warning:
            display.warning(written.warning)
        if not quiet:
            display.message(f"report written to {report_path}")
    ending = Ending(stop_signal=interruption.name if interruption.signal else None,
                    events_file=None if to_stdout else str(output),
                    bad_entries_shown=min(display.bad_entries, display.bad_entries_limit),
                    outage_hint=_outage_hint(root, settings) if report.outage else None)
    if display.mode == "json":
        # A host shows the summary in the CLI's own words (the JSON lists every bad entry).
        display.summary(summary(report, ending))
    if as_json:
        result = report.to_dict()
        result["exitCode"] = exit_code
        try:
            _echo_json(result)
        except OutputError:
            if interruption.exit_code is None:
                raise
            # SIGHUP: the terminal is gone; the export was kept, its signal's code says so.
            detach(STDOUT)
    elif display.mode == "json":
        pass
    elif quiet:
        if display.bad_entries_hidden:
            display.message(more_bad_entries_line(display.bad_entries_hidden))
    else:
        write_err(summary(report, ending))  # each line shown already
    display.finished(exit_code)
    sys.exit(exit_code)


def _approve_on_first_use(root: Path, settings: Settings | None) -> None:
    """At a terminal, a stored key this export would send to a server not approved for it:
    ask its owner, before anything is sent. A yes is kept in the user's secrets store (never in
    the workspace); a no (or no answer) leaves the export to refuse, as anywhere else."""
    with held_signals():
        from .deliver.destination import Opening
        from .deliver.registry import KINDS, TransportSettings
        from .errors import KeyNotApproved
    try:
        settings = settings or settings_mod.load_settings(root, _catalogue(), os.environ)
        kind = KINDS[settings.of(TransportSettings).transport]
        opening = Opening(settings, secrets_mod.LazyStore(os.environ), os.environ, root)
        for _ in range(64):  # one question per server (a Kafka password: per broker)
            try:
                kind.config(opening)
                return
            except KeyNotApproved as exc:
                if not click.confirm(shown(
                        f"This export would send the secret '{exc.secret_name}' to "
                        f"{exc.origin} ({exc.source}), a server it is not approved for. Send "
                        f"it there, now and from now on?"), default=False, err=True):
                    return
                opening.secrets.allow(exc.secret_name, exc.origin)
                _echo(f"the secret '{exc.secret_name}' may now be sent to {exc.origin} "
                      f"({PROG} secrets list --json shows where each secret may go)", err=True)
    except ExportError:
        return  # the export itself says what is wrong, in its one line


def summary(report: ExportReport) -> str:
    """The human summary of an export (``terminal/summary.py``), as the CLI prints it."""
    from .terminal.summary import summary as text

    return text(report)


def _display_mode(progress: str, quiet: bool, events_on_stdout: bool) -> Any:
    if progress == "json":
        return "json"
    if progress == "none" or quiet or not sys.stderr.isatty():
        return "plain"
    if events_on_stdout and sys.stdout.isatty():
        return "plain"  # the events scroll by on the same terminal: no bar among them
    return "bar"


def _outage_hint(root: Path, settings: Settings | None) -> str | None:
    """What to check when the destination could not be reached, naming the setting in force."""
    try:
        settings = settings or settings_mod.load_settings(root, _catalogue(), os.environ)
    except ExportError:
        return None
    # One hint, naming where the address came from; the address itself is in the line above.
    if settings.value("openlineage.transport") == "kafka":
        key, question = "openlineage.kafka.bootstrapServers", "are the brokers running"
    elif settings.value("openlineage.transport") == "http":
        key, question = "openlineage.url", "is the server running"
    else:
        return None
    source = settings.source(key)
    if source == "given":
        return f"hint: {question}, and is --url its address?"
    other = "; --url tries another server for one export" if key.endswith("url") else ""
    return f"hint: {question}, and is {key} (from {source}) the address?{other}"


# -- status -------------------------------------------------------------------------------------


@main.command(short_help="Per destination: runs exported, pending (and refused), and how the "
                         "last export ended.",
              examples=f"""\
{PROG} status
{PROG} status --url http://localhost:5000       # one server only
{PROG} status --json
{PROG} status --forget http://old-host:5000/api/v1/lineage""")
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--url", metavar="URL",
              help="Only this server (instead of openlineage.url), exported to or not.")
@click.option("--forget", metavar="DESTINATION",
              help="Drop everything the ledger knows of DESTINATION (as status lists it): the "
                   "next export to it sends every run again.")
def status(as_json: bool, url: str | None, forget: str | None) -> None:
    """Per destination: runs exported, pending and failed, and when the last export ran."""
    root = _workspace()
    if forget is not None:
        _forget(root, forget)
        return
    with held_signals():
        from .deliver.http import HttpSettings
        from .status import DestinationState, export_status

    settings = _settings_with_url(root, url)
    standing = export_status(root, os.environ, settings=settings)
    destinations = standing.destinations
    never = DestinationState("", standing.runs, 0, standing.runs, 0, None, None, None)
    if settings is not None:
        wanted = settings.of(HttpSettings).events_url or ""
        destinations = [s for s in destinations if s.destination == wanted] or [
            dataclasses.replace(never, destination=wanted)]
    else:
        # The server the settings name is listed even before anything went to it.
        in_force = settings_mod.load_settings(root, _catalogue(), os.environ)
        configured = (in_force.of(HttpSettings).events_url
                      if in_force.value("openlineage.transport") == "http" else None)
        if configured and all(s.destination != configured for s in destinations):
            destinations = [*destinations, dataclasses.replace(never, destination=configured)]
    if as_json:
        _echo_json({"runs": standing.runs, "badEntries": standing.bad_entries,
                    "destinations": [
            {"destination": s.destination, "exported": s.exported, "pending": s.pending,
             "failed": s.failed, "lastExportStarted": s.last_export_started,
             "lastExportFinished": s.last_export_finished,
             "lastExportOutcome": s.last_export_outcome} for s in destinations]})
        return
    bad = standing.bad_entries
    _echo(f"{standing.runs} runs on the trail"
          + (f", {bad} bad {'entry' if bad == 1 else 'entries'}" if bad else ""))
    if not destinations:
        _echo("never exported (a dry run does not count)")
    for state in destinations:
        _echo(f"{state.destination}: {_standing(state)}")
        _echo(f"  last export: {_last_export(state)}")


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
        return (f"started {state.last_export_started} and not finished: still running, or "
                "killed (the next export sends what it did not record)")
    if state.last_export_outcome == "finished":
        return f"finished {state.last_export_finished}"
    if state.last_export_outcome == "interrupted":
        return (f"interrupted {state.last_export_finished} (Ctrl-C, SIGTERM or SIGHUP); "
                "export again to send the rest")
    if state.last_export_outcome == "stopped":
        return (f"stopped {state.last_export_finished}: the destination could not be reached")
    return f"{state.last_export_outcome} {state.last_export_finished}"


def _forget(root: Path, destination: str) -> None:
    with held_signals():
        from .state.ledger import Ledger

    ledger = Ledger.open_read_only(os.environ)
    known = [] if ledger is None else [s.destination for s in ledger.status(str(root))]
    if ledger is not None:
        ledger.close()
    if destination not in known:
        raise ConfigError(f"the ledger knows no destination {destination!r} for {root}"
                          + (f"; it knows: {', '.join(known)}" if known else
                             " (it was never exported)"))
    ledger = Ledger.open(os.environ)
    try:
        ledger.forget(str(root), destination)
    finally:
        ledger.close()
    _echo(f"forgot {destination}: the next export to it sends every run")


# -- settings -----------------------------------------------------------------------------------


@main.group(short_help="Read and change the exporter's settings (in .workspace/settings.json; "
                       "they travel with the workspace).",
            examples=f"""\
{PROG} settings list
{PROG} settings get openlineage.namespace
{PROG} settings set openlineage.url http://localhost:5000
{PROG} settings unset openlineage.url""")
def settings() -> None:
    """Read and change the exporter's settings (in .workspace/settings.json; they travel)."""


@settings.command("list", short_help="Every setting: its value in force, where it comes from, "
                                     "its allowed values and what it does.",
                  examples=f"""\
{PROG} settings list
{PROG} settings list --json | jq '.[] | select(.source != "default")'""")
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
def settings_list(as_json: bool) -> None:
    """Every setting: its value in force, where it comes from, and what it does."""
    root = _workspace()
    rows = [_in_force(root, row) for row in settings_mod.describe(_catalogue(), root, os.environ)]
    for warning in _settings_warnings(root):
        _echo(f"warning: {warning}", err=True)
    if as_json:
        _echo_json(rows)
        return
    for row in rows:
        value = "(not set)" if row["value"] is None else _show(row["value"])
        _echo(f"{row['key']} = {value}  [{row['source']}]")
        choices = row["choices"]
        _echo(f"    {row['type']}; {row['description']}"
                   + (f" One of: {', '.join(choices)}." if isinstance(choices, tuple) else "")
                   + (f" Env: {row['env']}." if row["env"] else ""))


def _complete_key(ctx: click.Context, param: click.Parameter,
                  incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(row.key, help=row.description) for row in _catalogue()
            if row.key.startswith(incomplete)]


def _complete_value(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[CompletionItem]:
    row = _catalogue().get(str(ctx.params.get("key", "")))
    if row is None:
        return []
    choices = row.choices or (("true", "false") if row.type == "boolean" else ())
    if row.type in ("path", "output"):
        return [CompletionItem(incomplete, type="file")]
    return [CompletionItem(choice) for choice in choices if choice.startswith(incomplete)]


def _keys_section() -> list[tuple[str, str]]:
    rows = list(_catalogue())
    width = max(len(row.key) for row in rows)
    return [("Keys", "\n".join(
        f"{row.key.ljust(width)}  {row.type}"
        + (f": {' | '.join(row.choices)}" if row.choices else "")
        + (f" [default {_show(row.default)}]" if row.default is not None else "")
        for row in rows))]


@settings.command("get", short_help="Print the value in force of one setting (on stdout) and "
                                    "where it comes from (on stderr).",
                  examples=f"""\
{PROG} settings get openlineage.url
ns=$({PROG} settings get openlineage.namespace)   # the value alone
{PROG} settings get openlineage.namespace --json""")
@workspace_option
@click.argument("key", shell_complete=_complete_key)
@click.option("--json", "as_json", is_flag=True,
              help="Print key, value and source as one JSON object on stdout.")
def settings_get(key: str, as_json: bool) -> None:
    """Print the value in force of KEY on stdout, and where it comes from on stderr (exit 1
    when it is not set and has no default)."""
    root = _workspace()
    rows = {row["key"]: row for row in settings_mod.describe(_catalogue(), root, os.environ)}
    if key not in rows:
        _catalogue().declared(key, None)  # unknown (with a suggestion) or secret-looking
    row = _in_force(root, rows[key], strict=True)
    value, source = row["value"], str(row["source"])
    for warning in _settings_warnings(root):
        if not warning.startswith("openlineage.") or warning.startswith(f"{key}: "):
            _echo(f"warning: {warning}", err=True)
    if as_json:
        _echo_json({"key": key, "value": value, "source": source}, indent=False)
    elif value is not None:
        _echo(_show(value))
        _echo(f"({source})", err=True)
    else:
        _echo(f"{key} is not set, and has no default", err=True)
    if value is None:
        sys.exit(1)


def _settings_warnings(root: Path) -> tuple[str, ...]:
    """What reading the settings found worth telling (two sources that disagree...); none when
    they cannot be read (``settings`` shows them as they are, to mend them)."""
    try:
        return settings_mod.load_settings(root, _catalogue(), os.environ).warnings
    except ExportError:
        return ()


def _in_force(root: Path, row: dict[str, object], *, strict: bool = False) -> dict[str, object]:
    """``row`` of :func:`~.host.settings.describe` with the value in force where the export
    derives one (the namespace, from graph.json) rather than leaving it unset. ``strict``: a
    graph.json that cannot be read is an error (else the row stays as it is)."""
    if row["key"] != "openlineage.namespace" or row["value"] is not None:
        return row
    try:
        value, source = _namespace_from_graph(root)
    except ExportError:
        if strict:
            raise
        return row
    return {**row, "value": value, "source": source}


def _namespace_from_graph(root: Path) -> tuple[str | None, str]:
    """The namespace in force when none is set: the workspace's name, made safe for servers."""
    with held_signals():
        from .hub.graph import read_graph
        from .translate.datasets import namespace_safe

    ws = Workspace(root)
    graph = read_graph(ws.graph_file, ws.display(ws.graph_file), lambda entry: None)
    name = namespace_safe(graph.workspace_name)
    changed = "" if name == graph.workspace_name else f" {graph.workspace_name!r}, made safe"
    return name, f"workspace name{changed} in graph.json"


@settings.command("set", sections=_keys_section,
                  short_help="Set KEY to VALUE in the workspace's settings (other keys are left "
                             "untouched).",
                  examples=f"""\
{PROG} settings set openlineage.url https://marquez.example.com
{PROG} settings set openlineage.apiKey.secretRef marquez-prod   # a secret's NAME
{PROG} settings set openlineage.transport kafka""")
@workspace_option
@click.argument("key", shell_complete=_complete_key)
@click.argument("value", shell_complete=_complete_value)
def settings_set(key: str, value: str) -> None:
    """Set KEY to VALUE in the workspace's settings (other keys are left untouched)."""
    stored = settings_mod.set_setting(_workspace(), _catalogue(), key, value)
    _echo(f"{key} = {_show(stored)}")
    if key.lower().endswith(".secretref"):
        store = secrets_mod.default_store(os.environ)
        if store.get(str(stored)) is None:
            _echo(f"warning: no secret named '{stored}' is stored yet (in "
                       f"{store.description}); store it with: {PROG} secrets set {stored}",
                       err=True)


@settings.command("unset", short_help="Remove KEY from the workspace's settings (it falls back "
                                      "to its default).",
                  examples=f"""\
{PROG} settings unset openlineage.url
{PROG} settings unset openlineage.apiKey      # a key that should never have been there""")
@workspace_option
@click.argument("key", shell_complete=_complete_key)
def settings_unset(key: str) -> None:
    """Remove KEY from the workspace's settings (it falls back to its default)."""
    removed = settings_mod.unset_setting(_workspace(), _catalogue(), key)
    _echo(f"{key} {'removed' if removed else 'was not set'}")


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- secrets ------------------------------------------------------------------------------------


@main.group(short_help="Keep API keys in the secrets store (the OS keyring, else a private "
                       "file), never in settings.",
            examples=f"""\
{PROG} secrets set marquez-prod           # asks for the key (twice), or reads stdin
{PROG} secrets list
{PROG} secrets delete marquez-prod""")
def secrets() -> None:
    """Keep API keys in the secrets store (OS keyring, else a private file), never in settings."""


@secrets.command("set", short_help="Store a secret under NAME: read from stdin when piped, else "
                                   "asked for twice without echo.",
                 examples=f"""\
{PROG} secrets set marquez-prod --for https://marquez.example.com
printf %s "$MARQUEZ_KEY" | {PROG} secrets set marquez-prod --for https://marquez.example.com
{PROG} settings set openlineage.apiKey.secretRef marquez-prod   # then point at it""")
@click.argument("name")
@click.option("--for", "servers", metavar="ORIGIN", multiple=True,
              help="A server the secret may be sent to (scheme://host[:port]; repeat for more). "
                   "A stored key goes to no other, whatever a workspace's settings say.")
def secrets_set(name: str, servers: tuple[str, ...]) -> None:
    """Store a secret under NAME: read from stdin when piped, else prompted without echo.

    It is sent only to the servers approved for it (--for here, or later with secrets allow).
    """
    from .trust import origin_of

    secrets_mod.check_secret_name(name)  # before asking for the value
    origins = [origin_of(server) for server in servers]
    store = secrets_mod.default_store(os.environ)
    if sys.stdin.isatty():
        value = click.prompt(f"value for {name}", hide_input=True,
                             confirmation_prompt=f"value for {name} again",
                             err=True)
    else:
        value = sys.stdin.read().strip("\r\n")
    store.set(name, value)
    for origin in origins:
        store.allow(name, origin)
    where = (f"; it may be sent to {', '.join(origins)}" if origins else
             f"; approve the server it may be sent to with: {PROG} secrets allow {name} ORIGIN")
    _echo(f"stored secret {name!r} in {store.description}{where}; point "
               f"openlineage.apiKey.secretRef at it with: {PROG} settings set "
               f"openlineage.apiKey.secretRef {name}")


@secrets.command("allow", short_help="Approve sending the secret NAME to a server (ORIGIN: "
                                     "scheme://host[:port]).",
                 examples=f"""\
{PROG} secrets allow marquez-prod https://marquez.example.com
{PROG} secrets allow kafka-prod kafka://broker1.example.com:9093""")
@click.argument("name")
@click.argument("server", metavar="ORIGIN")
def secrets_allow(name: str, server: str) -> None:
    """Approve sending the secret NAME to ORIGIN (scheme://host[:port]; for Kafka,
    kafka://host:port for each broker). A stored secret goes to no server not approved."""
    from .trust import origin_of

    secrets_mod.check_secret_name(name)
    origin = origin_of(server)
    store = secrets_mod.default_store(os.environ)
    if store.get(name) is None:
        raise ConfigError(f"no secret named {name!r} in {store.description}; store it with: "
                          f"{PROG} secrets set {name} --for {origin}")
    store.allow(name, origin)
    _echo(f"the secret {name!r} may be sent to: {', '.join(store.origins(name))}")


@secrets.command("list", short_help="The names of the stored secrets (never their values), and "
                                    "which store holds them.",
                 examples=f"""\
{PROG} secrets list
{PROG} secrets list --json""")
@click.option("--json", "as_json", is_flag=True,
              help="Print the store and the names as one JSON object.")
def secrets_list(as_json: bool) -> None:
    """The names of the stored secrets (never their values), one a line on stdout; the store
    they are in on stderr."""
    store = secrets_mod.default_store(os.environ)
    names = store.names()
    backend = "keyring" if isinstance(store, secrets_mod.KeyringStore) else "file"
    where = (store.path if isinstance(store, secrets_mod.FileStore)
             else store.index_path if isinstance(store, secrets_mod.KeyringStore) else None)
    if as_json:
        _echo_json({"backend": backend, "store": store.description,
                    "file": None if where is None else str(where), "names": names,
                    "origins": {name: store.origins(name) for name in names}})
        return
    for name in names:
        _echo(name)
        approved = store.origins(name)
        _echo(f"  {name} may be sent to: {', '.join(approved) or 'no server yet'}", err=True)
    count = "no secrets" if not names else "1 secret" if len(names) == 1 else \
        f"{len(names)} secrets"
    index = (f" (names indexed in {where})" if isinstance(store, secrets_mod.KeyringStore)
             else "")
    _echo(f"{count} in {store.description}{index}", err=True)


@secrets.command("delete", short_help="Delete the secret NAME (exit 1 when there was none).",
                 examples=f"""\
{PROG} secrets delete marquez-prod""")
@click.argument("name")
def secrets_delete(name: str) -> None:
    """Delete the secret NAME (exit 1 when there was none)."""
    store = secrets_mod.default_store(os.environ)
    if not store.delete(name):
        _echo(f"no secret named {name!r} in {store.description}", err=True)
        sys.exit(1)
    _echo(f"deleted secret {name!r}")
