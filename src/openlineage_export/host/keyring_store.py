"""Secrets in the system keyring (:class:`KeyringStore`), under the service
``openlineage-export``, and whether a keyring backend really keeps secrets.

No secret value ever appears in an exception message, a repr or a log line.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Protocol

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.core
import keyring.errors
import keyring.util.platform_

from ..errors import ConfigError
from ..files.whose import NOWHERE, Checkouts
from .secret_files import KeyOrigins, exists, locked, read_private_json, write_private_json
from .secret_store import NAME, Place, check_secret_name, check_secret_value
from .userconfig import SERVICE

_log = logging.getLogger(__name__)
_KEYRING_DETECTION_TIMEOUT = 5.0  # seconds; a wedged D-Bus must not hang the command


class Keyring(Protocol):
    """The part of a keyring backend we use; every ``keyring.backend.KeyringBackend`` fits.

    A Protocol rather than the base class, so that a stand-in need not subclass it (which
    would register it with keyring's discovery for the whole process).
    """

    def get_password(self, service: str, username: str) -> str | None:
        """The password stored for ``username`` of ``service``, or None."""
        ...

    def set_password(self, service: str, username: str, password: str) -> None:
        """Store ``password`` for ``username`` of ``service``."""
        ...

    def delete_password(self, service: str, username: str) -> None:
        """Delete it; ``keyring.errors.PasswordDeleteError`` when there is none."""
        ...


class KeyringStore:
    """Secrets in the system keyring, under the service ``openlineage-export``.

    A keyring cannot list what it holds, so the NAMES (never the values) are also kept in
    ``keyring-names.json`` in the config folder. That index can fall behind when a secret is
    removed with another tool; :meth:`get` always asks the keyring itself. Each change of the
    index is made under its lock (``secret_files.locked``), as the secrets file's is.
    """

    INDEX_FILE = "keyring-names.json"

    def __init__(
        self, folder: Path, backend: Keyring | None = None, checkouts: Checkouts = NOWHERE
    ) -> None:
        """A store using ``backend`` (default: keyring's active one), indexed in ``folder``
        (which must lie in no checkout: ``checkouts``)."""
        self._backend: Keyring = backend if backend is not None else detect_backend(checkouts)
        self.index_path = folder / self.INDEX_FILE
        self.checkouts = checkouts
        self._origins = KeyOrigins(folder, checkouts)

    def __repr__(self) -> str:
        return f"KeyringStore({self._backend_name()!r}, index={str(self.index_path)!r})"

    def _backend_name(self) -> str:
        try:
            return str(getattr(self._backend, "name", type(self._backend).__name__))
        except Exception:  # a backend's name may be a property that fails
            return type(self._backend).__name__

    @property
    def description(self) -> str:
        """Which keyring holds the secrets."""
        return f"the system keyring: {self._backend_name()}"

    @property
    def place(self) -> Place:
        """The index of the names the keyring holds."""
        return Place("keyring", self.index_path, names_only=True)

    def _failed(self, doing: str, exc: Exception, value: str | None = None) -> ConfigError:
        """The one message for a backend's failure; it never carries a secret.

        A ``KeyringError``'s message is meant for users and is shown, unless it holds the value
        being stored. Anything else a backend raises (a ``ValueError`` of a D-Bus library, a
        ``TypeError``...) may quote whatever it was handed or read: only its type is shown.
        """
        message = str(exc)
        if (
            not isinstance(exc, keyring.errors.KeyringError)
            or not message
            or (value and value in message)
        ):
            message = f"it failed with {type(exc).__name__}"
        return ConfigError(
            f"the system keyring ({self._backend_name()}) could not {doing}: {message}"
        )

    def _index(self) -> list[str]:
        data = read_private_json(self.index_path, "the keyring index", self.checkouts)
        if data is None:
            return []
        if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
            raise ConfigError(
                f"the keyring index {self.index_path} is damaged: it must hold "
                "a JSON list of names; delete it to start a new one"
            )
        return [n for n in data if NAME.fullmatch(n)]

    def get(self, name: str) -> str | None:
        """The secret called ``name``, or None."""
        check_secret_name(name)
        try:
            return self._backend.get_password(SERVICE, name) or None
        except Exception as exc:  # any backend failure, not only keyring's own (see _failed)
            raise self._failed(f"read '{name}'", exc) from None

    def set(self, name: str, value: str) -> None:
        """Store ``value`` under ``name`` and add the name to the index."""
        check_secret_name(name)
        check_secret_value(value)
        try:
            self._backend.set_password(SERVICE, name, value)
        except Exception as exc:  # any backend failure, not only keyring's own (see _failed)
            raise self._failed(f"store '{name}'", exc, value) from None
        with locked(self.index_path, "the keyring index", self.checkouts):
            names = self._index()
            if name not in names:
                write_private_json(
                    self.index_path, sorted([*names, name]), "the keyring index", self.checkouts
                )

    def delete(self, name: str) -> bool:
        """Forget ``name`` in the keyring and the index; True if the keyring held it."""
        check_secret_name(name)
        try:
            self._backend.delete_password(SERVICE, name)
            existed = True
        except keyring.errors.PasswordDeleteError:
            existed = False
        except Exception as exc:  # any backend failure, not only keyring's own (see _failed)
            raise self._failed(f"delete '{name}'", exc) from None
        if exists(self.index_path, "the keyring index", self.checkouts):  # else nothing made
            with locked(self.index_path, "the keyring index", self.checkouts):
                names = self._index()
                if name in names:
                    write_private_json(
                        self.index_path,
                        [n for n in names if n != name],
                        "the keyring index",
                        self.checkouts,
                    )
        self._origins.forget(name)
        return existed

    def names(self) -> list[str]:
        """The names in the index, sorted."""
        return sorted(self._index())

    def origins(self, name: str) -> list[str]:
        """The servers ``name`` may be sent to."""
        return self._origins.of(name)

    def allow(self, name: str, origin: str) -> None:
        """Approve sending ``name`` to ``origin``."""
        self._origins.allow(name, origin)


def is_usable_keyring(backend: Keyring) -> bool:
    """Whether ``backend`` really keeps secrets: not keyring's fail or null backend, not a
    chainer with nothing to chain, and a priority of at least 1."""
    module = type(backend).__module__
    if module.startswith(("keyring.backends.fail", "keyring.backends.null")):
        return False
    if module.startswith("keyring.backends.chainer") and not getattr(backend, "backends", None):
        return False
    # A backend's priority raises (any kind of error) when it is unusable here.
    try:
        return float(getattr(type(backend), "priority", 0)) >= 1
    except Exception:
        _log.debug("keyring backend %s is not usable", type(backend).__name__, exc_info=True)
        return False


def config_is_users(checkouts: Checkouts) -> bool:
    """Whether keyring's own config folder (``$XDG_CONFIG_HOME/python_keyring``, else
    ``~/.config/python_keyring``: its ``keyringrc.cfg`` names a backend class to import and a
    ``keyring-path`` to import it from) is positively the user's: absolute, and in no checkout
    (``whose.py``, judged by its real path). A HOME that is a checkout, or a relative
    ``XDG_CONFIG_HOME`` (the current folder's), would let a pushed file run code."""
    try:
        root = keyring.util.platform_.config_root()
    except Exception:  # no home folder to be found: nothing of the user's either
        return False
    return checkouts.of_folder(Path(root)) is None


def detect_backend(checkouts: Checkouts) -> Keyring:
    """keyring's backend, as keyring itself finds it (``PYTHON_KEYRING_BACKEND``, then its
    config file, then the highest priority), except that its config file is read only when
    :func:`config_is_users`; otherwise it is never read and ``keyring-path`` never put on
    ``sys.path``."""
    if config_is_users(checkouts):
        return keyring.get_keyring()
    keyring.backend._limit = None  # the chainer's filter, as _detect_backend sets it
    found = keyring.core.load_env() or max(
        keyring.backend.get_all_keyring(),
        default=keyring.backends.fail.Keyring(),  # type: ignore[no-untyped-call]
        key=keyring.backend.by_priority,
    )
    # Set as the process's keyring, so that no later keyring call reads the config either.
    keyring.set_keyring(found)
    return found


def system_keyring(checkouts: Checkouts = NOWHERE) -> Keyring | None:
    """keyring's active backend (:func:`detect_backend`: its config file read only when it is
    the user's, by ``checkouts``), or None if finding it fails or takes too long."""
    found: list[Keyring] = []

    def detect() -> None:
        # Any failure to find one means: no keyring; the file store takes over.
        try:
            found.append(detect_backend(checkouts))
        except Exception:
            _log.debug("no system keyring", exc_info=True)

    # Detection may talk to D-Bus; a daemon thread lets us walk away from a wedged bus.
    worker = threading.Thread(target=detect, name="keyring-detection", daemon=True)
    worker.start()
    worker.join(_KEYRING_DETECTION_TIMEOUT)
    return found[0] if found else None
