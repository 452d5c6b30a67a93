"""Settings: declared once, read and checked from real settings.json files, edited in place."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as fuzz_settings
from hypothesis import strategies as st

from openlineage_export.deliver.console import ConsoleSettings
from openlineage_export.deliver.destination import DeliverySettings
from openlineage_export.deliver.file import FileSettings
from openlineage_export.deliver.http.settings import HttpSettings
from openlineage_export.deliver.kafka.config import KafkaSettings
from openlineage_export.deliver.registry import CATALOGUE, KINDS, TransportSettings
from openlineage_export.errors import ConfigError, WorkspaceError
from openlineage_export.guards.keys import KeySettings
from openlineage_export.host import setting_values, settings_file
from openlineage_export.host import settings as settings_mod
from openlineage_export.host.setting_row import Setting
from openlineage_export.host.settings import (
    EventSettings,
    Settings,
    SettingsGroup,
    read_raw,
)
from openlineage_export.translate.modes import ServerSettings

SECRET = "sk-live-4f9a1c2e7b"


class Flat:
    """Every group's values under one roof, for short assertions (``s.timeout``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._groups = [settings.of(group) for group in CATALOGUE.groups]

    def __getattr__(self, name: str) -> object:
        for group in self._groups:
            if hasattr(group, name):
                return getattr(group, name)
        raise AttributeError(name)


def load_settings(workspace: Path, environ: dict[str, str] | None = None) -> Flat:
    return Flat(settings_mod.load_settings(workspace, CATALOGUE, environ))


def set_setting(workspace: Path, key: str, text: str) -> object:
    return settings_file.set_setting(workspace, CATALOGUE, key, text)


def unset_setting(workspace: Path, key: str) -> bool:
    return settings_file.unset_setting(workspace, CATALOGUE, key)


def describe(workspace: Path, environ: dict[str, str] | None = None) -> list[dict[str, object]]:
    return settings_mod.describe(CATALOGUE, workspace, environ)


@pytest.fixture(autouse=True)
def workspace_folder(tmp_path: Path) -> None:
    """tmp_path is a workspace (a folder with .workspace/), as the settings commands require."""
    (tmp_path / ".workspace").mkdir()


def write_settings(workspace: Path, content: object | str) -> Path:
    """Write settings.json (an object as 2-space JSON, or text as given); return its path."""
    file = workspace / ".workspace" / "settings.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content, indent=2) + "\n"
    file.write_text(text, encoding="utf-8")
    return file


def settings_text(workspace: Path) -> str:
    return (workspace / ".workspace" / "settings.json").read_text(encoding="utf-8")


# --- the declaration ------------------------------------------------------------------------


def test_each_setting_is_declared_once_in_the_group_of_what_it_configures() -> None:
    groups: dict[type[SettingsGroup], list[str]] = {
        EventSettings: [
            "openlineage.namespace",
            "openlineage.sourceRepository.url",
            "openlineage.sourceRepository.version",
        ],
        ServerSettings: ["openlineage.server"],
        TransportSettings: ["openlineage.transport"],
        DeliverySettings: [
            "openlineage.timeout",
            "openlineage.retry.maxTime",
            "openlineage.concurrency",
        ],
        KeySettings: [
            "openlineage.tls.caBundle",
            "openlineage.tls.verify",
            "openlineage.allowInsecureKey",
        ],
        HttpSettings: [
            "openlineage.url",
            "openlineage.endpoint",
            "openlineage.apiKey.secretRef",
            "openlineage.compression",
            "openlineage.batch.maxEvents",
            "openlineage.batch.maxBytes",
        ],
        KafkaSettings: [
            "openlineage.kafka.bootstrapServers",
            "openlineage.kafka.topic",
            "openlineage.kafka.clientId",
            "openlineage.kafka.securityProtocol",
            "openlineage.kafka.sasl.mechanism",
            "openlineage.kafka.sasl.username",
            "openlineage.kafka.sasl.password.secretRef",
            "openlineage.kafka.compression",
        ],
        FileSettings: ["openlineage.file.path", "openlineage.file.maxBytes"],
        ConsoleSettings: ["openlineage.console.stream"],
    }
    assert list(CATALOGUE.groups) == list(groups)
    for group, keys in groups.items():
        rows = group.rows()
        assert [row.key for row in rows] == keys
        assert [row.attribute for row in rows] == [f.name for f in dataclasses.fields(group)]
        assert all(row.description.strip() for row in rows)
    keys = [row.key for row in CATALOGUE]
    assert len(keys) == len(set(keys)) == 28
    transport = CATALOGUE.get("openlineage.transport")
    assert transport is not None and transport.choices == tuple(KINDS) == (
        "http",
        "kafka",
        "file",
        "console",
    )


def test_describe_lists_every_setting_with_its_source(tmp_path: Path) -> None:
    write_settings(tmp_path, {"openlineage.timeout": 3, "openlineage.url": "http://a:1"})
    rows = {row["key"]: row for row in describe(tmp_path, {"OPENLINEAGE_URL": "http://b:2"})}
    assert list(rows) == [s.key for s in CATALOGUE]
    assert rows["openlineage.endpoint"]["source"] == "default"
    assert rows["openlineage.endpoint"]["value"] == "api/v1/lineage"
    assert (rows["openlineage.timeout"]["value"], rows["openlineage.timeout"]["source"]) == (
        3,
        "settings.json",
    )
    assert rows["openlineage.url"]["value"] == "http://b:2"
    assert rows["openlineage.url"]["source"] == "environment (OPENLINEAGE_URL)"
    assert rows["openlineage.compression"]["choices"] == ("none", "gzip")
    assert "DataHub" in str(rows["openlineage.endpoint"]["description"])


# --- reading --------------------------------------------------------------------------------


def test_no_settings_file_means_every_default(tmp_path: Path) -> None:
    settings = settings_mod.load_settings(tmp_path, CATALOGUE)
    assert settings == CATALOGUE.settings()
    assert settings.of(HttpSettings) == HttpSettings(
        url=None, endpoint="api/v1/lineage", api_key_secret_ref=None, compression="none"
    )
    assert settings.of(DeliverySettings) == DeliverySettings(
        timeout=10.0, retry_max_time=30.0, concurrency=32
    )
    assert settings.of(KeySettings) == KeySettings(
        tls_ca_bundle=None, tls_verify=True, allow_insecure_key=False
    )
    assert settings.of(EventSettings) == EventSettings(None, None, None)
    assert settings.of(TransportSettings).transport == "http"
    assert settings.of(KafkaSettings) == KafkaSettings(
        bootstrap_servers=None,
        topic=None,
        client_id="openlineage-export",
        security_protocol="PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username=None,
        sasl_password_secret_ref=None,
        compression="none",
    )
    assert settings.of(HttpSettings).events_url is None
    assert settings.source("openlineage.timeout") == "default"
    assert sorted(p.name for p in (tmp_path / ".workspace").iterdir()) == [], (
        "reading must not create anything"
    )


def test_values_from_the_file_are_typed_and_resolved(tmp_path: Path) -> None:
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    write_settings(
        tmp_path,
        {
            "openlineage.url": "https://datahub.acme.io/gms/",
            "openlineage.endpoint": "/openapi/openlineage/api/v1/lineage",
            "openlineage.apiKey.secretRef": "datahub-prod",
            "openlineage.namespace": "acme",
            "openlineage.timeout": 3,
            "openlineage.retry.maxTime": 0,
            "openlineage.concurrency": 64,
            "openlineage.compression": "gzip",
            "openlineage.tls.caBundle": "certs/ca.pem",
            "openlineage.tls.verify": False,
            "openlineage.allowInsecureKey": True,
            "openlineage.sourceRepository.url": "https://github.com/acme/analytics",
            "openlineage.sourceRepository.version": "main",
        },
    )
    s = load_settings(tmp_path)
    assert s.events_url == "https://datahub.acme.io/gms/openapi/openlineage/api/v1/lineage"
    assert (s.api_key_secret_ref, s.namespace) == ("datahub-prod", "acme")
    assert s.timeout == 3.0 and isinstance(s.timeout, float)
    assert (s.retry_max_time, s.concurrency, s.compression) == (0.0, 64, "gzip")
    assert s.tls_ca_bundle == tmp_path / "certs" / "ca.pem"
    assert (s.tls_verify, s.allow_insecure_key) == (False, True)
    assert s.source_repository_url == "https://github.com/acme/analytics"
    assert s.source_repository_version == "main"


def test_null_means_unset_and_other_extensions_keys_are_ignored(tmp_path: Path) -> None:
    write_settings(
        tmp_path,
        {
            "editor.fontSize": "huge",
            "openlineage": 3,
            "python.token": 12,
            "openlineage.timeout": None,
        },
    )
    assert load_settings(tmp_path).timeout == 10.0


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("openlineage.url", 5000, "an http:// or https:// URL, not an integer"),
        ("openlineage.endpoint", ["api"], "a string, not a list"),
        ("openlineage.apiKey.secretRef", {"name": "x"}, "a string, not an object"),
        ("openlineage.namespace", True, "a string, not a boolean"),
        ("openlineage.timeout", "10", "a number, not a string"),
        ("openlineage.retry.maxTime", False, "a number, not a boolean"),
        ("openlineage.concurrency", 8.5, "an integer, not a number"),
        ("openlineage.concurrency", True, "an integer, not a boolean"),
        ("openlineage.compression", 1, "a string, not an integer"),
        ("openlineage.tls.caBundle", 7, "a file path (a string), not an integer"),
        ("openlineage.tls.verify", "yes", "true or false, not a string"),
        ("openlineage.allowInsecureKey", 1, "true or false, not an integer"),
        ("openlineage.sourceRepository.url", [], "an http:// or https:// URL, not a list"),
        ("openlineage.sourceRepository.version", 3, "a string, not an integer"),
    ],
)
def test_a_wrong_type_names_the_key_the_expected_type_and_the_file(
    tmp_path: Path, key: str, value: object, expected: str
) -> None:
    file = write_settings(tmp_path, {"openlineage.url": "http://localhost:5000", key: value})
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    message = str(caught.value)
    assert f"{key} in {file} must be {expected}" in message


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("openlineage.url", "localhost:5000", "must start with http:// or https://"),
        ("openlineage.url", "ftp://files.acme.io", "must start with http:// or https://"),
        ("openlineage.url", "http://", "has no host"),
        ("openlineage.url", "http://host:99999", "not a valid URL"),
        ("openlineage.url", "http://a b", "spaces"),
        ("openlineage.sourceRepository.url", "git@github.com:acme/a.git", "http:// or https://"),
        ("openlineage.compression", "zip", "must be one of: none, gzip"),
        ("openlineage.concurrency", 0, "must be an integer from 1 to 64"),
        ("openlineage.concurrency", 65, "must be an integer from 1 to 64"),
        ("openlineage.timeout", 0, "must be a number from 0.1 to 900"),
        ("openlineage.retry.maxTime", -1, "must be a number from 0 to 86400"),
        ("openlineage.url", "http://host:0", "has port 0"),
        ("openlineage.namespace", "  ", "must not be empty"),
        ("openlineage.apiKey.secretRef", "my key", "must match"),
        ("openlineage.tls.caBundle", "missing.pem", "no file at"),
    ],
)
def test_a_bad_value_is_refused_with_the_reason(
    tmp_path: Path, key: str, value: object, expected: str
) -> None:
    write_settings(tmp_path, {key: value})
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as caught:
        load_settings(tmp_path)
    assert expected in str(caught.value)


NUMERIC = [row for row in CATALOGUE if row.type in ("integer", "number")]


def test_every_numeric_setting_declares_its_range() -> None:
    """One rule for every number: a row without both bounds cannot even be declared, so no
    value a library cannot take (a timeout of 1e16 s) gets past the settings."""
    assert NUMERIC and all(row.minimum is not None and row.maximum is not None for row in NUMERIC)
    with pytest.raises(TypeError, match="must declare its minimum and maximum"):
        settings_mod.setting("openlineage.x", "number", 1.0, "unbounded", minimum=0)


def _out_of_range(row: Setting) -> list[object]:
    assert row.minimum is not None and row.maximum is not None
    values: list[object] = [row.maximum + 1, row.minimum - 1, 10**400, -(10**400)]
    if row.type == "number":
        values += [1e16, 1e308, -1e308, row.maximum * 1.0001]
    return values


@pytest.mark.parametrize(
    ("key", "value"), [(row.key, value) for row in NUMERIC for value in _out_of_range(row)]
)
def test_a_number_out_of_range_is_one_line_naming_the_key_the_file_and_the_range(
    tmp_path: Path, key: str, value: object
) -> None:
    row = CATALOGUE.declared(key, None)
    file = write_settings(tmp_path, {key: value})
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    kind = "an integer" if row.type == "integer" else "a number"
    assert str(caught.value) == (
        f"{key} in {file} must be {kind} {setting_values.accepted_range(row)}"
    )


@pytest.mark.parametrize("text", ["1e16", "1e999", "nan", "-inf", "9" * 400])
def test_a_number_out_of_range_from_the_environment_names_the_variable(
    tmp_path: Path, text: str
) -> None:
    row = CATALOGUE.declared("openlineage.timeout", None)
    for source in (row, dataclasses.replace(row, env="OPENLINEAGE_TIMEOUT")):
        value = setting_values.parse_text(source, text, "the environment variable X")
        with pytest.raises(
            ConfigError,
            match=r"^the environment variable X must be a number "
            r"from 0\.1 to 900$",
        ):
            setting_values.check_value(source, value, "the environment variable X", tmp_path)


def test_the_bounds_themselves_are_taken(tmp_path: Path) -> None:
    for row in NUMERIC:
        for value in (row.minimum, row.maximum):
            write_settings(tmp_path, {row.key: int(value) if row.type == "integer" else value})
            assert getattr(load_settings(tmp_path), row.attribute) == value


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:{SECRET}@marquez.acme.io",
        f"https://{SECRET}@marquez.acme.io",
        f"https://marquez.acme.io/?api_key={SECRET}",
    ],
)
def test_a_url_carrying_a_credential_is_refused_without_repeating_it(
    tmp_path: Path, url: str
) -> None:
    write_settings(tmp_path, {"openlineage.url": url})
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    assert "openlineage.url" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_an_unknown_key_is_named_with_a_suggestion(tmp_path: Path) -> None:
    file = write_settings(tmp_path, {"openlineage.timout": 5})
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    message = str(caught.value)
    assert str(file) in message
    assert "unknown setting 'openlineage.timout'" in message
    assert "did you mean 'openlineage.timeout'?" in message


def test_a_wrongly_cased_key_is_suggested_in_its_right_case(tmp_path: Path) -> None:
    write_settings(tmp_path, {"openlineage.apikey.secretref": "prod"})
    with pytest.raises(ConfigError, match="did you mean 'openlineage.apiKey.secretRef'"):
        load_settings(tmp_path)


SECRET_KEYS = [
    "openlineage.apiKey",
    "openlineage.apiKey.value",
    "openlineage.token",
    "openlineage.password",
    "openlineage.auth.clientSecret",
    "openlineage.api_key",
]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_key_holding_a_secret_is_refused_and_its_value_never_shown(
    tmp_path: Path, key: str
) -> None:
    # Placed after a bad value: the secret is the more urgent thing to tell.
    write_settings(tmp_path, {"openlineage.timeout": "x", key: SECRET})
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    message = str(caught.value)
    assert f"'{key}' looks like it holds a secret" in message
    assert "openlineage-export secrets set NAME" in message
    assert "openlineage.apiKey.secretRef" in message
    assert SECRET not in message
    assert SECRET not in repr(caught.value)

    with pytest.raises(ConfigError) as refused:
        set_setting(tmp_path, key, SECRET)
    assert "looks like it holds a secret" in str(refused.value)
    assert SECRET not in str(refused.value)


def test_a_secret_ref_is_not_mistaken_for_a_secret(tmp_path: Path) -> None:
    write_settings(tmp_path, {"openlineage.apiKey.secretRef": "marquez-prod"})
    assert load_settings(tmp_path).api_key_secret_ref == "marquez-prod"


def test_not_json_is_refused_with_the_file_line_and_column(tmp_path: Path) -> None:
    file = write_settings(
        tmp_path, '{\n  "openlineage.url": "http://localhost:5000"\n  "x": 1\n}\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    assert str(file) in str(caught.value)
    assert "line 3, column 3" in str(caught.value)


def test_a_json_value_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    write_settings(tmp_path, '["openlineage.url"]\n')
    with pytest.raises(ConfigError, match="must hold one JSON object, not a list"):
        load_settings(tmp_path)


@pytest.mark.parametrize(
    "call",
    [
        load_settings,
        read_raw,
        describe,
        lambda p: set_setting(p, "openlineage.timeout", "1"),
        lambda p: unset_setting(p, "openlineage.timeout"),
    ],
)
def test_a_missing_workspace_is_a_workspace_error(
    tmp_path: Path, call: Callable[[Path], object]
) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        call(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()


# --- the environment ------------------------------------------------------------------------


def test_environment_variables_override_the_file(tmp_path: Path) -> None:
    write_settings(tmp_path, {"openlineage.url": "http://file:1", "openlineage.namespace": "f"})
    environ = {
        "OPENLINEAGE_URL": "http://env:2",
        "OPENLINEAGE_ENDPOINT": "v2/events",
        "OPENLINEAGE_NAMESPACE": "",
        "OPENLINEAGE_API_KEY": SECRET,
    }
    s = load_settings(tmp_path, environ)
    assert s.events_url == "http://env:2/v2/events"
    assert s.namespace == "f", "an empty variable counts as unset"
    assert SECRET not in repr(s), "the API key is not a setting"
    assert load_settings(tmp_path).url == "http://file:1", "no environ, no override"


def test_a_boolean_setting_is_read_from_its_variable_as_text(tmp_path: Path) -> None:
    """OPENLINEAGE_TLS_VERIFY=false: how an editor whose proxy is not strict about TLS
    (http.proxyStrictSSL) tells one export, without changing the workspace's settings."""
    write_settings(tmp_path, {"openlineage.tls.verify": True})
    catalogue_settings = settings_mod.load_settings(
        tmp_path, CATALOGUE, {"OPENLINEAGE_TLS_VERIFY": "false"}
    )
    assert catalogue_settings.value("openlineage.tls.verify") is False
    assert catalogue_settings.source("openlineage.tls.verify") == (
        "environment (OPENLINEAGE_TLS_VERIFY)"
    )
    with pytest.raises(ConfigError) as caught:
        settings_mod.load_settings(tmp_path, CATALOGUE, {"OPENLINEAGE_TLS_VERIFY": "maybe"})
    assert "the environment variable OPENLINEAGE_TLS_VERIFY" in str(caught.value)


def test_a_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, {"OPENLINEAGE_URL": "localhost:5000"})
    assert "the environment variable OPENLINEAGE_URL (openlineage.url)" in str(caught.value)
    assert "settings.json" not in str(caught.value)


# --- writing --------------------------------------------------------------------------------

# Another extension's keys, written the way that extension likes them: set/unset must not
# touch a byte of them (not the escapes, not the exponent, not the layout, not the order).
FOREIGN = (
    "{\n"
    '  "editor.theme": "caf\\u00e9 \\/ dark",\n'
    '  "openlineage.url": "http://localhost:5000",\n'
    '  "python.paths": {"b": [1, 2],\n'
    '      "a": 1e5},\n'
    '  "zz.last": 1.50\n'
    "}\n"
)


def test_set_appends_a_new_key_and_unset_restores_the_file_byte_for_byte(tmp_path: Path) -> None:
    write_settings(tmp_path, FOREIGN)
    assert set_setting(tmp_path, "openlineage.timeout", "30") == 30
    assert settings_text(tmp_path) == FOREIGN.replace(
        '  "zz.last": 1.50\n', '  "zz.last": 1.50,\n  "openlineage.timeout": 30\n'
    )
    assert load_settings(tmp_path).timeout == 30.0

    assert unset_setting(tmp_path, "openlineage.timeout") is True
    assert settings_text(tmp_path) == FOREIGN


def test_set_replaces_a_key_in_its_place(tmp_path: Path) -> None:
    write_settings(tmp_path, FOREIGN)
    set_setting(tmp_path, "openlineage.url", "https://marquez.acme.io")
    assert settings_text(tmp_path) == FOREIGN.replace(
        "http://localhost:5000", "https://marquez.acme.io"
    )


def test_set_writes_two_space_json(tmp_path: Path) -> None:
    set_setting(tmp_path, "openlineage.url", "http://localhost:5000")
    set_setting(tmp_path, "openlineage.concurrency", "4")
    assert settings_text(tmp_path) == (
        '{\n  "openlineage.url": "http://localhost:5000",\n  "openlineage.concurrency": 4\n}\n'
    )
    assert unset_setting(tmp_path, "openlineage.url") is True
    assert unset_setting(tmp_path, "openlineage.concurrency") is True
    assert settings_text(tmp_path) == "{}\n"


@pytest.mark.parametrize(
    ("key", "text", "stored"),
    [
        ("openlineage.concurrency", "16", 16),
        ("openlineage.timeout", "2.5", 2.5),
        ("openlineage.retry.maxTime", "0", 0),
        ("openlineage.compression", "gzip", "gzip"),
        ("openlineage.apiKey.secretRef", "marquez-prod", "marquez-prod"),
    ],
)
def test_set_parses_text_by_the_declared_type(
    tmp_path: Path, key: str, text: str, stored: object
) -> None:
    assert set_setting(tmp_path, key, text) == stored
    assert read_raw(tmp_path) == {key: stored}
    load_settings(tmp_path)  # what was stored reads back as valid


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ("openlineage.tls.verify", "false", "only you may set it: set OPENLINEAGE_TLS_VERIFY"),
        ("openlineage.allowInsecureKey", "true", "only you may set it"),
        ("openlineage.concurrency", "eight", "an integer"),
        ("openlineage.concurrency", "100", "from 1 to 64"),
        ("openlineage.timeout", "soon", "a number"),
        ("openlineage.timeout", "nan", "a number from 0.1 to 900"),
        ("openlineage.timeout", "1e16", "a number from 0.1 to 900"),
        ("openlineage.compression", "brotli", "one of: none, gzip"),
        ("openlineage.url", "marquez:5000", "http:// or https://"),
        ("openlineage.tls.caBundle", "nope.pem", "only you may set it"),
    ],
)
def test_set_refuses_a_bad_value_and_leaves_the_file_alone(
    tmp_path: Path, key: str, text: str, expected: str
) -> None:
    write_settings(tmp_path, FOREIGN)
    with pytest.raises(ConfigError, match=expected):
        set_setting(tmp_path, key, text)
    assert settings_text(tmp_path) == FOREIGN


@pytest.mark.parametrize(
    ("variable", "text", "expected"),
    [
        ("OPENLINEAGE_TLS_VERIFY", "No", False),
        ("OPENLINEAGE_TLS_VERIFY", "on", True),
        ("OPENLINEAGE_ALLOW_INSECURE_KEY", "1", True),
        ("OPENLINEAGE_ALLOW_INSECURE_KEY", "off", False),
    ],
)
def test_the_user_only_settings_come_from_the_environment(
    tmp_path: Path, variable: str, text: str, expected: bool
) -> None:
    settings = settings_mod.load_settings(tmp_path, CATALOGUE, {variable: text})
    key = CATALOGUE.get(
        "openlineage.tls.verify" if "TLS" in variable else "openlineage.allowInsecureKey"
    )
    assert key is not None and key.user_only
    assert settings.value(key.key) is expected
    assert settings.source(key.key) == f"environment ({variable})"


@pytest.mark.parametrize(
    ("variable", "text", "expected"),
    [
        ("OPENLINEAGE_TLS_VERIFY", "maybe", "OPENLINEAGE_TLS_VERIFY .* must be true or false"),
        ("OPENLINEAGE_TLS_CA_BUNDLE", "nope.pem", "no file at"),
    ],
)
def test_a_bad_user_only_value_in_the_environment_is_named(
    tmp_path: Path, variable: str, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError, match=expected):
        settings_mod.load_settings(tmp_path, CATALOGUE, {variable: text})


def test_set_refuses_an_unknown_key_with_a_suggestion(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="did you mean 'openlineage.concurrency'"):
        set_setting(tmp_path, "openlineage.concurency", "4")
    assert not (tmp_path / ".workspace" / "settings.json").exists()


@pytest.mark.parametrize(
    "call",
    [
        lambda p: set_setting(p, "openlineage.timeout", "1"),
        lambda p: load_settings(p),
        lambda p: describe(p),
        lambda p: unset_setting(p, "openlineage.timeout"),
    ],
)
def test_a_folder_that_is_no_workspace_is_refused_and_left_alone(
    tmp_path: Path, call: Callable[[Path], object]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorkspaceError, match="is not a workspace: it has no .workspace/ folder"):
        call(plain)
    assert list(plain.iterdir()) == []


def test_writes_are_atomic_and_leave_no_temporary_files(tmp_path: Path) -> None:
    write_settings(tmp_path, FOREIGN)
    for n in range(1, 6):
        set_setting(tmp_path, "openlineage.concurrency", str(n))
    unset_setting(tmp_path, "openlineage.concurrency")
    assert sorted(os.listdir(tmp_path / ".workspace")) == ["settings.json"]


def test_a_rewrite_keeps_the_file_mode(tmp_path: Path) -> None:
    file = write_settings(tmp_path, FOREIGN)
    file.chmod(0o640)
    set_setting(tmp_path, "openlineage.timeout", "5")
    assert stat.S_IMODE(file.stat().st_mode) == 0o640


def test_unset_can_remove_a_misspelled_or_secret_key_but_not_a_foreign_one(tmp_path: Path) -> None:
    write_settings(tmp_path, {"openlineage.timout": 5, "openlineage.token": SECRET, "x.y": 1})
    assert unset_setting(tmp_path, "openlineage.timout") is True
    assert unset_setting(tmp_path, "openlineage.token") is True
    assert read_raw(tmp_path) == {"x.y": 1}
    assert unset_setting(tmp_path, "openlineage.timeout") is False  # declared, just not set
    with pytest.raises(ConfigError, match="did you mean 'openlineage.timeout'"):
        unset_setting(tmp_path, "openlineage.timout")
    with pytest.raises(ConfigError, match="other extensions"):
        unset_setting(tmp_path, "x.y")
    assert read_raw(tmp_path) == {"x.y": 1}


def test_settings_from_values_check_like_the_file(tmp_path: Path) -> None:
    s = CATALOGUE.settings({"openlineage.url": "http://localhost:5000"}, base=tmp_path)
    assert s.of(HttpSettings).events_url == "http://localhost:5000/api/v1/lineage"
    assert CATALOGUE.settings({"openlineage.timeout": None}).of(DeliverySettings).timeout == 10.0
    with pytest.raises(
        ConfigError, match="openlineage.concurrency must be an integer from 1 to 64"
    ):
        CATALOGUE.settings({"openlineage.concurrency": 100})
    more = s.with_values({"openlineage.concurrency": 2, "openlineage.url": None})
    assert more.of(DeliverySettings).concurrency == 2 and more.of(HttpSettings).url is None
    assert s.of(HttpSettings).url == "http://localhost:5000", "settings are values"


# -- numbers strangers write (property-based) ----------------------------------------------------

FUZZ = fuzz_settings(max_examples=150, deadline=None, database=None)
json_number = st.one_of(
    st.integers(),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=False),
    st.sampled_from([1e16, 1e308, -1e308, 5e-324, 0.0, -0.0, 2**63, 2**64, -(2**63) - 1]),
)


@FUZZ
@given(row=st.sampled_from(NUMERIC), value=json_number)
def test_any_json_number_is_taken_in_range_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, row: Setting, value: float
) -> None:
    folder = tmp_path_factory.mktemp("ws")
    (folder / ".workspace").mkdir()
    text = json.dumps({row.key: value})  # Infinity for the floats JSON cannot write
    file = write_settings(folder, text.replace("Infinity", "1e999"))
    try:
        taken = getattr(load_settings(folder), row.attribute)
    except ConfigError as refused:
        kind = "an integer" if row.type == "integer" else "a number"
        if row.type == "integer" and isinstance(value, float):
            assert "must be an integer" in str(refused)
        else:
            assert str(refused) == (
                f"{row.key} in {file} must be {kind} {setting_values.accepted_range(row)}"
            )
        return
    assert row.minimum is not None and row.maximum is not None
    assert row.minimum <= taken <= row.maximum
    assert type(taken) is (int if row.type == "integer" else float)


@FUZZ
@given(
    row=st.sampled_from(NUMERIC),
    text=st.one_of(
        st.text(max_size=30),
        st.from_regex(r"\s*[+-]?(\d{1,400}|\d*\.\d*(e[+-]?\d{1,4})?)\s*", fullmatch=True),
    ),
)
def test_any_text_for_a_number_is_taken_in_range_or_refused_in_one_line(
    row: Setting, text: str
) -> None:
    subject = f"the environment variable X ({row.key})"
    try:
        value = setting_values.check_value(
            row, setting_values.parse_text(row, text, subject), subject, Path.cwd()
        )
    except ConfigError as refused:
        assert str(refused).startswith(subject + " must be ") and "\n" not in str(refused)
        return
    assert row.minimum is not None and row.maximum is not None
    assert isinstance(value, (int, float)) and row.minimum <= value <= row.maximum


# --- text is Unicode at the seam (issue 43, finding 7) ----------------------------------------

STRING_KEYS = [row.key for row in CATALOGUE if row.type in ("string", "url")]


@pytest.mark.parametrize("key", STRING_KEYS)
@pytest.mark.parametrize("surrogate", ["\udcff", "\ud800", "\udfff"])
def test_a_lone_surrogate_in_any_text_setting_is_one_line_naming_it(
    tmp_path: Path, key: str, surrogate: str
) -> None:
    """``"v\\udcff"`` is valid JSON, and Python reads the bytes of an environment variable that
    are not UTF-8 as such a surrogate: no UTF-8 has it, so no request, event or output could."""
    write_settings(tmp_path, json.dumps({key: f"v{surrogate}"}))  # ASCII: the escape itself
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    assert key in str(caught.value) and "\n" not in str(caught.value)
    row = CATALOGUE.get(key)
    assert row is not None
    if row.env:
        write_settings(tmp_path, {})
        with pytest.raises(ConfigError) as caught:
            load_settings(tmp_path, {row.env: f"v{surrogate}"})
        assert row.env in str(caught.value)


def test_a_file_name_may_hold_the_bytes_of_a_name_that_is_no_utf8(tmp_path: Path) -> None:
    # OPENLINEAGE_FILE_PATH=/srv/$'\xff'.jsonl: Python reads the byte as U+DCFF, and gives it
    # back when it opens the file; a surrogate that stands for no byte is no file name.
    s = load_settings(tmp_path, {"OPENLINEAGE_FILE_PATH": "/srv/\udcff.jsonl"})
    assert str(s.path).endswith("/srv/\udcff.jsonl")
    with pytest.raises(ConfigError, match="OPENLINEAGE_FILE_PATH.*is no file name"):
        load_settings(tmp_path, {"OPENLINEAGE_FILE_PATH": "/srv/\ud800.jsonl"})


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("openlineage.endpoint", "api/v1/l\u00efneage", "must be ASCII"),
        ("openlineage.url", "http://localhost:5000/pf\u00e4d", "must be ASCII"),
        ("openlineage.url", "http://b\u00fccher.example", "must be ASCII"),
        # The Kelvin sign, percent-encoded: compared in Unicode it lower-cases to 'k' (an
        # origin approved for k8s.example.com), while libcurl resolves the bytes themselves.
        ("openlineage.url", "http://%E2%84%AA8s.example.com:5000", "its host must be ASCII"),
        ("openlineage.kafka.bootstrapServers", "broker:\u0669\u0660\u0669\u0662", "must be ASCII"),
    ],
)
def test_what_goes_into_every_request_must_be_ascii(
    tmp_path: Path, key: str, value: str, expected: str
) -> None:
    """Before: a non-ASCII endpoint failed every run inside the client (UnicodeEncodeError,
    exit 1); Arabic-Indic digits passed the port pattern (\\d is Unicode) and reached
    librdkafka."""
    write_settings(tmp_path, {key: value})
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as caught:
        load_settings(tmp_path)
    assert expected in str(caught.value)


def test_an_event_setting_may_hold_any_unicode(tmp_path: Path) -> None:
    write_settings(
        tmp_path,
        {
            "openlineage.sourceRepository.url": "https://git.example.com/b\u00fccher.git",
            "openlineage.sourceRepository.version": "r\u00e9sum\u00e9-\u6771\u4eac",
            "openlineage.url": "http://xn--bcher-kva.example:5000/pf%C3%A4d",
        },
    )
    s = load_settings(tmp_path)
    assert s.source_repository_version == "r\u00e9sum\u00e9-\u6771\u4eac"


def test_a_surrogate_in_settings_json_is_exit_2_and_shown_escaped_never_a_traceback(
    tmp_path: Path,
) -> None:
    """Issue 43, finding 7: export in every mode, ``settings list --json`` and ``status --json``
    were tracebacks; a non-ASCII endpoint failed every run with exit 1."""
    from helpers import WorkspaceMaker, cli_command, cli_env, run_record

    ws = WorkspaceMaker(tmp_path / "ws")
    ws.segment("000001.jsonl", [run_record("r1")])
    env = cli_env(tmp_path, PYTHONIOENCODING="utf-8:strict")  # a raw surrogate on stdout fails
    root = str(ws.root)
    cases: list[tuple[dict[str, object], dict[str, str]]] = [
        ({"openlineage.sourceRepository.version": "v\udcff"}, {}),
        ({"openlineage.url": "http://127.0.0.1:9", "openlineage.endpoint": "api/l\u00efneage"}, {}),
        ({}, {"OPENLINEAGE_NAMESPACE": "ns\udcff"}),
    ]
    for values, extra in cases:
        ws.settings(values)  # json.dumps: the surrogate as its escape, valid JSON
        for args in (
            ["export", "--dry-run", "-o", str(tmp_path / "e.jsonl")],
            [
                "export",
                "--dry-run",
                "-o",
                str(tmp_path / "e.jsonl"),
                "--json",
                "--progress",
                "json",
            ],
            ["export"],
            ["export", "--url", "http://127.0.0.1:9"],
            ["status", "--json"],
        ):
            done = subprocess.run(
                cli_command(*args, "-w", root),
                env={**env, **extra},
                capture_output=True,
                timeout=120,
            )
            message = done.stderr.decode()
            assert done.returncode == 2, (values, args, message)
            assert "Traceback" not in message and len(message.strip().splitlines()) == 1, message
            key = next(iter(values), "OPENLINEAGE_NAMESPACE")
            if "endpoint" in str(values):
                key = "openlineage.endpoint"
            assert key in message, message
        for args in (["settings", "list", "--json"], ["settings", "list"]):
            done = subprocess.run(
                cli_command(*args, "-w", root),
                env={**env, **extra},
                capture_output=True,
                timeout=120,
            )
            assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
            done.stdout.decode("utf-8")
    listed = subprocess.run(
        cli_command("settings", "get", "openlineage.namespace", "--json", "-w", root),
        env={**env, "OPENLINEAGE_NAMESPACE": "ns\udcff"},
        capture_output=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["value"] == "ns\udcff"
    assert b"ns\\udcff" in listed.stdout


OLD_MASK = re.compile(r"^([^:/?#]*://[^/?#@]*?:)[^/?#]*@")
"""How a url's password was masked before: a lazy group that looked for the '@' again from every
':' (quadratic: 100 KB of them took a minute, 1 MB about two hours; attacker B, f10)."""


@fuzz_settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet=":/?#@ab", max_size=24).map(lambda rest: "http://" + rest))
def test_a_url_is_masked_in_one_pass_as_the_pattern_masked_it(url: str) -> None:
    row = CATALOGUE.get("openlineage.url")
    assert row is not None
    query = re.sub(r"\?.*|#.*", lambda m: m.group(0)[0] + "***", url, flags=re.DOTALL)
    authority = re.split(r"[/?#]", url[len("http://") :], maxsplit=1)[0]
    if "@" in authority and ":" not in authority[: authority.rfind("@")]:
        # a userinfo without ':' (a token alone) is masked whole, which the pattern never did
        rest = query[len("http://") + authority.rfind("@") :]
        assert settings_mod.shown(row, url) == f"http://***{rest}"
    elif authority.count("@") <= 1:
        assert settings_mod.shown(row, url) == OLD_MASK.sub(r"\1***@", query)
    elif ":" in authority[: authority.rfind("@")]:  # the pattern missed a '@' in a password
        user = authority[: authority.index(":") + 1]
        rest = query[len("http://") + authority.rfind("@") :]
        assert settings_mod.shown(row, url) == f"http://{user}***{rest}"


@pytest.mark.parametrize(
    "url",
    [f"https://{SECRET}@lineage.example.com/", f"https://etl%3A{SECRET}@lineage.example.com/"],
)
def test_any_userinfo_of_an_address_is_masked_when_shown(tmp_path: Path, url: str) -> None:
    """attack F, F3: a token alone (as GitHub and GitLab tokens are written) and a percent-
    encoded user:password, which the export refuses as credentials, are shown masked too."""
    (row,) = [
        r for r in describe(tmp_path, {"OPENLINEAGE_URL": url}) if r["key"] == "openlineage.url"
    ]
    assert row["value"] == "https://***@lineage.example.com/"


SECRET_PATH_PARAMETERS = [
    ("openlineage.url", f"https://lineage.example.com/a;password={SECRET}"),
    ("openlineage.endpoint", f"api/v1/lineage;password={SECRET}"),
    ("openlineage.endpoint", f"api/v1/lineage;JSESSIONID={SECRET}/x"),
    ("openlineage.endpoint", f"api/v1/lineage%3Bapi_key%3D{SECRET}"),
    ("openlineage.sourceRepository.url", f"https://git.example.com/r.git;private_token={SECRET}"),
]


@pytest.mark.parametrize(("key", "value"), SECRET_PATH_PARAMETERS)
def test_a_secret_path_parameter_in_an_address_is_refused_never_repeated(
    tmp_path: Path, key: str, value: str
) -> None:
    """attack F, F3: ``;password=`` in an address is a credential as it is in a location:
    refused where the setting is read (as a userinfo is), masked where it is shown."""
    row = CATALOGUE.get(key)
    assert row is not None
    with pytest.raises(ConfigError) as refused:
        setting_values.check_value(row, value, f"{key} in settings.json", tmp_path)
    message = str(refused.value)
    assert "carries credentials" in message and SECRET not in message
    assert len(message.splitlines()) == 1
    shown = settings_mod.shown(row, value)
    assert SECRET not in str(shown) and str(shown).endswith(";***")
    benign = re.split(";|%3B", value)[0] + ";version=2"
    assert setting_values.check_value(row, benign, key, tmp_path) == benign


def test_a_secret_path_parameter_stops_the_export_in_one_line(tmp_path: Path) -> None:
    from helpers import cli_command, cli_env

    write_settings(
        tmp_path,
        {"openlineage.url": "http://127.0.0.1:9", "openlineage.endpoint": f"api;password={SECRET}"},
    )
    done = subprocess.run(
        cli_command("export", "-w", str(tmp_path)),
        env=cli_env(tmp_path),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    message = done.stderr.decode()
    assert "openlineage.endpoint" in message and "carries credentials" in message, message
    assert len(message.strip().splitlines()) == 1 and SECRET.encode() not in done.stdout
    assert SECRET not in message


def test_a_password_in_any_broker_entry_is_masked(tmp_path: Path) -> None:
    write_settings(
        tmp_path,
        {"openlineage.kafka.bootstrapServers": f"u:{SECRET}@b1:9092,b2:9092,v:{SECRET}@b3:1"},
    )
    (row,) = [r for r in describe(tmp_path) if r["key"] == "openlineage.kafka.bootstrapServers"]
    assert row["value"] == "u:***@b1:9092,b2:9092,v:***@b3:1"


def test_a_long_address_is_listed_at_once(tmp_path: Path) -> None:
    """The hang guard (``timeout``) is over a thousand times what a linear reading takes here;
    the masking was quadratic in a value's length. The values fill what a settings.json may
    hold (1 MiB, ``host/jsonfile.py``)."""
    from helpers import cli_command, cli_env

    write_settings(
        tmp_path,
        {
            "openlineage.url": "http://" + ":" * 330_000,
            "openlineage.endpoint": ":" * 330_000,
            "openlineage.kafka.bootstrapServers": "u:" * 165_000,
        },
    )
    done = subprocess.run(
        cli_command("settings", "list", "--json", "-w", str(tmp_path)),
        env=cli_env(tmp_path),
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    values = {row["key"]: row["value"] for row in json.loads(done.stdout)}
    assert values["openlineage.url"] == "http://" + ":" * 330_000


def test_settings_set_keeps_a_file_names_byte_that_is_not_utf8(tmp_path: Path) -> None:
    """``settings set openlineage.file.path $'.workspace/exports/\\xff.jsonl'``: the argument's
    byte reaches Python as U+DCFF, and writing it as settings.json's UTF-8 raised."""
    write_settings(tmp_path, {"openlineage.transport": "file"})
    set_setting(tmp_path, "openlineage.file.path", ".workspace/exports/\udcff.jsonl")
    assert '"openlineage.file.path": ".workspace/exports/\\udcff.jsonl"' in settings_text(tmp_path)
    assert str(load_settings(tmp_path).path).endswith(".workspace/exports/\udcff.jsonl")


def test_a_nul_in_a_file_name_setting_is_exit_2_naming_it_never_a_traceback(
    tmp_path: Path,
) -> None:
    """Attack C, C4b: ``"a\\u0000b.jsonl"`` is valid JSON (and ``"\\0"`` valid YAML), and no
    file name holds it: it was a ValueError traceback, exit 1, and no error event."""
    from helpers import WorkspaceMaker, cli_command, cli_env, run_record

    ws = WorkspaceMaker(tmp_path / "ws")
    ws.segment("000001.jsonl", [run_record("r1")])
    env = cli_env(tmp_path)
    ws.settings(
        {"openlineage.transport": "file", "openlineage.file.path": ".workspace/exports/a\0b.jsonl"}
    )
    for args in (["export"], ["export", "--progress", "json"]):
        done = subprocess.run(
            cli_command(*args, "-w", str(ws.root)),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "openlineage.file.path" in done.stderr and "NUL" in done.stderr
        if "json" in args:
            events = [json.loads(line) for line in done.stderr.splitlines()]
            errors = [e for e in events if e.get("event") == "error"]
            assert len(errors) == 1 and "NUL" in errors[0]["message"], done.stderr
    ws.settings({})
    home = Path(env["HOME"])
    (home / ".openlineage").mkdir(parents=True)
    (home / ".openlineage" / "openlineage.yml").write_text(
        f'transport:\n  type: file\n  log_file_path: "{tmp_path}/ev\\0.jsonl"\n'
    )
    done = subprocess.run(
        cli_command("export", "-w", str(ws.root)),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "openlineage.yml" in done.stderr and "NUL" in done.stderr
