"""secrecy: where a secret comes from, where it may travel, and that it is masked in any shape."""

from __future__ import annotations

import base64
import html
import json
import logging
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from openlineage_export.errors import ConfigError, MissingSecret
from openlineage_export.guards.secrecy import (
    Redactor,
    Secret,
    check_header_safe,
    check_key_transport,
    is_loopback,
    masked_logs,
    resolve_secret,
)
from openlineage_export.host.secret_files import FileStore

SECRET = "sk-live-4f9a1c2e7b"
OTHER = "pat-0b8e3d7a55"
NASTY = "k3y+S3cr/et="
REF = "openlineage.apiKey.secretRef"


def resolve(store: FileStore, ref: str | None, environ: dict[str, str] | None = None) -> str | None:
    found = resolve_secret(environ or {}, ref, "OPENLINEAGE_API_KEY", store=store, setting=REF)
    return None if found is None else found.value


# --- where a secret comes from ----------------------------------------------------------------


def test_the_secret_comes_from_the_named_entry(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.set("marquez-prod", SECRET)
    assert resolve(store, "marquez-prod") == SECRET
    assert resolve(store, None) is None


def test_the_environment_wins_and_then_the_store_is_never_read(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.set("marquez-prod", SECRET)
    assert resolve(store, "marquez-prod", {"OPENLINEAGE_API_KEY": OTHER}) == OTHER
    assert resolve(store, None, {"OPENLINEAGE_API_KEY": OTHER}) == OTHER
    assert resolve(store, "marquez-prod", {"OPENLINEAGE_API_KEY": ""}) == SECRET
    store.path.chmod(0o644)  # a refused file is fine while the store is not asked
    assert resolve(store, "marquez-prod", {"OPENLINEAGE_API_KEY": OTHER}) == OTHER


def test_a_missing_secret_names_the_entry_the_setting_and_how_to_store_it(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.set("datahub", SECRET)
    with pytest.raises(MissingSecret) as caught:
        resolve(store, "marquez-prod")
    message = str(caught.value)
    assert f"the secret 'marquez-prod' named by {REF}" in message
    assert f"(the file {tmp_path / 'secrets.json'})" in message
    assert "openlineage-export secrets set marquez-prod" in message
    assert SECRET not in message


def test_the_origin_is_shown_and_the_value_never(tmp_path: Path) -> None:
    found = resolve_secret(
        {"OPENLINEAGE_API_KEY": SECRET},
        None,
        "OPENLINEAGE_API_KEY",
        store=FileStore(tmp_path),
        setting=REF,
    )
    assert found is not None and found.origin == "the environment variable OPENLINEAGE_API_KEY"
    assert SECRET not in repr(found)


@pytest.mark.parametrize("value", ["two words", "tab\there", "naïve", "nul\x00", ""])
def test_a_key_a_header_cannot_carry_is_refused_without_showing_it(value: str) -> None:
    with pytest.raises(ConfigError, match="a character an HTTP header cannot carry") as caught:
        check_header_safe(Secret(value, "the secret 'x'", "store it again"))
    assert "the secret 'x'" in str(caught.value)
    if value:
        assert value not in str(caught.value)


# --- where it may travel ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://localhost:5000", True),
        ("http://127.0.0.9/x", True),
        ("http://[::1]:5000", True),
        ("http://[::ffff:127.0.0.1]:5000", True),
        ("http://marquez.example.com", False),
        ("http://10.0.0.1", False),
        ("kafka://127.0.0.1:9092", True),
    ],
)
def test_loopback_is_this_machine_only(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_a_key_over_plain_http_goes_to_loopback_or_with_consent() -> None:
    check_key_transport("http://127.0.0.1:5000/api", True, False)
    check_key_transport("https://marquez.example.com/api", True, False)
    check_key_transport("http://marquez.example.com/api", False, False)
    check_key_transport("http://marquez.example.com/api", True, True)
    with pytest.raises(ConfigError, match="plain http to marquez.example.com"):
        check_key_transport("http://marquez.example.com/api", True, False)


# --- the one redaction point ------------------------------------------------------------------


def shapes(secret: str) -> dict[str, str]:
    """Every way a server has been seen (or may plausibly) echo what it was sent."""
    data = secret.encode()
    return {
        "raw": secret,
        "url-encoded": quote(secret, safe=""),
        "url-encoded, lower-case hex": quote(secret, safe="")
        .replace("%2B", "%2b")
        .replace("%2F", "%2f")
        .replace("%3D", "%3d"),
        "form-encoded": quote_plus(secret),
        "url-encoded, '/' kept": quote(secret),
        "json": json.dumps(secret)[1:-1],
        "json with \\/": json.dumps(secret)[1:-1].replace("/", "\\/"),
        "json \\u escapes": "".join(f"\\u{ord(c):04x}" for c in secret),
        "json \\u for symbols": "".join(c if c.isalnum() else f"\\u{ord(c):04X}" for c in secret),
        "html entities": html.escape(secret).replace("+", "&#43;").replace("/", "&#x2F;"),
        "bytes repr": repr(data)[2:-1],
        "base64": base64.b64encode(data).decode(),
        "base64 url-safe": base64.urlsafe_b64encode(data).decode(),
        "base64 after 'user:'": base64.b64encode(b"user:" + data).decode(),
        "base64 after 'ab'": base64.b64encode(b"ab" + data).decode(),
    }


@pytest.mark.parametrize("secret", [NASTY, SECRET, "p@ss w0rd/üñí", "a\"b\\c<d>&e'f+g"])
def test_every_echo_of_the_secret_is_masked(secret: str) -> None:
    redact = Redactor(secret)
    for shape, echo in shapes(secret).items():
        text = f"HTTP 401: bad token {echo!s} (see docs)"
        masked = redact(text)
        assert "***" in masked, shape
        for other_shape, other in shapes(secret).items():
            if len(other) >= 8 and other_shape != "base64 after 'user:'":
                assert other not in masked, (shape, other_shape)
        assert masked.startswith("HTTP 401: bad token ") and masked.endswith(" (see docs)"), shape


def test_innocent_text_is_left_alone() -> None:
    redact = Redactor(NASTY)
    text = 'HTTP 400: {"error": "bad runId", "hint": "k3y is fine, S3cr too; et= also"}'
    assert redact(text) == text
    assert Redactor()(text) == text and Redactor(None, "")(text) == text
    assert not Redactor() and Redactor(NASTY)


def test_the_longest_of_several_secrets_is_masked_whole() -> None:
    assert Redactor("abc12345", "abc12345xyz")("[abc12345xyz]") == "[***]"


def test_library_log_lines_are_masked_while_inside(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("httpx")
    with caplog.at_level(logging.DEBUG, logger="httpx"):
        with masked_logs(Redactor(NASTY)):
            log.info("HTTP Request: POST %s", f"http://x/?token={quote(NASTY, safe='')}")
        log.info("after: %s", "plain")
    assert NASTY not in caplog.text and quote(NASTY, safe="") not in caplog.text
    assert "token=***" in caplog.text and "after: plain" in caplog.text
    assert not logging.getLogger("httpx").filters
