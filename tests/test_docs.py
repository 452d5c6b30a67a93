"""The documentation as a reader follows it: every relative link leads to a file that exists,
and every command and option it shows is one the CLI has."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from helpers import ROOT

from openlineage_export.cli import main as cli_main

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROG = "openlineage-export"


def links(page: Path) -> Iterator[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.split("#")[0]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = [t for t in links(page) if not (page.parent / t).exists()]
    assert not broken, f"{page.name}: links to nothing: {broken}"


def shown_commands(page: Path) -> Iterator[list[str]]:
    """Each ``openlineage-export ...`` a page shows (in a code block or in `code`), as words,
    up to where the shell takes over (a pipe, a comment, a redirection...)."""
    text = page.read_text()
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    for snippet in [line for block in blocks for line in block.splitlines()] + inline:
        # (not ``openlineage-export @ URL``: a requirement pip installs, docs/ci.md)
        for match in re.finditer(
            rf"(?:^|[\s/(\"$]){PROG}(?=\s|$)(?!\s+@\s)([^\n#|;&)>`\"]*)", snippet
        ):
            try:
                words = shlex.split(match.group(1))
            except ValueError:
                words = match.group(1).split()
            yield words


def check(words: list[str]) -> str | None:
    """What in ``words`` the CLI does not have, if anything."""
    command: click.Command = cli_main
    ctx = click.Context(cli_main, info_name=PROG)
    for word in words:
        if word.startswith("-"):
            name = word.split("=")[0]
            if name in ("-h", "--help") or any(
                name in p.opts or name in p.secondary_opts
                for p in command.get_params(ctx)
                if isinstance(p, click.Option)
            ):
                continue
            if name == "-w" or name == "--workspace" or name in ("-V", "--version"):
                continue
            return f"{' '.join(words)}: no option {name}"
        if isinstance(command, click.Group) and not word.isupper() and word not in ("...",):
            sub = command.get_command(ctx, word)
            if sub is None:
                if "|" in word or "[" in word:  # settings list|get|set|unset
                    missing = [
                        w
                        for w in word.strip("[]").split("|")
                        if command.get_command(ctx, w) is None
                    ]
                    return f"{' '.join(words)}: no command {missing}" if missing else None
                return f"{' '.join(words)}: no command {word!r}"
            command = sub
    return None


def test_every_command_and_option_shown_exists() -> None:
    shown = [(page.name, words) for page in PAGES for words in shown_commands(page)]
    assert len(shown) > 30, "the pages show commands"
    assert check(["export", "--bogus"]) and check(["exprot"]), "the check finds what is not there"
    wrong = [f"{name}: {problem}" for name, words in shown if (problem := check(words)) is not None]
    assert not wrong, "\n".join(wrong)


# ------------------------------------------------ the README's commands, as a newcomer runs them

RUNS_ITSELF = "scripts/test.sh"
"""The second command is the run this test is part of."""


def readme_blocks(section: str) -> list[str]:
    """The ``sh`` code blocks of the README's section ``section``, as written."""
    text = (ROOT / "README.md").read_text()
    body = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, flags=re.S | re.M)
    assert body is not None, f"README.md has no section {section!r}"
    return re.findall(r"```sh\n(.*?)```", body.group(1), flags=re.S)


def readme_inline_venv_commands() -> list[str]:
    """The README's prose commands a reader runs after the first command (``.venv/bin/...``)."""
    prose = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(), flags=re.S)
    return re.findall(r"`(\.venv/bin/[^`\n]+)`", prose)


def clean_clone(into: Path) -> Path:
    """What a fresh clone holds (the tracked files, as they are in this tree), with the sources
    of ``../shared`` beside it as in CI; nothing built, no .venv."""
    import shutil
    import subprocess

    listed = (
        subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    clone = into / "main"
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() or source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name, follow_symlinks=False)
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (into / "shared").symlink_to(shared)
    return clone


def test_the_readme_commands_work_as_written_on_a_fresh_clone(tmp_path: Path) -> None:
    """Each command the README's "Two commands" and "Using it" show, and the prose commands
    after them, run as written in a fresh clone (no .venv, nothing installed): the first one
    sets up what the later ones need. Its servers are loopback ones of the test's; WORKSPACE
    is a copy of the demo."""
    import shutil
    import subprocess

    from fakeserver import FakeServer

    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no clean clone to make")
    clone = clean_clone(tmp_path)
    (first,) = readme_blocks("Two commands")
    setup = "\n".join(
        line for line in first.splitlines() if not line.lstrip().startswith(("#", RUNS_ITSELF))
    )
    workspace = tmp_path / "workspace"
    shutil.copytree(ROOT / "demo" / "acme-analytics", workspace)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENLINEAGE", "XDG_", "VIRTUAL_ENV", "PYTHONPATH"))
    }
    env |= {"HOME": str(tmp_path / "home"), "OPENLINEAGE_EXPORT_SECRETS": "file"}

    def sh(script: str, **extra: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=clone,
            env=env | extra,
            input="a-key-for-the-readme\n",
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, (
            f"{script}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
        return proc

    demo = sh(setup)
    assert "236 events" in demo.stdout + demo.stderr, demo.stdout + demo.stderr
    later = readme_inline_venv_commands()
    assert any("validate.py" in command for command in later), later
    for command in later:
        sh(command)
    with FakeServer() as first_server, FakeServer() as other_server:
        (using,) = readme_blocks("Using it")
        script = (
            using.replace("WORKSPACE", shlex.quote(str(workspace)))
            .replace("http://localhost:5000", first_server.url)
            .replace("http://other:5000", other_server.url)
        )
        sh(script)
        assert first_server.requests and other_server.requests, "both exports sent"
    assert (workspace / "events.jsonl").stat().st_size > 0
