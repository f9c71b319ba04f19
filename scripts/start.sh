#!/usr/bin/env bash
# Install and start svc on its embedded defaults (SQLite under ./data, in-process cache, port 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/with-node.sh bash -c 'npm ci --no-audit --no-fund && npm start'
