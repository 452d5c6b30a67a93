"""What strangers write, fuzzed: settings.json, openlineage.yml, trail times and lines, urls.

Each reader of untrusted input meets whatever hypothesis draws (valid documents of every
shape, hostile ones: deep, huge, aliased, control characters, C1 included, lone surrogates,
an environment's bytes that are not UTF-8, random text) and must answer with its value or one
of our errors, never anything else; what it shows goes out through the one JSON encoder and
the one text shower with no control character, bidi control or surrogate raw. Bounded (``FUZZ``) so that CI stays
in time; the trail as a whole is fuzzed in test_fuzz.py.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
import yaml
from helpers import WorkspaceMaker
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_fuzz import good_runs

from openlineage_export.deliver.registry import CATALOGUE
from openlineage_export.errors import ConfigError, ExportError
from openlineage_export.guards.trust import origin_of
from openlineage_export.host.ecosystem import read_ecosystem
from openlineage_export.host.jsonfile import raw_entries
from openlineage_export.host.settings import describe, load_settings, shown
from openlineage_export.host.settings_file import set_setting
from openlineage_export.hub.model import BadRecord
from openlineage_export.hub.records import parse_run, parse_trusted
from openlineage_export.hub.times import normalise_time, parse_time, trusted_time
from openlineage_export.jsonout import dumps
from openlineage_export.terminal.text import shown as shown_text

FUZZ = settings(
    max_examples=80,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
RAW_CONTROLS = re.compile(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f]")
"""What no JSON output may hold raw (line breaks only between lines)."""
UNSEEN = re.compile("[\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]")
"""Bidi controls, separators and the BOM: none raw in any output."""
RAW_TEXT = re.compile(
    "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff\ud800-\udfff]"
)
"""What no line for a person may hold raw."""

KEYS = [row.key for row in CATALOGUE]
TEXT_KEYS = [row.key for row in CATALOGUE if row.type in ("string", "url", "path", "output")]
ENV_VARS = [row.env for row in CATALOGUE if row.env] + [
    "OPENLINEAGE__TRANSPORT__URL",
    "OPENLINEAGE__TRANSPORT__ENDPOINT",
    "OPENLINEAGE__TRANSPORT__TOPIC",
]
any_character = (
    st.characters(exclude_categories=())  # hypothesis's default leaves the surrogates out
    | st.characters(categories=["Cs"])  # lone surrogates: "\udcff" is valid JSON
    | st.sampled_from(["\x1b", "\x9b", "\x9d", "\x9c", "\x7f", "\n", "\u2028", "\u202e", "\ufeff"])
)
"""Any character a string may hold in Python: JSON's escapes and the bytes of an environment
variable that are not UTF-8 (read as U+DC80-U+DCFF) give lone surrogates."""
awkward_text = st.text(alphabet=any_character, max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(2**63, 2**80)
    | st.integers(-(10**400), -(10**300))
    | st.floats()
    | awkward_text
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(awkward_text, inner, max_size=3),
    max_leaves=10,
)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@st.composite
def settings_documents(draw: st.DrawFn) -> str:
    """A settings.json as anyone may push it: our keys and others', any value, or junk."""
    choice = draw(st.sampled_from(["object", "object", "deep", "huge", "junk", "stray"]))
    if choice == "junk":
        return draw(st.text(alphabet=any_character, max_size=60))
    if choice == "stray":  # a value of ours that is not Unicode text, among any others
        stray = draw(st.characters(categories=["Cs"]))
        document = {draw(st.sampled_from(TEXT_KEYS)): f"{draw(awkward_text)}{stray}"}
        document |= draw(st.dictionaries(st.sampled_from(KEYS), values, max_size=3))
        return json.dumps(document)  # the surrogate as its escape: valid JSON
    keys = (
        st.sampled_from(KEYS)
        | awkward_text
        | st.sampled_from(
            ["openlineage.apiKey", "openlineage.kafka.sasl.password", "openlineage.Url"]
        )
    )
    document = draw(st.dictionaries(keys, values, max_size=6))
    text = json.dumps(document, ensure_ascii=draw(st.booleans()))
    key = json.dumps(draw(st.sampled_from(KEYS)))
    if choice == "deep":
        depth = draw(st.integers(250, 400) | st.integers(900, 1200))
        text = text[:-1] + ("," if document else "") + f"{key}: {nested(depth)}}}"
    elif choice == "huge":
        digits = draw(st.integers(20, 400) | st.integers(4290, 4310))
        text = text[:-1] + ("," if document else "") + f"{key}: -{'9' * digits}}}"
    return ("\ufeff" if draw(st.booleans()) else "") + text


ENVIRONS = st.sampled_from(
    [
        {},
        {"OPENLINEAGE__TRANSPORT__URL": "http://127.0.0.1:5999"},
        {"OPENLINEAGE_URL": "http://127.0.0.1:5998", "OPENLINEAGE_TIMEOUT": "7"},
    ]
)


@pytest.fixture(scope="module")
def fuzz_ws(tmp_path_factory: pytest.TempPathFactory) -> WorkspaceMaker:
    return WorkspaceMaker(tmp_path_factory.mktemp("fuzz-settings") / "ws")


@FUZZ
@given(text=settings_documents(), environ=ENVIRONS)
def test_settings_json_reads_as_settings_or_one_error(
    fuzz_ws: WorkspaceMaker, text: str, environ: dict[str, str]
) -> None:
    file = fuzz_ws.root / ".workspace" / "settings.json"
    file.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    try:
        load_settings(fuzz_ws.root, CATALOGUE, environ)
    except ExportError as exc:
        assert "\n" not in str(exc)
    try:
        rows = describe(CATALOGUE, fuzz_ws.root, environ)
    except ExportError as exc:
        assert "\n" not in str(exc)
        return
    for indent in (False, True):
        data = dumps(rows, indent=indent, default=str)
        # A lone surrogate is written as its escape, never raw (there is no UTF-8 for it).
        assert UNSEEN.search(data.decode("utf-8")) is None
        assert RAW_CONTROLS.search(data.replace(b"\n", b"")) is None
        assert len(json.loads(data)) == len(KEYS)
    for row in rows:  # the text outputs
        line = shown_text(f"{row['key']} = {row['value']}")
        line.encode("utf-8")
        assert RAW_TEXT.search(line) is None


@FUZZ
@given(
    values=st.dictionaries(
        st.sampled_from(ENV_VARS),
        awkward_text | st.binary(max_size=12).map(os.fsdecode),
        max_size=4,
    )
)
def test_any_environment_reads_as_settings_or_one_error(
    fuzz_ws: WorkspaceMaker, values: dict[str, str]
) -> None:
    """The environment's bytes that are not UTF-8 reach Python as lone surrogates (os.fsdecode):
    every value is a setting or one line naming its variable, shown with nothing raw."""
    (fuzz_ws.root / ".workspace" / "settings.json").write_text("{}")
    try:
        loaded = load_settings(fuzz_ws.root, CATALOGUE, values)
    except ExportError as exc:
        message = shown_text(str(exc))
        assert "\n" not in str(exc) and any(name in str(exc) for name in values), str(exc)
        message.encode("utf-8")
        return
    for key, value in loaded.values.items():
        if CATALOGUE.declared(key, None).type not in ("path", "output"):
            str(value).encode("utf-8")  # text that enters is Unicode
    data = dumps(describe(CATALOGUE, fuzz_ws.root, values), default=str)
    data.decode("utf-8")


@FUZZ
@given(text=settings_documents(), key=st.sampled_from(KEYS), value=awkward_text)
def test_settings_set_keeps_every_other_key_or_refuses_in_one_line(
    fuzz_ws: WorkspaceMaker, text: str, key: str, value: str
) -> None:
    file = fuzz_ws.root / ".workspace" / "settings.json"
    data = text.encode("utf-8", errors="surrogatepass")
    file.write_bytes(data)
    try:
        before = raw_entries(file)
        set_setting(fuzz_ws.root, CATALOGUE, key, value)
    except ExportError as exc:
        assert "\n" not in str(exc)
        assert file.read_bytes() == data
        return
    after = raw_entries(file)
    assert {k: v for k, v in after.items() if k != key} == {
        k: v for k, v in before.items() if k != key
    }
    assert key in after


# -- openlineage.yml -----------------------------------------------------------------------------


@st.composite
def yaml_documents(draw: st.DrawFn) -> str:
    """openlineage.yml as anyone may write it: the shape openlineage-python reads, any other,
    anchors and aliases (yaml.dump writes them for a shared value), tags, deep, or junk."""
    choice = draw(st.sampled_from(["shaped", "shaped", "shared", "deep", "tagged", "junk"]))
    if choice == "junk":
        return draw(st.text(max_size=80))
    yaml_values = st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=10),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=8,
    )
    transport = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["http", "kafka", "file", "console"]) | st.text(max_size=6),
                "url": st.text(max_size=30) | st.just("http://127.0.0.1:5000"),
                "endpoint": st.text(max_size=20),
                "timeout": yaml_values,
                "verify": yaml_values,
                "auth": st.fixed_dictionaries(
                    {"type": st.just("api_key"), "apiKey": st.text(max_size=20)}
                ),
                "config": st.dictionaries(
                    st.sampled_from(["bootstrap.servers", "client.id"]), yaml_values, max_size=2
                ),
                "log_file_path": st.text(max_size=20),
            },
        )
    )
    document: Any = {
        "transport": transport,
        **draw(st.dictionaries(st.text(max_size=8), yaml_values, max_size=3)),
    }
    if choice == "shared":
        shared = draw(st.lists(yaml_values, min_size=1, max_size=3))
        document = {"transport": transport, "a": shared, "b": shared, "c": {"d": shared}}
    text = yaml.safe_dump(document, allow_unicode=draw(st.booleans()))
    if choice == "deep":
        depth = draw(st.integers(50, 120) | st.integers(900, 1500))
        text += f"deep: {nested(depth)}\n"
    elif choice == "tagged":
        tag = draw(
            st.sampled_from(
                [
                    "!!python/object:os.system",
                    "!!binary",
                    "!!timestamp",
                    "!!set",
                    "!!omap",
                    "!custom",
                    "!!float",
                    "!!int",
                ]
            )
        )
        text += f"tagged: {tag} {draw(st.sampled_from(['x', '2026-13-45', '{}', '[a]']))}\n"
    return text


@FUZZ
@given(text=yaml_documents())
def test_openlineage_yml_reads_as_plain_data_or_one_error_naming_it(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    folder = tmp_path_factory.mktemp("yml")
    config = folder / "mine" / "openlineage.yml"  # not in a folder the workspace lies in
    config.parent.mkdir()
    config.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    try:  # (PyYAML's own parser takes seconds for the deepest: they hold no alias)
        aliased = text.count("[") < 200 and any(
            isinstance(event, yaml.AliasEvent) for event in yaml.parse(text)
        )
    except yaml.YAMLError:
        aliased = False
    environ = {"OPENLINEAGE_CONFIG": str(config)}
    try:
        found = read_ecosystem(environ, folder / "project" / "ws")
    except ConfigError as exc:
        assert str(exc).startswith(str(config)) and "\n" not in str(exc)
        return
    assert not aliased, "an alias was read"
    for layer in found.layers:
        for path, value in layer.values.items():
            assert not isinstance(value, dict) and path == path.lower()
            assert layer.sources[path].startswith(("environment (", f"openlineage.yml ({config})"))


# -- trail times and lines -----------------------------------------------------------------------


@st.composite
def rfc3339_times(draw: st.DrawFn) -> tuple[str, datetime | None]:
    """Any RFC 3339 time (offsets to ±23:59, every form), and the instant it stands for (None
    for a second 60, whose instant is the leap second's)."""
    local = draw(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
    minutes = draw(st.integers(-(24 * 60 - 1), 24 * 60 - 1))
    zulu = draw(st.sampled_from(["Z", "z", None]))
    offset = (
        zulu or f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    )
    digits = draw(st.text("0123456789", max_size=9))
    separator = draw(st.sampled_from("Tt "))
    text = (
        f"{local.year:04d}-{local:%m-%d}{separator}{local:%H:%M:%S}"
        + (f".{digits}" if digits else "")
        + offset
    )
    micro = int(digits[:6].ljust(6, "0")) if digits else 0
    shift = timedelta(0) if zulu else timedelta(minutes=minutes)
    instant = local.replace(microsecond=micro, tzinfo=UTC) - shift
    return text, instant


@FUZZ
@given(drawn=rfc3339_times())
def test_every_rfc3339_time_is_the_same_instant_in_a_form_servers_read(
    drawn: tuple[str, datetime | None],
) -> None:
    text, instant = drawn
    try:
        normal = normalise_time(text, "startedAt")
    except BadRecord as exc:
        # Only where the offset moves it out of what UTC holds (years 1 and 9999).
        assert "out of range" in str(exc) and text[:4] in ("0001", "9999"), exc
        return
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)", normal)
    assert normal[-1] == "Z" or normal[-5:] <= "18:00"
    assert parse_time(normal) == instant
    assert trusted_time(text) == normal  # what the second pass writes, trusting the first


@FUZZ
@given(record=good_runs("fuzz-run"), ascii_only=st.booleans())
def test_the_second_pass_reads_a_good_line_as_the_first(
    record: dict[str, Any], ascii_only: bool
) -> None:
    line = json.dumps(record, ensure_ascii=ascii_only).encode()
    assert parse_trusted(line) == parse_run(line)
    assert msgspec.json.decode(line)["traceId"] == "fuzz-run"


# -- urls ------------------------------------------------------------------------------------------

ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/?#@]+")
"""What key-origins.json keeps (host/secrets.py): every origin we make must be storable."""

urls = st.one_of(
    st.text(max_size=40),
    st.builds(
        "{}://{}{}{}{}".format,
        st.sampled_from(["http", "https", "HTTP", "ftp", "kafka", ""]),
        st.sampled_from(["", "user@", "user:pw@", ":@", "a@b@"]),
        st.text(max_size=15)
        | st.sampled_from(
            [
                "localhost",
                "127.0.0.1",
                "[::1]",
                "[::ffff:127.0.0.1]",
                "0x7f.1",
                "h.",
                "xn--a.localhost",
                "[fe80::1%25eth0]",
                "\u0130stanbul",
                "a\x9bb",
            ]
        ),
        st.sampled_from(["", ":80", ":0", ":65535", ":65536", ":-1", ":x", ":\u0661"]),
        st.text(max_size=12) | st.sampled_from(["/", "/api?k=v", "#frag", "/\\@evil"]),
    ),
)


@FUZZ
@given(url=urls)
def test_a_url_is_a_setting_and_an_origin_or_one_error(url: str) -> None:
    try:
        checked = CATALOGUE.settings({"openlineage.url": url}).value("openlineage.url")
    except ConfigError as exc:
        assert "\n" not in str(exc)
        checked = None
    if checked is not None:
        row = CATALOGUE.get("openlineage.url")
        assert row is not None
        assert shown(row, checked) == checked  # nothing in it to mask: refused otherwise
        assert "@" not in checked.split("//", 1)[1].split("/", 1)[0]
    try:
        origin = origin_of(url)
    except ConfigError as exc:
        assert "\n" not in str(exc)
        assert checked is None, "a url the settings take has no origin to approve"
        return
    assert ORIGIN.fullmatch(origin), origin
    assert origin == origin_of(origin)  # approving the origin approves that very server
