"""What the command line shows and how it behaves on a terminal, beside ``cli/``.

- ``display.py``: messages and progress while an export runs (a rich bar on a terminal with
  the messages printed above it, one JSON object a line for a host, or plain lines);
- ``summary.py``: the summary printed at the end of an export;
- ``signals.py``: Ctrl-C and SIGTERM, turned into the library's cancel flag;
- ``files.py``: where a dry run's events go (``-`` is standard output; a file is written
  under a temporary name and renamed only when the dry run finished).
"""
