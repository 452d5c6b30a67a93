"""openlineage-export: publish a workspace's Lineage hub runs as OpenLineage run events.

The library is the product; the CLI (``openlineage_export.cli``) is one thin host of it.
A host calls :func:`openlineage_export.export.run_export` with what it owns (the workspace,
settings, a secrets store, its HTTP client, a progress callback, a cancel flag).
"""

from __future__ import annotations

__version__ = "0.1.0"
DISTRIBUTION = "openlineage-export"
"""The distribution's name, which is also the command's (and its folders' and keyring
service's): the one spelling of the program's name that the code uses."""
