"""``secrets``: keep API keys (and Kafka passwords) in the secrets store, never in settings,
and say which servers each one may be sent to."""

from __future__ import annotations

import os
import sys

import click

from .. import DISTRIBUTION as PROG
from ..errors import ConfigError
from ..host import secrets as secrets_mod
from .base import Commands
from .echo import echo, echo_json
from .workspace import command_checkouts


@click.group(
    cls=Commands,
    short_help="Keep API keys in the secrets store (the OS keyring, else a private "
    "file), never in settings.",
    examples=f"""\
{PROG} secrets set marquez-prod           # asks for the key (twice), or reads stdin
{PROG} secrets list
{PROG} secrets delete marquez-prod""",
)
def secrets() -> None:
    """Keep API keys in the secrets store (OS keyring, else a private file), never in settings."""


@secrets.command(
    "set",
    short_help="Store a secret under NAME: read from stdin when piped, else "
    "asked for twice without echo.",
    examples=f"""\
{PROG} secrets set marquez-prod --for https://marquez.example.com
printf %s "$MARQUEZ_KEY" | {PROG} secrets set marquez-prod --for https://marquez.example.com
{PROG} settings set openlineage.apiKey.secretRef marquez-prod   # then point at it""",
)
@click.argument("name")
@click.option(
    "--for",
    "servers",
    metavar="ORIGIN",
    multiple=True,
    help="A server the secret may be sent to (scheme://host[:port]; repeat for more). "
    "A stored key goes to no other, whatever a workspace's settings say.",
)
def secrets_set(name: str, servers: tuple[str, ...]) -> None:
    """Store a secret under NAME: read from stdin when piped, else prompted without echo.

    It is sent only to the servers approved for it (--for here, or later with secrets allow).
    """
    from ..deliver.registry import approvable
    from ..guards.trust import approvable_origin

    secrets_mod.check_secret_name(name)  # before asking for the value
    origins = [approvable_origin(server, approvable()) for server in servers]
    store = secrets_mod.default_store(os.environ, checkouts=command_checkouts())
    if sys.stdin.isatty():
        value = click.prompt(
            f"value for {name}",
            hide_input=True,
            confirmation_prompt=f"value for {name} again",
            err=True,
        )
    else:
        value = sys.stdin.read().strip("\r\n")
    store.set(name, value)
    for origin in origins:
        store.allow(name, origin)
    where = (
        f"; it may be sent to {', '.join(origins)}"
        if origins
        else f"; approve the server it may be sent to with: {PROG} secrets allow {name} ORIGIN"
    )
    echo(
        f"stored secret {name!r} in {store.description}{where}; point "
        f"openlineage.apiKey.secretRef at it with: {PROG} settings set "
        f"openlineage.apiKey.secretRef {name}"
    )


@secrets.command(
    "allow",
    short_help="Approve sending the secret NAME to a server (ORIGIN: scheme://host[:port]).",
    examples=f"""\
{PROG} secrets allow marquez-prod https://marquez.example.com
{PROG} secrets allow kafka-prod kafka://broker1.example.com:9093""",
)
@click.argument("name")
@click.argument("server", metavar="ORIGIN")
def secrets_allow(name: str, server: str) -> None:
    """Approve sending the secret NAME to ORIGIN (scheme://host[:port]; for Kafka,
    kafka://host:port for each broker). A stored secret goes to no server not approved."""
    from ..deliver.registry import approvable
    from ..guards.trust import approvable_origin

    secrets_mod.check_secret_name(name)
    origin = approvable_origin(server, approvable())
    store = secrets_mod.default_store(os.environ, checkouts=command_checkouts())
    if store.get(name) is None:
        raise ConfigError(
            f"no secret named {name!r} in {store.description}; store it with: "
            f"{PROG} secrets set {name} --for {origin}"
        )
    store.allow(name, origin)
    echo(f"the secret {name!r} may be sent to: {', '.join(store.origins(name))}")


@secrets.command(
    "check",
    short_help="Whether the secret NAME may be sent to URL, and why "
    "(exit 0: it may; 1: it may not).",
    examples=f"""\
{PROG} secrets check marquez-prod https://marquez.example.com/api/v1/lineage
{PROG} secrets check kafka-prod kafka://broker1.example.com:9093 --json
{PROG} secrets check editor-key http://127.0.0.1:5000 --approved http://localhost:5000 --json""",
)
@click.argument("name")
@click.argument("url", metavar="URL")
@click.option(
    "--approved",
    "approved",
    metavar="ORIGIN",
    multiple=True,
    help="An origin approved for NAME outside this store (a host that keeps keys of "
    "its own, as the VS Code extension does); repeat for more.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the verdict as one JSON object: name, origin, may, reason (approved, "
    "not approved, in clear text) and message.",
)
def secrets_check(name: str, url: str, approved: tuple[str, ...], as_json: bool) -> None:
    """Whether the secret NAME may be sent to URL, as an export decides it: plain http only to
    this machine (and through a proxy on it), and only to a server approved for NAME. Exit 0
    when it may, 1 when it may not; the secret's value is never read."""
    from ..deliver.registry import approvable
    from ..guards.trust import key_verdict
    from ..host.secret_files import KeyOrigins
    from ..host.userconfig import config_dir

    secrets_mod.check_secret_name(name)
    # Both stores keep the approvals in key-origins.json of the config folder: read there,
    # without looking for a keyring (the value is never needed).
    kept = KeyOrigins(config_dir(os.environ), command_checkouts()).of(name)
    verdict = key_verdict(name, url, [*kept, *approved], os.environ, approvable())
    if as_json:
        echo_json(
            {
                "name": verdict.name,
                "origin": verdict.origin,
                "may": verdict.may,
                "reason": verdict.reason,
                "message": verdict.message,
            }
        )
    else:
        echo(verdict.message)
    if not verdict.may:
        sys.exit(1)


@secrets.command(
    "list",
    short_help="The names of the stored secrets (never their values), and which store holds them.",
    examples=f"""\
{PROG} secrets list
{PROG} secrets list --json""",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the store and the names as one JSON object."
)
def secrets_list(as_json: bool) -> None:
    """The names of the stored secrets (never their values), one a line on stdout; the store
    they are in on stderr."""
    store = secrets_mod.default_store(os.environ, checkouts=command_checkouts())
    names = store.names()
    place = store.place if isinstance(store, secrets_mod.Placed) else None
    backend = place.backend if place is not None else "file"
    where = place.file if place is not None else None
    if as_json:
        echo_json(
            {
                "backend": backend,
                "store": store.description,
                "file": None if where is None else str(where),
                "names": names,
                "origins": {name: store.origins(name) for name in names},
            }
        )
        return
    for name in names:
        echo(name)
        approved = store.origins(name)
        echo(f"  {name} may be sent to: {', '.join(approved) or 'no server yet'}", err=True)
    count = (
        "no secrets" if not names else "1 secret" if len(names) == 1 else f"{len(names)} secrets"
    )
    index = f" (names indexed in {where})" if place is not None and place.names_only else ""
    echo(f"{count} in {store.description}{index}", err=True)


@secrets.command(
    "delete",
    short_help="Delete the secret NAME (exit 1 when there was none).",
    examples=f"""\
{PROG} secrets delete marquez-prod""",
)
@click.argument("name")
def secrets_delete(name: str) -> None:
    """Delete the secret NAME (exit 1 when there was none)."""
    store = secrets_mod.default_store(os.environ, checkouts=command_checkouts())
    if not store.delete(name):
        echo(f"no secret named {name!r} in {store.description}", err=True)
        sys.exit(1)
    echo(f"deleted secret {name!r}")
