"""Where API keys live: a secrets store outside the workspace.

The workspace's settings.json only *names* a secret (``openlineage.apiKey.secretRef``); the
value is kept by a :class:`SecretStore`: the system keyring (:class:`KeyringStore`) where a
real one runs, else a private file in the user's config folder (:class:`FileStore`).
:func:`default_store` picks one; ``secrecy.resolve_secret`` finds the one to send.

A store also keeps, per secret, the servers (origins) its owner approved it for
(``secrets set NAME --for ORIGIN``, ``secrets allow NAME ORIGIN``): ``trust.py`` sends a
stored key nowhere else. They are kept in ``key-origins.json`` beside the secrets, in the
user's folder, never in a workspace.

No secret value ever appears in an exception message, a repr or a log line: messages name
secrets, never show them.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import keyring
import keyring.errors

from ..errors import ConfigError
from .jsonfile import loads, too_deep, write_file_atomically
from .settings import SECRET_NAME_PATTERN, credential_error, looks_like_credential
from .userconfig import (  # noqa: F401 - config_dir and the names are used from here too
    CONFIG_DIR_ENV,
    SERVICE,
    check_users_file,
    check_users_folder,
    config_dir,
)
from .userdirs import make_private_folder

BACKEND_ENV = "OPENLINEAGE_EXPORT_SECRETS"
"""Environment variable forcing a store: ``file`` or ``keyring``."""

_NAME = re.compile(SECRET_NAME_PATTERN)
_log = logging.getLogger(__name__)
_KEYRING_DETECTION_TIMEOUT = 5.0  # seconds; a wedged D-Bus must not hang the command


class SecretStore(Protocol):
    """A place that keeps secrets by name, outside any workspace."""

    @property
    def description(self) -> str:
        """Where the secrets are, in words for a message (never a value)."""
        ...

    def get(self, name: str) -> str | None:
        """The secret called ``name``, or None when there is none."""
        ...

    def set(self, name: str, value: str) -> None:
        """Store ``value`` as the secret called ``name``, replacing any before."""
        ...

    def delete(self, name: str) -> bool:
        """Forget the secret called ``name``; True if there was one."""
        ...

    def names(self) -> list[str]:
        """The names of the stored secrets, sorted (never their values)."""
        ...

    def origins(self, name: str) -> list[str]:
        """The servers (``scheme://host[:port]``) the secret ``name`` may be sent to, sorted."""
        ...

    def allow(self, name: str, origin: str) -> None:
        """Approve sending the secret ``name`` to ``origin`` (``scheme://host[:port]``)."""
        ...


def check_secret_name(name: str) -> str:
    """Return ``name`` if it can name a secret, else raise ConfigError."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        # Not echoed: someone may have typed the secret where its name belongs.
        raise ConfigError("a secret's name must be 1 to 128 letters, digits, '.', '_' or '-'")
    if looks_like_credential(name):
        raise credential_error("the secret's name")
    return name


def _check_value(value: str) -> None:
    # Never echo the value: only what is wrong with it.
    if not isinstance(value, str) or not value:
        raise ConfigError("a secret cannot be empty")
    if any(c in value for c in "\r\n\0"):
        raise ConfigError("a secret must be one line (it contains a line break or NUL)")


def _private_folder(folder: Path) -> None:
    # Only folders we create are 0700 (those above it too): an existing one is the user's.
    make_private_folder(folder)


def _read_private_json(path: Path, what: str) -> object | None:
    """The JSON in ``path`` (None when missing), refusing a file others can read or change, a
    file of another user's, or one in a folder others can change."""
    check_users_folder(path.parent, what)
    try:
        with open(path, "rb") as f:
            check_users_file(os.fstat(f.fileno()), path, what)
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    # "from None" below: the decode errors carry the whole document, secrets included.
    try:
        parsed: object = loads(data.decode("utf-8"), f"{what} {path}")
        return parsed
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{what} {path} is not valid JSON ({exc.msg} at line {exc.lineno}, "
                          f"column {exc.colno})") from None
    except RecursionError:
        raise ConfigError(too_deep(path)) from None


def _write_private_json(path: Path, value: object, what: str) -> None:
    check_users_folder(path.parent, what)
    try:
        _private_folder(path.parent)
        data = (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        write_file_atomically(path, data, mode=0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write {what} {path}: {exc.strerror or exc}") from None


_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/?#@]+")


class KeyOrigins:
    """The servers each secret may be sent to: ``key-origins.json``, an object of name: list
    of origins, private to the user like the secrets themselves."""

    FILE_NAME = "key-origins.json"

    def __init__(self, folder: Path) -> None:
        """The approvals kept in ``folder`` (nothing is touched yet)."""
        self.path = folder / self.FILE_NAME

    def _read(self) -> dict[str, list[str]]:
        data = _read_private_json(self.path, "the file of approved servers")
        if data is None:
            return {}
        if not isinstance(data, dict) or not all(
                isinstance(v, list) and all(isinstance(o, str) for o in v)
                for v in data.values()):
            raise ConfigError(f"the file of approved servers {self.path} is damaged: it must "
                              "hold one JSON object of name: list of origins")
        return data

    def of(self, name: str) -> list[str]:
        """The origins ``name`` may go to, sorted."""
        return sorted(self._read().get(check_secret_name(name), []))

    def allow(self, name: str, origin: str) -> None:
        """Add ``origin`` to those of ``name``."""
        check_secret_name(name)
        if not _ORIGIN.fullmatch(origin):
            raise ConfigError("an approved server must be an origin: scheme://host[:port]")
        approved = self._read()
        if origin not in approved.get(name, []):
            approved[name] = sorted([*approved.get(name, []), origin])
            _write_private_json(self.path, approved, "the file of approved servers")

    def forget(self, name: str) -> None:
        """Forget every origin of ``name``."""
        approved = self._read()
        if approved.pop(name, None) is not None:
            _write_private_json(self.path, approved, "the file of approved servers")


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


class FileStore:
    """Secrets in ``secrets.json`` (an object of name: value) in a private folder.

    The folder is created 0700 and the file written 0600, its mode set before any secret byte
    is written; a file that others can read or change is refused (chmod 600 it).
    """

    FILE_NAME = "secrets.json"

    def __init__(self, folder: Path) -> None:
        """A store in ``folder`` (usually :func:`config_dir`); nothing is touched yet."""
        self.path = folder / self.FILE_NAME
        self._origins = KeyOrigins(folder)

    def __repr__(self) -> str:
        return f"FileStore({str(self.path)!r})"

    @property
    def description(self) -> str:
        """Where the secrets are."""
        return f"the file {self.path}"

    def _read(self) -> dict[str, str]:
        data = _read_private_json(self.path, "the secrets file")
        if data is None:
            return {}
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ConfigError(f"the secrets file {self.path} is damaged: it must hold one "
                              "JSON object of name: value strings")
        return data

    def get(self, name: str) -> str | None:
        """The secret called ``name``, or None."""
        return self._read().get(check_secret_name(name)) or None

    def set(self, name: str, value: str) -> None:
        """Store ``value`` under ``name``."""
        check_secret_name(name)
        _check_value(value)
        secrets = self._read()
        secrets[name] = value
        _write_private_json(self.path, secrets, "the secrets file")

    def delete(self, name: str) -> bool:
        """Forget ``name``; True if it was stored."""
        secrets = self._read()
        if secrets.pop(check_secret_name(name), None) is None:
            return False
        _write_private_json(self.path, secrets, "the secrets file")
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


class KeyringStore:
    """Secrets in the system keyring, under the service ``openlineage-export``.

    A keyring cannot list what it holds, so the NAMES (never the values) are also kept in
    ``keyring-names.json`` in the config folder. That index can fall behind when a secret is
    removed with another tool; :meth:`get` always asks the keyring itself.
    """

    INDEX_FILE = "keyring-names.json"

    def __init__(self, folder: Path, backend: Keyring | None = None) -> None:
        """A store using ``backend`` (default: keyring's active one), indexed in ``folder``."""
        self._backend: Keyring = backend if backend is not None else keyring.get_keyring()
        self.index_path = folder / self.INDEX_FILE
        self._origins = KeyOrigins(folder)

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

    def _failed(self, doing: str, exc: Exception, value: str | None = None) -> ConfigError:
        """The one message for a backend's failure; it never carries a secret.

        A ``KeyringError``'s message is meant for users and is shown, unless it holds the value
        being stored. Anything else a backend raises (a ``ValueError`` of a D-Bus library, a
        ``TypeError``...) may quote whatever it was handed or read: only its type is shown.
        """
        message = str(exc)
        if not isinstance(exc, keyring.errors.KeyringError) or not message or (
                value and value in message):
            message = f"it failed with {type(exc).__name__}"
        return ConfigError(f"the system keyring ({self._backend_name()}) could not {doing}: "
                           f"{message}")

    def _index(self) -> list[str]:
        data = _read_private_json(self.index_path, "the keyring index")
        if data is None:
            return []
        if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
            raise ConfigError(f"the keyring index {self.index_path} is damaged: it must hold "
                              "a JSON list of names; delete it to start a new one")
        return [n for n in data if _NAME.fullmatch(n)]

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
        _check_value(value)
        try:
            self._backend.set_password(SERVICE, name, value)
        except Exception as exc:  # any backend failure, not only keyring's own (see _failed)
            raise self._failed(f"store '{name}'", exc, value) from None
        names = self._index()
        if name not in names:
            _write_private_json(self.index_path, sorted([*names, name]), "the keyring index")

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
        names = self._index()
        if name in names:
            _write_private_json(self.index_path, [n for n in names if n != name],
                                "the keyring index")
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


def _system_keyring() -> Keyring | None:
    """keyring's active backend, or None if finding it fails or takes too long."""
    found: list[Keyring] = []

    def detect() -> None:
        # Any failure to find one means: no keyring; the file store takes over.
        try:
            found.append(keyring.get_keyring())
        except Exception:
            _log.debug("no system keyring", exc_info=True)

    # Detection may talk to D-Bus; a daemon thread lets us walk away from a wedged bus.
    worker = threading.Thread(target=detect, name="keyring-detection", daemon=True)
    worker.start()
    worker.join(_KEYRING_DETECTION_TIMEOUT)
    return found[0] if found else None


def default_store(environ: Mapping[str, str],
                  *, backend: Keyring | None = None) -> SecretStore:
    """The secrets store to use.

    ``OPENLINEAGE_EXPORT_SECRETS=file|keyring`` forces one. Otherwise the system keyring when
    its active backend is a real one (see :func:`is_usable_keyring`), else a
    :class:`FileStore` in :func:`config_dir`: on a headless machine without a keyring daemon
    this is the file. ``backend`` replaces keyring's active backend (for tests and embedding).
    """
    folder = config_dir(environ)
    choice = environ.get(BACKEND_ENV, "").strip().lower()
    if choice not in ("", "file", "keyring"):
        raise ConfigError(f"{BACKEND_ENV} must be 'file' or 'keyring', not {choice!r}")
    if choice == "file":
        return FileStore(folder)
    found = backend if backend is not None else _system_keyring()
    if found is not None and is_usable_keyring(found):
        return KeyringStore(folder, found)
    if choice == "keyring":
        what = str(found) if found is not None else "none found"
        raise ConfigError(f"{BACKEND_ENV}=keyring, but there is no usable system keyring "
                          f"({what}); start or unlock one, or use {BACKEND_ENV}=file")
    return FileStore(folder)


class LazyStore:
    """The :func:`default_store` for ``environ``, found only when a secret is first asked for
    (finding a keyring may take a while, and a key from the environment needs no store)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self._store: SecretStore | None = None

    def _found(self) -> SecretStore:
        if self._store is None:
            self._store = default_store(self._environ)
        return self._store

    @property
    def description(self) -> str:
        """Where the secrets are."""
        return self._found().description

    def get(self, name: str) -> str | None:
        """The secret called ``name``, or None."""
        return self._found().get(name)

    def set(self, name: str, value: str) -> None:
        """Store ``value`` under ``name``."""
        self._found().set(name, value)

    def delete(self, name: str) -> bool:
        """Forget ``name``; True if it was stored."""
        return self._found().delete(name)

    def names(self) -> list[str]:
        """The stored names, sorted."""
        return self._found().names()

    def origins(self, name: str) -> list[str]:
        """The servers ``name`` may be sent to."""
        return self._found().origins(name)

    def allow(self, name: str, origin: str) -> None:
        """Approve sending ``name`` to ``origin``."""
        self._found().allow(name, origin)
