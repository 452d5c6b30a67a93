"""The exporter's settings, declared once.

Each setting is one :class:`Setting` in :data:`SETTINGS`: its key in the workspace's
``.workspace/settings.json``, its type, default and meaning and, for a few, the environment
variable that overrides it. Reading (:func:`load_settings`), editing (:func:`set_setting`,
:func:`unset_setting`) and listing (:func:`describe`) all work from that one declaration.

``settings.json`` travels with the workspace (it is committed and shared), so it may only
*name* a secret (``openlineage.apiKey.secretRef``); the value itself lives in the secrets store
(:mod:`openlineage_export.host.secrets`). A key that looks like it holds a secret is refused,
and no message here ever repeats a value that could be one.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from openlineage_export.errors import ConfigError, WorkspaceError

from .jsonfile import (
    parse_object,
    raw_entries,
    read_text,
    write_entries,
)

SettingType = Literal["string", "url", "integer", "number", "boolean", "path"]
"""The kinds of value a setting can hold."""

PREFIX = "openlineage."
"""Every key of this exporter starts so; the other keys belong to other extensions."""

SETTINGS_FILE = Path(".workspace") / "settings.json"
"""Where the settings live, relative to the workspace folder."""

SECRET_NAME_PATTERN = r"[A-Za-z0-9._-]{1,128}"
"""What a secret's name may be: the rule of the secrets store and of ``secretRef``."""

API_KEY_ENV = "OPENLINEAGE_API_KEY"
"""The environment variable that hands the API key over directly (never a setting)."""

KAFKA_PASSWORD_ENV = "OPENLINEAGE_KAFKA_SASL_PASSWORD"
"""The environment variable that hands the Kafka SASL password over directly (never a setting)."""


@dataclass(frozen=True)
class Setting:
    """One setting: its key in settings.json, its type, default and meaning.

    ``minimum``/``maximum`` bound numbers (inclusive) and ``pattern`` is a regular expression a
    string must match whole.
    """

    key: str
    type: SettingType
    default: object
    description: str
    env: str | None = None
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    pattern_help: str = "letters, digits, '.', '_', '-'; at most 128"

    @property
    def attribute(self) -> str:
        """The name of this setting's attribute on :class:`Settings` (snake case)."""
        tail = self.key.removeprefix(PREFIX).replace(".", "_")
        return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", tail).lower()


SETTINGS: tuple[Setting, ...] = (
    Setting("openlineage.url", "url", None,
            "Base address of the OpenLineage server; it may carry a path prefix. "
            "E.g. http://localhost:5000 for a local Marquez.",
            env="OPENLINEAGE_URL"),
    Setting("openlineage.endpoint", "string", "api/v1/lineage",
            "Path appended to openlineage.url. Marquez: api/v1/lineage; DataHub: "
            "openapi/openlineage/api/v1/lineage; Atlan: "
            "events/openlineage/<connector>/api/v1/lineage.",
            env="OPENLINEAGE_ENDPOINT"),
    Setting("openlineage.apiKey.secretRef", "string", None,
            "NAME of the entry in the secrets store that holds the API key (never the key "
            "itself); store it with: openlineage-export secrets set NAME.",
            pattern=SECRET_NAME_PATTERN),
    Setting("openlineage.namespace", "string", None,
            "Namespace of the jobs; defaults to the workspace name from graph.json.",
            env="OPENLINEAGE_NAMESPACE", pattern=r"[A-Za-z0-9:/_.@+\-]{1,1024}",
            pattern_help="letters, digits and : / _ . @ + -, as lineage servers accept them; "
                         "at most 1024"),
    Setting("openlineage.timeout", "number", 10.0,
            "Seconds to wait for one request.", minimum=0.1),
    Setting("openlineage.retry.maxTime", "number", 30.0,
            "Total seconds spent retrying one event before giving up and declaring the "
            "server unreachable (0: a single attempt).", minimum=0),
    Setting("openlineage.concurrency", "integer", 8,
            "Editor runs delivered at once (1 to 64).", minimum=1, maximum=64),
    Setting("openlineage.compression", "string", "none",
            "Compression of request bodies.", choices=("none", "gzip")),
    Setting("openlineage.tls.caBundle", "path", None,
            "CA bundle file to verify the server's certificate with (relative paths start "
            "at the workspace folder)."),
    Setting("openlineage.tls.verify", "boolean", True,
            "Verify the server's TLS certificate."),
    Setting("openlineage.allowInsecureKey", "boolean", False,
            "Allow sending the API key over plain http to a host that is not loopback."),
    Setting("openlineage.sourceRepository.url", "url", None,
            "Git repository URL used to build the sourceCodeLocation job facet from each "
            "stage's source path."),
    Setting("openlineage.sourceRepository.version", "string", None,
            "Branch, tag or commit of openlineage.sourceRepository.url."),
    Setting("openlineage.transport", "string", "http",
            "Where events go: http (openlineage.url) or kafka (openlineage.kafka.*).",
            env="OPENLINEAGE_TRANSPORT", choices=("http", "kafka")),
    Setting("openlineage.kafka.bootstrapServers", "string", None,
            "Kafka brokers to start from, host:port[,host:port...].",
            env="OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS",
            pattern=r"[^\s,]+:\d{1,5}(,[^\s,]+:\d{1,5})*",
            pattern_help="host:port, several separated by commas, no spaces"),
    Setting("openlineage.kafka.topic", "string", None,
            "Kafka topic the events are produced to.",
            env="OPENLINEAGE_KAFKA_TOPIC", pattern=r"[A-Za-z0-9._-]{1,249}",
            pattern_help="letters, digits, '.', '_', '-'; at most 249"),
    Setting("openlineage.kafka.clientId", "string", "openlineage-export",
            "Client id the producer gives the brokers (for their logs and quotas).",
            pattern=r"[A-Za-z0-9._-]{1,249}",
            pattern_help="letters, digits, '.', '_', '-'; at most 249"),
    Setting("openlineage.kafka.securityProtocol", "string", "PLAINTEXT",
            "How to talk to the brokers; SSL verifies them with openlineage.tls.caBundle and "
            "openlineage.tls.verify.",
            choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")),
    Setting("openlineage.kafka.sasl.mechanism", "string", "PLAIN",
            "SASL mechanism with SASL_SSL or SASL_PLAINTEXT.",
            choices=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")),
    Setting("openlineage.kafka.sasl.username", "string", None,
            "SASL username with SASL_SSL or SASL_PLAINTEXT."),
    Setting("openlineage.kafka.sasl.password.secretRef", "string", None,
            "NAME of the entry in the secrets store that holds the SASL password (never the "
            "password itself); store it with: openlineage-export secrets set NAME.",
            pattern=SECRET_NAME_PATTERN),
    Setting("openlineage.kafka.compression", "string", "none",
            "Compression of the message batches.",
            choices=("none", "gzip", "snappy", "lz4", "zstd")),
)
"""Every setting of the exporter, in the order ``settings list`` shows them."""

_BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}

_EXPECTED: dict[str, str] = {
    "string": "a string",
    "url": "an http:// or https:// URL",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "path": "a file path (a string)",
}

# Lower-cased endings of a key segment that would hold a credential itself.
_SECRET_ENDINGS = ("apikey", "api_key", "token", "password", "passwd", "secret")
_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})


@dataclass(frozen=True)
class Settings:
    """The settings in force, resolved: defaults, then settings.json, then the environment.

    ``namespace`` is None when unset: the caller falls back to the workspace name from
    graph.json. ``tls_ca_bundle`` is an absolute path to an existing file, or None.
    """

    url: str | None
    endpoint: str
    api_key_secret_ref: str | None
    namespace: str | None
    timeout: float
    retry_max_time: float
    concurrency: int
    compression: str
    tls_ca_bundle: Path | None
    tls_verify: bool
    allow_insecure_key: bool
    source_repository_url: str | None
    source_repository_version: str | None
    transport: str
    kafka_bootstrap_servers: str | None
    kafka_topic: str | None
    kafka_client_id: str
    kafka_security_protocol: str
    kafka_sasl_mechanism: str
    kafka_sasl_username: str | None
    kafka_sasl_password_secret_ref: str | None
    kafka_compression: str

    @classmethod
    def from_values(cls, values: Mapping[str, object], *, base: Path | None = None) -> Settings:
        """Build settings from ``{key: value}`` as settings.json would hold them.

        Missing keys (and None) take their default; every value is checked as
        :func:`load_settings` checks it; relative paths start at ``base`` (default: the
        current folder).
        """
        origin = Path.cwd() if base is None else base
        checked = {key: _check(_declared(key, None), value, key, origin)
                   for key, value in values.items()}
        return cls._build(checked)

    @classmethod
    def _build(cls, checked: Mapping[str, object]) -> Settings:
        kwargs: dict[str, Any] = {}
        for s in SETTINGS:
            value = checked.get(s.key)
            kwargs[s.attribute] = s.default if value is None else value
        return cls(**kwargs)

    @property
    def events_url(self) -> str | None:
        """The address events are posted to: ``url`` and ``endpoint`` joined by one slash."""
        if self.url is None:
            return None
        return self.url.rstrip("/") + "/" + self.endpoint.lstrip("/")


def settings_file(workspace: Path) -> Path:
    """The settings file of ``workspace``."""
    return workspace / SETTINGS_FILE


def load_settings(workspace: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """Read, check and resolve the settings of ``workspace``.

    A missing settings.json means every default. When ``environ`` is given (the CLI passes
    ``os.environ``), the variables declared in :data:`SETTINGS` override the file; empty ones
    count as unset. A JSON ``null`` also counts as unset. Keys of other extensions are ignored.

    Raises WorkspaceError when the workspace folder does not exist, ConfigError for any value,
    key or file we cannot use.
    """
    root = _workspace(workspace)
    file = settings_file(root)
    raw = parse_object(read_text(file), file)
    mine = [key for key in raw if key.startswith(PREFIX)]
    # Secret-looking keys first: they are the most urgent thing to tell.
    for key in mine:
        if key not in _BY_KEY and looks_like_secret_key(key):
            raise _secret_key_error(key, str(file))
    checked = {key: _check(_declared(key, str(file)), raw[key], f"{key} in {file}", root)
               for key in mine}
    for setting in SETTINGS:
        text = environ.get(setting.env) if environ is not None and setting.env else None
        if text:
            subject = f"the environment variable {setting.env} ({setting.key})"
            checked[setting.key] = _check(setting, text, subject, root)
    return Settings._build(checked)


def api_key_from_env(environ: Mapping[str, str]) -> str | None:
    """The API key handed over in ``OPENLINEAGE_API_KEY``, or None when unset or empty."""
    return environ.get(API_KEY_ENV) or None


def looks_like_secret_key(key: str) -> bool:
    """Whether an ``openlineage.*`` key looks like it would hold a credential itself."""
    if not key.startswith(PREFIX) or key.lower().endswith("secretref"):
        return False
    segments = key.removeprefix(PREFIX).lower().split(".")
    return any(segment.endswith(_SECRET_ENDINGS) for segment in segments)


def read_raw(workspace: Path) -> dict[str, object]:
    """The settings.json object of ``workspace`` as it is, unchecked ({} when missing)."""
    file = settings_file(_workspace(workspace))
    return parse_object(read_text(file), file)


def set_setting(workspace: Path, key: str, value_text: str) -> object:
    """Store one setting, given as text, in settings.json and return the value stored.

    ``value_text`` is parsed by the key's type (booleans: true/false, yes/no, 1/0, on/off) and
    checked as :func:`load_settings` checks it. Every other key keeps its place and its text.
    """
    root = _workspace(workspace)
    setting = _declared(key, None)
    # What the user wrote is stored (a relative path stays relative, 30 stays 30).
    value = _from_text(setting, value_text)
    _check(setting, value, key, root)
    file = settings_file(root)
    entries = raw_entries(file)
    raw_key = entries[key][0] if key in entries else json.dumps(key, ensure_ascii=False)
    entries[key] = (raw_key, json.dumps(value, ensure_ascii=False))
    write_entries(file, entries)
    return value


def unset_setting(workspace: Path, key: str) -> bool:
    """Remove ``key`` from settings.json; True if it was there.

    Any ``openlineage.*`` key present in the file can be removed, so that a misspelled or a
    secret-holding key can be got rid of. Keys of other extensions are refused.
    """
    root = _workspace(workspace)
    if not key.startswith(PREFIX):
        raise ConfigError(f"'{key}' is not an openlineage.* setting; keys of other extensions "
                          "are left alone")
    file = settings_file(root)
    entries = raw_entries(file)
    if key not in entries:
        if key in _BY_KEY or looks_like_secret_key(key):
            return False
        raise _unknown_key_error(key, str(file))
    del entries[key]
    write_entries(file, entries)
    return True


def describe(workspace: Path | None = None,
             environ: Mapping[str, str] | None = None) -> list[dict[str, object]]:
    """One row per setting for ``settings list``.

    Each row has ``key``, ``type``, ``default``, ``description``, ``env`` and ``choices``, plus
    ``value`` and ``source`` ("default", "settings.json" or "environment (VAR)"): the value in
    force, unchecked, given the workspace and environment (defaults when not given).
    """
    raw = read_raw(workspace) if workspace is not None else {}
    rows: list[dict[str, object]] = []
    for s in SETTINGS:
        value, source = s.default, "default"
        if s.key in raw and raw[s.key] is not None:
            value, source = raw[s.key], "settings.json"
        if environ is not None and s.env and environ.get(s.env):
            value, source = environ[s.env], f"environment ({s.env})"
        rows.append({"key": s.key, "type": s.type, "default": s.default,
                     "description": s.description, "env": s.env, "choices": s.choices,
                     "value": value, "source": source})
    return rows


def _workspace(workspace: Path) -> Path:
    if not workspace.exists():
        raise WorkspaceError(f"the workspace folder {workspace} does not exist")
    if not workspace.is_dir():
        raise WorkspaceError(f"the workspace {workspace} is not a folder")
    return workspace


def _declared(key: str, where: str | None) -> Setting:
    setting = _BY_KEY.get(key)
    if setting is not None:
        return setting
    if looks_like_secret_key(key):
        raise _secret_key_error(key, where)
    raise _unknown_key_error(key, where)


def _unknown_key_error(key: str, where: str | None) -> ConfigError:
    known = {s.key.lower(): s.key for s in SETTINGS}
    close = difflib.get_close_matches(key.lower(), list(known), n=1, cutoff=0.6)
    hint = f"; did you mean '{known[close[0]]}'?" if close else ""
    return ConfigError(f"{_at(where)}unknown setting '{key}'{hint} "
                       "(openlineage-export settings list shows them all)")


def _secret_key_error(key: str, where: str | None) -> ConfigError:
    # Never the value: the point of this error is that it may be a real credential.
    remove = f"Remove it (openlineage-export settings unset {key}), store" if where else "Store"
    ref = ("openlineage.kafka.sasl.password.secretRef" if key.startswith(PREFIX + "kafka.")
           else "openlineage.apiKey.secretRef")
    return ConfigError(
        f"{_at(where)}'{key}' looks like it holds a secret. Keys never go in settings (they "
        f"travel with the workspace). {remove} the key with `openlineage-export secrets set "
        f"NAME` and set {ref} to NAME."
    )


def _at(where: str | None) -> str:
    return f"{where}: " if where else ""


def _from_text(setting: Setting, text: str) -> object:
    """Parse command-line text by the setting's type; checking comes after."""
    t = setting.type
    if t == "boolean":
        word = text.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ConfigError(f"{setting.key} must be true or false (also yes/no, 1/0, on/off)")
    if t == "integer":
        if re.fullmatch(r"\s*[+-]?\d+\s*", text):
            return int(text)
        raise ConfigError(f"{setting.key} must be an integer, e.g. {setting.default}")
    if t == "number":
        if re.fullmatch(r"\s*[+-]?\d+\s*", text):
            return int(text)
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{setting.key} must be a number, e.g. {setting.default}") from None
    return text


def _check(setting: Setting, value: object, subject: str, base: Path) -> object:
    """``value`` as its Python type, or ConfigError telling what ``subject`` must be.

    Messages name the type a value has, never the value: it could be a misplaced credential.
    """
    if value is None:
        return None
    wrong = ConfigError(f"{subject} must be {_EXPECTED[setting.type]}, not {_kind(value)}")
    if setting.type == "boolean":
        if not isinstance(value, bool):
            raise wrong
        return value
    if setting.type in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong
        if setting.type == "integer" and not isinstance(value, int):
            raise wrong
        return _check_bounds(setting, value, subject)
    if not isinstance(value, str):
        raise wrong
    if not value.strip():
        raise ConfigError(f"{subject} must not be empty")
    if setting.choices is not None and value not in setting.choices:
        raise ConfigError(f"{subject} must be one of: {', '.join(setting.choices)}")
    if setting.pattern is not None and not re.fullmatch(setting.pattern, value):
        raise ConfigError(f"{subject} must match {setting.pattern} ({setting.pattern_help})")
    if setting.type == "url":
        _check_url(value, subject)
    if setting.type == "path":
        path = Path(value).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise ConfigError(f"{subject}: no file at {path}")
        return path
    return value


def _check_bounds(setting: Setting, value: float, subject: str) -> float:
    if not math.isfinite(value):
        raise ConfigError(f"{subject} must be a finite number")
    low, high = setting.minimum, setting.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            bounds = f"from {low:g} to {high:g}"
        else:
            bounds = f"at least {low:g}" if low is not None else f"at most {high:g}"
        raise ConfigError(f"{subject} must be {bounds}")
    return float(value) if setting.type == "number" else value


def _check_url(value: str, subject: str) -> None:
    if any(c.isspace() or not c.isprintable() for c in value):
        raise ConfigError(f"{subject} must not contain spaces or control characters")
    try:
        parts = urlsplit(value)
        host, _ = parts.hostname, parts.port
    except ValueError:
        raise ConfigError(f"{subject} is not a valid URL (bad host or port)") from None
    if parts.scheme not in ("http", "https") or not value.lower().startswith(parts.scheme + "://"):
        raise ConfigError(f"{subject} must start with http:// or https://")
    if not host:
        raise ConfigError(f"{subject} has no host")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"{subject} carries credentials (user or password before '@'). Keys never go in "
            "settings: store the key with `openlineage-export secrets set NAME` and set "
            "openlineage.apiKey.secretRef to NAME."
        )
    if parts.query or parts.fragment:
        raise ConfigError(f"{subject} must not carry a query (?...) or fragment (#...); "
                          "an API key goes in the secrets store, not in the address")


_KINDS = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
          (list, "a list"), (dict, "an object"), (type(None), "null"))


def _kind(value: object) -> str:
    return next((name for cls, name in _KINDS if isinstance(value, cls)), type(value).__name__)
