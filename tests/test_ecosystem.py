"""openlineage-python's openlineage.yml (host/ecosystem.py), read as plain data: whatever it
holds is one line naming the file, at once, never a traceback nor gigabytes of memory."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, cli_command, cli_env, run_record

from openlineage_export.errors import ConfigError
from openlineage_export.host.ecosystem import MAX_BYTES, read_ecosystem


def billion_laughs() -> str:
    """Nine mappings of nine aliases of the one before: 9**9 leaves in under 700 bytes."""
    lines = ["a: &a {0: lol, 1: lol, 2: lol, 3: lol, 4: lol, 5: lol, 6: lol, 7: lol, 8: lol}"]
    for before, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} {{" + ", ".join(f"{i}: *{before}" for i in range(9)) + "}")
    return "\n".join(lines) + "\n"


SELF_ALIAS = "transport: &t\n  type: http\n  url: http://127.0.0.1:5000\n  again: *t\n"


def _limited() -> None:
    # Before the fix the bomb took 6.5 GB and more than a minute: never let a test do that.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize(
    ("text", "line"),
    [(SELF_ALIAS, 4), (billion_laughs(), 2)],
    ids=["self-referencing alias", "billion laughs"],
)
@pytest.mark.parametrize(
    "command",
    [
        ["settings", "list", "--json"],
        ["settings", "get", "openlineage.url"],
        ["export", "--dry-run", "-o", "-"],
    ],
)
def test_an_alias_is_one_line_naming_the_file_at_once(
    ws: WorkspaceMaker, tmp_path: Path, text: str, line: int, command: list[str]
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    config = tmp_path / "mine" / "openlineage.yml"
    config.parent.mkdir()
    config.write_text(text)
    assert len(text.encode()) < 700
    done = subprocess.run(
        cli_command(*command, "-w", str(ws.root)),
        env=cli_env(tmp_path, OPENLINEAGE_CONFIG=str(config)),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        f"error: {config}:{line}: an alias (*{'t' if text is SELF_ALIAS else 'a'}): "
        "openlineage.yml is read as plain data, without anchors and aliases (a few hundred "
        "bytes of them can stand for gigabytes); write the values out"
    ], done.stderr[-2000:]
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("transport:\n  url: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply to read"),
        ("transport:\n  when: 2026-13-45\n", "a value in it cannot be read"),
        ("transport: [\n", ":2: not valid YAML"),
        ("transport: !!python/object:os.system {}\n", ":1: not valid YAML"),
        (b"transport: \xff\n", r"cannot read it \(not UTF-8 text\)"),
        ("#" * (MAX_BYTES + 1), f"it is larger than {MAX_BYTES:,} bytes"),
        ("- a list\n", "must hold a mapping"),
    ],
)
def test_a_file_that_is_no_plain_mapping_is_one_config_error(
    tmp_path: Path, content: str | bytes, said: str
) -> None:
    config = tmp_path / "mine" / "openlineage.yml"  # not in a folder the workspace lies in
    config.parent.mkdir()
    config.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigError, match=f"^{config}.*{said}"):
        read_ecosystem({"OPENLINEAGE_CONFIG": str(config)}, tmp_path / "project" / "ws")


def test_a_fifo_is_not_waited_for(tmp_path: Path) -> None:
    config = tmp_path / "openlineage.yml"
    os.mkfifo(config)
    found = read_ecosystem({"OPENLINEAGE_CONFIG": str(config)}, tmp_path / "project" / "ws")
    assert found.layers == () and found.warnings == (
        f"OPENLINEAGE_CONFIG names {config}, which is no file: not read",
    )
