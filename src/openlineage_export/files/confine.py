"""Where the workspace ends: which files travel with it, and how we write inside it.

A workspace's files travel with its repository, so whoever pushed last wrote them: what they
hold is data (docs/security.md). This module is the mechanics of that rule, used where
untrusted paths enter:

- :func:`repository` and :func:`travels`: whether a file we would read with the *user's*
  authority (``openlineage.yml``) is in fact the repository's, judged by where its name (or the
  link standing for it) sits and where it points;
- :func:`open_folder`, :func:`open_append`: a file the workspace names, opened below the
  workspace root one folder at a time, never through a link, never blocking (a FIFO, a device
  or a socket is refused), as a regular file;
- :func:`replace_file`: a file of the workspace rewritten atomically (a temporary file in the
  same folder, then a rename), never through a link.

Folders are held open while they are used (``openat``-style, with ``dir_fd``): a link swapped
in after a check cannot redirect what follows.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from .userdirs import home_dir

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC


_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
}


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` is, in words: ``a named pipe (FIFO)``, ``a folder``..."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_file(path: Path, *, limit: int | None = None) -> bytes:
    """The bytes of a workspace file, which must be a regular file (or a link to one).

    A FIFO would make a plain read wait forever and a link to ``/dev/zero`` fill the memory:
    anything but a regular file is an :class:`OSError` whose ``strerror`` says what it is, and
    so is a file of more than ``limit`` bytes.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as stream:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"it is {file_kind(info.st_mode)}, not a file", str(path))
        if limit is None:
            return stream.read()
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"it is larger than {limit:,} bytes", str(path))
        return data


class Refused(OSError):
    """A path that leads through a link, or to what is not a regular file; ``strerror`` says
    which part and what it is, ``filename`` the path as far as it was walked."""


# -- whose is a file: the repository's, or the user's ------------------------------------------


def repository(workspace: Path, environ: Mapping[str, str]) -> Path:
    """The folder the workspace's files travel in: the nearest folder at or above it holding
    ``.git`` (a folder, or the file of a worktree or submodule), else the workspace itself.

    Never the home folder or a folder above it: a repository of dotfiles in the home folder
    does not make the user's own configuration the workspace's.
    """
    start = workspace.resolve()
    home = home_dir(environ)
    home = home.resolve() if home is not None else None
    for folder in (start, *start.parents):
        if home is not None and home.is_relative_to(folder):
            break
        if os.path.lexists(folder / ".git"):
            return folder
    return start


def travels(path: Path, repo: Path) -> str | None:
    """How ``path`` belongs to the repository ``repo`` (resolved): ``"is inside"`` when its
    name sits there (whatever a link there points to: the pusher chose it), ``"is a link
    into"`` when it points there from elsewhere; None when it is neither."""
    where = path.absolute()
    sits = where.parent.resolve() / where.name
    if sits.is_relative_to(repo):
        return "is inside"
    if where.resolve().is_relative_to(repo):
        return "is a link into"
    return None


# -- writing inside the workspace, never through a link ------------------------------------------


def _refused(path: Path, what: str) -> Refused:
    return Refused(errno.ELOOP, what, str(path))


def _kind_at(folder: int, name: str) -> str | None:
    """What ``name`` in the open folder is, in words, when not a plain file or folder."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return "a link"
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else file_kind(mode)


def open_folder(root: Path, parts: Sequence[str], *, create: bool) -> int:
    """A descriptor of the folder ``root/parts...``, walked one name at a time from ``root``
    (the user's choice, links and all) without following a link below it; missing folders
    are made when ``create``. :class:`Refused` names the first part that is a link or no
    folder. The caller closes the descriptor."""
    fd = os.open(root, _FOLDER_FLAGS)
    walked = root
    try:
        for name in parts:
            walked = walked / name
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
            try:
                child = os.open(name, _FOLDER_FLAGS | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                kind = _kind_at(fd, name) or "not a folder"
                raise _refused(
                    walked, f"it is {kind}, not a folder of the workspace's own"
                ) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_append(path: Path, *, folder: int | None = None, follow: bool = True) -> BinaryIO:
    """``path`` opened to append to (created if missing): a regular file, opened without
    blocking (a FIFO with no reader would wait forever) and then made blocking again.

    With ``folder`` (a descriptor from :func:`open_folder`), ``path.name`` is opened in it;
    ``follow=False`` refuses a link there, and a file with another name elsewhere (a hard
    link: what git never makes). :class:`Refused` for anything but a regular file.
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _CLOEXEC | (0 if follow else _NOFOLLOW)
    name = path.name if folder is not None else str(path)
    try:
        try:
            fd = os.open(name, flags | getattr(os, "O_NONBLOCK", 0), 0o666, dir_fd=folder)
        except BlockingIOError:
            # A regular file another program holds a lease on (a sync tool): the kernel bounds
            # that wait (lease-break-time), and only regular files are leased.
            if not stat.S_ISREG(os.stat(name, dir_fd=folder, follow_symlinks=follow).st_mode):
                raise
            fd = os.open(name, flags, 0o666, dir_fd=folder)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EOPNOTSUPP):
            raise
        kind = (_kind_at(folder, name) if folder is not None else None) or _kind(path, follow)
        raise Refused(exc.errno, f"it is {kind}, not a file", str(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(errno.EINVAL, f"it is {file_kind(info.st_mode)}, not a file", str(path))
        if not follow and info.st_nlink > 1:
            raise Refused(
                errno.EMLINK,
                "it is a file with another name elsewhere (a hard link), not the workspace's own",
                str(path),
            )
        status = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, status & ~getattr(os, "O_NONBLOCK", 0))
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


def _kind(path: Path, follow: bool) -> str:
    try:
        mode = path.stat().st_mode if follow else path.lstat().st_mode
    except OSError:
        return "not a regular file"
    return "a link" if stat.S_ISLNK(mode) else file_kind(mode)


def replace_file(root: Path, parts: Sequence[str], data: bytes) -> None:
    """Replace the file ``root/parts...`` with ``data`` atomically (readers see the old file
    or the new): a temporary file in the same folder, written, flushed to disk and renamed
    over it, keeping its mode. Neither the file nor a folder on its way below ``root`` may be
    a link (:class:`Refused`, before anything is written)."""
    *folders, name = parts
    fd = open_folder(root, folders, create=False)
    path = root.joinpath(*parts)
    try:
        try:
            info: os.stat_result | None = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISREG(info.st_mode):
            kind = "a link" if stat.S_ISLNK(info.st_mode) else file_kind(info.st_mode)
            raise _refused(path, f"it is {kind}, not a file of the workspace's own")
        mode = stat.S_IMODE(info.st_mode) if info is not None else None
        temp = f".{name}.{uuid.uuid4().hex[:12]}.tmp"
        out = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
            0o666 if mode is None else 0o600,
            dir_fd=fd,
        )
        try:
            with os.fdopen(out, "wb") as stream:
                if mode is not None:
                    os.fchmod(stream.fileno(), mode)
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            # A rename replaces the name itself: a link put there meanwhile is replaced, never
            # followed.
            os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=fd)
            raise
        with contextlib.suppress(OSError):  # the rename itself made durable, where it can be
            os.fsync(fd)
    finally:
        os.close(fd)
