"""The one way into and out of files (``tests/test_seam.py`` keeps it the only way).

Every file the exporter reads or writes goes through this room, reached one name at a time
from a folder held open (``walk.py``), never through a link that is not followed on purpose,
only regular files, never waiting on one:

- ``tree.py``: a workspace's tree, read and written inside (settings.json, graph.json, the
  trail, ``.workspace/exports/``): no link below its root is followed;
- ``named.py``: a path the user named (``-o``, ``--report``, ``OPENLINEAGE_FILE_PATH``, ``-w``),
  written at that very name: a link a checkout holds is never followed on the way, nor written
  through at the name;
- ``users.py``: the user's own files (the config and state folders: secrets, approvals, the
  keyring's index, the ledger, the locks), positively outside every checkout, and
  ``userdirs.py``, where they are (XDG, the home folder);
- ``whose.py``: whose a file is, a checkout's or the user's (unknown means untrusted);
- ``database.py``: SQLite handed only a file opened and checked here; ``scratch.py``: a
  private scratch folder of one process (the run index); ``programs.py``: a program run by
  name (Graphviz's ``dot``), found only in absolute ``PATH`` folders no checkout holds.

It sits below ``host/``, which reads the workspace's settings through it, and imports nothing
above it; what a file *means* is decided above (``host/``, ``hub/``, ``state/``, ``guards/``).
"""
