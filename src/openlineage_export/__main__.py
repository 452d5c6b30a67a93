"""``python -m openlineage_export`` and the ``openlineage-export`` command: the CLI.

Ctrl-C (and SIGTERM) are handled from this module's first line on: one that comes while the
CLI's modules are still being imported ends the command at once with exit code 130 (143) and
one word, not a traceback, and never in the middle of an extension module's initialisation.
"""

import os


def main() -> None:
    """Run the command line (``openlineage_export.cli``)."""
    try:
        from openlineage_export.terminal.signals import held_signals

        with held_signals():
            from openlineage_export import DISTRIBUTION
            from openlineage_export.cli import main as cli
        cli(prog_name=DISTRIBUTION)
    except KeyboardInterrupt:
        # Only while importing the few pure-Python modules before the signals are held.
        os.write(2, b"\ninterrupted\n")
        os._exit(130)


if __name__ == "__main__":
    main()
