"""Where API keys live: a secrets store outside the workspace.

The workspace's settings.json only *names* a secret (``openlineage.apiKey.secretRef``); the
value is kept by a :class:`SecretStore`: the system keyring (:class:`KeyringStore`) where a
real one runs, else a private file in the user's config folder (:class:`FileStore`).
:func:`default_store` picks one (the stores are in ``secret_files.py`` and
``keyring_store.py``; what a store is, ``secret_store.py``); ``secrecy.resolve_secret``
finds the one to send.

A store also keeps, per secret, the servers (origins) its owner approved it for
(``secrets set NAME --for ORIGIN``, ``secrets allow NAME ORIGIN``): ``guards/trust.py`` sends a
stored key nowhere else. They are kept in ``key-origins.json`` beside the secrets, in the
user's folder, never in a workspace.

No secret value ever appears in an exception message, a repr or a log line: messages name
secrets, never show them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError
from ..files.whose import NOWHERE, Checkouts
from .host_secrets import with_host_secrets
from .keyring_store import Keyring, KeyringStore, is_usable_keyring, system_keyring
from .secret_files import FileStore
from .secret_store import Place, Placed, SecretStore, check_secret_name
from .userconfig import config_dir

BACKEND_ENV = "OPENLINEAGE_EXPORT_SECRETS"
"""Environment variable forcing a store: ``file`` or ``keyring``."""

__all__ = [
    "BACKEND_ENV",
    "LazyStore",
    "Place",
    "Placed",
    "SecretStore",
    "check_secret_name",
    "default_store",
]


def default_store(
    environ: Mapping[str, str],
    *,
    backend: Keyring | None = None,
    checkouts: Checkouts = NOWHERE,
) -> SecretStore:
    """The secrets store to use, in a config folder that must be the user's own: outside every
    checkout (``checkouts``: as seen from the command's workspace; ``files/whose.py``).

    ``OPENLINEAGE_EXPORT_SECRETS=file|keyring`` forces one. Otherwise the system keyring when
    its active backend is a real one (see :func:`is_usable_keyring`), else a
    :class:`FileStore` in :func:`config_dir`: on a headless machine without a keyring daemon
    this is the file. ``backend`` replaces keyring's active backend (for tests and embedding).
    A host that keeps keys of its own (``OPENLINEAGE_EXPORT_HOST_SECRETS``) puts them in front
    of it (``host_secrets.py``).
    """
    return with_host_secrets(environ, _own_store(environ, backend, checkouts))


def _own_store(
    environ: Mapping[str, str], backend: Keyring | None, checkouts: Checkouts
) -> SecretStore:
    folder = config_dir(environ)
    choice = environ.get(BACKEND_ENV, "").strip().lower()
    if choice not in ("", "file", "keyring"):
        raise ConfigError(f"{BACKEND_ENV} must be 'file' or 'keyring', not {choice!r}")
    if choice == "file":
        return FileStore(folder, checkouts)
    found = backend if backend is not None else system_keyring(checkouts)
    if found is not None and is_usable_keyring(found):
        return KeyringStore(folder, found, checkouts)
    if choice == "keyring":
        what = str(found) if found is not None else "none found"
        raise ConfigError(
            f"{BACKEND_ENV}=keyring, but there is no usable system keyring "
            f"({what}); start or unlock one, or use {BACKEND_ENV}=file"
        )
    return FileStore(folder, checkouts)


class LazyStore:
    """The :func:`default_store` for ``environ``, found only when a secret is first asked for
    (finding a keyring may take a while, and a key from the environment needs no store)."""

    def __init__(self, environ: Mapping[str, str], checkouts: Checkouts = NOWHERE) -> None:
        self._environ = environ
        self._checkouts = checkouts
        self._store: SecretStore | None = None

    def _found(self) -> SecretStore:
        if self._store is None:
            self._store = default_store(self._environ, checkouts=self._checkouts)
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
