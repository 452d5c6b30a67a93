"""The ``kafka`` destination's settings and config: which brokers and topic, how to log in,
how patiently; every rule checked and the SASL password resolved before anything is produced.
The destination itself is ``kafka.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from ... import DISTRIBUTION
from ...errors import ConfigError
from ...guards.keys import KeySettings
from ...guards.secrecy import is_loopback, resolve_secret
from ...guards.trust import check_key_destination
from ...host.setting_row import SettingsGroup, setting
from ..destination import DeliverySettings, Opening
from .brokers import PROTOCOLS, Broker, parse_bootstrap

SECURITY_PROTOCOLS = PROTOCOLS
"""How the producer talks to the brokers (Kafka's ``security.protocol``)."""
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
"""Username/password SASL mechanisms; the password comes from the secrets store."""
COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
"""Codecs for message batches (Kafka's ``compression.type``)."""

IN_FLIGHT = 2
"""Produce requests in flight to one broker: librdkafka's idempotent producer at three or more
spends 1.5 to 2.5 times the CPU per message, nearly all in its broker thread
(bench/kafka_producer.py, bench/results/2026-12-05-kafka-producer.md)."""

LINGER_MS = 2
"""Milliseconds a message waits for others to share its batch (librdkafka's default is 5). A
run is delivered once every one of its messages is acknowledged, so each run waits this long at
least; whole runs are produced at once, so batches still fill. Measured (2,000 and 10,000 runs,
loopback broker): 2 ms sent 20 to 27 % more events per second than 5 ms at the same CPU per
event; 1 ms no faster than 2, at up to 15 % more CPU."""

PASSWORD_ENV = "OPENLINEAGE_KAFKA_SASL_PASSWORD"
"""The environment variable that hands the SASL password over directly (never a setting)."""

_NAME_PATTERN = r"[A-Za-z0-9._-]{1,249}"
_NAME_HELP = "letters, digits, '.', '_', '-'; at most 249"


@dataclass(frozen=True)
class KafkaSettings(SettingsGroup):
    """Where and how the ``kafka`` destination produces."""

    title: ClassVar[str] = "kafka destination (openlineage.transport = kafka)"

    bootstrap_servers: str | None = setting(
        "openlineage.kafka.bootstrapServers",
        "string",
        None,
        "Kafka brokers to start from, host:port[,host:port...].",
        env="OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS",
        ecosystem="transport.config.bootstrap.servers",
        pattern=r"[^\s,]+:\d{1,5}(,[^\s,]+:\d{1,5})*",
        pattern_help="host:port, several separated by commas, no spaces",
        ascii=True,
    )
    topic: str | None = setting(
        "openlineage.kafka.topic",
        "string",
        None,
        "Kafka topic the events are produced to.",
        env="OPENLINEAGE_KAFKA_TOPIC",
        pattern=_NAME_PATTERN,
        pattern_help=_NAME_HELP,
        ecosystem="transport.topic",
    )
    client_id: str = setting(
        "openlineage.kafka.clientId",
        "string",
        DISTRIBUTION,
        "Client id the producer gives the brokers (for their logs and quotas).",
        pattern=_NAME_PATTERN,
        pattern_help=_NAME_HELP,
        ecosystem="transport.config.client.id",
    )
    security_protocol: str = setting(
        "openlineage.kafka.securityProtocol",
        "string",
        "PLAINTEXT",
        "How to talk to the brokers; SSL verifies them with openlineage.tls.caBundle and "
        "openlineage.tls.verify.",
        choices=SECURITY_PROTOCOLS,
    )
    sasl_mechanism: str = setting(
        "openlineage.kafka.sasl.mechanism",
        "string",
        "PLAIN",
        "SASL mechanism with SASL_SSL or SASL_PLAINTEXT.",
        choices=SASL_MECHANISMS,
    )
    sasl_username: str | None = setting(
        "openlineage.kafka.sasl.username",
        "string",
        None,
        "SASL username with SASL_SSL or SASL_PLAINTEXT.",
    )
    sasl_password_secret_ref: str | None = setting(
        "openlineage.kafka.sasl.password.secretRef",
        "string",
        None,
        "NAME of the entry in the secrets store that holds the SASL password (never the "
        f"password itself); store it with: {DISTRIBUTION} secrets set NAME.",
        pattern=r"[A-Za-z0-9._-]{1,128}",
    )
    compression: str = setting(
        "openlineage.kafka.compression",
        "string",
        "none",
        "Compression of the message batches.",
        choices=COMPRESSIONS,
    )


@dataclass(frozen=True)
class KafkaConfig:
    """Where and how to produce: the broker list, the topic, security and timeouts.

    Built from the settings (``openlineage.kafka.*``, ``openlineage.tls.*``,
    ``openlineage.timeout``, ``openlineage.retry.maxTime``); checked on construction, with
    messages that name those settings.
    """

    bootstrap_servers: str
    topic: str
    client_id: str = DISTRIBUTION
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = "PLAIN"
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    compression: str = "none"
    ca_location: str | None = None
    """CA bundle to verify the brokers' certificates (SSL and SASL_SSL); None: the system's."""
    verify_certificates: bool = True
    request_timeout: float = 10.0
    """Seconds to wait for one produce request."""
    delivery_timeout: float = 30.0
    """Seconds from producing a message until librdkafka gives up on it (retries included)."""
    concurrency: int = 32
    """How many runs are produced at once."""
    allow_insecure_password: bool = False
    """Allow a SASL PLAIN password in clear text (SASL_PLAINTEXT) to a host not on loopback."""

    @classmethod
    def from_settings(cls, opening: Opening) -> KafkaConfig:
        """The config the settings give; the password from the environment or the store."""
        kafka = opening.settings.of(KafkaSettings)
        delivery = opening.settings.of(DeliverySettings)
        keys = opening.settings.of(KeySettings)
        if not kafka.bootstrap_servers or not kafka.topic:
            raise ConfigError(
                "openlineage.transport is kafka: set openlineage.kafka.bootstrapServers and "
                "openlineage.kafka.topic (or OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS and "
                "OPENLINEAGE_KAFKA_TOPIC), or use --dry-run"
            )
        password = resolve_secret(
            opening.environ,
            kafka.sasl_password_secret_ref,
            PASSWORD_ENV,
            store=opening.secrets,
            setting="openlineage.kafka.sasl.password.secretRef",
        )
        source = opening.settings.source("openlineage.kafka.bootstrapServers")
        brokers = parse_bootstrap(
            kafka.bootstrap_servers,
            kafka.security_protocol,
            "--url" if source == "given" else source,
        )
        if password is not None:
            check_key_destination(
                password,
                [broker.url for broker in brokers],
                opening.settings,
                opening.secrets,
                setting="openlineage.kafka.bootstrapServers",
                what="Kafka password",
            )
        return cls(
            kafka.bootstrap_servers,
            kafka.topic,
            client_id=kafka.client_id,
            security_protocol=kafka.security_protocol,
            sasl_mechanism=kafka.sasl_mechanism,
            sasl_username=kafka.sasl_username,
            sasl_password=password.value if password else None,
            compression=kafka.compression,
            ca_location=str(keys.tls_ca_bundle) if keys.tls_ca_bundle else None,
            verify_certificates=keys.tls_verify,
            request_timeout=delivery.timeout,
            delivery_timeout=delivery.retry_max_time or delivery.timeout,
            concurrency=delivery.concurrency,
            allow_insecure_password=keys.allow_insecure_key,
        )

    def __post_init__(self) -> None:
        if not self.bootstrap_servers.strip():
            raise ConfigError("openlineage.kafka.bootstrapServers is empty")
        if not self.topic.strip():
            raise ConfigError("openlineage.kafka.topic is empty")
        for value, allowed, key in (
            (self.security_protocol, SECURITY_PROTOCOLS, "openlineage.kafka.securityProtocol"),
            (self.sasl_mechanism, SASL_MECHANISMS, "openlineage.kafka.sasl.mechanism"),
            (self.compression, COMPRESSIONS, "openlineage.kafka.compression"),
        ):
            if value not in allowed:
                raise ConfigError(f"{key} must be one of: {', '.join(allowed)}")
        self.brokers  # noqa: B018 - refused now, not when the producer is made
        if self.delivery_timeout <= 0 or self.request_timeout <= 0:
            raise ConfigError("the Kafka timeouts must be more than 0 seconds")
        if self.uses_sasl:
            if not self.sasl_username or not self.sasl_password:
                raise ConfigError(
                    f"openlineage.kafka.securityProtocol is {self.security_protocol}: set "
                    "openlineage.kafka.sasl.username, store the password with "
                    f"'{DISTRIBUTION} secrets set NAME' and set "
                    "openlineage.kafka.sasl.password.secretRef to NAME"
                )
            if (
                self.security_protocol == "SASL_PLAINTEXT"
                and self.sasl_mechanism == "PLAIN"
                and not self.allow_insecure_password
                and not all(is_loopback(f"kafka://{server}") for server in self.servers)
            ):
                raise ConfigError(
                    "refusing to send the Kafka password in clear text (SASL PLAIN over "
                    "SASL_PLAINTEXT) to a broker that is not on this machine: use SASL_SSL or a "
                    "SCRAM mechanism, or set OPENLINEAGE_ALLOW_INSECURE_KEY=true if this "
                    "network is trusted"
                )
        elif self.sasl_username or self.sasl_password:
            raise ConfigError(
                f"a Kafka SASL username or password is set but "
                f"openlineage.kafka.securityProtocol is {self.security_protocol}: set it to "
                "SASL_SSL (or SASL_PLAINTEXT), or unset the SASL settings"
            )

    @cached_property
    def brokers(self) -> list[Broker]:
        """The bootstrap brokers as librdkafka reads them (``kafka_brokers.py``)."""
        return parse_bootstrap(self.bootstrap_servers, self.security_protocol, "the config")

    @property
    def servers(self) -> list[str]:
        """The bootstrap brokers, ``host:port`` each: what librdkafka is handed."""
        return [broker.address for broker in self.brokers]

    @property
    def uses_sasl(self) -> bool:
        """Whether the brokers are logged in to with a username and password."""
        return self.security_protocol.startswith("SASL_")

    @property
    def name(self) -> str:
        """The destination's identity: ``kafka://<bootstrap servers>/<topic>``."""
        return f"kafka://{','.join(self.servers)}/{self.topic}"

    def producer_config(self) -> dict[str, Any]:
        """librdkafka's configuration (holds the password: never log or show it)."""
        config: dict[str, Any] = {
            "bootstrap.servers": ",".join(self.servers),
            "client.id": self.client_id,
            "enable.idempotence": True,
            "acks": "all",
            # Two requests in flight to a broker, not librdkafka's five: the same guarantees
            # (idempotent, in order) at about 4 µs per message instead of 6 to 12 (IN_FLIGHT).
            "max.in.flight.requests.per.connection": IN_FLIGHT,
            "linger.ms": LINGER_MS,
            "compression.type": self.compression,
            "message.timeout.ms": round(self.delivery_timeout * 1000),
            "request.timeout.ms": round(min(self.request_timeout, self.delivery_timeout) * 1000),
            # The partitioner of Kafka's Java clients: a key lands on the partition a Java
            # producer would choose for it.
            "partitioner": "murmur2_random",
            "security.protocol": self.security_protocol,
        }
        if self.uses_sasl:
            config.update(
                {
                    "sasl.mechanism": self.sasl_mechanism,
                    "sasl.username": self.sasl_username,
                    "sasl.password": self.sasl_password,
                }
            )
        if self.security_protocol in ("SSL", "SASL_SSL"):
            config["enable.ssl.certificate.verification"] = self.verify_certificates
            if self.ca_location:
                config["ssl.ca.location"] = self.ca_location
        return config
