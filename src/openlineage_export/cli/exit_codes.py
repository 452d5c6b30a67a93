"""The exit codes of every command (also in docs/exit-codes.md and ``export --help``)."""

from __future__ import annotations

EXIT_CODES = """\
0    everything on the trail was exported (or dry-run built)
1    done, but something was left behind: bad entries, runs the server refused
2    usage or configuration error (an option, a setting, a missing secret)
3    workspace error: not a workspace, graph.json missing or not JSON
4    the server could not be reached for openlineage.retry.maxTime seconds
5    another export of this workspace to this destination is running: nothing was sent
129  stopped by SIGHUP, the terminal closed (the same: what was accepted is kept)
130  interrupted by Ctrl-C (what was accepted is kept)
141  standard output's reader went away (| head): the command ended quietly
143  stopped by SIGTERM (the same: what was accepted is kept)"""

EXIT_READER_GONE = 141
"""128 + SIGPIPE: what a shell reports for a command whose output's reader went away."""
