"""The documentation as a reader follows it: every relative link leads to a file that exists,
and every command and option it shows is one the CLI has."""

from __future__ import annotations

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
        for match in re.finditer(rf"(?:^|[\s/(\"$]){PROG}(?=\s|$)([^\n#|;&)>`\"]*)", snippet):
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
            if name in ("-h", "--help") or any(name in p.opts or name in p.secondary_opts
                                                for p in command.get_params(ctx)
                                                if isinstance(p, click.Option)):
                continue
            if name == "-w" or name == "--workspace" or name in ("-V", "--version"):
                continue
            return f"{' '.join(words)}: no option {name}"
        if isinstance(command, click.Group) and not word.isupper() and word not in ("...",):
            sub = command.get_command(ctx, word)
            if sub is None:
                if "|" in word or "[" in word:  # settings list|get|set|unset
                    missing = [w for w in word.strip("[]").split("|")
                               if command.get_command(ctx, w) is None]
                    return f"{' '.join(words)}: no command {missing}" if missing else None
                return f"{' '.join(words)}: no command {word!r}"
            command = sub
    return None


def test_every_command_and_option_shown_exists() -> None:
    shown = [(page.name, words) for page in PAGES for words in shown_commands(page)]
    assert len(shown) > 30, "the pages show commands"
    assert check(["export", "--bogus"]) and check(["exprot"]), "the check finds what is not there"
    wrong = [f"{name}: {problem}" for name, words in shown
             if (problem := check(words)) is not None]
    assert not wrong, "\n".join(wrong)
