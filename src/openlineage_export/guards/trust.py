"""Who may decide what: the one place where the trust model (docs/security.md) is enforced.

``.workspace/settings.json`` is written by whoever last pushed to the repository, so it is
untrusted input. It may say *where events go*: the url and endpoint, the namespace, the
transport and topic, a file in the export's own folder of the workspace. Only the user
(environment, command line, the user's own secrets store) may say what *weakens or redirects a
key*, or what is written outside that folder:

- the settings declared ``user_only`` (``openlineage.allowInsecureKey``, ``openlineage.tls.*``):
  from the workspace they are refused (:func:`check_user_only`);
- proxies: they are read from the environment only (``guards/proxy.py``);
- a file written anywhere but the export's own folder of the workspace, ``.workspace/exports/``
  (:func:`workspace_output`; opened there without following a link, ``files/tree.py``);
- which server a key goes to (:func:`check_key_destination`): a key from the environment goes
  only to a server the user named; a stored key only to a server its owner approved for it
  (``secrets set NAME --for ORIGIN``, ``secrets allow NAME ORIGIN``). A host that keeps keys
  of its own (the VS Code extension) asks the same question with ``secrets check NAME URL``
  (:func:`key_verdict`) before it hands a key over.

Whatever is refused is one :class:`~.errors.ConfigError` naming the setting and how the user
allows it, raised while the destination is opened: before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .. import DISTRIBUTION
from ..errors import ConfigError, KeyNotApproved
from ..host.secrets import SecretStore
from ..host.setting_values import parse_text
from ..host.settings import WORKSPACE_SOURCE, Settings, user_only_error
from .addresses import canonical_host
from .keys import KeySettings
from .proxy import environment_proxy
from .secrecy import Secret, check_key_transport

_DEFAULT_PORTS = {"http": 80, "https": 443}


def from_workspace(settings: Settings, key: str) -> bool:
    """Whether the value in force of ``key`` comes from the workspace's settings.json."""
    return settings.source(key) == WORKSPACE_SOURCE


def check_user_only(settings: Settings) -> None:
    """Refuse a ``user_only`` setting the workspace sets to anything but its default."""
    for row in settings.catalogue:
        if (
            row.user_only
            and from_workspace(settings, row.key)
            and settings.value(row.key) != row.default
        ):
            raise user_only_error(row, "in the workspace's settings.json is not used")


def check_named_destination(
    settings: Settings, transport: str, kind: str, addresses: Mapping[str, str]
) -> None:
    """The server the user named is where events go: when the user named where events go (the
    address setting of a kind, ``addresses``: kind -> setting, from the environment, the
    command line or the user's own openlineage.yml), the workspace's ``transport`` setting
    cannot switch to a kind whose address the user did not name; ``kind`` is the one in force.
    When the user named more than one (a server and a file), the workspace does not choose
    between them either: one would get nothing, and the exit code would say all went (attack
    D, 5). A transport the user set themselves, or a workspace's with no address of the
    user's, stands."""
    if not from_workspace(settings, transport):
        return
    named = {
        other: setting
        for other, setting in addresses.items()
        if settings.source(setting) not in (WORKSPACE_SOURCE, "default")
    }
    if not named or named.keys() == {kind}:
        return
    env = settings.catalogue.declared(transport, None).env

    def said(setting: str) -> str:
        source = settings.source(setting)
        return f"{setting}, from {'--url' if source == 'given' else source}"

    if kind in named:
        others = "; ".join(said(named[k]) for k in sorted(named) if k != kind)
        raise ConfigError(
            f"{transport} in the workspace's settings.json sends the events to {kind} "
            f"({said(named[kind])}) only, and you named more than one destination (also "
            f"{others}), which would get nothing: nothing was sent. Say which yourself: set "
            f"{env} to one of {', '.join(sorted(named))}"
        )
    setting = next(iter(named.values()))
    source = settings.source(setting)
    raise ConfigError(
        f"{transport} in the workspace's settings.json sends the events to {kind}, not where "
        f"you named ({setting}, from {'--url' if source == 'given' else source}): nothing "
        f"was sent. If they should go to {kind}, set {env}={kind} yourself"
    )


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
        # urlsplit gives the host in lower case: U+212A KELVIN SIGN would read as 'k' (addresses.py)
        if not scheme or not host or not parts.netloc.isascii():
            raise ValueError("no ASCII host")
        if any(c.isspace() or not c.isprintable() for c in host):
            raise ValueError("no host")
        host = canonical_host(host)
    except ValueError:
        raise ConfigError(
            "not a URL: a server is given as scheme://host[:port], e.g. https://marquez.example.com"
        ) from None
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


@dataclass(frozen=True)
class Approvable:
    """Servers a key may be approved for, as a destination kind declares them (its row in
    ``deliver/registry.py``): the schemes of their origins, whether the port is part of one
    (a Kafka broker's is), and how a person names them."""

    schemes: tuple[str, ...]
    what: str
    """How a person names one: ``an http:// or https:// server``, ``a Kafka broker``."""
    port_required: str | None = None
    """Where the port is part of the origin, how the user names each (``one for each broker
    of openlineage.kafka.bootstrapServers``); None: the default port may be left out."""

    @property
    def spelled(self) -> str:
        """The kind with its form: ``a Kafka broker as kafka://host:port``."""
        if self.port_required is None:
            return self.what
        return f"{self.what} as {self.schemes[0]}://host:port"


def approvable_origin(server: str, approvable: Sequence[Approvable]) -> str:
    """The origin a key is approved for when the user names ``server`` (``secrets set --for``,
    ``secrets allow``): one of the ``approvable`` kinds of server (an http(s) server's, a
    Kafka broker's with its port, as ``kafka/brokers.Broker.url`` names each broker). A
    ConfigError for anything else (a protocol's name, ``kafka://sasl_plaintext``, names no
    broker)."""
    origin = origin_of(server)
    scheme = origin.split("://", 1)[0]
    kind = next((k for k in approvable if scheme in k.schemes), None)
    if kind is None:
        raise ConfigError(
            "a key is approved for "
            + ", or ".join(k.spelled for k in approvable)
            + f", not a {scheme}:// address"
        )
    if kind.port_required is not None and urlsplit(origin).port is None:
        raise ConfigError(
            f"{kind.what} is approved with its port: {scheme}://host:port, {kind.port_required}"
        )
    return origin


def check_key_destination(
    secret: Secret,
    servers: Sequence[str],
    settings: Settings,
    store: SecretStore,
    *,
    setting: str,
    what: str = "API key",
) -> None:
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
                f"yourself with {how}"
            )
        return
    approved = _approved(store, secret.name)
    for server in servers:
        origin = origin_of(server)
        if origin not in approved:
            source = settings.source(setting)
            source = "--url" if source == "given" else source
            raise KeyNotApproved(
                f"the secret '{secret.name}' is not approved for {origin} ({setting}, from "
                f"{source}): nothing was sent. If that server should have it: "
                f"{DISTRIBUTION} secrets allow {secret.name} {origin}",
                secret.name,
                origin,
                f"{setting}, from {source}",
            )


@dataclass(frozen=True)
class KeyVerdict:
    """Whether the secret ``name`` may be sent to a server, and why (``secrets check``)."""

    name: str
    origin: str
    """The server's origin, as it is approved (``secrets allow NAME ORIGIN``)."""
    may: bool
    reason: str
    """``approved``, ``not approved`` (its owner may approve it) or ``in clear text`` (plain
    http to another machine, or through a proxy on one: approving would not change that)."""
    message: str
    """The verdict in one sentence, naming what to run when its owner may approve it."""


def key_verdict(
    name: str,
    url: str,
    approved: Sequence[str],
    environ: Mapping[str, str],
    approvable: Sequence[Approvable],
) -> KeyVerdict:
    """Whether the secret ``name`` may go to ``url``, as an export would decide: the key's
    transport (plain http only to this machine, through the proxy ``environ`` names, unless
    the user set ``OPENLINEAGE_ALLOW_INSECURE_KEY``), then the origins ``approved`` for it
    (the store's, and those a host keeps for a key of its own), compared as :func:`origin_of`
    spells them."""
    origin = approvable_origin(url, approvable)
    if origin.startswith("http"):
        try:
            check_key_transport(
                url, True, _allows_insecure_key(environ), environment_proxy(url, environ)
            )
        except ConfigError as exc:
            return KeyVerdict(name, origin, False, "in clear text", str(exc))
    if origin not in _canonical(approved):
        return KeyVerdict(
            name,
            origin,
            False,
            "not approved",
            f"the secret '{name}' is not approved for {origin}; if that server "
            f"should have it: {DISTRIBUTION} secrets allow {name} {origin}",
        )
    return KeyVerdict(
        name, origin, True, "approved", f"the secret '{name}' may be sent to {origin}"
    )


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


def _allows_insecure_key(environ: Mapping[str, str]) -> bool:
    """Whether the user set ``openlineage.allowInsecureKey`` (its variable: the user's alone)."""
    row = next(row for row in KeySettings.rows() if row.attribute == "allow_insecure_key")
    text = environ.get(row.env or "")
    if not text:
        return False
    return parse_text(row, text, f"the environment variable {row.env}") is True


EXPORTS = (".workspace", "exports")
"""The folder of the workspace the export owns: the only place a workspace's settings.json may
have events written to (``openlineage.file.path``)."""


def workspace_output(
    value: str, settings: Settings, setting: str, root: Path
) -> tuple[str, ...] | None:
    """Where a file path from ``setting`` may be written: None when the user named it (the
    environment, the command line, the user's openlineage.yml: anywhere, links followed);
    when the workspace did, its parts below ``root``, which must start with
    ``.workspace/exports`` and never climb (``..``). The caller opens them without following
    a link (``files/tree.py``). A ConfigError for anywhere else."""
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
    why = why or (
        "names a file outside .workspace/exports/, the folder the export keeps for "
        "the workspace's events"
    )
    return (
        f"{setting} in the workspace's settings.json {why}: nothing was written. A "
        f"workspace's events go only there, never through a link (.workspace/exports/"
        f"events.jsonl, or .workspace/exports/ for rotating files); to write anywhere else, "
        f"set {env} in your environment"
    )
