"""How an export ends on the command line: the HTML report written, and the summary in the
form asked for (JSON on stdout, JSON progress, one line, or text), with the hint to give when
the destination could not be reached."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ExportError, OutputError
from ..terminal.streams import STDOUT, detach, write_err
from .echo import echo_json
from .host_words import host_words
from .workspace import URL_SETTING, load_settings

if TYPE_CHECKING:
    from ..export.report import ExportReport
    from ..files.whose import Checkouts
    from ..host.settings import Settings
    from ..terminal.display import Display
    from ..terminal.signals import Interruption


def write_report(
    path: Path,
    collector: Any,
    report: ExportReport,
    display: Display,
    checkouts: Checkouts,
    *,
    quiet: bool,
) -> None:
    from ..html_report import write_report

    written = write_report(path, collector, report, checkouts)
    if written.warning:
        display.warning(written.warning)
    if not quiet:
        display.message(f"report written to {path}")


def say_how_it_ended(
    root: Path,
    settings: Settings,
    report: ExportReport,
    interruption: Interruption,
    display: Display,
    exit_code: int,
    *,
    events_file: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """The summary in the form asked for: JSON on stdout, JSON progress, a line, or text."""
    from ..terminal.summary import Ending, more_bad_entries_line, summary

    ending = Ending(
        stop_signal=interruption.name if interruption.signal else None,
        events_file=events_file,
        bad_entries_shown=min(display.bad_entries, display.bad_entries_limit),
        outage_hint=(
            outage_hint(root, settings) if report.outage and not report.outage_explained else None
        ),
    )
    if display.mode == "json":
        # A host shows the summary in the CLI's own words (it counts the bad entries past
        # those streamed).
        display.summary(summary(report, ending))
    if as_json:
        result = report.to_dict()
        result["exitCode"] = exit_code
        try:
            echo_json(result)
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


def outage_hint(root: Path, settings: Settings | None) -> str | None:
    """What to check when the destination could not be reached, naming the setting in force
    (the kind's row says which setting holds its address, and what to ask)."""
    from ..deliver.registry import kind_of

    try:
        settings = settings or load_settings(root)
    except ExportError:
        return None
    kind = kind_of(settings)
    if kind.address is None or kind.unreachable is None:
        return None
    # One hint, naming where the address came from (in the host's words: host_words.py); the
    # address itself is in the line above.
    key = kind.address
    asked = host_words().address_question(settings, key, root, is_url=key == URL_SETTING)
    return f"hint: {kind.unreachable}, and {asked}"
