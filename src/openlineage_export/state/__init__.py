"""What we remember between exports, and while reading: the run index and the ledger.

Both are real SQLite files. ``OSError`` and ``sqlite3.Error`` never leave this package as
themselves: :func:`state_errors` turns them into one :class:`~openlineage_export.errors.StateError`
that names the file and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator

from ..errors import StateError

_FULL = frozenset({sqlite3.SQLITE_FULL})
_DAMAGE = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's (primary) result codes for a full disk, and for a file that is no (longer a)
database: told apart by code, never by SQLite's words."""


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


@contextlib.contextmanager
def state_errors(
    what: str, advice: str, *, full: str | None = None, damaged: str | None = None
) -> Iterator[None]:
    """``OSError`` and ``sqlite3.Error`` inside become a :class:`StateError` naming ``what``
    and what to do: ``full`` when the disk is full, ``damaged`` when SQLite finds the file
    damaged, else ``advice``."""
    try:
        yield
    except sqlite3.Error as exc:
        code = _primary_code(exc)
        if full is not None and code in _FULL:
            advice = full
        elif damaged is not None and code in _DAMAGE:
            advice = damaged
        raise StateError(f"{what} cannot be used ({exc}); {advice}") from None
    except OSError as exc:
        if full is not None and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            advice = full
        raise StateError(f"{what} cannot be used ({exc.strerror or exc}); {advice}") from None
