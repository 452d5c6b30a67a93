"""``settings``: list, get, set and unset the exporter's settings (the workspace's
settings.json; the catalogue says what each one is)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from click.shell_completion import CompletionItem

from .. import DISTRIBUTION as PROG
from ..deliver.registry import doubts
from ..errors import ExportError
from ..files.whose import Checkouts
from ..host import secrets as secrets_mod
from ..host import settings as settings_mod
from ..host import settings_file
from ..host.workspace import Workspace
from ..terminal.signals import held_signals
from .base import Commands
from .echo import echo, echo_json, show
from .workspace import catalogue, current_workspace, workspace_option


@click.group(
    cls=Commands,
    short_help="Read and change the exporter's settings (in .workspace/settings.json; "
    "they travel with the workspace).",
    examples=f"""\
{PROG} settings list
{PROG} settings get openlineage.namespace
{PROG} settings set openlineage.url http://localhost:5000
{PROG} settings unset openlineage.url""",
)
def settings() -> None:
    """Read and change the exporter's settings (in .workspace/settings.json; they travel)."""


@settings.command(
    "list",
    short_help="Every setting: its value in force, where it comes from, "
    "its allowed values and what it does.",
    examples=f"""\
{PROG} settings list
{PROG} settings list --json | jq '.[] | select(.source != "default")'""",
)
@workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
def settings_list(as_json: bool) -> None:
    """Every setting: its value in force, where it comes from, and what it does."""
    root = current_workspace()
    rows = [_in_force(root, row) for row in settings_mod.describe(catalogue(), root, os.environ)]
    for warning in _settings_warnings(root):
        echo(f"warning: {warning}", err=True)
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        value = "(not set)" if row["value"] is None else show(row["value"])
        echo(f"{row['key']} = {value}  [{row['source']}]")
        choices = row["choices"]
        echo(
            f"    {row['type']}; {row['description']}"
            + (f" One of: {', '.join(choices)}." if isinstance(choices, tuple) else "")
            + (f" Env: {row['env']}." if row["env"] else "")
        )


def _complete_key(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    return [
        CompletionItem(row.key, help=row.description)
        for row in catalogue()
        if row.key.startswith(incomplete)
    ]


def _complete_value(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    row = catalogue().get(str(ctx.params.get("key", "")))
    if row is None:
        return []
    choices = row.choices or (("true", "false") if row.type == "boolean" else ())
    if row.type in ("path", "output"):
        return [CompletionItem(incomplete, type="file")]
    return [CompletionItem(choice) for choice in choices if choice.startswith(incomplete)]


def _keys_section() -> list[tuple[str, str]]:
    rows = list(catalogue())
    width = max(len(row.key) for row in rows)
    return [
        (
            "Keys",
            "\n".join(
                f"{row.key.ljust(width)}  {row.type}"
                + (f": {' | '.join(row.choices)}" if row.choices else "")
                + (f" [default {show(row.default)}]" if row.default is not None else "")
                for row in rows
            ),
        )
    ]


@settings.command(
    "get",
    short_help="Print the value in force of one setting (on stdout) and "
    "where it comes from (on stderr).",
    examples=f"""\
{PROG} settings get openlineage.url
ns=$({PROG} settings get openlineage.namespace)   # the value alone
{PROG} settings get openlineage.namespace --json""",
)
@workspace_option
@click.argument("key", shell_complete=_complete_key)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print key, value and source as one JSON object on stdout.",
)
def settings_get(key: str, as_json: bool) -> None:
    """Print the value in force of KEY on stdout, and where it comes from on stderr (exit 1
    when it is not set and has no default)."""
    root = current_workspace()
    rows = {row["key"]: row for row in settings_mod.describe(catalogue(), root, os.environ)}
    if key not in rows:
        catalogue().declared(key, None)  # unknown (with a suggestion) or secret-looking
    row = _in_force(root, rows[key], strict=True)
    value, source = row["value"], str(row["source"])
    for warning in _settings_warnings(root):
        if not warning.startswith("openlineage.") or warning.startswith(f"{key}: "):
            echo(f"warning: {warning}", err=True)
    if as_json:
        echo_json({"key": key, "value": value, "source": source}, indent=False)
    elif value is not None:
        echo(show(value))
        echo(f"({source})", err=True)
    else:
        echo(f"{key} is not set, and has no default", err=True)
    if value is None:
        sys.exit(1)


def _settings_warnings(root: Path) -> tuple[str, ...]:
    """What reading the settings found worth telling (two sources that disagree...); none when
    they cannot be read (``settings`` shows them as they are, to mend them)."""
    try:
        return settings_mod.load_settings(root, catalogue(), os.environ).warnings
    except ExportError:
        return ()


def _in_force(root: Path, row: dict[str, object], *, strict: bool = False) -> dict[str, object]:
    """``row`` of :func:`~.host.settings.describe` with the value in force where the export
    derives one (the namespace, from graph.json) rather than leaving it unset. ``strict``: a
    graph.json that cannot be read is an error (else the row stays as it is)."""
    if row["key"] != "openlineage.namespace" or row["value"] is not None:
        return row
    try:
        value, source = _namespace_from_graph(root)
    except ExportError:
        if strict:
            raise
        return row
    return {**row, "value": value, "source": source}


def _namespace_from_graph(root: Path) -> tuple[str | None, str]:
    """The namespace in force when none is set: the workspace's name, made safe for servers."""
    with held_signals():
        from ..hub.graph import read_graph
        from ..translate.datasets import job_namespace

    ws = Workspace(root)
    graph = read_graph(ws.graph_file, ws.display(ws.graph_file), lambda entry: None, root=ws.root)
    namespace = job_namespace(None, graph.workspace_name)
    changed = "" if namespace.made_from is None else f" {namespace.made_from!r}, made safe"
    return namespace.name, f"workspace name{changed} in graph.json"


@settings.command(
    "set",
    sections=_keys_section,
    short_help="Set KEY to VALUE in the workspace's settings (other keys are left untouched).",
    examples=f"""\
{PROG} settings set openlineage.url https://marquez.example.com
{PROG} settings set openlineage.apiKey.secretRef marquez-prod   # a secret's NAME
{PROG} settings set openlineage.transport kafka""",
)
@workspace_option
@click.argument("key", shell_complete=_complete_key)
@click.argument("value", shell_complete=_complete_value)
def settings_set(key: str, value: str) -> None:
    """Set KEY to VALUE in the workspace's settings (other keys are left untouched)."""
    root = current_workspace()
    stored = settings_file.set_setting(root, catalogue(), key, value)
    echo(f"{key} = {show(stored)}")
    _say_doubts(root)
    if key.lower().endswith(".secretref"):
        store = secrets_mod.default_store(os.environ, checkouts=Checkouts.around(root, os.environ))
        if store.get(str(stored)) is None:
            echo(
                f"warning: no secret named '{stored}' is stored yet (in "
                f"{store.description}); store it with: {PROG} secrets set {stored}",
                err=True,
            )


@settings.command(
    "unset",
    short_help="Remove KEY from the workspace's settings (it falls back to its default).",
    examples=f"""\
{PROG} settings unset openlineage.url
{PROG} settings unset openlineage.apiKey      # a key that should never have been there""",
)
@workspace_option
@click.argument("key", shell_complete=_complete_key)
def settings_unset(key: str) -> None:
    """Remove KEY from the workspace's settings (it falls back to its default)."""
    root = current_workspace()
    removed = settings_file.unset_setting(root, catalogue(), key)
    echo(f"{key} {'removed' if removed else 'was not set'}")
    _say_doubts(root)


def _say_doubts(root: Path) -> None:
    """What the settings now in force likely get wrong (a url that ends with the endpoint),
    said when the mistake is made, not at the export's first refusal."""
    try:
        loaded = settings_mod.load_settings(root, catalogue(), os.environ)
    except ExportError:
        return
    for doubt in doubts(loaded):
        echo(f"warning: {doubt}", err=True)
