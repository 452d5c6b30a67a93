"""The bootstrap servers as librdkafka reads them (deliver/kafka/brokers.py).

Three layers: the model of librdkafka's reading (``librdkafka_reading``) against the real
librdkafka, asked in a process of its own without a network (its debug log names each broker
it adds); our parser against the model, for any text (property-based); and the finding of
issue 30: a list the trust check read one way and librdkafka another.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_export.deliver.kafka.brokers import (
    PROTOCOLS,
    Broker,
    librdkafka_reading,
    parse_bootstrap,
)
from openlineage_export.errors import ConfigError
from openlineage_export.guards.trust import origin_of

FUZZ = settings(max_examples=300, deadline=None, database=None)

_PROBE = r"""
import json, logging, sys
from confluent_kafka import Producer

class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())

said = []
for number, (text, protocol) in enumerate(json.load(sys.stdin), 1):
    log = logging.getLogger("librdkafka")
    lines = Lines()
    log.handlers, log.propagate = [lines], False
    log.setLevel(logging.DEBUG)
    conf = {"bootstrap.servers": text, "security.protocol": protocol, "debug": "broker",
            "logger": log}
    if protocol.startswith("SASL"):
        conf.update({"sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p"})
    producer = Producer(conf)
    producer.poll(0)
    del producer
    mine = f"[rdkafka#producer-{number}] "  # a line of this producer's, not a late one
    said.append([line.split("]: ", 1)[1] for line in lines.lines if mine in line
                 and ("Added new broker" in line or "parse error" in line)])
print(json.dumps(said))
"""


def real_librdkafka(cases: list[tuple[str, str]]) -> list[list[str]]:
    """What the real librdkafka logs for each (bootstrap.servers, security.protocol): one line
    per broker it added (``proto://host:port/bootstrap: Added new broker``), and its parse
    error if any. In a network namespace of its own: the names it tries to resolve go nowhere."""
    probe = subprocess.run(
        ["unshare", "-rn", sys.executable, "-c", _PROBE],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if probe.returncode != 0 and "unshare" in probe.stderr:
        pytest.skip(f"cannot make a network namespace here: {probe.stderr.strip()}")
    assert probe.returncode == 0, probe.stderr
    said: list[list[str]] = json.loads(probe.stdout)
    return said


def as_logged(brokers: list[Broker], stopped: str | None) -> list[str]:
    """The model's reading as librdkafka logs it: each broker once (it adds a broker it has
    already once), a host with a ':' in brackets, the protocol unless PLAINTEXT."""
    lines: list[str] = []
    for broker in brokers:
        host = (
            broker.host
            if broker.host.startswith("[") or ":" not in broker.host
            else f"[{broker.host}]"
        )
        prefix = "" if broker.protocol == "PLAINTEXT" else broker.protocol.lower() + "://"
        line = f"{prefix}{host}:{broker.port}/bootstrap: Added new broker with NodeId -1"
        if line not in lines:
            lines.append(line)
    if stopped is not None:
        lines.append("parse error")
    return lines


def logged_without_errors(lines: list[str]) -> list[str]:
    """The lines as :func:`as_logged` has them: each once (librdkafka may say twice that it
    added a broker), its parse error without the details."""
    said = [("parse error" if "parse error" in line else line) for line in lines]
    return list(dict.fromkeys(said))


HAND_WRITTEN = [
    "SASL_PLAINTEXT://127.0.0.1:59094/x:1",
    "sasl_plaintext://evil:9094/a:1,good:1",
    "a:1 b:2",
    "a:1, b:2",
    " a:1",
    "a:1,,b:2",
    "[::1]:9093",
    "::1",
    "::1:9092",
    ":5",
    "h:",
    "PLAINTEXT://h:1",
    "x://h:1,b:2",
    "://h:1",
    "h:70000",
    "h:-1",
    "h:+5",
    "h: 5",
    "h:5x",
    "h:99999999999999999999",
    "h:0x10",
    "a:1/b:2",
    "h:1:2",
    "[h]:1",
    "[::1]",
    "[::1]:",
    "ssl://h:1",
    "SASL_SSL://h:1",
    "a://b://c:1",
    "h:1,SASL_SSL://k:2",
    "é:1",
    "a%20:2",
    "h:1/",
    "h/x:1",
    "h\t:1",
    "h:1\t",
    "a:1,b:2,c:3",
]

_TOKENS = [
    "a",
    "h",
    "0",
    "1",
    "9",
    "7",
    ":",
    ":",
    "/",
    "[",
    "]",
    ",",
    " ",
    ".",
    "-",
    "_",
    "x",
    "%",
    "::",
    "://",
    "SASL_PLAINTEXT://",
    "sasl_plaintext://",
    "SSL://",
    "PLAINTEXT://",
    "plain://",
    "[::1]",
    "65535",
    "65536",
    "\t",
    "é",
]


def some_lists(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def test_the_model_reads_every_list_as_the_real_librdkafka_does() -> None:
    """``librdkafka_reading`` is librdkafka's reading: the brokers it adds, in order, and
    where it stops, for the hand-written tricks and 400 lists of the tokens that matter."""
    texts = HAND_WRITTEN + some_lists(400, seed=30)
    cases = [(text, protocol) for text in texts for protocol in ("PLAINTEXT", "SASL_PLAINTEXT")]
    real = real_librdkafka(cases)
    for (text, protocol), said in zip(cases, real, strict=True):
        expected = as_logged(*librdkafka_reading(text, protocol))
        assert logged_without_errors(said) == expected, (text, protocol)


# -- our parser against the model --------------------------------------------------------------

protocol = st.sampled_from(PROTOCOLS)


@FUZZ
@given(
    text=st.lists(st.sampled_from([*_TOKENS, "SASL_SSL://", "b", "2", "\x00"]), max_size=14).map(
        "".join
    ),
    protocol=protocol,
)
def test_what_the_parser_takes_librdkafka_reads_the_same_way(text: str, protocol: str) -> None:
    """For any text: refused in one line, or exactly the brokers librdkafka adds for it, and
    the list we hand librdkafka (rebuilt) reads as the same brokers again."""
    try:
        brokers = parse_bootstrap(text, protocol, "settings.json")
    except ConfigError as refused:
        assert "\n" not in str(refused)
        return
    read, stopped = librdkafka_reading(text, protocol)
    assert stopped is None and read == brokers
    handed = ",".join(broker.address for broker in brokers)
    assert librdkafka_reading(handed, protocol) == (brokers, None)
    assert all(1 <= broker.port <= 65535 for broker in brokers)


label = st.from_regex(r"[a-z0-9_](?:[a-z0-9_-]{0,8}[a-z0-9_])?", fullmatch=True)
host = st.one_of(
    st.lists(label, min_size=1, max_size=4).map(".".join),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
)


@FUZZ
@given(
    entries=st.lists(
        st.tuples(host, st.integers(1, 65535), st.booleans(), st.booleans()), min_size=1, max_size=5
    ),
    protocol=protocol,
)
def test_every_well_formed_list_is_taken_as_written(
    entries: list[tuple[str, int, bool, bool]], protocol: str
) -> None:
    """host:port entries (a name, IPv4, [IPv6]), each maybe with its protocol in either case,
    are the brokers they name, each approved as kafka://host:port."""
    text = ",".join(
        (f"{protocol.lower() if lower else protocol}://" if prefixed else "") + f"{h}:{port}"
        for h, port, prefixed, lower in entries
    )
    brokers = parse_bootstrap(text, protocol, "settings.json")
    assert brokers == [Broker(protocol, h, port) for h, port, _, _ in entries]
    for broker, (h, port, _, _) in zip(brokers, entries, strict=True):
        assert origin_of(broker.url) == origin_of(f"kafka://{h}:{port}")
        assert origin_of(broker.url).endswith(f":{port}")


# -- the finding -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "SASL_PLAINTEXT://127.0.0.1:59094/x:1",  # librdkafka: 127.0.0.1:59094 (the path ignored)
        "SASL_PLAINTEXT://evil:9094",  # fine as such, but see below: not for SASL_SSL
        "127.0.0.1:59094 ,evil:1",
        "evil:1 good:2",
        "h:70000",
        "::1:9092",
        "[h]:1",
        "a:1,,b:2",
        "127.0.0.1.:9092",
        "h:0",
        "",
        "h",
    ],
)
def test_a_list_librdkafka_reads_otherwise_is_refused_in_one_line(text: str) -> None:
    """Issue 30 (3): ``SASL_PLAINTEXT://127.0.0.1:P/...`` was read by the trust check as the
    host ``sasl_plaintext`` (the refusal said so and advised approving kafka://sasl_plaintext,
    after which the password went to any SASL_PLAINTEXT:// host) and by librdkafka as
    127.0.0.1:P. Now a list is taken only as librdkafka reads it."""
    with pytest.raises(ConfigError) as refused:
        parse_bootstrap(text, "SASL_SSL", "settings.json")
    message = str(refused.value)
    assert (
        "\n" not in message and "openlineage.kafka.bootstrapServers (from settings.json)" in message
    )
    assert "sasl_plaintext" not in message.lower().replace("sasl_plaintext://", "")


def test_a_protocol_prefix_is_taken_only_for_the_protocol_in_force() -> None:
    assert parse_bootstrap("SASL_PLAINTEXT://127.0.0.1:59094", "SASL_PLAINTEXT", "x") == [
        Broker("SASL_PLAINTEXT", "127.0.0.1", 59094)
    ]
    with pytest.raises(
        ConfigError,
        match=r"^openlineage\.kafka\.bootstrapServers \(from x\) "
        r"names the protocol SASL_PLAINTEXT://, but openlineage\.kafka\."
        r"securityProtocol is SASL_SSL: librdkafka would drop it",
    ):
        parse_bootstrap("SASL_PLAINTEXT://127.0.0.1:59094", "SASL_SSL", "x")
    with pytest.raises(ConfigError, match=r"^entry 2 of openlineage"):
        parse_bootstrap("a:1,b:2/x", "PLAINTEXT", "x")
