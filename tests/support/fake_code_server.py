#!/usr/bin/env python3
"""A stand-in for code-server where a test's point is what scripts/vscode.sh keeps track of (what
it packages, what it starts and stops): ``--install-extension VSIX`` says it installed it;
otherwise it serves /healthz on its ``--bind-addr`` (port 0: one the system gives) and says
where, in code-server's words, until it is stopped."""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


class _Health(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/healthz" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main(argv: list[str]) -> int:
    """Installs (says so) or serves, as ``argv`` asks."""
    if "--install-extension" in argv:
        print(f"Extension '{argv[argv.index('--install-extension') + 1]}' was installed.")
        return 0
    host, _, port = argv[argv.index("--bind-addr") + 1].rpartition(":")
    server = HTTPServer((host, int(port)), _Health)
    print(f"[fake] info  HTTP server listening on http://{host}:{server.server_port}/", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
