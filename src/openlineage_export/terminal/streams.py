"""Standard output and standard error when nobody reads them any more.

- Standard output carries what the user asked for (a dry run's events, ``--json``, ``status``):
  a failure to write it is an error, :class:`~openlineage_export.errors.OutputError` (closed,
  full), or the quiet end of a pipe whose reader went away (``| head -1``: EPIPE, exit 141).
- Standard error carries messages and progress: a failure to write them (the terminal hung up,
  EIO; a ``--progress json`` reader went away, EPIPE; ``2>/dev/full``) leaves nowhere to say
  so, and must not stop an export that is sending: it is dropped, and what follows goes to
  ``/dev/null``.

Either way the file descriptor is pointed at ``/dev/null`` once it failed, so the
interpreter's last flush at exit cannot fail again (exit 120 and "Exception ignored").
"""

from __future__ import annotations

import errno
import os
import sys
from contextlib import suppress

from ..errors import OutputError
from ..files.named import null_device

STDOUT, STDERR = 1, 2


def detach(fd: int) -> None:
    """Point ``fd`` at ``/dev/null``: what is still to be written goes nowhere, quietly."""
    with suppress(OSError):
        null = null_device()
        os.dup2(null, fd)
        os.close(null)


def write_err(text: str) -> None:
    """Write ``text`` and a line break to standard error, if anybody still reads it."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):
        detach(STDERR)


def write_out(text: str) -> None:
    """Write ``text`` and a line break to standard output; :class:`OutputError` if it cannot."""
    stream = sys.stdout
    if stream is None:
        raise OutputError("cannot write to standard output: it is closed", errno.EBADF)
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise OutputError(
            f"cannot write to standard output: {reason}", getattr(exc, "errno", None)
        ) from None
