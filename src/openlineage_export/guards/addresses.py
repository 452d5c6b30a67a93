"""A URL's host as the client reads it: the one spelling every address of that host shares.

Where a key may go is judged by host (``trust.origin_of``, ``secrecy.is_loopback``), so two
spellings of one host must read as one, and two hosts never as one. The host is read as
libcurl reads it (its URL parser) and as the system's resolver does (``getaddrinfo``, which
librdkafka calls):

- percent-encoding is decoded (``%31%32%37.0.0.1`` is 127.0.0.1: libcurl decodes it), and what
  it decodes to must be ASCII (a name in another script is written ``xn--...``): a name that is
  not would be compared in Unicode's lower case, which is not what the resolver is asked;
- case does not count, and one trailing dot is dropped (``LocalHost.``; libcurl resolves the
  name without it; two are no host: libcurl refuses ``a..``);
- an IPv4 address may be written as the C library's ``inet_aton`` reads one: 1 to 4 parts,
  each decimal, octal with a leading ``0`` or hex with ``0x`` (``0x7f.1``, ``2130706433``,
  ``0177.0.0.1`` are 127.0.0.1; ``0127.0.0.1`` is 87.0.0.1); a host that is no such address
  (``08.1.1.1``, ``256.0.0.1``, ``0x.1``) is a name, looked up as one;
- an IPv6 address in any of its spellings is one address; one that maps an IPv4 address
  (``::ffff:127.0.0.1``, ``::ffff:7f00:1``) is that IPv4 address.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote

_PART = re.compile(r"0[xX][0-9A-Fa-f]+|0[0-7]*|[1-9][0-9]*", re.ASCII)
"""One part of an IPv4 address as ``strtoul(part, &end, 0)`` reads it whole."""

_FORBIDDEN = frozenset("\x00\t\n\r #/:<>?@[\\]^|%\x7f") | frozenset(map(chr, range(0x20)))
"""What no host name holds once decoded (the URL standard's forbidden domain code points)."""


def canonical_host(host: str) -> str:
    """``host`` (as ``urlsplit(url).hostname`` gives it: an IPv6 address without brackets) in
    its one spelling: a dotted IPv4 address, ``[IPv6]`` compressed, or a name in lower case
    without its trailing dot. ValueError for what is no host."""
    if ":" in host:
        return _ipv6(host)
    name = unquote(host, errors="strict")
    if not name.isascii():
        # libcurl resolves the bytes themselves, while Unicode's lower case folds some into
        # ASCII: U+212A KELVIN SIGN (%E2%84%AA) lower-cases to 'k', and an origin approved for
        # k8s.example.com would match a host libcurl asks the resolver for as it is written.
        raise ValueError("not an ASCII host: write it as xn--...")
    name = name.lower()
    if not name or any(c in _FORBIDDEN for c in name):
        raise ValueError("not a host")
    if name.endswith("."):
        name = name[:-1]
    if not name or name.startswith(".") or ".." in name or name.endswith("."):
        raise ValueError("an empty label")
    address = _ipv4(name)
    return name if address is None else str(address)


def _ipv4(name: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``name`` is, as ``inet_aton`` reads one; None for a name."""
    parts = name.split(".")
    if len(parts) > 4 or not all(_PART.fullmatch(part) for part in parts):
        return None
    numbers = [
        int(part, 16)
        if part[:2].lower() == "0x"
        else int(part, 8)
        if part.startswith("0")
        else int(part)
        for part in parts
    ]
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for place, number in enumerate(leading):
        value += number << (8 * (3 - place))
    return ipaddress.IPv4Address(value)


def _ipv6(host: str) -> str:
    text, zone_sep, zone = host.partition("%")
    address = ipaddress.IPv6Address(text)  # ValueError for no IPv6 address
    if address.ipv4_mapped is not None and not zone_sep:
        return str(address.ipv4_mapped)
    zone = unquote(zone[2:] if zone.startswith("25") else zone, errors="strict")  # %25: '%'
    if zone_sep and (not zone or any(c in _FORBIDDEN for c in zone)):
        raise ValueError("not a zone")
    return f"[{address.compressed}{'%' + zone if zone_sep else ''}]"


def address_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address a canonical host (:func:`canonical_host`) is, None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
