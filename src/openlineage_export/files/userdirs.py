"""The user's own folders, as the XDG Base Directory spec finds them: ``$XDG_STATE_HOME`` or
``$XDG_CONFIG_HOME`` when absolute (a relative one is ignored, as the spec says: it would put
the ledger or the secrets inside whatever folder the command runs in, the workspace
included), else a folder under the home directory.

The home directory is ``$HOME`` when it is absolute; an empty, relative or missing ``HOME``
(a cron job, a container, ``env -i``) falls back to the user database's entry; when neither
gives one, the caller's error says so, rather than a ``/.local/state`` at the root or a
``.local/state`` in the current folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def home_dir(environ: Mapping[str, str]) -> Path | None:
    """The user's home directory: ``$HOME`` if absolute, else the user database's; None when
    neither names one (or it names the root, as for system users)."""
    home = environ.get("HOME", "")
    if _usable(home):
        return Path(home)
    return users_home()


def users_home() -> Path | None:
    """The home directory the user database gives this user, if any (not the root)."""
    try:
        import pwd

        entry = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, AttributeError):
        return None
    return Path(entry) if _usable(entry) else None


def _usable(home: str) -> bool:
    """An absolute folder other than the root (the root's parent is itself)."""
    return bool(home) and os.path.isabs(home) and Path(home).parent != Path(home)


def xdg_dir(environ: Mapping[str, str], variable: str, under_home: str) -> Path | None:
    """``$variable`` when absolute, else ``<home>/<under_home>``; None when there is no home."""
    value = environ.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    home = home_dir(environ)
    return None if home is None else home / under_home
