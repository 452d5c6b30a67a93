"""Who runs the command, and how its hints are worded for that host: the one place that decides.

A host running the CLI as a child says who it is in the environment, ``OPENLINEAGE_EXPORT_HOST``:

- unset (or a value we do not know, ignored): a person at the command line; hints name the
  options (``-w DIR``, ``--url``) and where each value comes from;
- ``vscode``: the VS Code extension. Its user has no command line: the workspace is the folder
  open in the editor, and the url is set in Settings (``openlineage.url``, which the extension
  mirrors into ``.workspace/settings.json``; it hands a key over as one of its own secret
  storage, ``host/host_secrets.py``, never by copying that url into ``OPENLINEAGE_URL``). A
  value from ``OPENLINEAGE_URL`` equal to the workspace file's is said to be the one in
  Settings; another is from the environment VS Code was started in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ExportError, WorkspaceError
from ..host.workspace import MARKER, NAME_IT, NAME_ONE

if TYPE_CHECKING:
    from ..host.settings import Settings

HOST_ENV = "OPENLINEAGE_EXPORT_HOST"
"""The environment variable a host names itself in."""

HOSTS = {"vscode": "the VS Code extension: hints name Settings and the open folder"}
"""The hosts we word hints for, and what changes; any other value is ignored."""


@dataclass(frozen=True)
class HostWords:
    """The hints of one host."""

    host: str | None = None
    """``vscode``, or None: the command line."""

    @property
    def in_editor(self) -> bool:
        """Whether the user works in VS Code's Settings and open folder, not a shell."""
        return self.host == "vscode"

    def error(self, exc: ExportError) -> str:
        """An error's message as this host's user can act on it."""
        message = str(exc)
        if self.in_editor and isinstance(exc, WorkspaceError):
            message = message.replace(NAME_IT, f"open the folder that holds {MARKER}/ instead")
            message = message.replace(NAME_ONE, "open one of them as the folder")
        return message

    def address_question(self, settings: Settings, key: str, root: Path, *, is_url: bool) -> str:
        """``is KEY (from SOURCE) the address?``, and how else to try, worded for this host."""
        source = settings.source(key)
        if source == "given":
            return "is --url its address?"
        if self.in_editor and self._from_settings(settings, key, root):
            return f"is {key} in Settings the address?"
        if self.in_editor:
            where = source.replace("environment", "the environment VS Code was started in")
            return f"is {key} (from {where}) the address?"
        other = "; --url tries another server for one export" if is_url else ""
        return f"is {key} (from {source}) the address?{other}"

    @staticmethod
    def _from_settings(settings: Settings, key: str, root: Path) -> bool:
        """Whether the value in force is the one VS Code's Settings hold: the workspace
        file's, read as it is, or the extension's copy of it in the environment."""
        from ..host.settings import WORKSPACE_SOURCE, read_raw

        source = settings.source(key)
        if source == WORKSPACE_SOURCE:
            return True
        if not source.startswith("environment (OPENLINEAGE_"):
            return False
        try:
            return read_raw(root).get(key) == settings.value(key)
        except ExportError:
            return False


def host_words(environ: Mapping[str, str] | None = None) -> HostWords:
    """The words of the host the environment names (``OPENLINEAGE_EXPORT_HOST``)."""
    name = (os.environ if environ is None else environ).get(HOST_ENV, "").strip().lower()
    return HostWords(name if name in HOSTS else None)
