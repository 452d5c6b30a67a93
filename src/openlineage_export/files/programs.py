"""Programs run by name (Graphviz's ``dot``): found on ``PATH`` the way a shell finds them, but
only in absolute folders that lie in no checkout.

An empty ``PATH`` entry (``PATH=:/usr/bin``, a trailing ``:``) means the current folder, and a
relative one (``node_modules/.bin``) a folder below it: run from a checkout's root, either
would run whatever program the pusher committed there. Such entries are skipped, as is a
folder a checkout holds (``whose.py``, by its real path, and the real folder of the program a
link there leads to).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from .whose import Checkouts


def find_program(name: str, environ: Mapping[str, str], checkouts: Checkouts) -> Path | None:
    """The program ``name`` in the first absolute ``PATH`` folder of ``environ`` that holds an
    executable file of that name and lies in no checkout (nor leads into one); None when no
    such folder has it."""
    for entry in environ.get("PATH", os.defpath).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        candidate = Path(entry) / name
        if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            continue
        folders = {Path(os.path.realpath(entry)), Path(os.path.realpath(candidate)).parent}
        if any(checkouts.holding(folder) is not None for folder in folders):
            continue
        return candidate
    return None


class ProgramFailed(OSError):
    """A program that ended with a failure: ``strerror`` is the first line it wrote on its
    standard error (or its exit status)."""


def run_program(program: Path, args: Sequence[str], stdin: bytes) -> bytes:
    """What ``program`` (a path :func:`find_program` gave) writes on its standard output, fed
    ``stdin``; :class:`ProgramFailed` when it fails."""
    done = subprocess.run([os.fspath(program), *args], input=stdin, capture_output=True)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ProgramFailed(0, said[0] if said else f"exit status {done.returncode}")
    return done.stdout


__all__ = ["ProgramFailed", "find_program", "run_program"]
