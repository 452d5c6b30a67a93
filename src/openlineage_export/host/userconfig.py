"""The user's own folder (outside every workspace), and what makes a file there the user's.

What lives there decides where keys may go (the secrets, the servers each one is approved for),
so a file or folder that someone else could have written is not trusted: it must belong to
this user (or, for a folder, to root) and nobody else may change it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from .. import DISTRIBUTION
from ..errors import ConfigError
from ..files.userdirs import xdg_dir

SERVICE = DISTRIBUTION
"""The name of the user's folder (and of the keyring service)."""

CONFIG_DIR_ENV = "OPENLINEAGE_EXPORT_CONFIG_DIR"
"""Environment variable naming the user config folder outright."""


def config_dir(environ: Mapping[str, str]) -> Path:
    """The user config folder: ``$OPENLINEAGE_EXPORT_CONFIG_DIR``, else
    ``${XDG_CONFIG_HOME:-~/.config}/openlineage-export`` (empty or relative values are ignored,
    as the XDG spec asks)."""
    explicit = environ.get(CONFIG_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = xdg_dir(environ, "XDG_CONFIG_HOME", ".config")
    if base is None:
        raise ConfigError(
            "cannot tell where the secrets are: HOME is not set (or empty, or "
            "relative) and the user database names no home folder; set HOME, "
            f"XDG_CONFIG_HOME or {CONFIG_DIR_ENV} to an absolute folder"
        )
    return base / SERVICE


def check_users_file(info: os.stat_result, path: Path, what: str) -> None:
    """Refuse ``path`` (whose ``fstat`` is ``info``) unless it is this user's and private."""
    if os.name != "posix":
        return
    if info.st_uid != os.geteuid():
        raise ConfigError(
            f"{what} {path} belongs to another user (uid {info.st_uid}), who could "
            f"have put anything in it; it is not used. If it is yours, take it: "
            f"chown {os.geteuid()} {path} && chmod 600 {path}"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"{what} {path} can be read or changed by other users (mode "
            f"{mode:04o}); make it private to you: chmod 600 {path}"
        )


def check_users_folder(info: os.stat_result, folder: Path, what: str) -> None:
    """Refuse the folder of ``what`` (whose ``fstat`` is ``info``) when someone else could
    replace the files in it: it must belong to this user (or root) and be writable by its
    owner only."""
    if os.name != "posix":
        return
    if info.st_uid not in (os.geteuid(), 0):
        raise ConfigError(
            f"the folder {folder} of {what} belongs to another user (uid "
            f"{info.st_uid}), who could replace what is in it; it is not used. "
            f"Use a folder of your own (OPENLINEAGE_EXPORT_CONFIG_DIR), or take "
            f"it: chown {os.geteuid()} {folder} && chmod 700 {folder}"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        raise ConfigError(
            f"the folder {folder} of {what} can be changed by other users (mode "
            f"{mode:04o}): anyone could replace what is in it; it is not used. "
            f"Make it yours alone: chmod 700 {folder}"
        )
