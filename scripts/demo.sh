#!/usr/bin/env bash
# Set up, then dry-run the export of the bundled demo workspace: every event it would send,
# as JSON Lines in demo-events.jsonl, and the summary on the terminal. Needs no server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out=${1:-demo-events.jsonl}
.venv/bin/openlineage-export export --dry-run --workspace demo/acme-analytics --output "$out"
echo "events written to $out ($(wc -l < "$out") lines); validate them with ../shared/tools/ol-validate $out" >&2
