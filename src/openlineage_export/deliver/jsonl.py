"""The dry run's destination: every event as one JSON line, in the order it would be sent."""

from __future__ import annotations

import threading
from typing import BinaryIO

from ..translate.events import TranslatedRun, encode
from .destination import RunOutcome


class JsonLinesDestination:
    """Writes events to a binary stream; sends nothing, needs no server and no secret."""

    concurrency = 1

    def __init__(self, stream: BinaryIO, name: str = "dry run") -> None:
        self.stream = stream
        self.name = name

    def send(self, run: TranslatedRun, cancel: threading.Event) -> RunOutcome:
        """Write the run's events, one line each."""
        self.stream.write(b"".join(encode(event) + b"\n" for event in run.events))
        return RunOutcome(accepted=len(run.events))

    def close(self) -> None:
        """Flush the stream (the caller owns and closes it)."""
        self.stream.flush()
