"""Keeping secrets secret: one place for every rule about keys and passwords in flight.

Sits between the host (which stores secrets) and the destinations (which send them):

- :func:`resolve_secret` finds a secret the one way every setting uses: an environment variable
  (for CI jobs), else the secrets-store entry a ``...secretRef`` setting names;
- :class:`Redactor` is the one redaction point: every text a server or a library hands back
  passes through it before it is shown, logged or stored, in any encoding a server may echo a
  secret in (raw, URL-encoded, JSON- or HTML-escaped, base64, a bytes repr);
- :func:`masked_logs` applies it to the log lines of the libraries we call;
- :func:`is_loopback`, :func:`check_key_transport` and :func:`check_header_safe` say where and
  how a secret may travel.

No message here ever contains a secret's value: they name where it came from instead.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import logging
import re
import socket
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..errors import ConfigError, MissingSecret
from ..host.host_secrets import how_to_store
from ..host.secrets import SecretStore
from .addresses import address_of, canonical_host

MASK = "***"
"""What stands in a text where a secret was."""


@dataclass(frozen=True)
class Secret:
    """A secret's value and where it came from (the origin is safe to show, the value never)."""

    value: str = field(repr=False)
    origin: str
    """E.g. ``the environment variable OPENLINEAGE_API_KEY`` or ``the secret 'marquez-prod'``."""
    fix: str
    """How the user replaces it, for a message about a value we cannot use."""
    name: str | None = None
    """The secrets-store entry it was read from; None when it came from the environment."""
    env: str | None = None
    """The environment variable it came from, when it did."""


def resolve_secret(
    environ: Mapping[str, str],
    secret_ref: str | None,
    env_var: str,
    *,
    store: SecretStore,
    setting: str,
) -> Secret | None:
    """The secret to use: ``environ[env_var]`` when set and not empty (the store is then not
    touched), else the entry ``secret_ref`` names in ``store``, else None when neither is set.

    A ``secret_ref`` the store does not hold is :class:`MissingSecret`, naming ``setting``.
    """
    from_env = environ.get(env_var)
    if from_env:
        return Secret(
            from_env, f"the environment variable {env_var}", f"set {env_var} again", env=env_var
        )
    if secret_ref is None:
        return None
    value = store.get(secret_ref)
    store_it = how_to_store(environ, secret_ref)  # where this user keeps keys: here, or an editor
    if not value:
        raise MissingSecret(
            f"the secret '{secret_ref}' named by {setting} is not in the secrets store "
            f"({store.description}); {store_it}"
        )
    return Secret(value, f"the secret '{secret_ref}'", f"{store_it} again", name=secret_ref)


_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")
"""What a header value may hold: visible ASCII, as an ``Authorization: Bearer`` carries it."""


def check_header_safe(secret: Secret) -> None:
    """Refuse a secret an HTTP header cannot carry, before anything is sent.

    An HTTP client refuses such a header with an error that quotes it (escaped, so no
    redaction finds it), or fails on it outright.
    """
    if not _HEADER_SAFE.fullmatch(secret.value):
        raise ConfigError(
            f"the API key in {secret.origin} has a character an HTTP header cannot "
            f"carry (a space, a control or a non-ASCII character); {secret.fix}"
        )


def is_loopback(url: str) -> bool:
    """True when the URL's host is this machine: an address in 127.0.0.0/8 or ::1 in any
    spelling the client reads as one (``hosts.canonical_host``: ``0x7f.1``, ``[::ffff:
    127.0.0.1]``), or the name ``localhost`` (or ``*.localhost``) when every address it
    resolves to is one of those.

    A name is judged by what it resolves to, never by how it reads: ``h2evil.localhost`` may
    well be mapped to another machine. Other names are not loopback (they are not looked up:
    no lookup leaves the machine for this), nor is a name that does not resolve.
    """
    try:
        host = canonical_host(urlsplit(url).hostname or "")
    except ValueError:
        return False
    address = address_of(host)
    if address is not None:
        return _loopback_address(str(address)) is True
    if host != "localhost" and not host.endswith(".localhost"):
        return False
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    return bool(found) and all(_loopback_address(str(entry[4][0])) for entry in found)


def _loopback_address(host: str) -> bool | None:
    """Whether the IP address ``host`` is loopback; None when ``host`` is no address."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def check_key_transport(
    url: str, has_key: bool, allow_insecure: bool, proxy: str | None = None
) -> None:
    """Refuse to send a key in clear text off this machine unless the user opted in.

    Over plain http the key is readable on every hop it takes: the server's, and the proxy's
    (``proxy``, the one the request really goes through) when there is one; each must be
    loopback. Over https through a proxy the key travels inside the tunnel.
    """
    if not has_key or allow_insecure or urlsplit(url).scheme != "http":
        return
    if proxy is not None and not is_loopback(proxy):
        raise ConfigError(
            f"refusing to send the API key over plain http through the proxy "
            f"{urlsplit(proxy).hostname} (from the environment: HTTP_PROXY, ALL_PROXY): it "
            "would cross the network in clear; use https, add the server to NO_PROXY, or set "
            "OPENLINEAGE_ALLOW_INSECURE_KEY=true if this network is trusted"
        )
    if not is_loopback(url):
        raise ConfigError(
            f"refusing to send the API key over plain http to {urlsplit(url).hostname}, which "
            "is not this machine (every address it resolves to must be loopback): use https, "
            "or set openlineage.allowInsecureKey (OPENLINEAGE_ALLOW_INSECURE_KEY=true) if this "
            "network is trusted"
        )


class Redactor:
    """Masks secrets in any text we are about to show, log or store.

    A server may echo what it was sent in many shapes; each character of a secret is matched
    in every form it may take there: itself, ``%XX`` (either case, ``+`` for a space), a JSON
    ``\\uXXXX`` or ``\\/``, an HTML ``&#NN;``/``&#xNN;``, a bytes repr's ``\\xNN``; mixed forms
    too. Base64 of the secret is matched at each of the three byte alignments it can sit at.
    """

    def __init__(self, *secrets: str | None) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        self._pattern = re.compile("|".join(_pattern(s) for s in values)) if values else None
        self._base64 = sorted(
            {core for s in values for core in _base64_cores(s)}, key=len, reverse=True
        )

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        text = self._pattern.sub(MASK, text)
        for core in self._base64:
            text = text.replace(core, MASK)
        return text


def _pattern(secret: str) -> str:
    return "".join(_char_forms(char) for char in secret)


def _char_forms(char: str) -> str:
    code = ord(char)
    utf8 = char.encode("utf-8")
    forms = [
        re.escape(char),
        "".join(f"%(?i:{b:02x})" for b in utf8),  # URL-encoded, either case
        "".join(rf"\\x(?i:{b:02x})" for b in utf8),
    ]  # a bytes repr
    if code < 0x10000:
        forms.append(rf"\\u(?i:{code:04x})")
    else:  # a JSON surrogate pair
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        forms.append(rf"\\u(?i:{high:04x})\\u(?i:{low:04x})")
    forms += [f"&#0*{code};", f"&#(?i:x)0*(?i:{code:x});"]
    if char in _HTML_NAMED:
        forms.append(f"&(?i:{_HTML_NAMED[char]});")
    if char == "/":
        forms.append(r"\\/")
    if char == " ":
        forms.append(r"\+")
    if char in "\\\"'":
        forms.append(re.escape("\\" + char))
    return "(?:" + "|".join(forms) + ")"


_HTML_NAMED = {
    "&": "amp",
    "<": "lt",
    ">": "gt",
    '"': "quot",
    "'": "apos",
    "/": "sol",
    "+": "plus",
    "=": "equals",
}

_MIN_BASE64_CORE = 8
"""Shorter base64 fragments match too much innocent text to be worth masking."""


def _base64_cores(secret: str) -> Iterator[str]:
    """The part of base64(prefix + secret) that depends on the secret alone, per alignment."""
    data = secret.encode("utf-8")
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * offset + data).decode("ascii")
            start = -(-8 * offset // 6)  # ceil: the first character no prefix bit reaches
            end = 8 * (offset + len(data)) // 6
            core = encoded[start:end]
            if len(core) >= _MIN_BASE64_CORE:
                yield core


_HTTP_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "aiohttp.client",
    "aiohttp.internal",
    "urllib3.connectionpool",
)
"""The loggers of the HTTP stacks: at INFO and DEBUG they log the server's status line."""


class _RedactingLogFilter(logging.Filter):
    """Masks secrets in what a library logs: a server may echo them in its reason phrase."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        masked = self._redact(text)
        if masked != text:
            record.msg, record.args = masked, None
        return True


@contextlib.contextmanager
def masked_logs(redact: Redactor, loggers: Iterable[str] = _HTTP_LOGGERS) -> Iterator[None]:
    """While inside, the named loggers' records pass through ``redact``."""
    if not redact:
        yield
        return
    log_filter = _RedactingLogFilter(redact)
    names = list(loggers)
    for name in names:
        logging.getLogger(name).addFilter(log_filter)
    try:
        yield
    finally:
        for name in names:
            logging.getLogger(name).removeFilter(log_filter)
