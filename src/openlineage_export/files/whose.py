"""Whose a file is: a checkout's (whoever pushed last wrote it), or positively the user's.

A file read with the user's authority (their ``openlineage.yml``, secrets, approvals, the
keyring's index, the state we keep) and a link followed on the way to a path the user named
must lie where no checkout is. Unknown means untrusted: a folder is *not* the user's when

- a ``.git`` (a folder, the file of a worktree or a submodule, or a link) is in it or in any
  folder above it: it is inside a checkout, the outermost one as much as the nearest (a
  submodule's ``.git`` is no edge: the checkout around it holds it too);
- the workspace has no ``.git`` at or above it (a Docker build context, ``git archive``, a
  restored CI cache), so where its checkout ends cannot be told: then the workspace, and every
  folder it lies in (the current folder, when an export runs from a checkout's root on a
  workspace in a subfolder), are the workspace's (a workspace at the filesystem's root: the
  root itself, not every folder below it);
- it is in the home folder, and the home folder is such a folder (the workspace lies in it
  with no ``.git`` at or above): its dot-folders are the checkout's.

Everything else is the user's. Folders are judged by their real path (links resolved): the
callers walk them name by name (``walk.py``), so the path judged is the one they opened.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .userdirs import home_dir
from .walk import Refused, shown_path

GIT = ".git"


def git_at_or_above(folder: Path) -> Path | None:
    """The nearest ``.git`` (of any kind) in ``folder`` or a folder above it, if any."""
    for at in (folder, *folder.parents):
        if os.path.lexists(at / GIT):
            return at / GIT
    return None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@dataclass(frozen=True)
class Checkouts:
    """Where checkouts are around a workspace (or none: only ``.git`` then tells), as far as
    can be told; :meth:`holding` judges a folder."""

    workspace: Path | None = None
    """The workspace's real path; None when the command has none."""
    edge_known: bool = True
    """Whether a ``.git`` at or above the workspace tells where its checkout ends."""
    home: Path | None = None
    """The home folder's real path, when it may be the workspace's checkout."""

    @classmethod
    def around(cls, workspace: Path | None, environ: Mapping[str, str]) -> Checkouts:
        """The checkouts as seen from ``workspace`` (None: from no workspace), with the home
        folder ``environ`` names."""
        if workspace is None:
            return cls()
        real = _real(workspace)
        known = git_at_or_above(real) is not None
        home = home_dir(environ)
        home_real = _real(home) if home is not None else None
        # The home folder the workspace lies in, with no .git at or above the workspace: it
        # may be the workspace's checkout (a CI job whose HOME is the project's folder).
        home_holds = home_real is not None and not known and real.is_relative_to(home_real)
        return cls(real, known, home_real if home_holds else None)

    def holding(self, folder: Path) -> str | None:
        """Why a file in ``folder`` (a real path) is, or may be, a checkout's, in words that
        follow "in": ``the checkout /x (it has .git)``; None when it is positively the
        user's."""
        git = git_at_or_above(folder)
        if git is not None:
            return f"the checkout {shown_path(git.parent)} (it has {GIT})"
        ws = self.workspace
        if ws is not None and not self.edge_known:
            where = shown_path(ws)
            if ws.is_relative_to(folder):
                return (
                    f"{shown_path(folder)}, which holds the workspace {where} with no {GIT} at "
                    "or above it: where its checkout ends cannot be told"
                )
            # (A workspace at the root says nothing of the folders below it: all are.)
            if folder.is_relative_to(ws) and ws != ws.parent:
                return f"the workspace {where}"
        if self.home is not None and folder.is_relative_to(self.home):
            return (
                f"the home folder {shown_path(self.home)}, which holds the workspace with no "
                f"{GIT} at or above it: it may be the workspace's checkout"
            )
        return None

    def of_folder(self, folder: Path) -> str | None:
        """Why ``folder`` (as named; judged by its real path) is not positively the user's; a
        relative one never is (it is wherever the command runs). None when it is."""
        if not folder.is_absolute():
            return f"{shown_path(folder)}, a relative path (the current folder's)"
        return self.holding(_real(folder))

    def links(self, folder: Path) -> str | None:
        """The rule for a link met in ``folder`` on the way to a path the user named: None
        (followed) when ``folder`` is the user's, else why it is not followed."""
        why = self.holding(folder)
        return None if why is None else f"a link in {why}: not followed"

    def of_file(self, path: Path) -> str | None:
        """Why the file ``path`` is not positively the user's: where its name sits and, for a
        link, where it leads (each folder judged by its real path); None when it is."""
        why = self.holding(_real(path.parent))
        if why is None and os.path.islink(path):
            why = self.holding(_real(path).parent)
            if why is not None:
                why = f"{why}, where it leads"
        return why


NOWHERE = Checkouts()
"""Only ``.git`` tells (a command with no workspace)."""


class InCheckout(Refused):
    """A file or folder of the user's that lies, or may lie, in a checkout: ``why`` says where
    (``the checkout /x (it has .git)``)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(errno.EPERM, f"in {why}", str(path))
        self.why = why
