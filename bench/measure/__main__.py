"""``python -m bench.measure KIND 'JSON ARGS'``: one measurement; its JSON object printed last."""

from __future__ import annotations

import json
import os
import sys

from . import MEASUREMENTS, clients, delivery, kafka, translation

KINDS = (clients, delivery, kafka, translation)
"""The modules whose measurements register themselves as they are imported."""


def main() -> int:
    kind, args = sys.argv[1], json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    print(json.dumps(MEASUREMENTS[kind](**args)), flush=True)
    if kind == "bare_posts" and args.get("client") == "pyreqwest":
        # pyreqwest 0.15's runtime aborts the interpreter's finalization (PyGILState_Release:
        # "thread state must be current"); the figure is out, nothing is left to clean up.
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
