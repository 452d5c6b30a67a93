"""Who may decide what: the one place where the trust model (docs/security.md) is enforced.

``.workspace/settings.json`` is written by whoever last pushed to the repository, so it is
untrusted input. It may say *where events go*: the url and endpoint, the namespace, the
transport and topic, a file *inside* the workspace. Only the user (environment, command line,
the user's own secrets store) may say what *weakens or redirects a key*:

- the settings declared ``user_only`` (``openlineage.allowInsecureKey``, ``openlineage.tls.*``):
  from the workspace they are refused (:func:`check_user_only`);
- proxies: they are read from the environment only (``deliver/proxy.py``);
- a file outside the workspace (:func:`confine`, :func:`inside`);
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
from .hosts import canonical_host
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
    """``scheme://host[:port]`` of ``url``, as keys are approved for: the host in the one
    spelling every address of it shares (``hosts.canonical_host``: case, a trailing dot,
    percent-encoding, IPv4 in decimal, octal or hex, IPv6 forms), the default port left out.
    A ConfigError for no URL."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ConfigError("not a URL: a server is given as scheme://host[:port]") from None
    scheme = parts.scheme.lower()
    try:
        if not scheme or not host or any(c.isspace() or not c.isprintable() for c in host):
            raise ValueError("no host")
        host = canonical_host(host)
    except ValueError:
        raise ConfigError("not a URL: a server is given as scheme://host[:port], e.g. "
                          "https://marquez.example.com") from None
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


APPROVABLE = ("http", "https", "kafka")
"""The schemes a key may be approved for: a server's, or a Kafka broker's (``kafka://``)."""


def approvable_origin(server: str) -> str:
    """The origin a key is approved for when the user names ``server`` (``secrets set --for``,
    ``secrets allow``): an http(s) server's, or a Kafka broker's with its port, as
    ``kafka_brokers.Broker.url`` names each broker. A ConfigError for anything else (a
    protocol's name, ``kafka://sasl_plaintext``, names no broker)."""
    origin = origin_of(server)
    scheme = origin.split("://", 1)[0]
    if scheme not in APPROVABLE:
        raise ConfigError(f"a key is approved for an http:// or https:// server, or a Kafka "
                          f"broker as kafka://host:port, not a {scheme}:// address")
    if scheme == "kafka" and urlsplit(origin).port is None:
        raise ConfigError("a Kafka broker is approved with its port: kafka://host:port, one "
                          "for each broker of openlineage.kafka.bootstrapServers")
    return origin


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
    approved = _approved(store, secret.name)
    for server in servers:
        origin = origin_of(server)
        if origin not in approved:
            source = settings.source(setting)
            source = "--url" if source == "given" else source
            raise KeyNotApproved(
                f"the secret '{secret.name}' is not approved for {origin} ({setting}, from "
                f"{source}): nothing was sent. If that server should have it: {PROG} secrets "
                f"allow {secret.name} {origin}", secret.name, origin, f"{setting}, from {source}")


def _approved(store: SecretStore, name: str) -> set[str]:
    """The origins approved for ``name``, each as :func:`origin_of` spells it today (an
    approval kept in an older spelling still counts)."""
    return _canonical(store.origins(name))


def _canonical(origins: Sequence[str]) -> set[str]:
    canonical = set()
    for origin in origins:
        try:
            canonical.add(origin_of(origin))
        except ConfigError:
            continue
    return canonical


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, its links followed, is ``root`` or in it."""
    return path.resolve().is_relative_to(root.resolve())


def confine(path: Path, settings: Settings, setting: str, root: Path) -> Path | None:
    """The folder a path from ``setting`` must stay inside: ``root`` (the workspace) when the
    workspace set it, None when the user did. A ConfigError when it is already outside."""
    if not from_workspace(settings, setting):
        return None
    if not inside(path, root):
        env = settings.catalogue.declared(setting, None).env
        raise ConfigError(
            f"{setting} in the workspace's settings.json points outside the workspace (a path "
            f"that is absolute, climbs with '..' or goes through a link): nothing was written. "
            f"A workspace may only write inside itself; to write there, set {env} in your "
            f"environment")
    return root
