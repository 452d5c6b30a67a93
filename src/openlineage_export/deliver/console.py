"""The ``console`` destination: every event as one JSON line on standard error (or output).

openlineage-python's ``console`` transport logs each event as JSON at INFO level, which a
default logging set-up prints on standard error; here each event is one line there, the same
bytes the dry run writes, with no logging set-up needed. ``openlineage.console.stream`` picks
standard output instead (then ``--json`` would mix the summary with the events: use one or the
other). The ledger applies as for a server: a second export prints only what is new or changed
(``--full`` prints everything again).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import ClassVar, Literal, TextIO

from ..errors import OutputError
from ..guards.secrecy import Redactor
from ..host.setting_row import SettingsGroup, setting
from ..translate.encoded import TranslatedRun
from .destination import Opening, RunOutcome, Tally

STREAMS = ("stderr", "stdout")


@dataclass(frozen=True)
class ConsoleSettings(SettingsGroup):
    """Where the ``console`` destination prints."""

    title: ClassVar[str] = "console destination (openlineage.transport = console)"

    stream: str = setting(
        "openlineage.console.stream",
        "string",
        "stderr",
        "Where each event is printed as one JSON line: stderr (as openlineage-python's console "
        "transport logs it) or stdout.",
        env="OPENLINEAGE_CONSOLE_STREAM",
        choices=STREAMS,
    )


@dataclass(frozen=True)
class ConsoleConfig:
    """Which of the process's streams the events go to."""

    stream: str = "stderr"

    @classmethod
    def from_settings(cls, opening: Opening) -> ConsoleConfig:
        """The stream ``openlineage.console.stream`` names."""
        return cls(opening.settings.of(ConsoleSettings).stream)

    @property
    def name(self) -> str:
        """``console:stderr`` or ``console:stdout``: what the ledger keeps runs under."""
        return f"console:{self.stream}"


class ConsoleDestination:
    """Prints each run's events, one line each; sends nothing, needs no server."""

    concurrency = 1
    event_legs = False
    never_waits: Literal[True] = True
    """``send`` prints and returns: the engine needs no task per run."""
    redact = Redactor()

    def __init__(self, config: ConsoleConfig, supplied: object = None) -> None:
        self.config = config
        self.name = config.name

    def _stream(self) -> TextIO:
        # Looked up at each write: a progress bar on the terminal (rich) swaps in a stream
        # that prints above it.
        return sys.stdout if self.config.stream == "stdout" else sys.stderr

    async def start(self) -> None:
        """Nothing to open."""

    async def send(self, run: TranslatedRun, stop: asyncio.Event, tally: Tally) -> RunOutcome:
        """Print the run's events, one line each (a whole run, or nothing of it)."""
        text = "".join(body.decode() + "\n" for body in run.bodies)
        try:
            stream = self._stream()
            stream.write(text)
            stream.flush()
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise OutputError(
                f"cannot print the events on {self.config.stream}: {reason}",
                getattr(exc, "errno", None),
                reason,
            ) from None
        tally.accepted = len(run)
        return RunOutcome(accepted=len(run))

    async def close(self) -> None:
        """Nothing to close: the stream is the process's."""
