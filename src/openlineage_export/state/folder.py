"""Where the ledger lives (the user's state folder, never the workspace), and what to tell the
user when it cannot be written there."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import StateError
from ..files.userdirs import xdg_dir

STATE_DIR_ENV = "OPENLINEAGE_EXPORT_STATE_DIR"


def state_dir(environ: Mapping[str, str]) -> Path:
    """``$OPENLINEAGE_EXPORT_STATE_DIR``, else ``$XDG_STATE_HOME/openlineage-export`` (an
    absolute one: a relative one is ignored, as the XDG spec asks), else
    ``~/.local/state/openlineage-export``; :class:`StateError` when there is no home."""
    if environ.get(STATE_DIR_ENV):
        return Path(environ[STATE_DIR_ENV]).expanduser()
    base = xdg_dir(environ, "XDG_STATE_HOME", ".local/state")
    if base is None:
        raise StateError(
            "cannot tell where the ledger goes: HOME is not set (or empty, or "
            "relative) and the user database names no home folder; set HOME, "
            f"XDG_STATE_HOME or {STATE_DIR_ENV} to an absolute folder"
        )
    return base / "openlineage-export"


ADVICE = "check that {folder} is a folder you can write to, or set {env} to another one"
FULL = "free some space there, or set {env} to a folder with room"
DAMAGED = (
    "the file is damaged: move it away (mv {path} {path}.damaged); the next export "
    "then starts a new ledger and sends every run again"
)
