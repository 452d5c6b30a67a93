"""Write large synthetic Lineage hub workspaces for tests and benchmarks.

A workspace follows ``shared/lineage-hub/CONTRACT.md``: ``settings.json``, ``graph.json`` and an
audit trail in segments (closed ones gzip-compressed, the newest plain). The trail is what a
busy hub would write: runs of several stages that read and write datasets of every storage kind
with content digests, retries, failures, cancellations, skipped stages, runs recorded when they
start and again when they end (``updates``), runs still going at the end (``running_tail``),
runs of pipelines since deleted from the graph, UUID and older-style trace ids, times in ``Z`` and
in other offsets, and lines of other kinds (``edit``, ``settings``, ``export``) in between.
Every pipeline in the graph runs except the ``never_run`` ones.

With ``bad_every=N`` every N-th line is malformed, in turn one of: not JSON (cut short, a merge
conflict marker, bytes that are not UTF-8), JSON that is not an object, a required field
missing, a field of the wrong type or an empty trace id, a time without an offset, an unknown
run or stage status. A bad line names the trace id of a recent good run (or none), so a reader
that wrongly accepted it would change that run's state, which tests can see in ``statuses``. With
``torn_tail=True`` the newest segment ends in a half-written line of a run that is not counted.

Use it from tests::

    from hubwriter.synth import write_workspace

    summary = write_workspace(tmp_path, 1_000, seed=7, bad_every=50)
    assert summary["bad_lines"] == summary["lines"] // 50

or from a shell (the summary is printed as JSON)::

    python -m hubwriter.synth /tmp/ws --runs 1000000 --bad-every 1000

Only the standard library is used, so it runs before the package is installed. Output is
streamed (memory does not grow with ``runs``) and depends only on the arguments: the same seed
gives byte-identical files, gzip segments included.

Inside: ``shape.py`` (how often each thing happens), ``graph.py`` (the pipelines), ``trail.py``
(the runs, in recording order), ``bad.py`` (the malformed lines), ``workspace.py`` (the whole).
"""

from __future__ import annotations

from .workspace import write_workspace

__all__ = ["write_workspace"]
