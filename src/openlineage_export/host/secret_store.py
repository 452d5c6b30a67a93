"""What a secrets store is (:class:`SecretStore`) and what a secret's name and value may be.

The stores: ``secret_files.py`` (a private file), ``keyring_store.py`` (the system keyring);
``secrets.py`` picks one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import ConfigError
from .credentials import SECRET_NAME_PATTERN, credential_error, looks_like_credential

NAME = re.compile(SECRET_NAME_PATTERN)
"""What a secret's name may be (``secretRef`` follows the same rule)."""


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


@dataclass(frozen=True)
class Place:
    """Where a store keeps what a person may look at (``secrets list``)."""

    backend: str
    """``file`` or ``keyring``."""
    file: Path
    """The secrets file, or the file that lists the names a keyring holds."""
    names_only: bool
    """``file`` holds the names alone (a keyring cannot list what it holds)."""


@runtime_checkable
class Placed(Protocol):
    """A store that can say where it keeps the secrets (both of ours can; a host's may not)."""

    @property
    def place(self) -> Place:
        """Where the secrets (or their names) are."""
        ...


def check_secret_name(name: str) -> str:
    """Return ``name`` if it can name a secret, else raise ConfigError."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        # Not echoed: someone may have typed the secret where its name belongs.
        raise ConfigError("a secret's name must be 1 to 128 letters, digits, '.', '_' or '-'")
    if looks_like_credential(name):
        raise credential_error("the secret's name")
    return name


def check_secret_value(value: str) -> None:
    """Raise ConfigError unless ``value`` can be stored: one line, not empty."""
    # Never echo the value: only what is wrong with it.
    if not isinstance(value, str) or not value:
        raise ConfigError("a secret cannot be empty")
    if any(c in value for c in "\r\n\0"):
        raise ConfigError("a secret must be one line (it contains a line break or NUL)")
