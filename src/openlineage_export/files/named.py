"""A path the user named (``-o``, ``--report``, ``OPENLINEAGE_FILE_PATH``, ``-w``), written at
that very name.

The path is walked one name at a time from the root (a relative one from the current folder):
a link on the way is followed when it is positively the user's (its folder lies in no
checkout: ``whose.py``), and refused in one line when a checkout holds it (a committed
``build -> ../other-project/build``). At the last name:

- written whole (:func:`replacing`, :func:`in_place`): a new file is renamed over the name, so a
  link a checkout holds there is replaced, never written through (the file it pointed to is
  kept); a link of the user's is followed one link at a time, each judged by whose folder
  holds it, and what the chain leads to is replaced the same way (the links kept), or written
  to as it is when it is a device or a pipe of the user's, or what a descriptor has open
  (``/dev/stdout`` -> ``/proc/self/fd/1``); a device, a FIFO or a socket at the end is
  written to when it is the user's, refused when a checkout holds it (never waited on); a
  link inside a process's ``/proc`` folder (``/proc/self/root/...``, ``cwd``) is refused;
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
    NOFOLLOW,
    NONBLOCK,
    Folder,
    Judge,
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
    if "\0" in str(given):  # no file name holds one (os.open would raise ValueError)
        raise refused(given, "a name holding a NUL, no file name", errno.EINVAL)
    return given if given.is_absolute() else Path(os.getcwd()) / given


def folder_of(path: Path | str, checkouts: Checkouts, *, create: bool = False) -> Folder:
    """The folder ``path`` names, walked from the root (links judged by ``checkouts``)."""
    where = absolute(path)
    return walk(Path(where.anchor), where.parts[1:], checkouts.links, create=create)


def _judge(checkouts: Checkouts) -> Judge:
    """The rule for a link met on the way to a path the user named: the checkouts' (a link a
    checkout holds is not followed), and no link inside a process's ``/proc`` folder
    (``/proc/self/root``, ``cwd``, ``fd/N`` as a folder): it leaves the walk for wherever that
    process stands. ``/proc/self`` itself is walked (``/dev/stdout`` -> ``/proc/self/fd/1``)."""

    def judge(folder: Path) -> str | None:
        if _in_a_process(folder):
            return "a link into what a process has open (/proc): not followed"
        return checkouts.links(folder)

    return judge


def _in_a_process(folder: Path) -> bool:
    return folder.parts[:2] == ("/", "proc") and len(folder.parts) > 2


def _descriptors(folder: Path) -> bool:
    """Whether ``folder`` is a process's ``/proc/PID/fd``: each link there stands for what a
    descriptor has open, whatever its name now (no path to walk)."""
    return _in_a_process(folder) and folder.name == "fd"


def _parent(path: Path | str, checkouts: Checkouts, *, create: bool = False) -> tuple[Folder, str]:
    start, folders, name = split(absolute(path))
    folder = walk(start, folders, _judge(checkouts), create=create)
    if name in (".", ".."):
        folder.close()
        raise refused(absolute(path), "a folder, not a file", errno.EISDIR)
    return folder, name


def _follow(folder: Folder, name: str, checkouts: Checkouts) -> tuple[Folder, str, str | None]:
    """Where the user's links at ``name`` lead, name by name: the folder and name of what is
    there (or would be), and, when a link that is not the user's stands there, why not. A
    descriptor's link (``/proc/self/fd/1``) is where it ends: it has no path to walk."""
    judge = _judge(checkouts)
    start = folder.path / name
    for followed in range(MAX_LINKS + 1):
        found = folder.look(name)
        if found is None or not stat.S_ISLNK(found.st_mode) or _descriptors(folder.path):
            return folder, name, None
        why = judge(folder.path)
        if why is not None:
            return folder, name, why
        if followed == MAX_LINKS:
            break  # as the kernel: 40 links followed, the 41st refused
        link = os.readlink(name, dir_fd=folder.fd)
        target = Path(link) if os.path.isabs(link) else folder.path / link
        folder.close()
        folder, name = _parent(target, checkouts)
    folder.close()
    raise refused(start, f"a chain of more than {MAX_LINKS} links (a loop?)")


def check_writable(path: Path | str, checkouts: Checkouts) -> None:
    """Refuse early (before anything is read or sent) a path that cannot be written: an
    ``OSError`` whose ``strerror`` says why (``folder X does not exist``, ``it is a folder``,
    a link a checkout holds on the way)."""
    try:
        folder, name = _parent(path, checkouts)
        folder, name, _ = _follow(folder, name, checkouts)  # the user's links at the name too
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
    """What stands at ``name`` (the user's links at it already followed, :func:`_follow`)
    opened to write into as it is, when it is a device, a pipe or a socket of the user's, or
    what a descriptor has open (``/dev/stdout``); None when a file is to be put there (a link
    a checkout holds included: replaced, never written through). A FIFO of the user's with no
    reader is waited on: the user chose it."""
    found = folder.look(name)
    if found is None or stat.S_ISREG(found.st_mode):
        return None
    if stat.S_ISDIR(found.st_mode):
        raise refused(folder.path / name, "a folder", errno.EISDIR)
    if stat.S_ISLNK(found.st_mode):
        if not _descriptors(folder.path):
            return None  # a link a checkout holds: replaced, never written through
        # /dev/stdout, /dev/fd/N: the very file a descriptor has, which no name stands for
        # (the kernel follows this link to it); written as any program writes it (from its
        # start), never renamed over.
        fd = _open_writing(folder, name, 0)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, 0)
    else:
        why = checkouts.holding(folder.path)
        if why is not None:
            raise refused(folder.path / name, f"{kind(found.st_mode)} in {why}: not written")
        fd = _open_writing(folder, name, NOFOLLOW)
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (found.st_dev, found.st_ino):
            os.close(fd)  # swapped since it was looked at
            raise refused(folder.path / name, "replaced while it was opened", errno.EAGAIN)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


def _open_writing(folder: Folder, name: str, flags: int) -> int:
    """``name`` opened to write, without waiting; a FIFO with no reader yet (``ENXIO``) is
    waited on: it is the user's."""
    flags |= os.O_WRONLY | CLOEXEC
    try:
        return os.open(name, flags | NONBLOCK, dir_fd=folder.fd)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
    return os.open(name, flags, dir_fd=folder.fd)


@contextlib.contextmanager
def replacing(path: Path | str, checkouts: Checkouts) -> Iterator[Replacement]:
    """A new file for ``path``, renamed over that very name when the block ends with ``keep``
    set (an interrupted write leaves what was there as it was); a device or a pipe of the
    user's is written to as it is (``keep`` means nothing then)."""
    folder, name = _parent(path, checkouts)
    try:
        folder, name, _ = _follow(folder, name, checkouts)
        direct = _as_it_is(folder, name, checkouts)
        if direct is not None:
            with direct:
                yield Replacement(direct)
            return
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
        folder, name, _ = _follow(folder, name, checkouts)
        direct = _as_it_is(folder, name, checkouts)
        if direct is not None:
            return direct
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
