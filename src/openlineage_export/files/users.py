"""The user's own files: the folders of the user's (the config folder, with the secrets, the
approvals and the keyring's index; the state folder, with the ledger and the locks) and what is
in them.

Such a folder must be positively outside every checkout (``whose.py``): whoever pushed last
wrote what a checkout holds, and what is here decides where keys go and what was sent. It is
reached name by name from the root, a link on the way followed only when the user's, held open
while it is used, and made (each missing folder exactly 0700) when asked. Its files are never
read or written through a link: a link there is refused in one line.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .named import absolute
from .walk import Folder, kind, refused, shown_path, walk
from .whose import Checkouts, InCheckout


def own_folder(path: Path, checkouts: Checkouts, *, create: bool = False) -> Folder:
    """The user's folder ``path`` (absolute), held open: :class:`InCheckout` when it lies, or
    may lie, in a checkout (judged before anything is made, and again where the walk ended);
    :class:`Refused` for a link a checkout holds on the way; ``FileNotFoundError`` when it is
    missing and not ``create``."""
    where = absolute(path)
    why = checkouts.holding(Path(os.path.realpath(where)))
    if why is not None:
        raise InCheckout(where, why)
    folder = walk(Path(where.anchor), where.parts[1:], checkouts.links, create=create, private=True)
    why = checkouts.holding(folder.path)
    if why is not None:
        folder.close()
        raise InCheckout(where, why)
    return folder


def read_own(folder: Folder, name: str, *, limit: int) -> tuple[bytes, os.stat_result] | None:
    """The bytes of the user's file ``name`` and what it is (its owner, its mode), or None
    when there is none: a link there is :class:`Refused`, never followed."""
    found = folder.look(name)
    if found is None:
        return None
    fd = folder.open_file(name)
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(fd)
        data = b"" if info.st_size > limit else stream.read(limit + 1)
    if info.st_size > limit or len(data) > limit:
        raise OSError(
            errno.EFBIG, f"it is larger than {limit:,} bytes", shown_path(folder.path / name)
        )
    return data, info


def check_own_name(folder: Folder, name: str) -> None:
    """Refuse now a link (or what is no regular file) at ``name``: nothing of the user's is
    written through one."""
    found = folder.look(name)
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise refused(folder.path / name, f"{kind(found.st_mode)}, not a file of your own")
