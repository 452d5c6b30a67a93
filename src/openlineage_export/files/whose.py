"""Whose a file is: a checkout's (whoever pushed last wrote it), or positively the user's.

A file read with the user's authority (their ``openlineage.yml``, secrets, approvals, the
keyring's index, the state we keep) and a link followed on the way to a path the user named
must lie where no checkout is. Unknown means untrusted: a folder is *not* the user's when

- a ``.git`` (a folder, the file of a worktree or a submodule, or a link) is in it or in any
  folder above it: it is inside a checkout, the outermost one as much as the nearest (a
  submodule's ``.git`` is no edge: the checkout around it holds it too);
- the workspace has no repository's ``.git`` at or above it (a Docker build context, ``git
  archive``, a restored CI cache: a ``.git`` that is no repository, or a ``gitdir:`` file
  whose repository is not there, as a submodule's is when the outer ``.git`` was left out,
  tells nothing), so where its checkout ends cannot be told: then the workspace, and every
  folder it lies in (the current folder, when an export runs from a checkout's root on a
  workspace in a subfolder), are the workspace's (a workspace at the filesystem's root: the
  root itself, not every folder below it);
- it is in the home folder, and the home folder is such a folder (the workspace lies in it
  with no ``.git`` at or above): its dot-folders are the checkout's. The home folder is the one
  the user's folders are found in (``userdirs.home_dir``) and the one ``~`` names (``$HOME`` as
  it is, a relative one taken from the current folder); a ``HOME`` of ``/`` holds every
  workspace: its dot-folders (``/.openlineage``, ``/.config``) are the checkout's.

Everything else is the user's. Folders are judged by their real path (links resolved): the
callers walk them name by name (``walk.py``), so the path judged is the one they opened.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .userdirs import home_dir, users_home
from .walk import Refused, shown_path

GIT = ".git"


def git_at_or_above(folder: Path) -> Path | None:
    """The nearest ``.git`` (of any kind) in ``folder`` or a folder above it, if any."""
    for at in (folder, *folder.parents):
        if os.path.lexists(at / GIT):
            return at / GIT
    return None


_GITFILE_MAX = 4096
"""The most read of a ``gitdir:`` file (git writes one short line)."""


def is_repository(git: Path) -> bool:
    """Whether the ``.git`` at ``git`` is a repository that exists, as git itself tells one:
    a folder (or a link to one) with ``HEAD`` and, in it or in the folder its ``commondir``
    names (a worktree's), ``objects/`` and ``refs/``; or a ``gitdir:`` file (a worktree's, a
    submodule's) naming such a folder. An empty or unreadable ``.git``, a dangling link or a
    ``gitdir:`` naming nothing is no repository: it cannot tell where a checkout ends."""
    if os.path.isdir(git):
        return _git_folder(Path(git))
    target = _read_small(git)
    if target is None or not target.startswith("gitdir:"):
        return False
    named = target[len("gitdir:") :].strip()
    return bool(named) and _git_folder(git.parent / named)


def _git_folder(folder: Path) -> bool:
    if not os.path.isfile(folder / "HEAD"):
        return False
    common = folder
    pointer = _read_small(folder / "commondir")
    if pointer is not None and pointer.strip():
        common = folder / pointer.strip()
    return os.path.isdir(common / "objects") and os.path.isdir(common / "refs")


def _read_small(path: Path) -> str | None:
    """The text of the regular file ``path`` (at most :data:`_GITFILE_MAX` bytes), or None:
    never a FIFO or a device (opened without blocking, checked once open)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _GITFILE_MAX).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def repository_at_or_above(folder: Path) -> bool:
    """Whether a ``.git`` in ``folder`` or a folder above it is a repository that exists
    (:func:`is_repository`): only then is where a checkout ends known."""
    return any(
        is_repository(at / GIT) for at in (folder, *folder.parents) if os.path.lexists(at / GIT)
    )


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@dataclass(frozen=True)
class Checkouts:
    """Where checkouts are around a workspace (or none: only ``.git`` then tells), as far as
    can be told; :meth:`holding` judges a folder."""

    workspace: Path | None = None
    """The workspace's real path; None when the command has none."""
    edge_known: bool = True
    """Whether a repository's ``.git`` at or above the workspace tells where its checkout
    ends."""
    anchor: str = "the workspace"
    """What ``workspace`` is, in words: ``the current folder`` for a command that names or
    finds no workspace (:meth:`from_folder`)."""
    below: bool = True
    """Whether the folders below ``workspace`` are held too (not for :meth:`from_folder`: the
    current folder is no workspace, and what lies below it says nothing of a checkout)."""
    homes: tuple[Path, ...] = ()
    """The home folders' real paths that may be the workspace's checkout (``/``: only its
    dot-folders)."""

    @classmethod
    def around(cls, workspace: Path | None, environ: Mapping[str, str]) -> Checkouts:
        """The checkouts as seen from ``workspace`` (None: from no workspace), with the home
        folder ``environ`` names."""
        if workspace is None:
            return cls()
        real = _real(workspace)
        known = repository_at_or_above(real)
        if known:
            return cls(real, known)
        # The home folder the workspace lies in, with no .git at or above the workspace: it
        # may be the workspace's checkout (a CI job whose HOME is the project's folder). Both
        # homes count: the one our readers use, and the one "~" names (HOME as it is: "/" in
        # a container run under an unknown uid, "." in a Makefile).
        homes = [home_dir(environ), Path(environ["HOME"]) if environ.get("HOME") else None]
        held = {_real(home) for home in homes if home is not None}
        return cls(real, known, homes=tuple(sorted(h for h in held if real.is_relative_to(h))))

    @classmethod
    def from_folder(cls, folder: Path, environ: Mapping[str, str]) -> Checkouts:
        """The checkouts as seen by a command that names or finds no workspace, run in
        ``folder``, never as from nowhere: with no repository's ``.git`` at or above it, it
        and every folder it lies in may be a checkout's, and so may a home folder holding it
        (a CI job's ``HOME=$CI_PROJECT_DIR``), unless that home is the one the user database
        gives the user (a terminal opened in one's own home)."""
        seen = cls.around(folder, environ)
        own = users_home()
        own_real = _real(own) if own is not None else None
        homes = tuple(home for home in seen.homes if home != own_real)
        anchor = "the current folder (no workspace named with -w, or found around it)"
        return cls(seen.workspace, seen.edge_known, anchor=anchor, below=False, homes=homes)

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
                    f"{shown_path(folder)}, which holds {self.anchor} {where} with no {GIT} "
                    "at or above it: where its checkout ends cannot be told"
                )
            # (A workspace at the root says nothing of the folders below it: all are.)
            if self.below and folder.is_relative_to(ws) and ws != ws.parent:
                return f"{self.anchor} {where}"
        for home in self.homes:
            # HOME=/ holds every workspace; its dot-folders, not all the machine, are the
            # ones read as a home folder's.
            at_root = home == home.parent
            if folder.is_relative_to(home) and (
                not at_root or (len(folder.parts) > 1 and folder.parts[1].startswith("."))
            ):
                return (
                    f"the home folder {shown_path(home)}, which holds {self.anchor} with no "
                    f"{GIT} at or above it: it may be its checkout"
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
