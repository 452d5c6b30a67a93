"""Which proxy a request goes through: the one place that decides it.

Read from the environment as requests and curl read it: ``<scheme>_proxy`` (lower case first,
then upper case; ``HTTP_PROXY`` is ignored in a CGI request, where a client could set it), else
``all_proxy``/``ALL_PROXY``; ``no_proxy``/``NO_PROXY`` lists the hosts that go direct: ``*``,
host names (``example.com`` and ``.example.com`` both cover its subdomains), IP addresses and
CIDR ranges (``127.0.0.0/8``, ``::1/128``), each optionally with ``:port``.

Our HTTP client posts through :func:`environment_proxy` and ``trust`` checks the same answer
before a key travels, so the rule for plain http sees the hop the key really takes.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def environment_proxy(url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The proxy the environment names for ``url`` (a URL, ``http://`` added when it has no
    scheme), or None to go direct. ``environ`` defaults to ``os.environ``."""
    env = os.environ if environ is None else environ
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    proxy = _variable(env, f"{scheme}_proxy") or _variable(env, "all_proxy")
    if not proxy or bypassed(url, env):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def bypassed(url: str, environ: Mapping[str, str]) -> bool:
    """Whether ``no_proxy``/``NO_PROXY`` sends ``url`` direct."""
    listed = _variable(environ, "no_proxy")
    if not listed:
        return False
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        port = None
    address = _address(host)
    for entry in listed.replace(" ", ",").split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        entry, entry_port = _split_port(entry)
        if entry_port is not None and entry_port != port:
            continue
        if address is not None:
            if _address_matches(address, entry):
                return True
            continue
        name = entry.removeprefix("*").lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _variable(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name) or ""
    if not value and not (name == "http_proxy" and "REQUEST_METHOD" in environ):
        value = environ.get(name.upper()) or ""
    return value.strip()


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def _split_port(entry: str) -> tuple[str, int | None]:
    """``host:port``, ``[v6]:port``, ``v4:port`` -> (host, port); a bare IPv6 or CIDR keeps
    its colons."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        if port.isdigit():
            return host, int(port)
    return entry, None


def _address_matches(address: ipaddress.IPv4Address | ipaddress.IPv6Address, entry: str) -> bool:
    try:
        if "/" in entry:
            return address in ipaddress.ip_network(entry, strict=False)
        return address == ipaddress.ip_address(entry)
    except ValueError:
        return False
