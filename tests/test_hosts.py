"""A URL's host as the client reads it (guards/addresses.py), and the origins keys are approved for
(trust.origin_of): every spelling of one host compares equal, no two hosts do.

The spellings are drawn knowing which host they spell; where a real reader exists it is asked
too: libcurl connects to the address a spelling names (a listener on that loopback address),
and the system's resolver (``getaddrinfo``, what librdkafka calls) reads the same numbers.
"""

from __future__ import annotations

import ipaddress
import socket

import pycurl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from openlineage_export.deliver.registry import approvable
from openlineage_export.errors import ConfigError
from openlineage_export.guards.addresses import canonical_host
from openlineage_export.guards.secrecy import is_loopback
from openlineage_export.guards.trust import approvable_origin, origin_of

FUZZ = settings(max_examples=200, deadline=None, database=None)


@st.composite
def ipv4_spelling(
    draw: st.DrawFn, address: ipaddress.IPv4Address, trailing_dot: bool = True, percent: bool = True
) -> str:
    """``address`` as inet_aton and libcurl read one: 1 to 4 parts (the last holding the rest),
    each decimal, octal (leading 0) or hex (0x, either case, leading zeros), maybe a trailing
    dot and percent-encoding."""
    value = int(address)
    count = draw(st.integers(1, 4))
    octets = list(address.packed)
    parts = [*octets[: count - 1], int.from_bytes(bytes(octets[count - 1 :]), "big")]
    assert sum(p << (8 * (3 - i)) for i, p in enumerate(parts[:-1])) + parts[-1] == value

    def spell(number: int) -> str:
        how = draw(st.sampled_from(["dec", "oct", "hex"]))
        if how == "dec":
            return str(number)
        if how == "oct":
            return "0" * draw(st.integers(1, 3)) + (f"{number:o}" if number else "")
        digits = f"{number:x}"
        digits = "".join(c.upper() if draw(st.booleans()) else c for c in digits)
        return draw(st.sampled_from(["0x", "0X"])) + "0" * draw(st.integers(0, 3)) + digits

    host = ".".join(spell(part) for part in parts)
    if trailing_dot and draw(st.booleans()):
        host += "."
    if percent:
        host = "".join(
            f"%{ord(c):02{draw(st.sampled_from(['x', 'X']))}}"
            if draw(st.integers(0, 5)) == 0
            else c
            for c in host
        )
    return host


def ipv6_spelling(address: ipaddress.IPv6Address, how: str) -> str:
    if how == "exploded":
        return address.exploded
    if how == "upper":
        return address.compressed.upper()
    return address.compressed


label = st.from_regex(r"[a-z](?:[a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
name = (
    st.lists(label, min_size=1, max_size=4).map(".".join).filter(lambda n: canonical_host(n) == n)
)  # names only: a numeric label set is an address


@st.composite
def name_spelling(draw: st.DrawFn, host: str) -> str:
    spelled = "".join(c.upper() if draw(st.booleans()) else c for c in host)
    spelled = "".join(f"%{ord(c):02x}" if draw(st.integers(0, 6)) == 0 else c for c in spelled)
    return spelled + ("." if draw(st.booleans()) else "")


def url(scheme: str, host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + (f":{port}" if port is not None else "") + "/api/v1/lineage"


scheme = st.sampled_from(["http", "https", "HTTP", "Https"])
port = st.one_of(st.none(), st.integers(1, 65535))


def expected(scheme: str, host: str, port: int | None) -> str:
    lower = scheme.lower()
    default = {"http": 80, "https": 443}[lower]
    return f"{lower}://{host}" + ("" if port in (None, default) else f":{port}")


@FUZZ
@given(data=st.data(), address=st.ip_addresses(v=4), scheme=scheme, port=port)
def test_every_spelling_of_an_ipv4_address_is_one_origin(
    data: st.DataObject, address: ipaddress.IPv4Address, scheme: str, port: int | None
) -> None:
    spelled = data.draw(ipv4_spelling(address))
    assert origin_of(url(scheme, spelled, port)) == expected(scheme, str(address), port)
    assert is_loopback(url(scheme, spelled, port)) == address.is_loopback


@FUZZ
@given(
    address=st.ip_addresses(v=6),
    how=st.sampled_from(["exploded", "upper", "compressed"]),
    scheme=scheme,
    port=port,
)
def test_every_spelling_of_an_ipv6_address_is_one_origin(
    address: ipaddress.IPv6Address, how: str, scheme: str, port: int | None
) -> None:
    mapped = address.ipv4_mapped
    host = str(mapped) if mapped is not None else f"[{address.compressed}]"
    assert origin_of(url(scheme, ipv6_spelling(address, how), port)) == expected(scheme, host, port)


@FUZZ
@given(v4=st.ip_addresses(v=4), how=st.sampled_from(["dotted", "hex"]))
def test_an_ipv6_address_that_maps_an_ipv4_one_is_that_address(
    v4: ipaddress.IPv4Address, how: str
) -> None:
    high, low = divmod(int(v4), 1 << 16)
    spelled = f"::ffff:{v4}" if how == "dotted" else f"::FFFF:{high:x}:{low:x}"
    assert origin_of(f"http://[{spelled}]:5000") == f"http://{v4}:5000"
    assert is_loopback(f"http://[{spelled}]:5000") == v4.is_loopback


@FUZZ
@given(data=st.data(), host=name, scheme=scheme, port=port)
def test_every_spelling_of_a_name_is_one_origin(
    data: st.DataObject, host: str, scheme: str, port: int | None
) -> None:
    spelled = data.draw(name_spelling(host))
    assert origin_of(url(scheme, spelled, port)) == expected(scheme, host, port)


host_spelled = st.one_of(
    st.ip_addresses(v=4).flatmap(lambda a: st.tuples(st.just(str(a)), ipv4_spelling(a))),
    name.flatmap(lambda n: st.tuples(st.just(n), name_spelling(n))),
    st.ip_addresses(v=6)
    .filter(lambda a: a.ipv4_mapped is None)
    .map(lambda a: (f"[{a.compressed}]", a.exploded)),
)


@FUZZ
@given(one=host_spelled, other=host_spelled, port=port)
def test_two_hosts_are_never_one_origin(
    one: tuple[str, str], other: tuple[str, str], port: int | None
) -> None:
    assume(one[0] != other[0])
    assert origin_of(url("https", one[1], port)) != origin_of(url("https", other[1], port))


@FUZZ
@given(
    text=st.text(st.sampled_from("ab0x7f19.:/[]%@#?\\ -_AB"), max_size=30),
    scheme=st.sampled_from(["http", "https", "kafka"]),
)
def test_an_origin_is_its_own_origin_or_no_url(text: str, scheme: str) -> None:
    """Whatever is written: not a URL (one line), or an origin that is its own origin, so that
    an approval kept as written compares as it did when it was given."""
    try:
        origin = origin_of(f"{scheme}://{text}")
    except ConfigError as refused:
        assert "\n" not in str(refused)
        return
    assert origin_of(origin) == origin
    assert origin.startswith(f"{scheme}://")


@FUZZ
@given(data=st.data(), address=st.ip_addresses(v=4))
def test_the_systems_resolver_reads_the_numbers_as_we_do(
    data: st.DataObject, address: ipaddress.IPv4Address
) -> None:
    """librdkafka hands the host to getaddrinfo: the numeric forms (no trailing dot, no
    percent-encoding: the broker list refuses those) are the address we compare."""
    spelled = data.draw(ipv4_spelling(address, trailing_dot=False, percent=False))
    found = socket.getaddrinfo(spelled, None, flags=socket.AI_NUMERICHOST)[0][4][0]
    assert found == canonical_host(spelled) == str(address)


@pytest.mark.parametrize(
    "host", ["08.1.1.1", "256.0.0.1", "0x.1", "1.2.3.4.5", "4294967296", "1.2.65536", "00x7f.1"]
)
def test_what_is_no_address_is_a_name_for_us_and_the_resolver(host: str) -> None:
    assert canonical_host(host) == host
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)


def connected_to(spelled_url: str) -> str:
    """The address libcurl connects to for ``spelled_url`` (connection only, nothing sent)."""
    curl = pycurl.Curl()
    try:
        curl.setopt(pycurl.URL, spelled_url)
        curl.setopt(pycurl.CONNECT_ONLY, 1)
        curl.setopt(pycurl.PROXY, "")
        curl.setopt(pycurl.TIMEOUT, 10)
        curl.perform()
        return str(curl.getinfo(pycurl.PRIMARY_IP))
    finally:
        curl.close()


@settings(max_examples=40, deadline=None, database=None)
@given(data=st.data(), last=st.integers(1, 254), middle=st.integers(0, 255))
def test_libcurl_connects_to_the_address_the_origin_names(
    data: st.DataObject, last: int, middle: int
) -> None:
    """A listener on a loopback address; a spelling of it: libcurl connects there, and the
    origin names it, and is loopback."""
    address = ipaddress.IPv4Address(f"127.{middle}.0.{last}")
    with socket.create_server((str(address), 0)) as listener:
        listening = listener.getsockname()[1]
        spelled = url("http", data.draw(ipv4_spelling(address)), listening)
        assert connected_to(spelled) == str(address)
    assert origin_of(spelled) == f"http://{address}:{listening}"
    assert is_loopback(spelled)


@pytest.mark.parametrize(
    "text",
    [
        "http://a..b",
        "http://%00x",
        "http://a%2fb",
        "http://%zz",
        "http://[::1%25]",
        "http://127.0.0.1..",
        "http://%c3%28",
    ],
)
def test_what_no_client_reads_as_a_host_is_no_url(text: str) -> None:
    with pytest.raises(ConfigError, match="^not a URL"):
        origin_of(text)


def test_approvals_are_given_and_compared_in_one_spelling() -> None:
    assert approvable_origin("HTTP://0x7F.1.:80/x", approvable()) == "http://127.0.0.1"
    assert approvable_origin("kafka://0177.0.0.1:9094", approvable()) == "kafka://127.0.0.1:9094"
    assert approvable_origin("https://[::FFFF:127.0.0.1]:443", approvable()) == "https://127.0.0.1"
    # A name in another script is written xn--...; decoded to Unicode it is no origin (below).
    assert origin_of("https://xn--9ca.example") == "https://xn--9ca.example"


@pytest.mark.parametrize(
    "host",
    [
        "%E2%84%AA8s.example.com",  # U+212A KELVIN SIGN, percent-encoded: lower-cases to 'k'
        "\u212a8s.example.com",  # the same, as it is
        "b%C3%BCcher.example",
        "b\u00fccher.example",
        "%FF.example",
    ],
)
def test_a_host_that_is_not_ascii_is_no_origin(host: str) -> None:
    """Found by the fourth round's attacker B (f09): the origin was compared in Unicode's lower
    case (k8s.example.com, approved) while libcurl resolves the bytes as written: the stored key
    went to whatever the resolver gives for the other name. A name is written xn--... ."""
    with pytest.raises(ConfigError):
        origin_of(f"http://{host}:57103")
    if host.isascii():
        with pytest.raises(ValueError):
            canonical_host(host.lower())
    assert origin_of("http://xn--bcher-kva.example") == "http://xn--bcher-kva.example"
