"""Write docs/settings.md from the tool's own declarations (the settings catalogue), so that the
page and the settings cannot drift apart.

Usage: python scripts/settings_doc.py [--check]   (the project's Python: .venv/bin/python, where
                                                 scripts/setup.sh installed the package)

    --check   change nothing; exit 1 (saying so) when docs/settings.md is not what it would write

One table per group of settings, in the order ``openlineage-export settings list`` shows them:
each setting's key, type, default, allowed values, the environment variable that overrides it,
the key of openlineage-python's configuration that stands for it, and its description. The
page's prose around the tables is the template below. tests/test_settings_doc.py checks the page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from openlineage_export.deliver.registry import CATALOGUE
from openlineage_export.host.setting_row import Setting
from openlineage_export.host.setting_values import accepted_range

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "settings.md"

HEAD = """\
# Settings

<!-- Written by scripts/settings_doc.py from the settings catalogue: edit the declarations (or
the script's template), then run it; tests/test_settings_doc.py fails when they disagree. -->

In `<workspace>/.workspace/settings.json` (flat dotted keys, shared with other extensions, whose
keys are never touched; writes are atomic: a temporary file in `.workspace/`, renamed over the
old one). `openlineage-export settings list|get|set|unset`. A `settings.json` or a `.workspace`
that is a symbolic link is never written through (it may point anywhere, `.git/config` or your
`key-origins.json`, and whoever pushed last chose where): `settings set` and `unset` refuse it in
one line and write nothing; make it a file of the workspace's own.
`settings set` needs a workspace (exit 3 outside one). `settings get KEY` prints the value in
force on stdout, alone (so `$(openlineage-export settings get openlineage.namespace)` is the
value), and where it comes from on stderr: `(settings.json)`, `(default)`,
`(environment (OPENLINEAGE_NAMESPACE))` or, for the namespace, `(workspace name in graph.json)`;
`--json` gives `{"key", "value", "source"}`. `settings list` also shows each choice setting's
allowed values.

Where the events go is `openlineage.transport`, one destination kind each (its description
lists them): a server over HTTP, a Kafka topic (see [servers](servers.md#kafka)), JSON Lines
files (see [servers](servers.md#files-for-air-gapped-sites))... Each kind has its own group
below. A setting that is *yours to set* is refused from the workspace's settings.json (it
weakens how keys travel): set it in your environment. Every number has the range its type
column gives; one outside it (`openlineage.timeout: 1e16`) is refused when the settings are
read, in one line naming the key, where it comes from and the range (exit 2).
"""

TAIL = """\
`OPENLINEAGE_API_KEY` in the environment overrides the stored key (for CI jobs); it goes only to a
url the user named (`OPENLINEAGE_URL` or `--url`), never to one from settings.json. A setting that
looks like a key itself (`openlineage.apiKey`, `...token`, `...password`) is refused with a pointer
to the secrets store; an unknown `openlineage.*` key is refused with a suggestion.

openlineage-python's own configuration (`OPENLINEAGE__TRANSPORT__*`, `openlineage.yml`) is read
too, each key where the column above says:
[docs/openlineage-python-configuration.md](openlineage-python-configuration.md).
"""


def cell(text: str) -> str:
    """Text as one Markdown table cell: no line break, no column separator, no HTML tag."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return f"`{'true' if value else 'false'}`"
    return f"`{value}`"


def row_of(row: Setting) -> str:
    """One setting as a table row."""
    kind = row.type + (": " + ", ".join(f"`{c}`" for c in row.choices) if row.choices else "")
    if row.type in ("integer", "number"):
        kind = row.type + ": " + accepted_range(row)
    where = [f"`{row.env}`" if row.env else "", f"`{row.ecosystem}`" if row.ecosystem else ""]
    what = cell(row.description)
    return f"| `{row.key}` | {kind} | {code(row.default)} | {where[0]} | {where[1]} | {what} |"


def rendered() -> str:
    """The whole page."""
    parts = [HEAD]
    # Groups of one title (declared in two rooms: delivery's own, and the guards' key
    # settings) are one table, as a person reads them.
    titles: dict[str, list[Setting]] = {}
    for group in CATALOGUE.groups:
        titles.setdefault(group.title, []).extend(group.rows())
    for title, rows in titles.items():
        if not rows:
            continue
        parts.append(f"## {title.capitalize()}\n")
        parts.append(
            "| key | type | default | env | openlineage-python | what |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(row_of(r) for r in rows) + "\n"
        )
    parts.append(TAIL)
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when docs/settings.md is not the catalogue's"
    )
    args = parser.parse_args(argv)
    wanted = rendered()
    current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    if current == wanted:
        return 0
    if args.check:
        print(
            f"{PAGE.relative_to(ROOT)} is not the settings catalogue's; write it with: "
            "python scripts/settings_doc.py",
            file=sys.stderr,
        )
        return 1
    PAGE.write_text(wanted, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
