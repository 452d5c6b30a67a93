"""``python -m openlineage_export``: the CLI."""

from openlineage_export.cli import main

main()
