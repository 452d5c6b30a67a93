#!/usr/bin/env bash
# Create .venv (once) and install openlineage-export into it, with the test tools when asked.
# Usage: scripts/setup.sh [--test]     Prints nothing on success but pip's errors.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras}"
