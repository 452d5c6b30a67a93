"""Keys a host keeps in a secret storage of its own (the VS Code extension's), handed to one run.

The host lists, in ``OPENLINEAGE_EXPORT_HOST_SECRETS``, the keys it holds: by name, each with
the servers its user approved it for, and the value of those this run may send (an export's,
the ones the settings name); a run that sends nothing gets the names alone. A key from there is
a *stored* key, never the environment's: ``trust.py`` sends it only to a server approved for
it, whatever url the workspace names. So a host never vouches for the workspace's url by
copying it into ``OPENLINEAGE_URL`` (a variable of the user's): it hands the workspace's values
over as the workspace's, and the CLI decides.

:class:`HostSecrets` puts that storage in front of the CLI's own store: a name the host holds
is the host's (its value, its approvals), any other is looked up in the CLI's store.

::

    OPENLINEAGE_EXPORT_HOST_SECRETS='{"marquez-prod": {"origins": ["https://m.example.com"],
                                                       "value": "..."}}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import DISTRIBUTION
from ..errors import ConfigError
from .secret_store import SecretStore, check_secret_name

HOST_SECRETS_ENV = "OPENLINEAGE_EXPORT_HOST_SECRETS"
"""The environment variable a host lists the keys of its own secret storage in."""

EDITOR_STORAGE = "VS Code's secret storage"
"""Where the host's keys are, for a message."""


@dataclass(frozen=True)
class HeldKey:
    """One key the host holds: its value when this run may send it, and its approved servers."""

    value: str | None = field(repr=False)
    origins: tuple[str, ...]


def held_keys(environ: Mapping[str, str]) -> dict[str, HeldKey] | None:
    """The keys ``OPENLINEAGE_EXPORT_HOST_SECRETS`` lists, by name; None when it is not set.
    A ConfigError, naming the variable (never a value), when it is not what a host writes."""
    text = environ.get(HOST_SECRETS_ENV)
    if text is None:
        return None
    wrong = ConfigError(
        f'{HOST_SECRETS_ENV} must be a JSON object of name: {{"origins": [...], "value": '
        "...}, as the VS Code extension writes it"
    )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise wrong from None  # the text holds keys: never quoted
    if not isinstance(data, dict):
        raise wrong
    keys: dict[str, HeldKey] = {}
    for name, entry in data.items():
        check_secret_name(name)
        if not isinstance(entry, dict):
            raise wrong
        value, origins = entry.get("value"), entry.get("origins", [])
        if value is not None and (not isinstance(value, str) or not value):
            raise wrong
        if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
            raise wrong
        keys[name] = HeldKey(value, tuple(sorted(origins)))
    return keys


class HostSecrets:
    """The host's keys (:func:`held_keys`) in front of the CLI's own store (a SecretStore)."""

    def __init__(self, held: Mapping[str, HeldKey], own: SecretStore) -> None:
        self._held = dict(held)
        self._own = own

    @property
    def description(self) -> str:
        """Where the secrets are."""
        return f"{EDITOR_STORAGE} (else {self._own.description})"

    def holds(self, name: str) -> bool:
        """Whether the host keeps a key called ``name``."""
        return name in self._held

    def get(self, name: str) -> str | None:
        """The host's key called ``name`` (None when this run was not given its value), else
        the CLI store's."""
        if name in self._held:
            return self._held[name].value
        return self._own.get(name)

    def set(self, name: str, value: str) -> None:
        """Store ``value`` in the CLI's own store (a host's key is the host's to change)."""
        self._refuse(name)
        self._own.set(name, value)

    def delete(self, name: str) -> bool:
        """Forget ``name`` in the CLI's own store."""
        self._refuse(name)
        return self._own.delete(name)

    def names(self) -> list[str]:
        """The host's names and the CLI store's, sorted."""
        return sorted({*self._held, *self._own.names()})

    def origins(self, name: str) -> list[str]:
        """The servers the key ``name`` may go to: for the host's, those its user approved
        there (never the CLI store's approvals of another key by the same name)."""
        if name in self._held:
            return list(self._held[name].origins)
        return self._own.origins(name)

    def allow(self, name: str, origin: str) -> None:
        """Approve ``origin`` for the CLI store's key ``name``."""
        self._refuse(name)
        self._own.allow(name, origin)

    def _refuse(self, name: str) -> None:
        if name in self._held:
            raise ConfigError(
                f"the key '{name}' is kept in {EDITOR_STORAGE}: change it, or the servers it "
                "may go to, in the SECRETS view of OpenLineage"
            )


def with_host_secrets(environ: Mapping[str, str], own: SecretStore) -> SecretStore:
    """``own``, with the host's keys in front of it when the host lists some."""
    held = held_keys(environ)
    return own if held is None else HostSecrets(held, own)


def how_to_store(environ: Mapping[str, str], name: str) -> str:
    """How the user stores the secret ``name``: in the host's storage when a host hands its
    keys over (the SECRETS view), else with the CLI."""
    if environ.get(HOST_SECRETS_ENV) is not None:
        return "add it in the SECRETS view of OpenLineage (+), or with OpenLineage: Store API Key"
    return f"store it with: {DISTRIBUTION} secrets set {name}"


def missing_key_warning(store: SecretStore, name: str, environ: Mapping[str, str]) -> str | None:
    """What to say when the settings name the secret ``name`` and no store holds it (None:
    one does), worded for where the user keeps keys: the host's storage, or the CLI's."""
    if isinstance(store, HostSecrets) and store.holds(name):
        return None
    if store.get(name) is not None:
        return None
    if environ.get(HOST_SECRETS_ENV) is not None:
        return f"no key named '{name}' is in {EDITOR_STORAGE} yet: {how_to_store(environ, name)}"
    return f"no secret named '{name}' is stored yet (in {store.description}); " + how_to_store(
        environ, name
    )
