"""One exception tree for the whole package.

Every error a user can cause or meet derives from :class:`ExportError`; the CLI maps each
branch to an exit code in one place (``cli/base.py``) and prints its message, never a traceback::

    ExportError                      exit code
    ├── ConfigError                  2   a setting, a secret reference or an option is wrong
    │   ├── MissingSecret            2   a secretRef names no stored secret
    │   └── KeyNotApproved           2   a stored key would go to a server its owner did not
    │                                    approve it for (docs/security.md)
    ├── StateError                   2   the state folder (ledger) or the temporary folder cannot
    │                                    be used: full, read-only, not a folder, damaged
    ├── WorkspaceError               3   not a workspace, graph.json missing or unreadable,
    │                                    the audit trail cannot be read at all
    ├── OutputError                  2   standard output (or a dry run's events file) cannot be
    │                                    written: closed, full; 141 when its reader went away
    ├── DestinationError             4   the destination cannot take events at all
    │   └── DestinationUnreachable   4   every attempt to reach it failed for the bounded time
    └── ExportBusy                   5   another export of this workspace to this destination
                                         is running (nothing was sent; try again later)

Problems that concern one entry or one run (a malformed audit line, a run the server refused)
are not exceptions: they are collected in the export report, the good work around them goes
on, and the exit code (1) tells that something was left behind. An interruption is not an
exception either: the export returns its report with ``cancelled`` set (exit code 130).

``OSError`` and ``sqlite3.Error`` never leave the state layer (``state/``) as themselves: they
become :class:`StateError` there, naming the path and what to do. The CLI translates every
:class:`ExportError` in one place (its command group) into one line and the exit code.
"""

from __future__ import annotations


class ExportError(Exception):
    """Base of every error this package raises on purpose; its message is for the user."""

    exit_code = 1


class ConfigError(ExportError):
    """A setting, a secret reference or an option has a value we cannot use."""

    exit_code = 2


class MissingSecret(ConfigError):
    """A ``secretRef`` setting names a secret that the secrets store does not hold."""


class KeyNotApproved(ConfigError):
    """A stored key would go to a server (origin) its owner has not approved it for."""

    def __init__(self, message: str, secret_name: str, origin: str, source: str) -> None:
        super().__init__(message)
        self.secret_name = secret_name
        self.origin = origin
        self.source = source
        """Where the address comes from: ``openlineage.url, from settings.json``..."""


class StateError(ExportError):
    """What we remember between exports (the ledger) or the temporary run index cannot be kept."""

    exit_code = 2


class WorkspaceError(ExportError):
    """The workspace is not one, or its graph or audit trail cannot be read at all."""

    exit_code = 3


class OutputError(ExportError):
    """What the command prints cannot be written: standard output closed (``>&-``), full
    (``>/dev/full``), or its reader gone (``| head -1``: ``errno`` is EPIPE, which the CLI
    ends quietly with 141, as a shell reports a process SIGPIPE ended)."""

    exit_code = 2

    def __init__(self, message: str, errno: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.errno = errno
        self.reason = reason or message
        """Why, in the system's words (``No space left on device``)."""


class DestinationError(ExportError):
    """The destination cannot take events at all (as opposed to refusing one run)."""

    exit_code = 4


class DestinationUnreachable(DestinationError):
    """Every attempt to reach the destination failed for the whole bounded retry time (or
    failed so that no retry can help: a certificate refused, a server that speaks no TLS)."""

    def __init__(self, message: str, *, explained: bool = False) -> None:
        super().__init__(message)
        self.explained = explained
        """The message names the cause and its fix: no hint to check the address is added."""


class ExportBusy(ExportError):
    """Another export of the same workspace to the same destination holds the lock.

    Not a usage error (nothing is wrong with the command) and not a failure of the
    destination: the same command succeeds once the other export ends, so a scheduler can
    tell it apart and try again later.
    """

    exit_code = 5


def value_kind(value: object) -> str:
    """A JSON value's kind in words, for a message that must not show the value itself (it
    could be a misplaced credential, or a megabyte of someone's data)."""
    if isinstance(value, bool):
        return "a boolean"
    return {
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)
