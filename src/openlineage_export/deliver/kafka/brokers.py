"""The bootstrap servers as librdkafka reads them, and as we check them: one list for both.

``openlineage.kafka.bootstrapServers`` may come from the workspace, and the SASL password
goes to every broker in it, so the trust check must see exactly the brokers librdkafka will
connect to. librdkafka reads the list in ``rd_kafka_brokers_add0`` and
``rd_kafka_broker_name_parse`` (``src/rdkafka_broker.c``), after its configuration took the
white space off the value's start (``rd_kafka_anyconf_set_prop0``, ``src/rdkafka_conf.c``):
:func:`librdkafka_reading` is that code in Python, byte for byte:

- entries end at a comma; a comma or a space *before* an entry is skipped, nothing else;
- an entry holding ``://`` starts with a protocol, any case, which must be one of
  :data:`PROTOCOLS` and equal ``security.protocol`` (else the entry, and every one after it, is
  dropped); whatever follows a ``/`` after it is ignored (``SASL_PLAINTEXT://evil:9094/x:1``
  is the broker ``evil:9094``);
- the port follows the last ``:`` when the entry holds only one, or when that ``:`` follows a
  ``]`` (``[::1]:9093``); it is C's ``atoi`` of the rest, wrapped to 16 bits (``h:70000`` is
  port 4464, ``h: 5x`` port 5); without one the port is 9092, and an empty host is
  ``localhost``.

We take only what reads one way: :func:`parse_bootstrap` accepts ``[protocol://]host:port``
entries separated by commas (a host name without a trailing dot, which the system's resolver
and a URL parser read differently for ``127.0.0.1.``; an IPv4 address, or an IPv6 address in
brackets; a
port of 1 to 65535 in digits; the protocol, if written, that of
``openlineage.kafka.securityProtocol``), checks that librdkafka reads the same list, and
refuses anything else in one line. librdkafka is then handed the list we checked, rebuilt
(:attr:`Broker.address`), never the text as written. A key is approved per broker, for
``kafka://host:port`` (:attr:`Broker.origin`), never for a protocol's name.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from ...errors import ConfigError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""librdkafka's ``rd_kafka_secproto_names``: how the producer talks to the brokers."""

DEFAULT_PORT = 9092
"""librdkafka's ``RD_KAFKA_PORT``: the port of an entry that names none."""

SETTING = "openlineage.kafka.bootstrapServers"

_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_ENTRY = re.compile(
    rf"(?:(?P<protocol>[A-Za-z_]+)://)?"
    rf"(?P<host>\[[0-9A-Fa-f:.]+\]|{_LABEL}(?:\.{_LABEL})*)"
    rf":(?P<port>[0-9]{{1,5}})",
    re.ASCII,
)


@dataclass(frozen=True, slots=True)
class Broker:
    """One bootstrap broker: how it is talked to, and where it is."""

    protocol: str
    host: str
    """As librdkafka resolves it: a name, an IPv4 address, or an IPv6 address in brackets."""
    port: int

    @property
    def address(self) -> str:
        """``host:port``, as librdkafka is handed it."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``kafka://host:port``: what a key is approved for (``trust.origin_of`` of it)."""
        return f"kafka://{self.address}"


def librdkafka_reading(text: str, security_protocol: str) -> tuple[list[Broker], str | None]:
    """The brokers librdkafka adds for ``bootstrap.servers = text``, and why it stopped early
    (None when it read the whole list): ``rd_kafka_brokers_add0`` in Python."""
    data = text.encode("utf-8").split(b"\0", 1)[0].lstrip(_C_SPACE)  # a C string ends at NUL
    brokers: list[Broker] = []
    at = 0
    while at < len(data):
        if data[at : at + 1] in (b",", b" "):
            at += 1
            continue
        comma = data.find(b",", at)
        end = len(data) if comma < 0 else comma
        name, at = data[at:end], end + 1
        protocol = security_protocol
        sep = name.find(b"://")
        if sep >= 0:
            if sep == 0:
                return brokers, "empty protocol name"
            protocol = name[:sep].upper().decode("utf-8", "replace")  # ASCII toupper
            if protocol not in PROTOCOLS:
                return brokers, f"unsupported protocol {protocol!r}"
            if protocol != security_protocol:
                return brokers, (
                    f"protocol {protocol} does not match security.protocol {security_protocol}"
                )
            name = name[sep + 3 :].split(b"/", 1)[0]
        port = DEFAULT_PORT
        last, first = name.rfind(b":"), name.find(b":")
        if last >= 0 and (first == last or name[last - 1 : last] == b"]"):
            port = _atoi(name[last + 1 :]) & 0xFFFF
            name = name[:last]
        brokers.append(
            Broker(protocol, name.decode("utf-8", "surrogateescape") or "localhost", port)
        )
    return brokers, None


_C_SPACE = b" \t\n\v\f\r"
"""C's ``isspace`` in the C locale."""


def _atoi(digits: bytes) -> int:
    """C's ``atoi`` as glibc has it (``(int) strtol(s, NULL, 10)``): leading white space, a
    sign, decimal digits up to the first other byte; out of range is clamped to a long."""
    match = re.match(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)", digits)
    if match is None:
        return 0
    value = int(match.group(1))
    return max(-(2**63), min(value, 2**63 - 1))


def parse_bootstrap(text: str, security_protocol: str, source: str) -> list[Broker]:
    """The brokers of ``text`` (``openlineage.kafka.bootstrapServers``, from ``source``), read
    as librdkafka reads them; a ConfigError for anything it would read otherwise."""
    where = f"{SETTING} (from {source})"
    entries = text.split(",")
    brokers = []
    for number, entry in enumerate(entries, 1):
        which = f"entry {number} of {where}" if len(entries) > 1 else where
        match = _ENTRY.fullmatch(entry)
        if match is None:
            raise ConfigError(
                f"{which} is not host:port (a host name, an IPv4 address or an [IPv6] address, "
                "a port of 1 to 65535, no path, no spaces, entries separated by commas): "
                "nothing was sent"
            )
        protocol = (match["protocol"] or security_protocol).upper()
        if protocol != security_protocol:
            raise ConfigError(
                f"{which} names the protocol {match['protocol']}://, but "
                f"openlineage.kafka.securityProtocol is {security_protocol}: librdkafka "
                "would drop it and every broker after it; write host:port"
            )
        host, port = match["host"], int(match["port"])
        if host.startswith("[") and not _is_ipv6(host[1:-1]):
            raise ConfigError(f"{which} has no IPv6 address between its brackets")
        if not 1 <= port <= 65535:
            raise ConfigError(f"{which} has port {port}: a port is from 1 to 65535")
        brokers.append(Broker(protocol, host, port))
    read, stopped = librdkafka_reading(text, security_protocol)
    if stopped is not None or read != brokers:  # by construction never; checked all the same
        raise ConfigError(
            f"librdkafka would read {where} otherwise than it is written: "
            "write host:port entries separated by commas"
        )
    return brokers


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True
