"""The one JSON encoder (jsonout.py): a stranger's control characters, C1 included, never reach
a terminal raw through a JSON output, and what orjson cannot write is written all the same."""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path

import orjson
import pytest
from helpers import WorkspaceMaker, cli_command, cli_env, run_record, stage_record
from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_export.jsonout import ESCAPED, dumps, fragment, indented

C1 = "\x9b2J\x9d0;owned\x9c"
"""CSI (clear the screen), OSC (set the title) and ST: 8-bit escape sequences."""
RAW = [b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x9c", b"\x1b", b"\x7f"]


def test_c0_c1_and_del_are_escaped_and_read_back_the_same() -> None:
    value = {"k\x9b": f"a{C1}\x1b\x7f é £ \u2028"}
    data = dumps(value)
    assert not any(raw in data for raw in RAW)
    assert b"\\u009b" in data and b"\\u007f" in data
    assert "é £".encode() in data  # other characters stay as they are
    assert json.loads(data) == value


@pytest.mark.parametrize(
    "value",
    [
        {"n": 2**64, "m": -(10**400)},
        json.loads("[" * 900 + "]" * 900),
    ],
)
def test_what_orjson_cannot_write_is_written_all_the_same(value: object) -> None:
    assert json.loads(dumps(value)) == value
    assert json.loads(dumps(value, indent=True)) == value


UNSEEN = "\u202e\u2066\u2069\u200e\u200f\u061c\u2028\u2029\u200b\u2060\ufeff"
"""What changes how a line shows without being seen: bidi controls, separators, invisibles."""


def test_what_changes_how_a_line_shows_unseen_is_escaped_and_reads_back_the_same() -> None:
    value = {"pipeline": f"p{UNSEEN}", "ok": "\u2014 \u2026 \u2019 é 東京 🚀 \u200d"}
    data = dumps(value)
    assert not any(char.encode() in data for char in UNSEEN)
    assert b"\\u202e" in data and b"\\u2028" in data and b"\\ufeff" in data
    assert "\u2014 \u2026 \u2019 é 東京 🚀 \u200d".encode() in data  # everything else as it is
    assert json.loads(data) == value


def test_every_format_character_but_the_joiners_and_the_fillers_are_escaped() -> None:
    """attack F, F5: the one list (jsonout.ESCAPED, also the text's and the report's) holds
    every format character (Cf) of this Python's Unicode but U+200C and U+200D, and the Hangul
    fillers; beyond U+FFFF each is written as its surrogate pair, and reads back the same."""
    every = {c for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"}
    listed = {c for first, last in ESCAPED for c in range(first, last + 1)}
    wanted = (every - {0x200C, 0x200D}) | {0x115F, 0x1160, 0x3164, 0xFFA0}
    assert wanted <= listed and not listed & {0x200C, 0x200D, 0xFE0F}
    for code in sorted(wanted | set(range(0x7F, 0xA0))):
        value = {"name": f"daily{chr(code)}-sales \u0645\u200c\u0627 \u2764\ufe0f"}
        data = dumps(value)
        assert chr(code).encode() not in data, hex(code)
        assert "\u200c".encode() in data and "\ufe0f".encode() in data
        assert json.loads(data) == value
    assert b"\\udb40\\udc41" in dumps("\U000e0041")


@pytest.mark.parametrize("around", ["", "\u20ac" * 3, "\u20ac" * 40, "\u0627" * 50, "\xe9" * 30])
def test_each_of_them_is_escaped_among_any_number_of_harmless_neighbours(around: str) -> None:
    """The check before the escaping looks at each lead byte (``€`` is 0xE2 0x82 0xAC, as a
    bidi control's): one among many is still found."""
    risky = "\x7f" + "".join(map(chr, range(0x80, 0xA0))) + UNSEEN + "\u202a\u202b\u202c\u202d"
    for char in risky:
        value = {"name": f"{around}{char}{around}"}
        data = dumps(value)
        assert char.encode() not in data, hex(ord(char))
        assert json.loads(data) == value


@pytest.mark.parametrize(
    "value",
    [
        {"value": "v\udcff"},
        ["\ud800", {"k": "a\udc80b", "n": 2**70}],
        json.loads("[" * 900 + '"\\udcff"' + "]" * 900),
        {"deep": json.loads("[" * 300 + '"x\\ud83d"' + "]" * 300), "c1": "\x9b\u202e"},
    ],
    ids=["lone", "with-a-big-integer", "900-deep", "300-deep-and-c1"],
)
def test_a_lone_surrogate_is_written_as_its_escape_and_reads_back_the_same(
    value: object,
) -> None:
    """Before: orjson refused the value and msgspec raised UnicodeEncodeError, a traceback from
    every JSON output a surrogate reached (settings list --json, status --json, an error line
    in --progress json)."""
    for indent in (False, True):
        data = dumps(value, indent=indent)
        data.decode("utf-8")  # valid UTF-8
        assert not any(raw in data for raw in RAW)
        assert json.loads(data) == value
    assert json.loads(fragment(value)) == value


def test_a_path_with_a_byte_that_is_no_utf8_is_written_through_default() -> None:
    path = Path("/srv/exports/\udcff.jsonl")  # os.fsdecode(b"/srv/exports/\xff.jsonl")
    data = dumps({"file": path}, default=str)
    assert data == b'{"file":"/srv/exports/\\udcff.jsonl"}'
    assert json.loads(data) == {"file": str(path)}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_the_fallback_layout_is_orjsons(value: object) -> None:
    assert indented(orjson.dumps(value)) == orjson.dumps(value, option=orjson.OPT_INDENT_2)


def _run(tmp_path: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        cli_command(*args), env=cli_env(tmp_path), capture_output=True, timeout=120
    )
    assert done.returncode == code, done.stderr
    assert b"Traceback" not in done.stderr
    return done


def test_c1_from_a_workspace_reaches_no_output_raw(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """A setting, a pipeline id, a stage and a segment name carrying CSI/OSC: every JSON output
    (--json, --progress json, settings get|list --json, status --json, the events) escapes
    them, as the text outputs do."""
    pipeline = f"p{C1}"
    ws.segment(
        "000001.jsonl", [run_record("r1", pipeline=pipeline, stages=[stage_record(f"s{C1}")])]
    )
    ws.segment(f"000002{C1}.jsonl", ["{not json"])  # a bad entry named by its file
    ws.settings(
        {
            "openlineage.sourceRepository.url": "https://git.example.com/acme",
            "openlineage.sourceRepository.version": f"main{C1}",
            "openlineage.transport": "file",
        }
    )
    root = str(ws.root)
    events = tmp_path / "events.jsonl"
    outputs = {
        "export --json --progress json": _run(
            tmp_path,
            "export",
            "-w",
            root,
            "--dry-run",
            "-o",
            str(events),
            "--json",
            "--progress",
            "json",
            code=1,
        ),
        "settings get --json": _run(
            tmp_path,
            "settings",
            "get",
            "-w",
            root,
            "openlineage.sourceRepository.version",
            "--json",
        ),
        "settings list --json": _run(tmp_path, "settings", "list", "-w", root, "--json"),
        "export (text)": _run(
            tmp_path, "export", "-w", root, "--dry-run", "-o", str(tmp_path / "again.jsonl"), code=1
        ),
    }
    file_env = cli_env(tmp_path, OPENLINEAGE_FILE_PATH=str(tmp_path / "out.jsonl"))
    sent = subprocess.run(
        cli_command("export", "-w", root), env=file_env, capture_output=True, timeout=120
    )
    assert sent.returncode == 1, sent.stderr
    outputs["status --json"] = _run(tmp_path, "status", "-w", root, "--json")
    for name, done in outputs.items():
        for stream in (done.stdout, done.stderr):
            assert not any(raw in stream for raw in RAW), (name, stream)
    assert not any(raw in events.read_bytes() for raw in RAW)
    assert "\\u009b" in outputs["settings get --json"].stdout.decode()
    assert json.loads(outputs["settings get --json"].stdout)["value"] == f"main{C1}"
    progress = [
        json.loads(line) for line in outputs["export --json --progress json"].stderr.splitlines()
    ]
    assert any(C1 in str(line.get("file")) for line in progress if line["event"] == "badEntry")
    assert any(
        e["job"]["name"] == pipeline for e in map(json.loads, events.read_text().splitlines())
    )
    assert "\\x9b" in outputs["export (text)"].stderr.decode()  # the text outputs: shown()


def test_the_error_boundary_writes_a_message_with_a_lone_surrogate_as_json(
    tmp_path: Path,
) -> None:
    """Attacker B's f05: the editor runs ``export -w FOLDER --json --progress json``; a folder
    below it whose name is not UTF-8 is named in the error (the workspaces below), and the one
    error boundary's own JSON line raised: a traceback, exit 1 instead of 3."""
    clone = tmp_path / "clone"
    (clone / "team-\udce9" / ".workspace").mkdir(parents=True)  # the name's byte: 0xe9
    done = subprocess.run(
        cli_command("export", "-w", str(clone), "--json", "--progress", "json"),
        env=cli_env(tmp_path),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 3 and b"Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.splitlines()
    error = json.loads(line)
    assert error["event"] == "error" and error["exitCode"] == 3
    assert "team-\\xe9" in error["message"]  # the name's byte, as files/walk.py shows names
