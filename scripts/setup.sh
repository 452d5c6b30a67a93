#!/usr/bin/env bash
# Create .venv (once) and install openlineage-export into it, with the test tools when asked.
#
# Usage: scripts/setup.sh [--validate|--test]
#
#   --validate  also what scripts/validate.py needs (jsonschema): the [validate] extra
#   --test      also the test tools (pytest, pexpect, playwright..., and jsonschema): the
#               [test] extra
#
# Prints nothing on success but pip's errors. Then run .venv/bin/openlineage-export, or
# activate the environment first (. .venv/bin/activate) and run openlineage-export.
#
# Environment (defaults in brackets):
#   PYTHON   the Python (3.11 or later) that creates .venv [python3]
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;;
  ""|--test|--validate) ;;
  *) echo "setup.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
extras=""
[ -n "${1:-}" ] && extras="[${1#--}]"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras}"
