"""Secrets in a private file of the user's (:class:`FileStore`), and the servers each secret
may be sent to (:class:`KeyOrigins`, ``key-origins.json``, beside it): files this user alone can
read or change, in a folder nobody else can change.

Every change is a read-modify-write under the file's lock (:func:`locked`: ``fcntl.flock`` on
``NAME.lock`` beside it), so that writers at once (twelve ``secrets set`` started together)
never lose each other's entries; readers need no lock, as each write replaces the file whole.

No secret value ever appears in an exception message, a repr or a log line.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import ConfigError
from ..files.users import own_folder, read_own
from ..files.walk import Folder, Refused, shown_path, try_lock
from ..files.whose import NOWHERE, Checkouts, InCheckout
from .jsonfile import loads, too_deep
from .secret_store import Place, check_secret_name, check_secret_value
from .userconfig import CONFIG_DIR_ENV, check_users_file, check_users_folder

MAX_BYTES = 1 << 20
"""The largest secrets file, approvals or index read: a few names and keys in practice."""


def _not_used(path: Path, what: str, exc: OSError) -> ConfigError:
    """One line for a file of the user's that is not used, and how to name their own."""
    if isinstance(exc, InCheckout):
        return ConfigError(
            f"{what} {shown_path(path)} is not read as yours: its folder lies in {exc.why}, "
            "where whoever pushed last could have written it; keep your own outside every "
            f"checkout and name that folder with {CONFIG_DIR_ENV} (or XDG_CONFIG_HOME)"
        )
    if isinstance(exc, Refused):
        return ConfigError(
            f"{what} {shown_path(path)} is not used: {exc.what(path)} (your own files are "
            "never read or written through a link)"
        )
    return ConfigError(f"cannot use {what} {shown_path(path)}: {exc.strerror or exc}")


def _folder(path: Path, what: str, checkouts: Checkouts, *, create: bool) -> Folder:
    """The user's folder of ``path``, checked theirs (``userconfig.check_users_folder``)."""
    try:
        folder = own_folder(path.parent, checkouts, create=create)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _not_used(path, what, exc) from None
    try:
        check_users_folder(folder.info(), folder.path, what)
    except BaseException:
        folder.close()
        raise
    return folder


def exists(path: Path, what: str, checkouts: Checkouts) -> bool:
    """Whether the user's file ``path`` is there (nothing is made to tell)."""
    try:
        with _folder(path, what, checkouts, create=False) as folder:
            return folder.look(path.name) is not None
    except FileNotFoundError:
        return False


def read_private_json(path: Path, what: str, checkouts: Checkouts = NOWHERE) -> object | None:
    """The JSON in ``path`` (None when missing), refusing a file others can read or change, a
    file of another user's, one in a folder others can change, a link, and one that lies in a
    checkout (``checkouts``)."""
    try:
        with _folder(path, what, checkouts, create=False) as folder:
            found = read_own(folder, path.name, limit=MAX_BYTES)
    except FileNotFoundError:
        return None
    except ConfigError:
        raise
    except OSError as exc:
        raise _not_used(path, what, exc) from None
    if found is None:
        return None
    data, info = found
    check_users_file(info, path, what)
    # "from None" below: the decode errors carry the whole document, secrets included.
    try:
        parsed: object = loads(data.decode("utf-8"), f"{what} {path}")
        return parsed
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{what} {path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise ConfigError(too_deep(path)) from None


LOCK_WAIT = 30.0
"""Seconds a change waits for another process's change of the same file to end."""


@contextlib.contextmanager
def locked(path: Path, what: str, checkouts: Checkouts = NOWHERE) -> Iterator[None]:
    """Hold the lock of ``path`` (``path.lock``, made 0600 beside it, never through a link)
    while it is read, changed and written: the kernel lets go of it however its holder ends.
    The folder is made (0700) if missing."""
    lock = path.with_name(path.name + ".lock")
    with _folder(path, what, checkouts, create=True) as folder:
        try:
            # Read-only is enough to flock, and opens a lock a umask of 0277 made 0400.
            fd = folder.lock_file(lock.name, write=False)
        except OSError as exc:
            if isinstance(exc, Refused):
                raise _not_used(lock, f"the lock file of {what}", exc) from None
            raise ConfigError(
                f"cannot lock {what} {path} (with {lock}): {exc.strerror or exc}"
            ) from None
    try:
        check_users_file(os.fstat(fd), lock, f"the lock file of {what}")
        deadline = time.monotonic() + LOCK_WAIT
        while not try_lock(fd):
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"{what} {path} is being changed by another process, which has held "
                    f"its lock ({lock}) for {LOCK_WAIT:g} s; nothing was changed: try "
                    "again once it ends"
                )
            time.sleep(0.005)
        yield
    finally:
        os.close(fd)


def write_private_json(
    path: Path, value: object, what: str, checkouts: Checkouts = NOWHERE
) -> None:
    """Write ``value`` as JSON to ``path``, 0600 (its mode set before any byte is written), in
    a folder made private (0700) if new: a new file renamed over the name, so a link there is
    replaced, never written through."""
    data = (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    with _folder(path, what, checkouts, create=True) as folder:
        try:
            folder.replace(path.name, data, mode=0o600)
        except OSError as exc:
            raise ConfigError(f"cannot write {what} {path}: {exc.strerror or exc}") from None


_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/?#@]+")


class KeyOrigins:
    """The servers each secret may be sent to: ``key-origins.json``, an object of name: list
    of origins, private to the user like the secrets themselves."""

    FILE_NAME = "key-origins.json"
    WHAT = "the file of approved servers"

    def __init__(self, folder: Path, checkouts: Checkouts = NOWHERE) -> None:
        """The approvals kept in ``folder`` (nothing is touched yet), which must lie in no
        checkout (``checkouts``: as seen from the workspace of the command)."""
        self.path = folder / self.FILE_NAME
        self.checkouts = checkouts

    def _read(self) -> dict[str, list[str]]:
        data = read_private_json(self.path, self.WHAT, self.checkouts)
        if data is None:
            return {}
        if not isinstance(data, dict) or not all(
            isinstance(v, list) and all(isinstance(o, str) for o in v) for v in data.values()
        ):
            raise ConfigError(
                f"the file of approved servers {self.path} is damaged: it must "
                "hold one JSON object of name: list of origins"
            )
        return data

    def of(self, name: str) -> list[str]:
        """The origins ``name`` may go to, sorted."""
        return sorted(self._read().get(check_secret_name(name), []))

    def allow(self, name: str, origin: str) -> None:
        """Add ``origin`` to those of ``name``."""
        check_secret_name(name)
        if not _ORIGIN.fullmatch(origin):
            raise ConfigError("an approved server must be an origin: scheme://host[:port]")
        with locked(self.path, self.WHAT, self.checkouts):
            approved = self._read()
            if origin not in approved.get(name, []):
                approved[name] = sorted([*approved.get(name, []), origin])
                write_private_json(self.path, approved, self.WHAT, self.checkouts)

    def forget(self, name: str) -> None:
        """Forget every origin of ``name``."""
        if not exists(self.path, self.WHAT, self.checkouts):  # nothing made (no lock either)
            return
        with locked(self.path, self.WHAT, self.checkouts):
            approved = self._read()
            if approved.pop(name, None) is not None:
                write_private_json(self.path, approved, self.WHAT, self.checkouts)


class FileStore:
    """Secrets in ``secrets.json`` (an object of name: value) in a private folder.

    The folder is created 0700 and the file written 0600, its mode set before any secret byte
    is written; a file that others can read or change is refused (chmod 600 it).
    """

    FILE_NAME = "secrets.json"

    def __init__(self, folder: Path, checkouts: Checkouts = NOWHERE) -> None:
        """A store in ``folder`` (usually :func:`config_dir`), which must lie in no checkout
        (``checkouts``); nothing is touched yet."""
        self.path = folder / self.FILE_NAME
        self.checkouts = checkouts
        self._origins = KeyOrigins(folder, checkouts)

    def __repr__(self) -> str:
        return f"FileStore({str(self.path)!r})"

    @property
    def description(self) -> str:
        """Where the secrets are."""
        return f"the file {self.path}"

    @property
    def place(self) -> Place:
        """The secrets file."""
        return Place("file", self.path, names_only=False)

    def _read(self) -> dict[str, str]:
        data = read_private_json(self.path, "the secrets file", self.checkouts)
        if data is None:
            return {}
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ConfigError(
                f"the secrets file {self.path} is damaged: it must hold one "
                "JSON object of name: value strings"
            )
        return data

    def get(self, name: str) -> str | None:
        """The secret called ``name``, or None."""
        return self._read().get(check_secret_name(name)) or None

    def set(self, name: str, value: str) -> None:
        """Store ``value`` under ``name``."""
        check_secret_name(name)
        check_secret_value(value)
        with locked(self.path, "the secrets file", self.checkouts):
            secrets = self._read()
            secrets[name] = value
            write_private_json(self.path, secrets, "the secrets file", self.checkouts)

    def delete(self, name: str) -> bool:
        """Forget ``name``; True if it was stored."""
        check_secret_name(name)
        if not exists(self.path, "the secrets file", self.checkouts):  # nothing made
            return False
        with locked(self.path, "the secrets file", self.checkouts):
            secrets = self._read()
            if secrets.pop(name, None) is None:
                return False
            write_private_json(self.path, secrets, "the secrets file", self.checkouts)
        self._origins.forget(name)
        return True

    def names(self) -> list[str]:
        """The stored names, sorted."""
        return sorted(self._read())

    def origins(self, name: str) -> list[str]:
        """The servers ``name`` may be sent to."""
        return self._origins.of(name)

    def allow(self, name: str, origin: str) -> None:
        """Approve sending ``name`` to ``origin``."""
        self._origins.allow(name, origin)
