"""Who may decide what: the one place where the trust model (docs/security.md) is enforced.

``.workspace/settings.json`` is written by whoever last pushed to the repository, so it is
untrusted input. It may say *where events go*: the url and endpoint, the namespace, the
transport and topic, a file in the export's own folder of the workspace. Only the user
(environment, command line, the user's own secrets store) may say what *weakens or redirects a
key*, or what is written outside that folder:

- the settings declared ``user_only`` (``openlineage.allowInsecureKey``, ``openlineage.tls.*``):
  from the workspace they are refused (:func:`check_user_only`);
- proxies: they are read from the environment only (``deliver/proxy.py``);
- a file written anywhere but the export's own folder of the workspace, ``.workspace/exports/``
  (:func:`workspace_output`; opened there without following a link, ``host/confine.py``);
- which server a key goes to (:func:`check_key_destination`): a key from the environment goes
  only to a server the user named; a stored key only to a server its owner approved for it
  (``secrets set NAME --for ORIGIN``, ``secrets allow NAME ORIGIN``).

Whatever is refused is one :class:`~.errors.ConfigError` naming the setting and how the user
allows it, raised while the destination is opened: before anything is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from .errors import ConfigError, KeyNotApproved
from .host.secrets import SecretStore
from .host.settings import WORKSPACE_SOURCE, Settings, user_only_error
from .secrecy import Secret

PROG = "openlineage-export"

_DEFAULT_PORTS = {"http": 80, "https": 443}


def from_workspace(settings: Settings, key: str) -> bool:
    """Whether the value in force of ``key`` comes from the workspace's settings.json."""
    return settings.source(key) == WORKSPACE_SOURCE


def check_user_only(settings: Settings) -> None:
    """Refuse a ``user_only`` setting the workspace sets to anything but its default."""
    for row in settings.catalogue:
        if (row.user_only and from_workspace(settings, row.key)
                and settings.value(row.key) != row.default):
            raise user_only_error(row, "in the workspace's settings.json is not used")


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, as keys are approved for: lower case, the
    default port left out, an IPv6 address in brackets. A ConfigError for no URL."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ConfigError("not a URL: a server is given as scheme://host[:port]") from None
    scheme = parts.scheme.lower()
    if not scheme or not host or any(c.isspace() or not c.isprintable() for c in host):
        raise ConfigError("not a URL: a server is given as scheme://host[:port], e.g. "
                          "https://marquez.example.com")
    host = f"[{host}]" if ":" in host else host.rstrip(".")
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def check_key_destination(secret: Secret, servers: Sequence[str], settings: Settings,
                          store: SecretStore, *, setting: str, what: str = "API key") -> None:
    """Refuse to send ``secret`` to ``servers`` (URLs, or ``kafka://host:port``), which the
    setting ``setting`` names, unless its owner said it may go there.

    A key from the environment (a CI job's) goes only to servers the user named: ``setting``
    must not come from the workspace. A stored key goes only to the origins approved for it.
    """
    if secret.name is None:
        if from_workspace(settings, setting):
            env = settings.catalogue.declared(setting, None).env
            how = f"{env} in the environment" + (" or --url" if setting.endswith(".url") else "")
            raise ConfigError(
                f"the {what} in {secret.origin} goes only to a server you name, and {setting} "
                f"comes from the workspace's settings.json: nothing was sent. Name the server "
                f"yourself with {how}")
        return
    approved = set(store.origins(secret.name))
    for server in servers:
        origin = origin_of(server)
        if origin not in approved:
            source = settings.source(setting)
            source = "--url" if source == "given" else source
            raise KeyNotApproved(
                f"the secret '{secret.name}' is not approved for {origin} ({setting}, from "
                f"{source}): nothing was sent. If that server should have it: {PROG} secrets "
                f"allow {secret.name} {origin}", secret.name, origin, f"{setting}, from {source}")


EXPORTS = (".workspace", "exports")
"""The folder of the workspace the export owns: the only place a workspace's settings.json may
have events written to (``openlineage.file.path``)."""


def workspace_output(value: str, settings: Settings, setting: str,
                     root: Path) -> tuple[str, ...] | None:
    """Where a file path from ``setting`` may be written: None when the user named it (the
    environment, the command line, the user's openlineage.yml: anywhere, links followed);
    when the workspace did, its parts below ``root``, which must start with
    ``.workspace/exports`` and never climb (``..``). The caller opens them without following
    a link (``host/confine.py``). A ConfigError for anywhere else."""
    if not from_workspace(settings, setting):
        return None
    path = Path(value)
    try:
        parts = (path.relative_to(root) if path.is_absolute() else path).parts
    except ValueError:
        parts = ()
    if ".." in parts or parts[:2] != EXPORTS:
        raise ConfigError(outside_exports(setting, settings.catalogue.declared(setting, None).env))
    return parts


def outside_exports(setting: str, env: str | None, why: str = "") -> str:
    """The refusal of a path from the workspace's settings.json that is not in (or, ``why``
    says how, leads out of) the export's own folder; ``env`` is how the user names one."""
    why = why or ("names a file outside .workspace/exports/, the folder the export keeps for "
                  "the workspace's events")
    return (f"{setting} in the workspace's settings.json {why}: nothing was written. A "
            f"workspace's events go only there, never through a link (.workspace/exports/"
            f"events.jsonl, or .workspace/exports/ for rotating files); to write anywhere else, "
            f"set {env} in your environment")
