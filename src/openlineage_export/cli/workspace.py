"""The workspace a command works on (``-w`` before or after the subcommand, else found like
git finds a repository), and the settings catalogue it reads."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ConfigError, WorkspaceError
from ..files.whose import Checkouts
from ..host import settings as settings_mod
from ..host.workspace import Workspace
from ..terminal.signals import held_signals

if TYPE_CHECKING:
    from ..host.settings import Settings

URL_SETTING = "openlineage.url"
"""The setting ``--url`` stands in for, for one command."""


def _workspace_callback(
    ctx: click.Context, param: click.Parameter, value: Path | None
) -> Path | None:
    if value is not None:
        ctx.ensure_object(dict)["workspace"] = value
    return value


def workspace_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``-w/--workspace DIR``: accepted before the subcommand too."""
    return click.option(
        "--workspace",
        "-w",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        callback=_workspace_callback,
        expose_value=False,
        is_eager=True,
        help="The workspace folder (the one holding .workspace/); default: the current folder "
        "or the nearest one above it that is a workspace.",
    )(function)


def current_workspace() -> Path:
    """The workspace named with -w (before or after the subcommand), else the one holding the
    current folder, found by walking up like git. Errors name the absolute path."""
    ctx = click.get_current_context()
    given = next(
        (
            c.obj["workspace"]
            for c in _contexts(ctx)
            if isinstance(c.obj, dict) and "workspace" in c.obj
        ),
        None,
    )
    if given is not None:
        return Workspace.open(given).root
    return Workspace.find(Path.cwd()).root


def command_checkouts() -> Checkouts:
    """Where checkouts are, as seen from the command's workspace (-w, else the one holding the
    current folder), as an export of it judges: whose the user's files are. With no workspace,
    the current folder stands in for one (unknown means untrusted: in a checkout without .git,
    its config folder is not taken as the user's)."""
    try:
        root = current_workspace()
    except WorkspaceError:
        return Checkouts.from_folder(Path.cwd(), os.environ)
    return Checkouts.around(root, os.environ)


def _contexts(ctx: click.Context | None) -> Iterator[click.Context]:
    while ctx is not None:
        yield ctx
        ctx = ctx.parent


def catalogue() -> settings_mod.Catalogue:
    """Every setting (imported when a command first needs it: ``--help`` starts fast)."""
    with held_signals():
        from ..deliver.registry import CATALOGUE

    return CATALOGUE


def load_settings(root: Path) -> Settings:
    """The workspace's settings in force, the environment's included."""
    return settings_mod.load_settings(root, catalogue(), os.environ)


def settings_with_url(root: Path, url: str | None) -> Settings | None:
    """The workspace's settings with ``--url`` on top (None: let the library read them)."""
    if url is None:
        return None
    with held_signals():
        from ..deliver.registry import KINDS, check_transport, kind_of
    settings = load_settings(root)
    given = settings.with_values({URL_SETTING: url}, base=root, subjects={URL_SETTING: "--url"})
    check_transport(given)  # the workspace's transport: the rule the environment's url meets
    if kind_of(settings).address != URL_SETTING:
        takes = " or ".join(k.name for k in KINDS.values() if k.address == URL_SETTING)
        raise ConfigError(
            f"--url goes with the {takes} transport; openlineage.transport is "
            f"{settings.value('openlineage.transport')} (from "
            f"{settings.source('openlineage.transport')})"
        )
    return given
