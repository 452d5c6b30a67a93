"""Paths walked one name at a time, each folder held open on the way.

The kernel follows every link in a path it is handed. Here a path is opened name by name from
a folder held open (``openat`` with ``O_NOFOLLOW``): each link on the way is seen, and followed
only when the caller's rule (a :data:`Judge`) says so, by reading it and walking its target
name by name in turn; a link swapped in after a look cannot redirect what comes after it, as
the folders already reached stay open. At the last name (:class:`Folder`) only regular files
are opened, never waiting on one (``O_NONBLOCK``): a FIFO, a device, a socket or a folder is
refused in words (:func:`kind`).

Names come as the file system has them: ``os.listdir`` decodes bytes that are not UTF-8 with
``surrogateescape``, so every name still opens; :func:`shown_path` is the form to show.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | CLOEXEC
MAX_LINKS = 40
"""Links followed in one walk (as the kernel's own limit): a loop of links ends there."""

_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a link",
    stat.S_IFREG: "a file",
}


def kind(mode: int) -> str:
    """What a file of ``st_mode`` is, in words: ``a named pipe (FIFO)``, ``a link``, ``a
    file`` (a regular one: said where a folder was expected)..."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


class Refused(OSError):
    """A path that leads through a link not followed, or to what is not a regular file;
    ``strerror`` says what it is (``a link, not a file``), ``filename`` the path as far as it
    was walked."""

    def what(self, path: Path | str) -> str:
        """What was refused, said of ``path`` (the path the caller asked for): ``it is a
        link, not a file``, or ``/x/build is a link in the checkout ...`` for a part of it."""
        subject = "it" if self.filename in (None, str(path)) else shown_path(self.filename)
        return f"{subject} is {self.strerror}"


def refused(path: Path, what: str, code: int = errno.ELOOP) -> Refused:
    """A :class:`Refused` for ``path``: ``what`` completes "it is ..." or stands alone."""
    return Refused(code, what, str(path))


Judge = Callable[[Path], "str | None"]
"""Whether a link met in the folder ``Path`` (its real path, as walked) may be followed: None,
or the words saying why not (``a link the checkout /x holds``)."""


def never(folder: Path) -> str:
    """The rule of a workspace's tree: no link is followed."""
    return "a link, not a folder of the workspace's own"


def shown_path(path: Path | str) -> str:
    """``path`` as text to show or keep: a byte that was not UTF-8 (which Python decodes as a
    lone surrogate, ``surrogateescape``) written ``\\xff``, as a control character is shown;
    a valid UTF-8 path is unchanged, so a key made of one stays the same."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate that stands for no byte
            raw = text.encode("utf-8", "backslashreplace")
        return raw.decode("utf-8", "backslashreplace")
    return text


def _reraise(exc: OSError, path: Path) -> OSError:
    """``exc`` naming the whole path walked, not the last name alone."""
    if isinstance(exc, Refused):
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def walk(
    start: Path,
    names: Sequence[str],
    judge: Judge,
    *,
    create: bool = False,
    private: bool = False,
) -> Folder:
    """The folder ``start/names...``: ``start`` opened as it is (the caller trusts it), then one
    name at a time, ``..`` to the real parent, a link followed only when ``judge`` allows it
    (its target walked name by name in turn). ``create`` makes missing folders: 0777 less the
    umask, or exactly 0700 when ``private`` (a ledger, a lock, secrets: nobody else's business,
    whatever the umask); a folder already there is left as it is. :class:`Refused` for a link
    not followed or what is no folder; the file system's own error (``FileNotFoundError``...)
    naming the path walked."""
    fd = os.open(start, FOLDER_FLAGS)
    at = start
    todo = list(reversed(names))
    links = 0
    try:
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                parent = os.open("..", FOLDER_FLAGS, dir_fd=fd)
                os.close(fd)
                fd, at = parent, at.parent
                continue
            made = False
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700 if private else 0o777, dir_fd=fd)
                    made = private
            try:
                child = os.open(name, FOLDER_FLAGS | NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise _reraise(exc, at / name) from None
                target = _link_target(fd, at, name, judge)
                links += 1
                if links > MAX_LINKS:
                    raise refused(at / name, "a loop of links (more than 40)") from None
                if os.path.isabs(target):
                    root = os.open("/", FOLDER_FLAGS)
                    os.close(fd)
                    fd, at = root, Path("/")
                todo.extend(reversed(Path(target).parts[1 if os.path.isabs(target) else 0 :]))
                continue
            os.close(fd)
            fd, at = child, at / name
            if made:
                os.fchmod(fd, 0o700)  # mkdir's mode is filtered by the umask
    except BaseException:
        os.close(fd)
        raise
    return Folder(fd, at)


def _link_target(fd: int, at: Path, name: str, judge: Judge) -> str:
    """The target of the link ``name`` in the folder ``fd`` (at ``at``), when ``judge`` lets
    it be followed; :class:`Refused` when it does not, or when ``name`` is no link (and no
    folder)."""
    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    if not stat.S_ISLNK(info.st_mode):
        raise refused(at / name, f"{kind(info.st_mode)}, not a folder", errno.ENOTDIR)
    why = judge(at)
    if why is not None:
        raise refused(at / name, why)
    return os.readlink(name, dir_fd=fd)


def split(path: Path) -> tuple[Path, list[str], str]:
    """An absolute ``path`` as where a walk starts (``/``), the folders, and the last name."""
    parts = list(path.parts)
    if len(parts) < 2:
        raise refused(path, "a folder (the root), not a file", errno.EISDIR)
    return Path(parts[0]), parts[1:-1], parts[-1]


@dataclass
class Folder:
    """A folder held open, and its real path as walked: what is done in it is done by name
    from the descriptor (``openat``), a link at that name never followed."""

    fd: int
    path: Path

    def close(self) -> None:
        """Let go of the folder."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def again(self) -> Folder:
        """A second descriptor of the same folder (this one stays open)."""
        return Folder(os.open(".", FOLDER_FLAGS, dir_fd=self.fd), self.path)

    def names(self) -> list[str]:
        """The names in the folder, as listed (undecodable bytes as lone surrogates)."""
        return os.listdir(self.fd)

    def look(self, name: str) -> os.stat_result | None:
        """What ``name`` is, the link itself when it is one; None when there is nothing."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def info(self) -> os.stat_result:
        """The folder's own owner, mode and times."""
        return os.fstat(self.fd)

    def child(self, name: str, *, create: bool = False, mode: int = 0o777) -> Folder:
        """The folder ``name`` in it (made, ``mode`` exactly, when missing and ``create``),
        never through a link."""
        made = False
        if create:
            try:
                os.mkdir(name, mode, dir_fd=self.fd)
                made = True
            except FileExistsError:
                pass
        try:
            fd = os.open(name, FOLDER_FLAGS | NOFOLLOW, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise _reraise(exc, self.path / name) from None
            found = self.look(name)
            what = kind(found.st_mode) if found is not None else "not a folder"
            raise refused(self.path / name, f"{what}, not a folder") from None
        if made:
            os.fchmod(fd, mode)  # mkdir's mode is filtered by the umask
        return Folder(fd, self.path / name)

    def open_file(self, name: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
        """A descriptor of the regular file ``name`` (``flags`` may create it), opened without
        following a link and without waiting (then made blocking). :class:`Refused` names
        what else is there."""
        flags |= NOFOLLOW | CLOEXEC
        found = self.look(name)
        if found is not None and not stat.S_ISREG(found.st_mode):
            # Refused unopened: opening some devices acts (a tape rewinds, a modem hangs up).
            raise refused(self.path / name, f"{kind(found.st_mode)}, not a file", errno.EINVAL)
        try:
            try:
                fd = os.open(name, flags | NONBLOCK, mode, dir_fd=self.fd)
            except BlockingIOError:
                # A regular file another program holds a lease on (a sync tool): the kernel
                # bounds that wait (lease-break-time), and only regular files are leased.
                found = self.look(name)
                if found is None or not stat.S_ISREG(found.st_mode):
                    raise
                fd = os.open(name, flags, mode, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EOPNOTSUPP):
                raise _reraise(exc, self.path / name) from None
            found = self.look(name)
            what = kind(found.st_mode) if found is not None else "not a regular file"
            raise refused(self.path / name, f"{what}, not a file", exc.errno) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise refused(self.path / name, f"{kind(info.st_mode)}, not a file", errno.EINVAL)
            status = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, status & ~NONBLOCK)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, name: str, *, limit: int) -> bytes:
        """The bytes of the regular file ``name``; more than ``limit`` of them is an
        ``OSError`` (``EFBIG``) saying so: a size from outside never sizes our memory."""
        with os.fdopen(self.open_file(name), "rb") as stream:
            # Said before a byte is read when the file says so; the read is bounded anyway
            # (a file may grow while it is read).
            big = os.fstat(stream.fileno()).st_size > limit
            data = b"" if big else stream.read(limit + 1)
        if big or len(data) > limit:
            raise OSError(errno.EFBIG, f"it is larger than {limit:,} bytes", str(self.path / name))
        return data

    def open_read(self, name: str) -> tuple[BinaryIO, os.stat_result]:
        """The regular file ``name`` open to read (buffered), and what it was when opened."""
        fd = self.open_file(name)
        info = os.fstat(fd)
        return os.fdopen(fd, "rb", buffering=1 << 16), info

    def append(self, name: str, *, shared: bool) -> BinaryIO:
        """The regular file ``name`` open to append to, made if missing. Unless ``shared``, a
        file with another name elsewhere (a hard link: what git never makes) is refused."""
        fd = self.open_file(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        if not shared and os.fstat(fd).st_nlink > 1:
            os.close(fd)
            raise refused(
                self.path / name,
                "a file with another name elsewhere (a hard link), not the workspace's own",
                errno.EMLINK,
            )
        return os.fdopen(fd, "ab")

    @contextlib.contextmanager
    def replacing(
        self, name: str, *, mode: int | None = None, durable: bool = False
    ) -> Iterator[Replacement]:
        """A new file for ``name``, written under a temporary name in this folder and renamed
        over ``name`` when the block ends with ``keep`` set: readers see the old file or the
        new, never a part; whatever ``name`` was (a link included) is replaced, never written
        through. The new file gets ``mode``, else the mode of the regular file it replaces,
        else 0666 less the umask. ``durable``: flushed to disk, the rename too."""
        if mode is None:
            found = self.look(name)
            mode = stat.S_IMODE(found.st_mode) if found and stat.S_ISREG(found.st_mode) else None
        # A name of its own length: any name the file system takes (255 bytes) can be written.
        temp = f".olx-{uuid.uuid4().hex[:12]}.part"
        out = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC,
            0o666 if mode is None else 0o600,
            dir_fd=self.fd,
        )
        done = Replacement(os.fdopen(out, "wb"))
        try:
            with done.stream:
                if mode is not None:
                    os.fchmod(done.stream.fileno(), mode)
                yield done
                done.stream.flush()
                if durable and done.keep:
                    os.fsync(done.stream.fileno())
            if done.keep:
                # A rename replaces the name itself: a link there is replaced, never followed.
                os.replace(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
                if durable:
                    with contextlib.suppress(OSError):
                        os.fsync(self.fd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=self.fd)

    def replace(self, name: str, data: bytes, *, mode: int | None = None) -> None:
        """Replace ``name`` with ``data`` whole, durably (:meth:`replacing`)."""
        with self.replacing(name, mode=mode, durable=True) as new:
            new.stream.write(data)
            new.keep = True

    def lock_file(self, name: str, *, write: bool = True) -> int:
        """A descriptor of the lock file ``name`` (made 0600), to lock (and, with ``write``,
        to read and write: read-only opens a lock that a umask of 0277 made 0400): never a
        link, never a file with another name elsewhere."""
        flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_CREAT
        fd = self.open_file(name, flags, 0o600)
        if os.fstat(fd).st_nlink > 1:
            os.close(fd)
            raise refused(self.path / name, "a file with another name elsewhere (a hard link)")
        return fd

    def remove(self, name: str) -> None:
        """Remove the file (or link) ``name``; nothing there is fine."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)


@dataclass
class Replacement:
    """The new file of :meth:`Folder.replacing`; set ``keep`` to give it the name."""

    stream: BinaryIO
    keep: bool = False


def try_lock(fd: int) -> bool:
    """Take the exclusive ``flock`` of ``fd`` if free: the kernel lets go of it when its
    holder ends, however it ends. False when another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
