#!/usr/bin/env bash
# Install and run every test suite in both shapes (embedded; PostgreSQL + Redis when reachable).
set -euo pipefail
cd "$(dirname "$0")/.."
# The sandbox tests (test/sandbox) run tool servers under bubblewrap.
command -v bwrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }
# The admin UI's browser tests drive Debian's Chromium; no tool downloads a browser of its own.
[ -x /usr/bin/chromium ] || { s=$([ "$(id -u)" = 0 ] || echo sudo); $s apt-get update -qq >/dev/null && $s env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
exec bash scripts/with-node.sh bash -c 'npm ci --no-audit --no-fund && npm test'
