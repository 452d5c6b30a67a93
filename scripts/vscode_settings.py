"""Write what the VS Code extension knows of the tool from the tool's own declarations, so the
two cannot drift apart: its settings (editor/vscode/package.json, contributes.configuration,
from the settings catalogue) and the destination kinds' secrets
(editor/vscode/src/kindSecrets.ts, from the kinds' registry rows).

Usage: python scripts/vscode_settings.py [--check]   (the project's Python: .venv/bin/python,
                                                    where scripts/setup.sh installed the package)

    --check   change nothing; exit 1 (saying so) when a file is not what it would write

Every setting of ``openlineage-export settings list`` becomes one property of the section
"OpenLineage Export": its type, default, allowed values, bounds and description. A setting with
no default (``None``) is a string whose empty value means "not set", as the Settings UI shows it.
Every kind with a secret (``Kind.secret`` in deliver/registry.py) becomes one row of
``KIND_SECRETS``: the setting that names the secret, the variable that hands it over, what it is,
where it goes; every kind's address setting is in ``KIND_ADDRESSES``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from openlineage_export.deliver.registry import CATALOGUE, KINDS
from openlineage_export.host.credentials import KEY_PREFIXES
from openlineage_export.host.setting_row import Setting

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_JSON = ROOT / "editor" / "vscode" / "package.json"
KIND_SECRETS_TS = ROOT / "editor" / "vscode" / "src" / "kindSecrets.ts"
TITLE = "OpenLineage Export"

_JSON_TYPES = {
    "string": "string",
    "url": "string",
    "path": "string",
    "output": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
}


_T = "[A-Za-z0-9]"
KEY_SHAPE = (
    "(?=.{16})(?:" + "|".join(p.replace(".", "\\.") for p in KEY_PREFIXES) + ")"
    "|eyJ[^.]*\\.[^.]*\\.[^.]*$"
    f"|(?:.*[-_.])?(?:(?={_T}{{32}})(?={_T}*\\d)(?={_T}*[A-Za-z])"
    f"|(?={_T}{{20}})(?=(?:{_T}*?(?:[A-Za-z](?=\\d)|\\d(?=[A-Za-z]))){{3}}))"
)
"""The tool's ``looks_like_credential`` for a secret's name (letters, digits, '.', '_', '-'), as
a regular expression VS Code checks as it is typed: a known key prefix (16 characters or more),
a JSON web token, or a run of letters and digits of 32 or more with both, or of 20 or more that
switches between them three times. tests/test_vscode_settings.py checks that they agree."""


IN_FORCE_SHOWN = frozenset(
    (
        "openlineage.url",
        "openlineage.apiKey.secretRef",
        "openlineage.endpoint",
        "openlineage.namespace",
    )
)
"""The settings whose value in force the extension's IN FORCE view shows (with the transport,
its address and its secret's name)."""


def property_of(row: Setting, order: int) -> dict[str, Any]:
    """The JSON-schema property VS Code shows for one setting."""
    kind = _JSON_TYPES[row.type]
    prop: dict[str, Any] = {"type": kind, "order": order}
    default = row.default
    if default is None:
        default = ""  # not set: the Settings UI shows an empty box
    prop["default"] = default
    description = row.description
    if row.default is None and kind == "string":
        description += " Empty: not set."
    if row.key == "openlineage.apiKey.secretRef":
        description += (
            " In VS Code, OpenLineage: Store API Key keeps the key in VS Code's "
            "secret storage under this name."
        )
    if row.env:
        description += f" The environment variable {row.env} overrides it."
    if row.key in IN_FORCE_SHOWN:
        # The Settings editor shows VS Code's values, not the one in force (the workspace's
        # file's, the environment's): the IN FORCE view does.
        description += (
            " The value in force, and where it comes from, is in the OpenLineage view's IN FORCE."
        )
    prop["description"] = description
    if row.choices is not None:
        prop["enum"] = list(row.choices)
    if row.minimum is not None:
        prop["minimum"] = row.minimum
    if row.maximum is not None:
        prop["maximum"] = row.maximum
    if row.pattern is not None and row.key.lower().endswith("secretref"):
        # The name of a secret, never a key: refused as it is typed, before VS Code stores it.
        prop["pattern"] = f"^(?:(?!{KEY_SHAPE}){row.pattern})?$"
        prop["patternErrorMessage"] = (
            f"The NAME of a secret ({row.pattern_help}), never the key itself: this looks like a "
            "key. Keys never go in settings (they travel with the workspace): store it with "
            "OpenLineage: Store API Key, and put its name here."
        )
    elif row.pattern is not None:
        # Python's fullmatch, as a JavaScript pattern; empty stays allowed (not set).
        prop["pattern"] = f"^(?:{row.pattern})?$"
        prop["patternErrorMessage"] = f"Must match {row.pattern} ({row.pattern_help})."
    elif row.type == "url":
        prop["pattern"] = "^(?:https?://.+)?$"
        prop["patternErrorMessage"] = "Must start with http:// or https://."
    return prop


EDITOR_ONLY: dict[str, dict[str, Any]] = {
    "openlineage.dryRun": {
        "type": "boolean",
        "default": False,
        "scope": "resource",
        "description": (
            "OpenLineage: Export Lineage Runs builds every event and the report and sends "
            "nothing, as `openlineage-export export --dry-run` does (it needs no server); "
            "auto-export sends nothing while it is on. "
            "On when any level says so: a workspace's or folder's settings can turn it on, "
            "never off (true in your User settings stays in force). "
            "The editor's own setting, never in .workspace/settings.json. A keybinding or task "
            'can ask for one dry run: the command `openlineage.export` with `{"dryRun": true}`.'
        ),
    },
    "openlineage.autoExport": {
        "type": "boolean",
        "default": False,
        # It starts sending on its own: the user's alone, never a folder's (whose settings
        # travel with the workspace: a committed .vscode/settings.json could turn it on).
        "scope": "application",
        "description": (
            "While a folder is open, send each run once it ends, as "
            "`openlineage-export export --watch` does (what is pending first); the status bar "
            "says what it does. The editor's own setting, in your User settings only: a "
            "folder's settings (which travel with the workspace) cannot turn it on, and it is "
            "never in .workspace/settings.json. An API key goes only to a server you approved "
            "for it."
        ),
    },
    "openlineage.marquez.webUrl": {
        "type": "string",
        "default": "",
        "scope": "application",
        "pattern": "^(?:https?://[^/].*)?$",
        "patternErrorMessage": "Must start with http:// or https://.",
        "description": (
            "Marquez's web UI (e.g. http://localhost:3000), when events go to a Marquez: a "
            "run of the RUNS view then opens its job there, and an export's notification "
            "offers Open in Marquez. The editor's own setting, in your User settings only "
            "(a workspace never decides what your browser opens). Empty: not set."
        ),
    },
}
"""The extension's own settings, after the tool's: not the tool's (the CLI knows nothing of
them), so never mirrored into .workspace/settings.json (editor/vscode/src/extension.ts,
EDITOR_ONLY)."""


FIRST = (
    "openlineage.url",
    "openlineage.apiKey.secretRef",
    "openlineage.endpoint",
    "openlineage.namespace",
    "openlineage.dryRun",
)
"""The settings the product page's steps name, in its order: where the events go, the key's
name, the path, the namespace, a dry run; the Settings UI lists them first."""


def configuration() -> dict[str, Any]:
    """contributes.configuration: one section, the product page's steps first (:data:`FIRST`),
    then every other setting in the tool's order, then the editor's own."""
    rows = {row.key: row for row in CATALOGUE}
    keys = [
        *FIRST,
        *(k for k in rows if k not in FIRST),
        *(k for k in EDITOR_ONLY if k not in FIRST),
    ]
    properties: dict[str, Any] = {}
    for order, key in enumerate(keys):
        if key in rows:
            properties[key] = property_of(rows[key], order)
        else:
            prop = EDITOR_ONLY[key]
            properties[key] = {"type": prop["type"], "order": order, **prop}
    return {"title": TITLE, "properties": properties}


def rendered(package: dict[str, Any]) -> str:
    package["contributes"]["configuration"] = configuration()
    return json.dumps(package, indent=2, ensure_ascii=False) + "\n"


def kind_secrets() -> list[dict[str, str]]:
    """Each destination kind's secret, as the extension reads it: its kind, the setting that
    names it, the environment variable that hands it over, what it is, and the setting that
    says where it goes."""
    return [
        {
            "kind": kind.name,
            "setting": kind.secret.setting,
            "env": kind.secret.env,
            "what": kind.secret.what,
            "address": kind.address or "",
        }
        for kind in KINDS.values()
        if kind.secret is not None
    ]


def kind_secrets_ts() -> str:
    """editor/vscode/src/kindSecrets.ts: :func:`kind_secrets` as a TypeScript constant."""
    rows = ",\n".join(f"  {json.dumps(row, ensure_ascii=False)}" for row in kind_secrets())
    return (
        "// Generated by scripts/vscode_settings.py from the destination kinds' registry\n"
        "// (src/openlineage_export/deliver/registry.py, each row's secret): do not edit.\n"
        "// tests/test_vscode_settings.py fails when the two disagree.\n"
        "\n"
        "/** A secret a destination kind may send. */\n"
        "export interface KindSecret {\n"
        "  /** The kind, as openlineage.transport names it. */\n"
        "  kind: string;\n"
        "  /** The setting that names the secret in a secrets store (its ...secretRef). */\n"
        "  setting: string;\n"
        "  /** The environment variable that hands the secret over directly instead. */\n"
        "  env: string;\n"
        '  /** What it is, for a person: "the API key". */\n'
        "  what: string;\n"
        "  /** The setting that says where the kind's events (and so its secret) go. */\n"
        "  address: string;\n"
        "}\n"
        "\n"
        "export const KIND_SECRETS: readonly KindSecret[] = [\n"
        f"{rows},\n"
        "];\n"
        "\n"
        "/** The setting that says where each kind's events go, by kind. */\n"
        "export const KIND_ADDRESSES: Readonly<Record<string, string>> = "
        f"{json.dumps(kind_addresses(), ensure_ascii=False)};\n"
    )


def kind_addresses() -> dict[str, str]:
    """Each destination kind's address setting (where its events go), by kind."""
    return {kind.name: kind.address for kind in KINDS.values() if kind.address}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when package.json's settings or kindSecrets.ts are not the tool's",
    )
    args = parser.parse_args(argv)
    current = PACKAGE_JSON.read_text(encoding="utf-8")
    files = {
        PACKAGE_JSON: rendered(json.loads(current)),
        KIND_SECRETS_TS: kind_secrets_ts(),
    }
    stale = [
        file
        for file, wanted in files.items()
        if not file.exists() or file.read_text(encoding="utf-8") != wanted
    ]
    if not stale:
        return 0
    if args.check:
        for file in stale:
            print(
                f"{file.relative_to(ROOT)}: not what the tool declares (its settings, its "
                "kinds' secrets); write it with: python scripts/vscode_settings.py",
                file=sys.stderr,
            )
        return 1
    for file in stale:
        file.write_text(files[file], encoding="utf-8")
        print(f"wrote {file.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
