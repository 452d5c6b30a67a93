#!/usr/bin/env bash
# Set up .venv (with what scripts/validate.py needs), then dry-run the export of the bundled demo workspace (demo/acme-analytics):
# every event it would send, as JSON Lines, and the summary on the terminal. Needs no server.
#
# Usage: scripts/demo.sh [OUTPUT]
#
#   OUTPUT   the file the events go to [demo-events.jsonl]; - for standard output
#
# Environment (defaults in brackets):
#   PYTHON   the Python (3.11 or later) that creates .venv [python3]
#
# Then validate the events against the official OpenLineage JSON schemas:
#   .venv/bin/python scripts/validate.py demo-events.jsonl
set -euo pipefail
usage() { sed -n '2,/^set /s/^# \{0,1\}//p' "$0"; }
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  -?*) echo "demo.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/openlineage-export ]; then
  echo "demo.sh: first run: creating .venv and installing openlineage-export into it" \
       "(takes a minute or less)..." >&2
fi
scripts/setup.sh --validate
out=${1:-demo-events.jsonl}
.venv/bin/openlineage-export export --dry-run --workspace demo/acme-analytics --output "$out"
if [ "$out" != - ]; then
  echo "validate them against the official OpenLineage schemas with:" \
       ".venv/bin/python scripts/validate.py $out" >&2
fi
