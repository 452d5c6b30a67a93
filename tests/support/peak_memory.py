"""Run a command and say its own peak memory, not its parent's.

Linux's ``ru_maxrss`` of a child starts from the memory of the process it was forked from (a
vfork'd child execs from its parent's pages and the kernel keeps that high-water mark), so a
child of a large pytest process reports pytest's size, which depends on which tests ran before.
Here the command is a grandchild of this small Python, whose ``wait4`` sees only the command.

    python tests/support/peak_memory.py REPORT_FILE COMMAND...   # REPORT_FILE gets the peak in kB
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    report, command = Path(argv[0]), argv[1:]
    child = subprocess.Popen(command)  # stdin, stdout and stderr are this process's
    _, status, usage = os.wait4(child.pid, 0)
    report.write_text(f"{usage.ru_maxrss}\n")
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
