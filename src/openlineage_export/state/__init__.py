"""What we remember between exports, and while reading: the run index and the ledger.

Both are real SQLite files. ``OSError`` and ``sqlite3.Error`` never leave this package as
themselves: :func:`state_errors` turns them into one :class:`~openlineage_export.errors.StateError`
that names the file and what to do.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from ..errors import StateError


@contextlib.contextmanager
def state_errors(what: str, advice: str) -> Iterator[None]:
    """``OSError`` and ``sqlite3.Error`` inside become a :class:`StateError` naming ``what``."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StateError(f"{what} cannot be used ({exc}); {advice}") from None
    except OSError as exc:
        raise StateError(f"{what} cannot be used ({exc.strerror or exc}); {advice}") from None
