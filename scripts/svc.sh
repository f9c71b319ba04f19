#!/usr/bin/env bash
# The svc command line with the right Node, from any directory and on a machine whose own node is
# older than 22.19: `bash scripts/svc.sh admin create-admin --email … --password-file …`.
# Builds dist/ first when it is missing (a fresh clone after `npm ci`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
here="$(pwd)"
exec bash "$root/scripts/with-node.sh" bash -c '
  set -euo pipefail
  root="$1"; here="$2"; shift 2
  if [ ! -d "$root/node_modules" ]; then (cd "$root" && npm ci --no-audit --no-fund >&2); fi
  if [ ! -f "$root/dist/bin/svc.js" ]; then (cd "$root" && npx tsc -p tsconfig.json >&2); fi
  cd "$here"
  exec node --enable-source-maps "$root/dist/bin/svc.js" "$@"
' svc "$root" "$here" "$@"
