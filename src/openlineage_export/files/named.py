"""A path the user named (``-o``, ``--report``, ``OPENLINEAGE_FILE_PATH``, ``-w``), written at
that very name.

The path is walked one name at a time from the root (a relative one from the current folder):
a link on the way is followed when it is positively the user's (its folder lies in no
checkout: ``whose.py``), and refused in one line when a checkout holds it (a committed
``build -> ../other-project/build``). At the last name:

- written whole (:func:`replacing`, :func:`in_place`): a new file is renamed over the name, so a
  link a checkout holds there is replaced, never written through (the file it pointed to is
  kept); a link of the user's is followed, and what it leads to is replaced the same way (the
  link kept), or written to as it is when it is a device or a pipe (``/dev/stdout``); a
  device, a FIFO or a socket at the name is written to when it is the user's, refused when a
  checkout holds it;
- appended to (:func:`append`): a regular file; a link there is followed when it is the
  user's, refused in one line when a checkout holds it; anything but a regular file is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .walk import (
    CLOEXEC,
    MAX_LINKS,
    NONBLOCK,
    Folder,
    Refused,
    Replacement,
    kind,
    refused,
    shown_path,
    split,
    walk,
)
from .whose import Checkouts, InCheckout


def absolute(path: Path | str) -> Path:
    """``path`` from the root: a relative one joined to the current folder (its ``..`` kept,
    to be walked: the parent of what a link led to, as the kernel has it)."""
    given = Path(path)
    return given if given.is_absolute() else Path(os.getcwd()) / given


def folder_of(path: Path | str, checkouts: Checkouts, *, create: bool = False) -> Folder:
    """The folder ``path`` names, walked from the root (links judged by ``checkouts``)."""
    where = absolute(path)
    return walk(Path(where.anchor), where.parts[1:], checkouts.links, create=create)


def _parent(path: Path | str, checkouts: Checkouts, *, create: bool = False) -> tuple[Folder, str]:
    start, folders, name = split(absolute(path))
    folder = walk(start, folders, checkouts.links, create=create)
    if name in (".", ".."):
        folder.close()
        raise refused(absolute(path), "a folder, not a file", errno.EISDIR)
    return folder, name


def _follow(folder: Folder, name: str, checkouts: Checkouts) -> tuple[Folder, str, str | None]:
    """Where the user's links at ``name`` lead, name by name: the folder and name of what is
    there (or would be), and, when a link that is not the user's stands there, why not."""
    for _ in range(MAX_LINKS):
        found = folder.look(name)
        if found is None or not stat.S_ISLNK(found.st_mode):
            return folder, name, None
        why = checkouts.links(folder.path)
        if why is not None:
            return folder, name, why
        link = os.readlink(name, dir_fd=folder.fd)
        target = Path(link) if os.path.isabs(link) else folder.path / link
        folder.close()
        folder, name = _parent(target, checkouts)
    folder.close()
    raise refused(Path(name), "a loop of links (more than 40)")


def check_writable(path: Path | str, checkouts: Checkouts) -> None:
    """Refuse early (before anything is read or sent) a path that cannot be written: an
    ``OSError`` whose ``strerror`` says why (``folder X does not exist``, ``it is a folder``,
    a link a checkout holds on the way)."""
    try:
        folder, name = _parent(path, checkouts)
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            errno.ENOENT, f"folder {exc.filename} does not exist", str(path)
        ) from None
    with folder:
        found = folder.look(name)
        if found is not None and stat.S_ISDIR(found.st_mode):
            raise refused(folder.path / name, "a folder", errno.EISDIR)
        if found is None and not os.access(".", os.W_OK, dir_fd=folder.fd):
            raise PermissionError(
                errno.EACCES, f"folder {shown_path(folder.path)} is not writable", str(path)
            )


def _as_it_is(folder: Folder, name: str, checkouts: Checkouts) -> BinaryIO | None:
    """What stands at ``name`` opened to write into as it is, when it is a device, a pipe or a
    socket of the user's (or a link of the user's to one); None when a file is to be put
    there. A FIFO of the user's with no reader is waited on: the user chose it."""
    found = folder.look(name)
    if found is None or stat.S_ISREG(found.st_mode):
        return None
    if stat.S_ISDIR(found.st_mode):
        raise refused(folder.path / name, "a folder", errno.EISDIR)
    why = checkouts.holding(folder.path)
    if stat.S_ISLNK(found.st_mode):
        if why is not None:
            return None  # replaced, never written through
        try:
            fd = os.open(name, os.O_WRONLY | NONBLOCK | CLOEXEC, dir_fd=folder.fd)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                return None  # a link to nothing yet: followed to where a file goes
            fd = os.open(name, os.O_WRONLY | CLOEXEC, dir_fd=folder.fd)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            if not _through_proc(folder.path / name):
                os.close(fd)
                return None
            # /dev/stdout, /dev/fd/N: the very file a descriptor has, which no name stands
            # for; written as any program writes it (from its start), never renamed over.
            os.ftruncate(fd, 0)
    elif why is not None:
        raise refused(folder.path / name, f"{kind(found.st_mode)} in {why}: not written")
    else:
        fd = os.open(name, os.O_WRONLY | CLOEXEC, dir_fd=folder.fd)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


def _through_proc(path: Path) -> bool:
    """Whether the links at ``path`` lead through ``/proc`` (``/dev/stdout`` ->
    ``/proc/self/fd/1``): to what a descriptor has open, whatever its name now."""
    for _ in range(MAX_LINKS):
        if path.is_relative_to("/proc"):
            return True
        try:
            link = os.readlink(path)
        except OSError:
            return False
        path = Path(link) if os.path.isabs(link) else path.parent / link
    return False


@contextlib.contextmanager
def replacing(path: Path | str, checkouts: Checkouts) -> Iterator[Replacement]:
    """A new file for ``path``, renamed over that very name when the block ends with ``keep``
    set (an interrupted write leaves what was there as it was); a device or a pipe of the
    user's is written to as it is (``keep`` means nothing then)."""
    folder, name = _parent(path, checkouts)
    try:
        direct = _as_it_is(folder, name, checkouts)
        if direct is not None:
            with direct:
                yield Replacement(direct)
            return
        folder, name, _ = _follow(folder, name, checkouts)
        with folder.replacing(name) as new:
            yield new
    finally:
        folder.close()


def in_place(path: Path | str, checkouts: Checkouts) -> BinaryIO:
    """``path`` to write as it goes (a watch's events): an empty file is renamed over that
    very name first, then written (never through a link a checkout holds, nor into a file of
    another name); a device or a pipe of the user's is written to as it is."""
    folder, name = _parent(path, checkouts)
    try:
        direct = _as_it_is(folder, name, checkouts)
        if direct is not None:
            return direct
        folder, name, _ = _follow(folder, name, checkouts)
        with folder.replacing(name) as new:
            new.keep = True
        return folder.append(name, shared=False)
    finally:
        folder.close()


def append(path: Path | str, checkouts: Checkouts, *, create: bool = True) -> BinaryIO:
    """``path`` to append to, a regular file (made if missing, its missing folders too when
    ``create``): never through a link a checkout holds (:class:`Refused`, naming it), nor a
    file with another name elsewhere in a checkout's folder."""
    folder, name = _parent(path, checkouts, create=create)
    with folder:
        return append_in(folder, name, checkouts)


def append_in(folder: Folder, name: str, checkouts: Checkouts) -> BinaryIO:
    """``name`` in the user's ``folder`` to append to, as :func:`append` does (``folder``
    stays open: a rotating destination opens its next file there)."""
    folder = folder.again()
    try:
        folder, name, why = _follow(folder, name, checkouts)
        if why is not None:
            raise refused(folder.path / name, f"{why}; the events are not appended through it")
        return folder.append(name, shared=checkouts.holding(folder.path) is None)
    finally:
        folder.close()


def read(path: Path | str, checkouts: Checkouts, *, limit: int) -> bytes:
    """The bytes (at most ``limit``) of the user's file ``path`` (``OPENLINEAGE_CONFIG``, the
    current folder's or the home folder's ``openlineage.yml``): walked as written, the user's
    links followed, and read only when it lies where no checkout is (:class:`InCheckout`
    naming where it lies otherwise; :class:`Refused` for a link a checkout holds)."""
    folder, name = _parent(path, checkouts)
    try:
        folder, name, why = _follow(folder, name, checkouts)
        if why is not None:
            raise refused(folder.path / name, why)
        where = checkouts.holding(folder.path)
        if where is not None:
            raise InCheckout(folder.path / name, where)
        return folder.read(name, limit=limit)
    finally:
        folder.close()


def kind_at(path: Path | str) -> str | None:
    """What ``path`` leads to (links followed: the user named it): ``file``, ``folder``, or
    another kind in words; None when there is nothing."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return "not readable"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return kind(mode)


def real(path: Path | str, checkouts: Checkouts) -> Path:
    """The real path of the folder ``path`` names (walked, links judged by ``checkouts``)."""
    with folder_of(path, checkouts) as folder:
        return folder.path


def subfolders(path: Path | str) -> list[str]:
    """The names of the folders in ``path`` (not links to folders), in no order."""
    with folder_of(path, Checkouts()) as folder:
        return [
            name
            for name in folder.names()
            if (found := folder.look(name)) is not None and stat.S_ISDIR(found.st_mode)
        ]


def null_device() -> int:
    """A descriptor of ``/dev/null`` to write to: where output goes that nobody reads."""
    return os.open(os.devnull, os.O_WRONLY | CLOEXEC)


__all__ = [
    "Refused",
    "append",
    "append_in",
    "check_writable",
    "folder_of",
    "in_place",
    "kind_at",
    "null_device",
    "read",
    "real",
    "replacing",
    "subfolders",
]
