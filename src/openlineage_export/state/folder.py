"""Where the ledger lives (the user's state folder, never the workspace), and what to tell the
user when it cannot be written there."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .. import DISTRIBUTION
from ..errors import StateError
from ..files.userdirs import xdg_dir
from ..files.users import own_folder
from ..files.walk import Folder, shown_path
from ..files.whose import Checkouts, InCheckout

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
    return base / DISTRIBUTION


def state_folder(path: Path, checkouts: Checkouts, *, create: bool) -> Folder:
    """The state folder ``path`` held open (made 0700 when missing and ``create``;
    ``FileNotFoundError`` otherwise): the user's own, positively outside every checkout. One
    inside a checkout (``docs/ci/gitlab-ci.yml`` once put it in ``$CI_PROJECT_DIR``; or HOME
    the checkout) is a :class:`StateError`: a committed ledger there would say runs were sent
    that never were, and a committed link there would be written through."""
    try:
        return own_folder(path, checkouts, create=create)
    except InCheckout as exc:
        raise StateError(
            f"the state folder {shown_path(path)} (the ledger, the locks) is not used: it lies "
            f"in {exc.why}, where whoever pushed last could have put a ledger that says runs "
            f"were sent, or a link; set {STATE_DIR_ENV} to a folder outside every checkout "
            "(in CI: a cache folder outside the project's)"
        ) from None


ADVICE = "check that {folder} is a folder you can write to, or set {env} to another one"
FULL = "free some space there, or set {env} to a folder with room"
DAMAGED = (
    "the file is damaged: move it away (mv {path} {path}.damaged); the next export "
    "then starts a new ledger and sends every run again"
)
