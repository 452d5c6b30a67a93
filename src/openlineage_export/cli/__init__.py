"""The command line: a thin host over the library, one module per command group.

- ``root.py``: the ``openlineage-export`` group; ``base.py``: the command classes and the one
  error boundary (the library's errors become one line and an exit code there);
  ``exit_codes.py``, ``echo.py`` (what is printed), ``workspace.py`` (``-w``, the settings).
- ``export.py``, ``status.py``, ``settings.py``, ``secrets.py``: the commands.

Exit codes (also in docs/exit-codes.md): 0 everything exported; 1 something was left behind (bad
entries, refused runs); 2 usage or configuration error; 3 workspace error; 4 the server could
not be reached; 5 another export of the same workspace to the same destination is
running; 129 stopped by SIGHUP; 130 interrupted (Ctrl-C); 141 standard output's
reader went away; 143 stopped by SIGTERM.

A new subcommand is one module here, and one entry in :data:`COMMANDS`. The export's terminal
side (progress, messages, signals, the events file, the summary) is in ``terminal/``.
"""

from __future__ import annotations

import click

from . import export, secrets, settings, status
from .root import main

COMMANDS: tuple[click.Command, ...] = (
    export.export,
    settings.settings,
    secrets.secrets,
    status.status,
)
"""Every subcommand, registered on :func:`~.root.main` (its help lists them by name)."""

for _command in COMMANDS:
    main.add_command(_command)

__all__ = ["COMMANDS", "main"]
