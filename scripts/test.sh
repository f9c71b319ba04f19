#!/usr/bin/env bash
# Install and run every test suite in both shapes (embedded; PostgreSQL + Redis when reachable).
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/with-node.sh bash -c 'npm ci --no-audit --no-fund && npm test'
