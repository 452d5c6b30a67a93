"""Text from strangers shown escaped: every control character, nothing else."""

from __future__ import annotations

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
