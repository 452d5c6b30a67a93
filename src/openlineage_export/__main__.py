"""``python -m openlineage_export`` and the ``openlineage-export`` command: the CLI.

Ctrl-C is handled from the first line on: one pressed while the CLI's modules are still being
imported ends the command with exit code 130 and one word, not a traceback.
"""

import sys


def main() -> None:
    """Run the command line (``openlineage_export.cli``)."""
    try:
        from openlineage_export.cli import main as cli

        cli()
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
