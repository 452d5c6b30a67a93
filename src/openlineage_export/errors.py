"""One exception tree for the whole package.

Every error a user can cause or meet derives from :class:`ExportError`; the CLI maps each
branch to an exit code in one place (``cli.py``) and prints its message, never a traceback::

    ExportError                      exit code
    ├── ConfigError                  2   a setting, a secret reference or an option is wrong
    │   └── MissingSecret            2   a secretRef names no stored secret
    ├── WorkspaceError               3   not a workspace, graph.json missing or unreadable,
    │                                    the audit trail cannot be read at all
    └── DestinationError             4   the destination cannot take events at all
        └── DestinationUnreachable   4   every attempt to reach it failed for the bounded time

Problems that concern one entry or one run (a malformed audit line, a run the server refused)
are not exceptions: they are collected in the export report, the good work around them goes
on, and the exit code (1) tells that something was left behind. An interruption is not an
exception either: the export returns its report with ``cancelled`` set (exit code 130).
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


class WorkspaceError(ExportError):
    """The workspace is not one, or its graph or audit trail cannot be read at all."""

    exit_code = 3


class DestinationError(ExportError):
    """The destination cannot take events at all (as opposed to refusing one run)."""

    exit_code = 4


class DestinationUnreachable(DestinationError):
    """Every attempt to reach the destination failed for the whole bounded retry time."""
