"""settings.json as a file (host/jsonfile.py): read it whatever it holds, write it atomically,
keep what belongs to others byte for byte, and never write through a link."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from helpers import DEMO, WorkspaceMaker, cli_command, cli_env

from openlineage_export.errors import ConfigError
from openlineage_export.host.jsonfile import (
    MAX_BYTES,
    parse_object,
    raw_entries,
    read_text,
    write_entries,
)

DEEP = '{"other.extension": ' + "[" * 200_000 + "]" * 200_000 + "}"


def test_a_file_nested_deeper_than_the_reader_can_follow_is_one_message(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_text(DEEP)
    with pytest.raises(ConfigError, match=r"settings.json is nested too deeply to read"):
        parse_object(read_text(file), file)
    with pytest.raises(ConfigError, match="nested too deeply"):
        raw_entries(file)


@pytest.mark.parametrize(
    "command",
    [
        ("settings", "list"),
        ("export", "--dry-run"),
        ("settings", "set", "openlineage.timeout", "5"),
    ],
)
def test_the_cli_says_so_in_one_line(
    ws: WorkspaceMaker, tmp_path: Path, command: tuple[str, ...]
) -> None:
    (ws.root / ".workspace" / "settings.json").write_text(DEEP)
    done = subprocess.run(
        cli_command(*command, "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(
        f"error: {ws.root}/.workspace/settings.json is nested too deeply to read"
    )


@pytest.mark.parametrize(
    "how",
    [
        "settings.json to the user's key-origins.json",
        "settings.json to .git/config",
        ".workspace to a folder outside",
    ],
)
@pytest.mark.parametrize(
    "command", [("set", "openlineage.timeout", "5"), ("unset", "openlineage.timeout")]
)
def test_settings_are_never_written_through_a_link(
    ws: WorkspaceMaker, tmp_path: Path, how: str, command: tuple[str, ...]
) -> None:
    """Issue 30, 5: the editor runs ``settings set`` on every change; a link pushed with the
    workspace must not make it rewrite the user's file: one line, nothing written."""
    marker = ws.root / ".workspace"
    if how.startswith(".workspace"):
        elsewhere = tmp_path / "elsewhere"
        shutil.move(marker, elsewhere)
        marker.symlink_to(elsewhere)
        target = elsewhere / "settings.json"
        link = marker
    else:
        if "key-origins" in how:
            target = tmp_path / "config" / "key-origins.json"
        else:
            target = ws.root / ".git" / "config"
        target.parent.mkdir(mode=0o700)
        link = marker / "settings.json"
        link.symlink_to(target)
    target.write_text('{"openlineage.timeout": 7, "marquez-prod": ["https://m.example.com"]}\n')
    before = (target.read_bytes(), target.stat().st_mtime_ns, sorted(os.listdir(target.parent)))
    done = subprocess.run(
        cli_command("settings", *command, "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"error: cannot write {ws.root}/.workspace/settings.json: {link} is a link, not a "
        f"{'folder' if link == marker else 'file'} of the workspace's own; the workspace's "
        "settings are written only inside the workspace, never through a link: nothing was "
        "written"
    ], done.stderr
    assert (
        target.read_bytes(),
        target.stat().st_mtime_ns,
        sorted(os.listdir(target.parent)),
    ) == before
    assert link.is_symlink() and sorted(os.listdir(marker)) == sorted(
        os.listdir(target.parent if link == marker else marker)
    )


def test_settings_set_writes_atomically_in_the_workspace(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    settings = ws.root / ".workspace" / "settings.json"
    settings.write_text('{"other.extension": {"keep": [1, 2.50]}}\n')
    settings.chmod(0o640)
    inode = settings.stat().st_ino
    done = subprocess.run(
        cli_command("settings", "set", "openlineage.timeout", "5", "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert settings.read_text() == (
        '{\n  "other.extension": {"keep": [1, 2.50]},\n  "openlineage.timeout": 5\n}\n'
    )
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    assert settings.stat().st_ino != inode  # a new file renamed over the old: never half one
    assert sorted(os.listdir(settings.parent)) == ["lineage", "settings.json"]


def test_other_keys_are_written_back_with_exactly_their_text(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_text('\ufeff{ "a" :1.50e0, "b":"\\u00e9", "a": [ ] }')
    entries = raw_entries(file)
    assert entries == {"a": ('"a"', "[ ]"), "b": ('"b"', '"\\u00e9"')}
    write_entries(file, entries, root=tmp_path)
    assert file.read_text() == '{\n  "a": [ ],\n  "b": "\\u00e9"\n}\n'


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigError, match=r"settings.json is not UTF-8 text \(byte 7\)"):
        read_text(file)


def test_a_settings_file_that_is_a_fifo_is_one_line_not_a_hang(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    settings = ws.root / ".workspace" / "settings.json"
    os.mkfifo(settings)
    done = subprocess.run(
        cli_command("settings", "list", "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"error: cannot read {settings}: it is a named pipe (FIFO), not a file\n"
    )


@pytest.mark.parametrize("file", ["settings.json", "secrets.json"])
def test_a_number_of_5000_digits_is_one_line_naming_the_file_and_key(
    tmp_path: Path, file: str
) -> None:
    """Python refuses to turn more than 4,300 digits into an int (a ValueError, not a JSON
    error): one line naming the file and the key, never the number, exit 2."""
    root = tmp_path / "ws"
    shutil.copytree(DEMO, root)
    env = cli_env(tmp_path)
    number = "7" * 5000
    if file == "settings.json":
        path = root / ".workspace" / "settings.json"
        path.write_text(
            '{"openlineage.url": "http://localhost:5000",\n'
            f' "openlineage.retry.maxTime": {number}}}'
        )
        where = "openlineage.retry.maxTime"
        commands = [
            ["export", "--dry-run", "-o", str(tmp_path / "ev.jsonl")],
            ["settings", "list"],
            ["settings", "set", "openlineage.namespace", "x"],
        ]
    else:
        folder = tmp_path / "config"
        folder.mkdir(mode=0o700)
        path = folder / "secrets.json"
        path.write_text(f'{{"marquez": "sk-1", "other": {{"list": [1, -{number}]}}}}')
        path.chmod(0o600)
        where = "other.list[1]"
        commands = [["secrets", "list"], ["secrets", "set", "x"]]
    for command in commands:
        proc = subprocess.run(
            cli_command(*command, "-w", str(root))
            if command[0] != "secrets"
            else cli_command(*command),
            env=env,
            capture_output=True,
            text=True,
            input="value",
            timeout=120,
        )
        assert proc.returncode == 2, (command, proc.stderr)
        lines = proc.stderr.splitlines()
        assert lines == [
            f"error: {'the secrets file ' if file == 'secrets.json' else ''}"
            f"{path}: {where} is a number of 5,000 digits, longer than any "
            "setting or secret (and than Python reads); fix or remove it"
        ], lines
        assert "7777" not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "text", ["[" * 300 + "]" * 300, str(2**64), str(-(2**70)), "1" + "0" * 400]
)
def test_a_deep_or_huge_value_is_shown_or_refused_in_one_line_never_a_traceback(
    ws: WorkspaceMaker, tmp_path: Path, text: str
) -> None:
    """Valid JSON that orjson cannot write back (over 254 deep, over 64 bits) or no float can
    hold: ``settings list|get --json`` show it as it is (to mend it), the export refuses it in
    one line naming the file and the key, exit 2."""
    settings = ws.root / ".workspace" / "settings.json"
    settings.write_text(f'{{"openlineage.concurrency": {text}}}')
    env = cli_env(tmp_path)
    for command in (
        ["settings", "list", "--json"],
        ["settings", "get", "openlineage.concurrency", "--json"],
    ):
        done = subprocess.run(
            cli_command(*command, "-w", str(ws.root)),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        shown = json.loads(done.stdout)
        row = (
            next(r for r in shown if r["key"] == "openlineage.concurrency")
            if isinstance(shown, list)
            else shown
        )
        assert row["value"] == json.loads(text) and row["source"] == "settings.json"
    done = subprocess.run(
        cli_command("export", "--dry-run", "-o", str(tmp_path / "e.jsonl"), "-w", str(ws.root)),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: openlineage.concurrency in {settings} ")


@pytest.mark.parametrize("command", [("settings", "list"), ("export", "--dry-run")])
def test_a_settings_file_larger_than_the_limit_is_one_line(
    ws: WorkspaceMaker, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Attack A, 9: ``settings list`` (which the editor runs) took 2.1 GB and 32 s on a 1 GiB
    settings.json of blanks."""
    settings = ws.root / ".workspace" / "settings.json"
    settings.write_bytes(b" " * MAX_BYTES + b"{}")
    done = subprocess.run(
        cli_command(*command, "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"error: cannot read {settings}: it is larger than {MAX_BYTES:,} bytes\n"
    ), done.stderr
