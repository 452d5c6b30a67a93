"""Ctrl-C, SIGTERM and SIGHUP during an export: the first asks the library to stop (its
cancel flag), so the export returns, the ledger keeps what was accepted and the summary is
printed; a second one stops at once. Either way the exit code is 128 + the signal's number:
130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP).

Service managers (docker stop, Kubernetes, systemd, CI runners) send SIGTERM and wait a while
before SIGKILL: treating it as Ctrl-C is what keeps their exports' ledgers true. SIGHUP comes
when the terminal goes away (its window closed, an ssh connection dropped): the requests in
flight are answered and recorded all the same; the messages and the summary have nowhere to
go then, and are dropped (``display.py`` and the CLI write to a vanished terminal quietly).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import NoReturn

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
"""128 + the signal's number, as shells report a process a signal ended."""


def exit_interrupted(message: str, code: int = 130) -> NoReturn:
    """Say ``message`` and exit with ``code`` at once.

    ``os._exit``: a Ctrl-C that passed through the interpreter's own code while a module was
    being imported can leave it set to end itself by SIGINT (exit status -2, not 130) however
    the KeyboardInterrupt is caught; what needed cleaning up was cleaned up on the way here.
    """
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    with suppress(OSError, ValueError):
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    os._exit(code)


@contextmanager
def held_signals() -> Iterator[None]:
    """While inside, SIGINT, SIGTERM and SIGHUP are held, then acted on: exit 130, 143, 129.

    For imports: an extension module interrupted while it initialises may crash the process
    (orjson does: a segmentation fault instead of exit 130). Not for waiting on the user (a
    held Ctrl-C would not end a prompt).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in EXIT_CODES}
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
    if held:
        exit_interrupted("\ninterrupted", 128 + held[0])


class Interruption:
    """Which stop signal arrived first, if any."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None

    @property
    def exit_code(self) -> int | None:
        """130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP, None when none came."""
        return None if self.signal is None else EXIT_CODES[self.signal]

    @property
    def name(self) -> str:
        """How the user knows the signal: ``Ctrl-C``, ``SIGTERM`` or ``SIGHUP``."""
        return "Ctrl-C" if self.signal in (None, signal.SIGINT) else self.signal.name


@contextmanager
def interruptible(
    cancel: threading.Event, say: Callable[[str], None], *, stopping: str
) -> Iterator[Interruption]:
    """While inside, SIGINT, SIGTERM and SIGHUP set ``cancel`` and ``say`` what happens now
    (``stopping``, e.g. "finishing the requests in flight"); a second one quits at once with
    the first one's exit code."""
    interruption = Interruption()
    if threading.current_thread() is not threading.main_thread():
        yield interruption
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        interruption.signal = signal.Signals(signum)
        cancel.set()
        again = "Ctrl-C again" if signum == signal.SIGINT else "again"
        say(f"interrupting ({interruption.name}): {stopping} ({again} to quit now)")

    previous = {sig: signal.signal(sig, handler) for sig in EXIT_CODES}
    try:
        yield interruption
    except KeyboardInterrupt:
        # The second signal (or a Ctrl-C before the handler knew of the first): quit now, with
        # the code of the first one, not click's "Aborted!" and 1. The export's own cleanup
        # has run (the event loop cancelled its work, the ledger kept what was accepted); what
        # it abandoned (a send the signal cut short) is not worth a report at exit: os._exit.
        say(
            "interrupted: stopped at once; what was accepted is kept; run the export again "
            "to finish"
        )
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        os._exit(interruption.exit_code or 130)
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
