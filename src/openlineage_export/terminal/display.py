"""What an export shows while it runs, in one of three forms:

- ``bar``: on a terminal, a rich progress bar at the bottom of the screen for every phase
  (reading the trail, building or sending), with rate, elapsed time and ETA; every message
  (a bad entry, a retry, a warning) is printed *above* it through the same console, so each is
  one clean line and no stale copy of the bar stays in the scrollback;
- ``json``: for a host running the CLI as a child process, one JSON object a line on stderr
  (``{"event": "progress", "phase": ..., "runsDone": ...}``, ``badEntry``, ``retry``,
  ``warning``, ``message``, ``summary`` with the summary's text, and ``finished`` with the exit
  code);
- ``plain``: messages only, one a line (stderr is no terminal, or ``--progress none``).

Bad entries are capped (the first :data:`BAD_ENTRIES_SHOWN`, or :data:`BAD_ENTRIES_QUIET`
with ``-q``, or :data:`BAD_ENTRIES_STREAMED` in the JSON form); the summary counts the rest.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Literal

from .. import jsonout
from .streams import STDERR, detach
from .text import shown

if TYPE_CHECKING:
    from rich.progress import Progress as Bar
    from rich.progress import TaskID

    from ..deliver.destination import Retry
    from ..export.report import Progress
    from ..hub.model import BadEntry

Mode = Literal["bar", "json", "plain"]

BAD_ENTRIES_SHOWN = 50
"""Bad entries printed one a line; past these, the summary counts the rest."""
BAD_ENTRIES_QUIET = 10
"""The same with ``-q``."""
BAD_ENTRIES_STREAMED = 200
"""The same in the JSON form (as many as ``--json`` lists; the host keeps each one)."""
JSON_EVERY = 0.5
"""Seconds between two JSON progress lines within a phase (a new phase is told at once)."""

_LABELS = {"reading": "reading the trail", "building": "building events", "sending": "sending"}


class Display:
    """The export's messages and progress on stderr; use as a context manager around it."""

    def __init__(self, mode: Mode, *, quiet: bool = False, stream: IO[str] | None = None) -> None:
        self.mode = mode
        self.quiet = quiet
        self._stream = stream or sys.stderr
        self._gone = self._stream is None
        """Set once a write failed: the terminal hung up, or the reader went away."""
        self._lock = threading.RLock()  # re-entrant: a signal handler may print mid-message
        self.bad_entries = 0
        quiet_limit = BAD_ENTRIES_QUIET if quiet else BAD_ENTRIES_SHOWN
        self.bad_entries_limit = BAD_ENTRIES_STREAMED if mode == "json" else quiet_limit
        self._started = time.monotonic()
        self._phase: str | None = None
        self._last_json = 0.0
        self._retry_shown = 0
        """The highest attempt said: each sender retries its own event, in waves, and one
        line per wave (per retry of the destination) is enough."""
        self._events_at_retry = 0
        self._events = 0
        self._bar: Bar | None = None
        self._task: TaskID | None = None

    # -- life ----------------------------------------------------------------------------

    def __enter__(self) -> Display:
        if self.mode == "bar":
            self._start_bar()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            try:
                self._bar.stop()
            except (OSError, ValueError):
                self._went_away()

    @property
    def bad_entries_hidden(self) -> int:
        """Bad entries counted but not printed."""
        return max(0, self.bad_entries - self.bad_entries_limit)

    # -- messages ------------------------------------------------------------------------

    def message(self, text: str) -> None:
        """A line for the user (e.g. what an interruption does now)."""
        self._say(text, {"event": "message", "message": text})

    def warning(self, text: str) -> None:
        """Something worth knowing that leaves nothing behind."""
        self._say(f"warning: {text}", {"event": "warning", "message": text})

    def bad_entry(self, entry: BadEntry) -> None:
        """A line of the trail that could not be used: the first ones are printed."""
        with self._lock:
            self.bad_entries += 1
            if self.bad_entries > self.bad_entries_limit:
                return
        if self.mode == "json":
            where = {"file": entry.file, "line": entry.line, "reason": entry.reason}
            self._json({"event": "badEntry", **where})
        else:
            self._say(f"bad entry: {entry}", None)

    def retry(self, retry: Retry) -> None:
        """The destination will try again: say so as it happens, once per attempt number."""
        if self.mode == "json":
            self._json(
                {
                    "event": "retry",
                    "destination": retry.destination,
                    "reason": retry.reason,
                    "attempt": retry.attempt,
                    "secondsLeft": round(retry.seconds_left, 1),
                }
            )
            return
        if self.quiet:
            return
        with self._lock:
            if self._events > self._events_at_retry:
                self._retry_shown = 0  # events went through since: a new outage counts anew
            self._events_at_retry = self._events
            if retry.attempt <= self._retry_shown:
                return
            self._retry_shown = retry.attempt
        self._say(
            f"retrying: {plain_reason(retry)} (attempt {retry.attempt}, giving up in "
            f"{retry.seconds_left:.0f} s)",
            None,
        )

    def summary(self, text: str) -> None:
        """The summary of the export, for a host to show (JSON only: a terminal's is printed
        by the command)."""
        if self.mode == "json":
            self._json({"event": "summary", "text": text})

    def finished(self, exit_code: int) -> None:
        """The command is about to exit (JSON: the last line)."""
        if self.mode == "json":
            self._json({"event": "finished", "exitCode": exit_code})

    # -- progress ------------------------------------------------------------------------

    def progress(self, progress: Progress) -> None:
        """Where the export is (called often: per run, and every few thousand lines read)."""
        self._events = progress.events_sent
        if self.mode == "json":
            self._json_progress(progress)
        elif self._bar is not None and self._task is not None:
            reading = progress.phase == "reading"
            done = progress.bytes_done if reading else progress.runs_done
            total = progress.bytes_total if reading else progress.runs_total
            fields: dict[str, Any] = {
                "phase": progress.phase,
                "events": progress.events_sent,
                "failed": progress.runs_failed,
            }
            with self._lock:
                if progress.phase != self._phase:
                    # A new phase: its own rate and ETA (reset replaces every field).
                    self._phase = progress.phase
                    self._bar.reset(
                        self._task,
                        total=total or None,
                        completed=0,
                        label=_LABELS.get(progress.phase, progress.phase),
                        started=self._started,
                        **fields,
                    )
            self._bar.update(self._task, completed=done, total=total or None, **fields)

    def _json_progress(self, progress: Progress) -> None:
        now = time.monotonic()
        with self._lock:
            new_phase = progress.phase != self._phase
            last = (
                progress.bytes_done >= progress.bytes_total > 0
                if progress.phase == "reading"
                else 0 < progress.runs_total <= progress.runs_done
            )
            if not (new_phase or last or now - self._last_json >= JSON_EVERY):
                return
            self._phase, self._last_json = progress.phase, now
        line: dict[str, Any] = {
            "event": "progress",
            "phase": progress.phase,
            "runsDone": progress.runs_done,
            "runsTotal": progress.runs_total,
            "eventsSent": progress.events_sent,
            "runsFailed": progress.runs_failed,
            "elapsed": round(now - self._started, 2),
        }
        if progress.phase == "reading":
            line.update(bytesDone=progress.bytes_done, bytesTotal=progress.bytes_total)
        elif progress.phase == "building":  # a dry run: built, none sent
            line.update(eventsSent=0, eventsBuilt=progress.events_sent)
        self._json(line)

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import Progress as Bar
        from rich.progress import TextColumn

        console = Console(file=self._stream, highlight=False)
        bar, status = _columns(lambda: console.width)
        self._bar = Bar(
            TextColumn("{task.fields[label]}"),
            bar,
            status,
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
            speed_estimate_period=15,
        )
        self._bar.start()
        self._task = self._bar.add_task(
            "export",
            total=None,
            label=_LABELS["reading"],
            phase="reading",
            events=0,
            failed=0,
            started=self._started,
        )

    # -- output --------------------------------------------------------------------------

    def _say(self, text: str, as_json: dict[str, Any] | None) -> None:
        if self.mode == "json":
            if as_json is not None:
                self._json(as_json)
            return
        text = shown(text)  # a server's reply or a pipeline id: its control characters inert
        with self._lock:
            if self._gone:
                return
            try:
                if self._bar is not None:
                    from rich.text import Text

                    # Above the bar, through its console: one clean line, the bar redrawn below.
                    self._bar.console.print(Text(text), soft_wrap=True)
                else:
                    self._stream.write(text + "\n")
                    self._stream.flush()
            except (OSError, ValueError):
                self._went_away()

    def _json(self, value: dict[str, Any]) -> None:
        data = jsonout.dumps(value).decode() + "\n"
        with self._lock:
            if self._gone:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (OSError, ValueError):
                self._went_away()

    def _went_away(self) -> None:
        """Nobody reads the messages any more (the terminal hung up: EIO; a ``--progress
        json`` reader went away: EPIPE): the export goes on without them, to its end and its
        ledger, and nothing more is written."""
        self._gone = True
        if self._stream is sys.stderr:
            detach(STDERR)


def plain_reason(retry: Retry) -> str:
    """Why the destination will retry, in few words where we know them."""
    if "connection refused" in retry.reason.lower() or "ECONNREFUSED" in retry.reason:
        return f"{_base(retry.destination)} refuses connections"
    return retry.reason


def _base(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else url


def status_line(
    phase: str,
    done: float,
    total: float | None,
    rate: float | None,
    elapsed: float,
    events: int,
    failed: int,
    width: int | None = None,
) -> str:
    """The text beside the bar: ``473/5,000 runs · 8.1 runs/s · 1,204 events · 0:58 · ETA 9m``
    (while reading: megabytes of the trail). Given a ``width``, the fields that matter least
    are left out until it fits: the rate first, then the clock, the events, the failures; the
    count and the ETA stay."""
    # (field, how much it matters: the lowest goes first)
    if phase == "reading":
        parts = [
            (f"{done / 1e6:,.1f}/{(total or 0) / 1e6:,.1f} MB" if total else "", 9),
            (f"{rate / 1e6:,.1f} MB/s" if rate else "", 1),
        ]
    else:
        parts = [
            (f"{int(done):,}/{int(total):,} runs" if total else f"{int(done):,} runs", 9),
            (f"{rate:,.1f} runs/s" if rate else "", 1),
            (f"{events:,} events", 3),
            (f"{failed:,} failed" if failed else "", 4),
        ]
    parts.append((_clock(elapsed), 2))
    if rate and total and total > done:
        parts.append((f"ETA {_duration((total - done) / rate)}", 8))
    kept = [(text, weight) for text, weight in parts if text]
    line = " · ".join(text for text, _ in kept)
    while width is not None and len(line) > width and len(kept) > 1:
        kept.remove(min(kept, key=lambda part: part[1]))
        line = " · ".join(text for text, _ in kept)
    return line


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def _duration(seconds: float) -> str:
    """A coarse duration: ``45s``, ``9m``, ``1h 5m``."""
    if seconds < 60:
        return f"{max(1, round(seconds))}s"
    if seconds < 3600:
        return f"{round(seconds / 60)}m"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours}h {minutes}m"


BAR_WIDEST, BAR_NARROWEST = 40, 10
"""The bar's width in columns: as wide as the line leaves room for, within these."""


def _columns(width: Callable[[], int]) -> tuple[Any, Any]:
    """The bar and the status beside it, fitted to the terminal's width (``width()``, asked at
    each redraw: the window may be resized) on one line: the status drops its least useful
    fields, then the bar gives up the rest of the room."""
    from rich.progress import BarColumn, ProgressColumn, Task
    from rich.table import Column
    from rich.text import Text

    def fitted(task: Task) -> tuple[str, int]:
        fields = task.fields
        # label, bar and status, a space between each, and the last column left free
        # (a terminal wraps a line that reaches its edge).
        room = width() - len(fields["label"]) - 3
        text = status_line(
            fields["phase"],
            task.completed,
            task.total,
            task.speed,
            time.monotonic() - fields["started"],
            fields["events"],
            fields["failed"],
            width=max(0, room - BAR_NARROWEST),
        )
        return text, max(BAR_NARROWEST, min(BAR_WIDEST, room - len(text)))

    class FittedBar(BarColumn):
        """The bar, as wide as the label and the status leave room for."""

        def render(self, task: Task) -> Any:
            self.bar_width = fitted(task)[1]
            return super().render(task)

    class StatusColumn(ProgressColumn):
        """Counts, rate, elapsed time and ETA of the current phase, as many as fit."""

        def render(self, task: Task) -> Text:
            return Text(fitted(task)[0], no_wrap=True, overflow="ellipsis")

    return FittedBar(), StatusColumn(table_column=Column(no_wrap=True))
