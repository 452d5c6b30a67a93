"""``export --watch`` on the command line: what it shows while it follows the trail, and the
watch itself with the signals and the events stream around it.

What it shows (stderr): on a terminal, one short line per run sent (``sent: daily-sales
3f2c5a1e-... (succeeded, 4 events)``), one line when it starts following, one when the server
cannot be reached and one when it answers again; no progress bar (a watch has no end to show).
With ``--progress json``, one JSON object a line, as an export's: ``run`` for each run sent,
built or refused, ``watching`` once what was pending is exported, ``outage`` and ``back``.

A dry run's events go to standard output or the ``-o`` file as each run is built, flushed per
run: the file is written in place (not renamed at the end, as a one-shot dry run's is), and what
was built stays when the watch is stopped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from ..errors import ConfigError, OutputError
from ..files import named
from ..files.whose import Checkouts
from .display import Display, Mode
from .files import check_output, is_stdout, said
from .signals import held_signals, interruptible

if TYPE_CHECKING:
    from ..export.report import ExportReport, RunResult
    from ..host.settings import Settings
    from .signals import Interruption

_SAID = {"sent": "sent", "built": "built", "failed": "failed"}


class WatchDisplay(Display):
    """The export's display, plus what a watch tells as it follows the trail."""

    following = False
    """Set once what was pending is exported: from then on each run is one line."""

    def run(self, result: RunResult) -> None:
        """A run sent (built, refused, cut short): told as it happens."""
        run = result.run
        if self.mode == "json":
            if result.state != "unchanged":
                line: dict[str, object] = {
                    "event": "run",
                    "state": result.state,
                    "traceId": run.trace_id,
                    "runId": run.run_id,
                    "pipeline": run.pipeline,
                    "status": run.status,
                    "events": len(run),
                }
                if result.reason is not None:
                    line["reason"] = result.reason
                self._json(line)
            return
        said = _SAID.get(result.state)
        if not self.following or self.quiet or said is None:
            return
        text = f"{said}: {run.pipeline} {run.trace_id} ({run.status}, {len(run)} events)"
        if result.reason is not None:
            text += f": {result.reason}"
        self._say(text, None)

    def following_from(self, segment: str | None) -> None:
        """What was pending is exported: from now on, each run as it ends."""
        self.following = True
        where = segment or "the audit trail (no segment yet)"
        self._say(
            f"following {where}: each run is sent once it ends (Ctrl-C stops)",
            {"event": "watching", "segment": segment},
        )

    def outage(self, message: str) -> None:
        """The destination cannot be reached: said once; the watch goes on."""
        self._say(
            f"waiting: {message}; the runs that end meanwhile are sent once it answers",
            {"event": "outage", "message": message},
        )

    def back(self, destination: str) -> None:
        """The destination answers again (said once per outage)."""
        self._say(
            f"back: {destination} answers again; the runs that waited were sent",
            {"event": "back", "destination": destination},
        )


def watch_export(
    root: Path,
    settings: Settings,
    mode: Mode,
    quiet: bool,
    dry_run: bool,
    output: Path | None,
    *,
    until_stdin_closes: bool = False,
) -> tuple[ExportReport, Interruption, Display]:
    """The watch, with its display (no bar: a watch has no end to show), the signals and the
    events stream around it, until a signal stops it (or, ``until_stdin_closes``, the end of
    standard input, as SIGTERM: a host that runs the watch as its child, an editor, may be
    killed without a word; the pipe it held closes all the same)."""
    display = WatchDisplay("plain" if mode == "bar" else mode, quiet=quiet)
    with held_signals():
        from ..export import ExportRequest
        from ..export.watch import WatchRequest, run_watch
    cancel = threading.Event()
    stopping = (
        "stopping after the run being built" if dry_run else "finishing the requests in flight"
    )
    try:
        with (
            display,
            interruptible(cancel, display.message, stopping=stopping) as interruption,
            _events(output, Checkouts.around(root, os.environ))
            if dry_run
            else contextlib.nullcontext() as events,
        ):
            for warning in settings.warnings:
                display.warning(warning)
            if until_stdin_closes:
                threading.Thread(target=_terminate_at_end_of_stdin, daemon=True).start()
            report = run_watch(
                WatchRequest(
                    ExportRequest(
                        workspace=root,
                        settings=settings,
                        dry_run=dry_run,
                        output=events,
                        environ=os.environ,
                        on_bad_entry=display.bad_entry,
                        on_progress=display.progress,
                        on_retry=display.retry,
                        on_warning=display.warning,
                        on_run=display.run,
                        cancel=cancel,
                    ),
                    on_following=display.following_from,
                    on_outage=display.outage,
                    on_back=display.back,
                )
            )
    except OutputError as exc:
        where = "standard output" if is_stdout(output) else str(output)
        raise OutputError(
            f"cannot write the events to {where}: {exc.reason}", exc.errno, exc.reason
        ) from None
    return report, interruption, display


def _terminate_at_end_of_stdin() -> None:
    """Read standard input to its end (what it says is not used), then SIGTERM this process:
    the handler ``interruptible`` installed stops the watch as a service manager's would.

    From the file descriptor, not ``sys.stdin``: a daemon thread blocked in a buffered
    reader holds its lock, and the interpreter aborts when it finds it held at exit."""
    with contextlib.suppress(OSError):
        while os.read(0, 65536):
            pass
    os.kill(os.getpid(), signal.SIGTERM)


class _Flushed:
    """A stream flushed after each write: the dry run's destination writes a run at once."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, data: bytes) -> int:
        written = self._stream.write(data)
        self._stream.flush()
        return written

    def flush(self) -> None:
        self._stream.flush()


@contextlib.contextmanager
def _events(path: Path | None, checkouts: Checkouts) -> Iterator[BinaryIO]:
    """Where a watching dry run writes: standard output, or ``path`` written in place (a new
    file put at that very name first: never through a link a checkout holds)."""
    if is_stdout(path):
        if sys.stdout is None:  # started with >&-
            raise OutputError("cannot write the events to standard output: it is closed")
        yield cast(BinaryIO, _Flushed(sys.stdout.buffer))
        return
    assert path is not None
    check_output(path, checkouts)
    try:
        stream = named.in_place(path, checkouts)
    except OSError as exc:
        raise ConfigError(f"cannot write the events to {path}: {said(exc, path)}") from None
    with stream:
        yield cast(BinaryIO, _Flushed(stream))
