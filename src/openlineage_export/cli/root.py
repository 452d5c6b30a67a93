"""The ``openlineage-export`` group itself: its help, ``--version``, and ``-w`` before the
subcommand. The subcommands are registered in ``cli/__init__.py``."""

from __future__ import annotations

import click

from .. import DISTRIBUTION as PROG
from .. import __version__
from .base import Commands
from .workspace import workspace_option


@click.group(
    cls=Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    examples=f"""\
{PROG} export --dry-run -o events.jsonl     # build every event, send nothing
{PROG} settings set openlineage.url http://localhost:5000
{PROG} export                               # send what is new since the last export
{PROG} -w ~/work/acme status                # a workspace elsewhere
eval "$(_OPENLINEAGE_EXPORT_COMPLETE=bash_source {PROG})"   # shell completion (bash)""",
)
@click.version_option(__version__, "-V", "--version", prog_name=PROG)
@workspace_option
def main() -> None:
    """Publish this workspace's Lineage hub runs as OpenLineage events (Marquez, DataHub, Atlan).

    Run it anywhere inside a workspace (like git, the workspace is found by walking up from the
    current folder), or name one with -w DIR.
    """
