"""Text from strangers shown escaped: every control character, nothing else."""

from __future__ import annotations

import subprocess
import unicodedata
from pathlib import Path

from fakeserver import Answer as FakeAnswer
from fakeserver import (
    FakeServer,
    fake_server_fixture,  # noqa: F401 - registers fake_server
)
from helpers import GRAPH, WorkspaceMaker, cli_command, cli_env, run_record

from openlineage_export.terminal.text import shown, shown_lines


def test_every_control_character_is_shown_escaped_and_nothing_else_changes() -> None:
    assert (
        shown("plain, ünïcödé, 東京, emoji 🚀, back\\slash")
        == "plain, ünïcödé, 東京, emoji 🚀, back\\slash"
    )
    assert shown("a\x1b]0;title\x07b") == "a\\x1b]0;title\\x07b"
    assert shown("line\nbreak\rand\ttab") == "line\\nbreak\\rand\\ttab"
    assert (
        shown("nul\x00 del\x7f csi\x9b osc\x9d nel\x85")
        == "nul\\x00 del\\x7f csi\\x9b osc\\x9d nel\\x85"
    )
    assert all(
        "\\x" in shown(chr(c)) or "\\" in shown(chr(c)) for c in [*range(0x20), *range(0x7F, 0xA0)]
    )
    assert shown("\xa0") == "\xa0"  # no-break space is text


def test_a_line_break_inside_a_line_cannot_make_another_line() -> None:
    assert shown_lines(["first: a\nforged", "second"]) == "first: a\\nforged\nsecond"


def test_what_changes_how_a_line_shows_unseen_is_shown_escaped() -> None:
    """A right-to-left override makes ``refused`` read ``desufer`` on a terminal that does
    bidi; U+2028 and U+2029 break the line on some; U+200B, U+2060 and U+FEFF are invisible."""
    assert shown("run-7\u202e|deifitsuj\u202c") == "run-7\\u202e|deifitsuj\\u202c"
    for char in "\u061c\u200b\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e":
        assert shown(f"a{char}b") == f"a\\u{ord(char):04x}b"
    for char in "\u2060\u2066\u2067\u2068\u2069\ufeff":
        assert shown(f"a{char}b") == f"a\\u{ord(char):04x}b"
    # Joiners are how emoji and scripts (Persian, Devanagari) are written: text.
    assert shown("👨\u200d👩\u200d👧 \u0645\u200c\u0627") == "👨\u200d👩\u200d👧 \u0645\u200c\u0627"


def test_every_format_character_but_the_joiners_and_the_fillers_are_shown_escaped() -> None:
    """attack F, F5: ``daily<U+E0041>-sales`` printed as ``daily-sales``; U+2061-U+2064, tags,
    U+00AD, U+180E, U+FFF9, U+1D173 and the Hangul fillers showed nothing or a blank."""
    assert shown("a\u00adb") == "a\\xadb"
    for char in "\u2061\u2062\u2063\u2064\u180e\ufff9\u206a\u206f\u115f\u1160\u3164\uffa0":
        assert shown(f"a{char}b") == f"a\\u{ord(char):04x}b"
    for char in "\U000e0001\U000e0041\U000e007f\U0001d173\U000110bd":
        assert shown(f"a{char}b") == f"a\\U{ord(char):08x}b"
    assert shown("daily\U000e0041-sales") != shown("daily-sales")
    every = {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"}
    for char in sorted(every - {"\u200c", "\u200d"}):
        assert shown(char) != char, hex(ord(char))
    # Joiners and variation selectors are how emoji and scripts are written: text.
    assert shown("\u2764\ufe0f \u0915\u094d\u200d\u0937") == "\u2764\ufe0f \u0915\u094d\u200d\u0937"


def test_a_lone_surrogate_is_shown_escaped_and_the_line_is_unicode() -> None:
    """From a settings.json's ``"\\udcff"``, or the bytes of a name that is not UTF-8: no UTF-8
    to print it with (a strict terminal encoding raised; another printed the raw byte)."""
    line = shown("v\udcff \ud800 \udc80")
    assert line == "v\\udcff \\ud800 \\udc80"
    line.encode("utf-8")


UNSEEN = "\u202e\u2066\u2069\u200f\u061c\u2028\u2029\u200b\u2060\ufeff"


def test_no_output_of_an_export_or_status_carries_them_raw(
    ws: WorkspaceMaker, tmp_path: Path, fake_server: FakeServer
) -> None:
    """Found by the fourth round's attacker: a never-run pipeline, a failed run's trace id, a
    server's refusal and ``status --runs`` (read back from the ledger) printed them as they
    were."""
    mark = f"x{UNSEEN}"
    ws.graph({**GRAPH, "pipelines": [*GRAPH["pipelines"], {"id": f"never-{mark}"}]})
    ws.segment("000001.jsonl", [run_record(f"run-{mark}", pipeline="daily-sales")])
    fake_server.script(lambda req: FakeAnswer(400, body=f"denied {mark} by policy"))
    env = cli_env(tmp_path, PYTHONIOENCODING="utf-8:strict")
    outputs = []
    for args, code in [
        (("export", "--url", fake_server.url, "--progress", "none"), 1),
        (("export", "--url", fake_server.url, "--json", "--progress", "json"), 1),
        (("status", "--runs", "--url", fake_server.url), 0),
        (("status", "--json", "--url", fake_server.url), 0),
    ]:
        done = subprocess.run(
            cli_command(*args, "-w", str(ws.root)), env=env, capture_output=True, timeout=120
        )
        assert done.returncode == code, (args, done.stderr)
        assert b"Traceback" not in done.stderr
        outputs.append(done.stdout + done.stderr)
    assert any(b"never-x\\u202e" in out for out in outputs)  # said, escaped
    assert any(b"denied x\\u202e" in out for out in outputs)
    for out in outputs:
        assert not any(char.encode() in out for char in UNSEEN), out


def test_a_line_longer_than_a_person_reads_is_cut_saying_how_much_more_it_held() -> None:
    assert shown("x" * 10_000) == "x" * 10_000
    assert shown("x" * 12_345) == "x" * 10_000 + "... (2,345 more characters)"
    assert shown("\x1b" * 20_000).startswith("\\x1b" * 2_500 + "... (10,000 more")


def test_a_two_megabyte_pipeline_id_floods_no_terminal(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """Before: ``never run: `` and the two megabytes of the graph's id, on one line; the same
    for a trace id in the failed runs' list."""
    ws.graph({**GRAPH, "pipelines": [*GRAPH["pipelines"], {"id": "n" * 2_000_000}]})
    ws.segment("000001.jsonl", [run_record("r1")])
    done = subprocess.run(
        cli_command("export", "--dry-run", "-o", str(tmp_path / "e.jsonl"), "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"never run: nnn" in done.stderr and b"more characters)" in done.stderr
    assert len(done.stderr) < 30_000
