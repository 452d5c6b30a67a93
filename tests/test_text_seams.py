"""The text seams stay the only way (docs/security.md, "Text is Unicode or escaped, at the
seam"): a test that reads the source, so that a new writer cannot get around them by accident.

- JSON is made of values only by ``jsonout.py`` (every output's escapes, and lone surrogates
  written as escapes), but for the files and fixed parts listed in :data:`OWN_JSON`;
- what librdkafka says is read only by ``deliver/kafka/said.py`` (``KafkaError.str()`` decodes
  a broker's bytes strictly);
- text reaches standard output and standard error only through the modules that show it
  (:data:`WRITERS`): ``print``, ``click.echo`` or ``sys.stderr.write`` anywhere else would
  print a stranger's escape sequence as it is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "openlineage_export"

OWN_JSON = {
    "jsonout.py": "the one encoder",
    "translate/encoded.py": "an event's fixed parts: our constants, a checked time, a UUID",
    "host/settings_file.py": "settings.json's own text, a file of the workspace's",
    "host/settings.py": "values compared, never shown",
    "host/secret_files.py": "the secrets file, the user's",
}
"""Where JSON is made other than by jsonout.py, and why that is no output."""
WRITERS = {
    "terminal/streams.py": "the one way out for a line or a JSON document (cli/echo.py shows it)",
    "terminal/display.py": "progress and messages, each through shown() or jsonout",
    "terminal/signals.py": "our own constant words on a signal",
    "deliver/console.py": "the events themselves (jsonout's bytes), the console destination",
    "__main__.py": "'interrupted', ours, before anything else is loaded",
}
"""The modules that write to standard output or error."""
ENCODERS = {("orjson", "dumps"), ("json", "dumps"), ("msgspec.json", "encode")}
ENCODER_CLASSES = {("msgspec.json", "Encoder")}


def modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` of a Name or an Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """What each name bound by an import stands for: ``oj`` -> ``orjson``, ``d`` ->
    ``orjson.dumps``, ``enc`` -> ``msgspec.json``."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def calls(tree: ast.Module, wanted: set[tuple[str, str]]) -> list[int]:
    """The lines where ``tree`` calls one of ``wanted`` (module, function), however imported."""
    names = _aliases(tree)
    full = {f"{module}.{name}" for module, name in wanted}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func)
        if dotted is None:
            continue
        head, _, rest = dotted.partition(".")
        resolved = names.get(head, head) + (f".{rest}" if rest else "")
        if resolved in full:
            found.append(node.lineno)
    return found


def test_json_is_made_of_values_only_by_the_one_encoder() -> None:
    found = {
        name: lines
        for name, tree in modules()
        if (lines := calls(tree, ENCODERS | ENCODER_CLASSES)) and name not in OWN_JSON
    }
    assert not found, f"JSON made outside jsonout.py (use jsonout.dumps or fragment): {found}"


def test_what_librdkafka_says_is_read_only_by_said() -> None:
    found = {
        name: [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "str"
            and not node.args
        ]
        for name, tree in modules()
        if name != "deliver/kafka/said.py"
    }
    found = {name: lines for name, lines in found.items() if lines}
    assert not found, f"KafkaError.str() read outside deliver/kafka/said.py: {found}"


def _writes_to_a_terminal(tree: ast.Module) -> list[int]:
    names = _aliases(tree)
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func) or ""
        head, _, rest = dotted.partition(".")
        resolved = names.get(head, head) + (f".{rest}" if rest else "")
        if resolved in ("print", "click.echo", "click.secho", "os.write") or (
            resolved.startswith(
                ("sys.stdout.", "sys.stderr.", "sys.__stdout__.", "sys.__stderr__.")
            )
            and resolved.rsplit(".", 1)[1] in ("write", "writelines")
        ):
            lines.append(node.lineno)
    return lines


def test_text_reaches_a_terminal_only_through_the_modules_that_show_it() -> None:
    found = {
        name: lines
        for name, tree in modules()
        if (lines := _writes_to_a_terminal(tree)) and name not in WRITERS
    }
    assert not found, f"written to standard output or error directly: {found}"


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("import orjson\norjson.dumps({})\n", "json"),
        ("from orjson import dumps as d\nd({})\n", "json"),
        ("import msgspec.json as mj\nmj.encode(1)\n", "json"),
        ("from msgspec import json\njson.Encoder()\n", "json"),
        ("import json as j\nj.dumps(1)\n", "json"),
        ("print('x')\n", "terminal"),
        ("import sys\nsys.stderr.write('x')\n", "terminal"),
        ("from sys import stdout as o\no.write('x')\n", "terminal"),
        ("import click\nclick.echo('x')\n", "terminal"),
    ],
)
def test_the_reading_finds_a_planted_call_however_it_is_imported(source: str, kind: str) -> None:
    tree = ast.parse(source)
    if kind == "json":
        assert calls(tree, ENCODERS | ENCODER_CLASSES)
    else:
        assert _writes_to_a_terminal(tree)
